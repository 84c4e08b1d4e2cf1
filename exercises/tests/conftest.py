"""Loads the module under test from the exercises folder (or from the folder
named by AMP_EXERCISES_DIR), inside each test: a broken module fails only its
own tests.

Each module is loaded on its own, as the grader loads it: the other exercise
files are not importable from it
(每个模块单独加载，与评分器一致：模块之间不能互相 import)."""
import importlib.util
import os
import pathlib

import pytest

EXERCISES_DIR = pathlib.Path(os.environ.get(
    "AMP_EXERCISES_DIR", pathlib.Path(__file__).parent.parent)).resolve()
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
# The grader stops a call of your code after 20 s: a public test that runs
# longer has an endless loop
# (评分器在 20 秒后停止一次调用；公开测试同样最多运行 20 秒).
TIMEOUT_S = 20


def pytest_collection_modifyitems(items):
    here = pathlib.Path(__file__).resolve().parent
    for item in items:
        if pathlib.Path(str(item.path)).resolve().parent == here:
            item.add_marker(pytest.mark.timeout(TIMEOUT_S))


def load(name):
    path = EXERCISES_DIR / f"{name}.py"
    if not path.exists():
        pytest.fail(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location(f"student_{name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as error:
        if error.name in MODULES:
            pytest.fail(f"{name}.py imports {error.name}: 每个模块单独评分，"
                        "不能 import 另一个练习文件，请把需要的代码放进 "
                        f"{name}.py。 / The grader grades each module on its "
                        f"own, so {name}.py cannot import {error.name}.py: "
                        f"copy what it needs into {name}.py.", pytrace=False)
        raise
    return module


@pytest.fixture
def amp_update():
    return load("amp_update")


@pytest.fixture
def loss_scaler():
    return load("loss_scaler")


@pytest.fixture
def amp_training_step():
    return load("amp_training_step")
