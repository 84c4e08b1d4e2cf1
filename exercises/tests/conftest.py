"""Loads the module under test from the exercises folder (or from the folder named
by AMP_EXERCISES_DIR), inside each test: a broken module fails only its own tests."""
import importlib.util
import os
import pathlib
import sys

import pytest

EXERCISES_DIR = pathlib.Path(os.environ.get("AMP_EXERCISES_DIR", pathlib.Path(__file__).parent.parent)).resolve()


def load(name):
    path = EXERCISES_DIR / f"{name}.py"
    if not path.exists():
        pytest.fail(f"{path} does not exist")
    if str(EXERCISES_DIR) not in sys.path:
        sys.path.insert(0, str(EXERCISES_DIR))  # lets your modules import each other
    spec = importlib.util.spec_from_file_location(f"student_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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
