"""A lighter student install: transformers is the GPU lab's requirement, never the grader's."""
from __future__ import annotations

import ast

import pytest
from support.helpers import ROOT



def requirement_names(path):
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.append(line.split(";")[0].strip())
    return names


def test_transformers_lives_in_the_labs_requirements_only():
    main = requirement_names(ROOT / "requirements.txt")
    assert "torch==2.13.0" in main
    assert not any(name.startswith("transformers") for name in main)
    assert any(name.startswith("transformers") for name in requirement_names(ROOT / "gpu_lab" / "requirements.txt"))
    dev = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    assert "-r gpu_lab/requirements.txt" in dev  # the project's own tests run the lab


@pytest.mark.slow
def test_nothing_on_the_grading_path_imports_transformers():
    importers = []
    for path in (ROOT / "autograder").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(module.split(".")[0] in ("transformers", "gpu_lab", "amp_backward_lab") for module in modules):
                importers.append(str(path.relative_to(ROOT)))
    assert importers == []


def test_the_labs_readme_names_its_requirements():
    readme = (ROOT / "gpu_lab" / "README.md").read_text(encoding="utf-8")
    assert readme.count("pip install -r gpu_lab/requirements.txt") >= 2  # both languages
