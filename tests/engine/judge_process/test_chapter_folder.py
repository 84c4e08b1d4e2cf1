"""A chapter named by its folder (``AUTOGRADER_ASSIGNMENT=chapters/vector_clip``): found from
anywhere, its parts beside it, and handed to the judge process as an absolute path (the judge
starts in the repository's root, not where the command was typed)."""
import os
import subprocess
import sys

import pytest

from autograder import active_assignment
from autograder.judge_process import launcher
from support import new_chapter
from support.helpers import ROOT


def test_a_chapter_folder_is_its_package(tmp_path):
    folder = new_chapter.write(tmp_path / "course" / "chapters")
    assert active_assignment.importable(str(folder)) == new_chapter.NAME
    chapter = active_assignment.load(new_chapter.NAME)
    assert chapter.folder == folder and chapter.modules == (new_chapter.MODULE,)
    # What the description leaves out is beside it: its stubs, its reference, its student README.
    assert (chapter.exercises_dir, chapter.solutions_dir) == (folder / "exercises", folder / "solutions")
    assert chapter.student_readme == folder / "README.md"


def test_a_folder_that_is_no_chapter_or_whose_name_is_taken_is_refused(tmp_path):
    (tmp_path / "not_a_package").mkdir()
    with pytest.raises(active_assignment.AssignmentError, match="not an assignment package"):
        active_assignment.importable(str(tmp_path / "not_a_package"))
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("", encoding="utf-8")
    with pytest.raises(active_assignment.AssignmentError, match="already taken"):
        active_assignment.importable(str(tmp_path / "json"))


def test_the_judge_gets_the_folder_as_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(active_assignment.ENV_VAR, os.path.join("chapters", new_chapter.NAME))
    env = launcher.judge_environment()
    assert env[active_assignment.ENV_VAR] == str(tmp_path / "chapters" / new_chapter.NAME)
    monkeypatch.setenv(active_assignment.ENV_VAR, "tests.toy_assignment")
    assert launcher.judge_environment()[active_assignment.ENV_VAR] == "tests.toy_assignment"


@pytest.mark.parametrize("setting", ["/nowhere/vector_clip", "no_such_chapter"])
def test_a_setting_that_names_no_chapter_is_one_clear_line(setting):
    done = subprocess.run([sys.executable, "-m", "autograder", "grade"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **{active_assignment.ENV_VAR: setting}))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and setting in done.stderr
