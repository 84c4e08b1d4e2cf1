"""Taking a submission in (autograder/intake/submission.py): the three contract files,
copied without following links, one box folder per module; the same verdicts
where the platform cannot open folders by descriptor (Windows)."""
import os
import sys

import pytest

from autograder.intake import safe_files, submission
from support.helpers import MODULES, make_submission, solution_source

# Any three of the assignment's modules: take() knows them from its description.
FIRST, SECOND, THIRD = MODULES[:3]


@pytest.fixture(params=["dir_fd", "paths"])
def mode(request, monkeypatch):
    if request.param == "paths":
        monkeypatch.setattr(safe_files, "DIR_FD_SUPPORTED", False)
    elif not safe_files.DIR_FD_SUPPORTED:
        pytest.skip("this platform has no dir_fd")
    return request.param


def test_contract_files_only_each_in_its_own_box(tmp_path, mode):
    folder = make_submission(tmp_path / "exercises", {"helper.py": "X = 1\n"})
    area = tmp_path / "area"
    area.mkdir()
    specs, notes = submission.take(folder, area)
    for module, spec in specs.items():
        assert spec["present"] and spec["problem"] is None
        assert sorted(os.listdir(spec["submission"])) == [f"{module}.py"]
        assert submission.source_of(spec) == solution_source(module)
    assert any("'helper.py'" in note for note in notes)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_links_are_named_not_followed(tmp_path, mode):
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'do not copy'\n")
    folder = make_submission(tmp_path / "exercises", omit=(FIRST,))
    os.symlink(secret, folder / f"{FIRST}.py")
    area = tmp_path / "area"
    area.mkdir()
    specs, _ = submission.take(folder, area)
    assert not specs[FIRST]["present"]
    assert "symbolic link" in specs[FIRST]["problem"]
    assert submission.source_of(specs[FIRST]) == ""
    assert specs[SECOND]["present"]
    linked = tmp_path / "linked"
    os.symlink(folder, linked)
    area2 = tmp_path / "area2"
    area2.mkdir()
    specs, _ = submission.take(linked, area2)
    assert all("symbolic link" in spec["problem"] for spec in specs.values())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_oversized_modules_are_refused(tmp_path, mode):
    folder = make_submission(tmp_path / "exercises", omit=(FIRST, SECOND))
    os.mkfifo(folder / f"{FIRST}.py")
    (folder / f"{SECOND}.py").write_bytes(b"#" * (submission.MAX_SOURCE_BYTES + 1))
    area = tmp_path / "area"
    area.mkdir()
    specs, _ = submission.take(folder, area)
    assert "not a regular file" in specs[FIRST]["problem"]
    assert "larger than" in specs[SECOND]["problem"]
    assert specs[THIRD]["present"]


def test_missing_folder_and_missing_module(tmp_path, mode):
    area = tmp_path / "area"
    area.mkdir()
    specs, _ = submission.take(tmp_path / "nowhere", area)
    assert all(not spec["present"] and spec["problem"] is None for spec in specs.values())
