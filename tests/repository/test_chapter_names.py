"""The chapter's names stay in the chapter (issue 39).

The engine (``autograder/`` outside ``autograder/assignment/``), the CI scripts and
workflows, the tools, the grading benchmarks and the tests' shared helpers must not name
this chapter: not its modules, not the framework class its scaler is compared with, not
its short name as a prefix of environment variables, cgroups or temporary folders, and
(in the engine) not one of its TODOs by number. They read what they need from the
active assignment (:mod:`autograder.active_assignment`). The chapter's own test data
(mutants, forged classes) and its GPU lab are the chapter's and are listed below.
"""
import re

import pytest

from autograder import active_assignment
from support.helpers import ROOT

# This repository's chapter, whichever assignment the run has active.
CHAPTER = active_assignment.load(active_assignment.DEFAULT_PACKAGE)
# The chapter's short name, as a run-time prefix (AMP_..., amp-box-..., amp_grader_...).
CHAPTER_PREFIX = re.compile(r"\bamp[-_]|\bAMP_")
TODO_NUMBER = re.compile(r"\bTODO \d+")

# Tests' helpers (tests/support/) that build this chapter's own cases: they are the chapter's test data.
CHAPTER_FIXTURES = {
    "class_folders.py": "a class of this chapter's submissions for the class-report tests",
    "walk_class.py": "the chapter's walk-through class (docs/ta-guide.md)",
    "semester_walk.py": "the chapter's class over a semester (issue 48's walk)",
    "forged_answers.py": "answers forged against the chapter's scenarios",
    "hostile_submissions.py": "hostile versions of the chapter's modules",
    "scenario_specs.py": "a spec for each of the chapter's scenarios",
    "similarity_class.py": "the chapter's modules and variants for the similarity classes",
    "lab_script.py": "the chapter's GPU lab loaded in the test process",
    "language_check.py": "the chapter's vocabulary that stays untranslated",
    "mutants_amp_update.py": "the chapter's single-mistake submissions",
    "mutants_loss_scaler.py": "the chapter's single-mistake submissions",
    "mutants_amp_training_step.py": "the chapter's single-mistake submissions",
}
# Tools and benchmarks about the chapter itself, not about the engine.
CHAPTER_TOOLS = {
    "benchmarks/bench_lab_step_profile.py": "profiles the chapter's GPU lab (gpu_lab/)",
}
# The variable the chapter's public tests read (exercises/tests/conftest.py, the chapter's).
CHAPTER_HARNESS = re.compile(r"\bAMP_EXERCISES_DIR\b")


def chapter_words():
    words = list(CHAPTER.modules)
    label = CHAPTER.similarity_framework.get("label")
    if label:
        words.append(label)
    return re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b")


def text_files(folder, exclude=()):
    for path in sorted((ROOT / folder).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not any(
                path.is_relative_to(ROOT / skip) for skip in exclude):
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # compiled catalogs and other binaries


def found(files, patterns, allowed=None):
    hits = []
    for path, text in files:
        for number, line in enumerate(text.splitlines(), start=1):
            if allowed is not None:
                line = allowed.sub("", line)
            hits += [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
                     for pattern in patterns if pattern.search(line)]
    return hits


def support_helpers():
    """The tests' shared helpers (not test modules, not the chapter's fixtures)."""
    return [path for path in sorted((ROOT / "tests" / "support").glob("*.py"))
            if path.name not in CHAPTER_FIXTURES]


def test_the_chapter_is_known_to_the_search():
    """The search looks for real names: the chapter's modules are in its description."""
    assert chapter_words().search("from exercises import " + CHAPTER.modules[0])
    assert all((ROOT / "tests" / "support" / name).is_file() for name in CHAPTER_FIXTURES), "a listed fixture is gone"


def test_the_engine_does_not_name_the_chapter():
    files = text_files("autograder", exclude=[CHAPTER.folder.relative_to(ROOT)])
    hits = found(files, [chapter_words(), CHAPTER_PREFIX, TODO_NUMBER])
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize("folder", [".ci", ".github/workflows"])
def test_ci_uses_the_engines_run_time_names(folder):
    hits = found(text_files(folder), [chapter_words(), CHAPTER_PREFIX])
    assert not hits, "\n".join(hits)


def test_tools_benchmarks_and_test_helpers_read_the_active_assignment():
    paths = [*sorted((ROOT / "tools").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py")), *support_helpers()]
    files = [(path, path.read_text(encoding="utf-8")) for path in paths
             if path.relative_to(ROOT).as_posix() not in CHAPTER_TOOLS]
    hits = found(files, [chapter_words(), CHAPTER_PREFIX], allowed=CHAPTER_HARNESS)
    assert not hits, "\n".join(hits)
