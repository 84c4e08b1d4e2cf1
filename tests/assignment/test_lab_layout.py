"""The lab record's layout is defined once, in gpu_lab/amp_lab_layout.py: the lab writes with it,
check-lab reads the same file, neither spells an identifier of its own, and the file stays data
(the grader executes it)."""
from __future__ import annotations

import ast
import importlib.util
import py_compile
import shutil
from pathlib import Path

import pytest

from autograder import active_assignment
from autograder.assignment.lab import check as lab_check, layout as checker_layout
from support.lab_script import lab_layout
from support.helpers import ROOT

LAYOUT_FILE = ROOT / checker_layout.LAB_LAYOUT_FILE
# Names the checker gives the lab's values (the rest keep theirs).
RENAMED = {"CHAPTER_WORKLOAD": "GPU_CONFIG", "UPDATE_SETTINGS": "UPDATE_DEFAULTS"}
IDENTIFIERS = ("SCHEMA_VERSION", "SEMANTIC_ID", "PROFILE_ID", "RECORD_PREFIX", "RECORD_GLOB",
               "RESULTS_RELATIVE_DIR", "MODEL_ID", "PROBE_SUFFIX", "EVIDENCE_REAL", "EVIDENCE_SMOKE",
               "EVIDENCE_ARCHITECTURE", "CONFIG_ONLY_SOURCE")


def shared_names():
    return [name for name in vars(lab_layout) if name.isupper()]


def test_the_layout_file_is_data():
    """No imports, no functions or classes, nothing but assignments from literals and names it
    defined above: executing it can do nothing but define values."""
    tree = ast.parse(LAYOUT_FILE.read_text(encoding="utf-8"))
    defined = set()
    for statement in tree.body[1:]:  # after the docstring
        assert isinstance(statement, ast.Assign), ast.dump(statement)[:80]
        loaded = {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
        assert loaded <= defined, f"line {statement.lineno} uses {loaded - defined}"
        defined |= {target.id for target in statement.targets}
    assert set(shared_names()) == defined


def test_the_checker_holds_the_labs_values():
    for name in shared_names():
        value = getattr(checker_layout, RENAMED.get(name, name))
        expected = Path(lab_layout.RESULTS_RELATIVE_DIR) if name == "RESULTS_RELATIVE_DIR" else getattr(lab_layout, name)
        assert value == expected, name
    # The credit rules follow from the chapter's workload.
    assert lab_check.ACCEPTED_SEQ_LENS == (128, 64) and lab_check.MIN_REPEATS == 20
    assert lab_check.CHAPTER_WORKLOAD.items() <= lab_layout.CHAPTER_WORKLOAD.items()
    assert set(lab_layout.CHAPTER_WORKLOAD) - set(lab_check.CHAPTER_WORKLOAD) == {
        "candidate_dtype", "seq_len", "repeats", "warmup"}


def test_no_identifier_is_spelled_a_second_time():
    """Neither the lab's other modules nor the checker hold an identifier of the layout as a
    string of their own: each takes it from the one file."""
    values = {getattr(lab_layout, name) for name in IDENTIFIERS}
    sources = [path for path in (ROOT / "gpu_lab").glob("*.py") if path != LAYOUT_FILE]
    sources += sorted((ROOT / "autograder" / "assignment" / "lab").glob("*.py"))
    spelled = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for path in sources
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and node.value in values]
    assert not spelled, "\n".join(spelled)


def test_an_edit_of_the_one_file_reaches_the_checker(tmp_path):
    copy = tmp_path / checker_layout.LAB_LAYOUT_FILE
    copy.parent.mkdir()
    text = LAYOUT_FILE.read_text(encoding="utf-8")
    copy.write_text(text.replace('"training-mechanism-gpu/v3"', '"training-mechanism-gpu/v4"'), encoding="utf-8")
    assert checker_layout.lab_layout(tmp_path)["SCHEMA_VERSION"] == "training-mechanism-gpu/v4"


def test_a_missing_or_unsafe_layout_file_is_a_clear_error(tmp_path):
    with pytest.raises(ImportError, match="record layout cannot be read"):
        checker_layout.lab_layout(tmp_path)
    (tmp_path / "gpu_lab").mkdir()
    (tmp_path / checker_layout.LAB_LAYOUT_FILE).symlink_to(LAYOUT_FILE)
    with pytest.raises(ImportError, match="symbolic link"):
        checker_layout.lab_layout(tmp_path)


def test_every_export_of_the_grader_ships_the_file():
    """The description names it among the files its grader reads outside the package."""
    assert checker_layout.LAB_LAYOUT_FILE in active_assignment.current().grader_files
    from autograder.exports import gradescope

    shipped = dict((name, path) for path, name in gradescope.package_files())
    assert shipped[checker_layout.LAB_LAYOUT_FILE] == LAYOUT_FILE


def test_a_planted_cache_beside_the_file_is_never_used(tmp_path):
    """The checker compiles the source. An import would take an unchecked-hash cache in
    __pycache__ instead of it (shown first, so the test can fail)."""
    folder = tmp_path / "gpu_lab"
    folder.mkdir()
    source = folder / LAYOUT_FILE.name
    shutil.copyfile(LAYOUT_FILE, source)
    planted = tmp_path / "planted.py"
    planted.write_text(LAYOUT_FILE.read_text(encoding="utf-8") + "MODEL_ID = 'evil/model'\n", encoding="utf-8")
    py_compile.compile(str(planted), cfile=importlib.util.cache_from_source(str(source)),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    spec = importlib.util.spec_from_file_location("planted_layout", source)
    imported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(imported)
    assert imported.MODEL_ID == "evil/model"
    assert checker_layout.lab_layout(tmp_path)["MODEL_ID"] == lab_layout.MODEL_ID
