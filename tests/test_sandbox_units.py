"""Small pieces of the sandbox, on their own: which interpreter folders a box
may read, how box reports combine, uids for students."""
import os

import pytest

from autograder.sandbox import isolation, uids
from autograder.sandbox.confine.confinement import _carve


def test_carving_keeps_everything_but_the_grader(tmp_path):
    for folder in ("lib/python3/site-packages", "repo/autograder/assignment/hidden", "repo/.venv/lib", "repo/docs", "bin"):
        (tmp_path / folder).mkdir(parents=True)
    root, repo = str(tmp_path), str(tmp_path / "repo")
    kept = _carve(root, [repo])
    assert repo not in kept and not any(path.startswith(repo + os.sep) for path in kept)
    assert sorted(os.path.basename(p) for p in kept) == ["bin", "lib"]
    assert _carve(str(tmp_path / "repo" / ".venv"), [repo]) == [str(tmp_path / "repo" / ".venv")]
    assert _carve(repo, [repo]) == []


def test_combined_report_is_the_weakest():
    strong = {"confined": True, "clean_process": True, "fs": "Landlock", "network": "none",
              "signals": "own process namespace", "process_namespace": True, "uid": "uid 5 of its own",
              "scratch": "tmpfs", "problems": []}
    weak = dict(strong, confined=False, process_namespace=False, problems=["no user namespace"])
    combined = isolation.combine([strong, weak, strong])
    assert combined["confined"] is False and combined["process_namespace"] is False
    assert combined["problems"] == ["no user namespace"]
    assert isolation.combine([strong, strong])["confined"] is True
    assert isolation.combine([]) == {}
    assert "NOT CONFINED" in isolation.summary(combined)


@pytest.mark.skipif(not uids.running_as_root(), reason="uids are handed out as root only")
def test_student_uids_are_unused_and_distinct():
    chosen = uids.allocate(5)
    assert len(set(chosen)) == 5
    assert all(uid >= uids.FIRST and not uids.processes_of(uid) for uid in chosen)


def test_no_uids_without_root(monkeypatch):
    monkeypatch.setattr(uids, "running_as_root", lambda: False)
    assert uids.allocate(2) == [None, None]
