"""Lab records are student files, read as hostile input: never through a symbolic link, only
regular files (a FIFO must not block), bounded in size, and every value echoed back is bounded
and free of control characters. Covers check_file, find_records and the check-lab command;
the grade's side (lab_credit) is in test_lab_credit.py."""
from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest
from support.helpers import ROOT
from support.lab_records import RECORDS, check_lab

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.assignment.lab import check as lab_check, files as lab_files  # noqa: E402

RESULTS = Path("benchmarks/results/train_mixed_precision_backward")
SECRET = "SECRET-7f3a9c-do-not-print"

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                    reason="POSIX symbolic links")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")


def chapter_text() -> str:
    return (RECORDS / "chapter_default14.json").read_text(encoding="utf-8")


@pytest.fixture
def secret_file(tmp_path):
    """A file outside the repository that would earn credit if read, with a secret inside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "train-amp-backward_default14.json"
    path.write_text(chapter_text().replace('"default14"', json.dumps(SECRET)), encoding="utf-8")
    assert lab_check.check_file(path).earns_credit  # so a refusal below is the link's doing
    return path


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "repo" / RESULTS).mkdir(parents=True)
    return tmp_path / "repo"


def finishes(function, seconds=10.0):
    """function's result, or a failure when it blocks (a FIFO opened for reading blocks)."""
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("result", function()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{function} blocked for {seconds} s"
    return box["result"]


# --------------------------------------------------------------------------- symbolic links

@needs_symlinks
def test_a_linked_record_is_refused_unread(repo, secret_file):
    link = repo / RESULTS / "train-amp-backward_default14.json"
    link.symlink_to(secret_file)
    verdict = lab_check.check_file(link)
    assert not verdict.readable and not verdict.valid and not verdict.earns_credit
    assert any("symbolic link" in reason for reason in verdict.reasons), verdict.reasons
    assert SECRET not in repr(verdict)


@needs_symlinks
def test_check_lab_command_refuses_a_link_clearly(tmp_path, secret_file, capsys):
    link = tmp_path / "train-amp-backward_mine.json"
    link.symlink_to(secret_file)
    code, out = check_lab([link], capsys)
    assert code == 2
    assert "is a symbolic link" in out and "never read through a link" in out
    assert SECRET not in out
    code, out = check_lab([secret_file], capsys)  # the same file named directly is fine
    assert code == 0 and "earns the optional GPU credit" in out


@needs_symlinks
def test_find_records_lists_a_link_so_that_it_is_refused_not_followed(repo, secret_file):
    link = repo / RESULTS / "train-amp-backward_default14.json"
    link.symlink_to(secret_file)
    (repo / "train-amp-backward_dir.json").symlink_to(secret_file.parent)  # link to a folder
    found = lab_check.find_records(repo)
    assert found == [link, repo / "train-amp-backward_dir.json"]
    for path in found:
        verdict = lab_check.check_file(path, root=repo)
        assert not verdict.readable and "symbolic link" in verdict.reasons[0]


@needs_symlinks
@pytest.mark.parametrize("linked", ["benchmarks", "benchmarks/results",
                                    "benchmarks/results/train_mixed_precision_backward"])
def test_a_linked_folder_on_the_way_is_not_entered(tmp_path, secret_file, linked):
    repo = tmp_path / "repo"
    (repo / linked).parent.mkdir(parents=True)
    # Point the folder at a tree that holds the secret record at the expected place.
    target = tmp_path / "elsewhere"
    (target / RESULTS).mkdir(parents=True)
    (target / RESULTS / secret_file.name).write_text(secret_file.read_text(encoding="utf-8"),
                                                     encoding="utf-8")
    depth = len(Path(linked).parts)
    (repo / linked).symlink_to(target.joinpath(*RESULTS.parts[:depth]), target_is_directory=True)
    assert lab_check.find_records(repo) == []
    # Reading below a linked folder relative to the repository is refused too.
    verdict = lab_check.check_file(repo / RESULTS / secret_file.name, root=repo)
    assert not verdict.readable and "symbolic link" in verdict.reasons[0]
    assert SECRET not in repr(verdict)


# --------------------------------------------------------------------------- FIFOs, devices, size

@needs_fifo
def test_a_fifo_named_like_a_record_does_not_block(repo, capsys):
    fifo = repo / RESULTS / "train-amp-backward_fifo.json"
    os.mkfifo(fifo)
    assert finishes(lambda: lab_check.find_records(repo)) == [fifo]
    verdict = finishes(lambda: lab_check.check_file(fifo, root=repo))
    assert not verdict.readable and "not a regular file" in verdict.reasons[0]
    code, out = finishes(lambda: check_lab([fifo], capsys))
    assert code == 2 and "not a regular file" in out


def test_a_device_is_refused(capsys):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    verdict = finishes(lambda: lab_check.check_file("/dev/zero"))  # would never end if read
    assert not verdict.readable and "not a regular file" in verdict.reasons[0]


def test_an_oversized_record_is_refused(repo):
    path = repo / RESULTS / "train-amp-backward_default14.json"
    text = chapter_text()

    def padded(size):  # the chapter's record with trailing blanks: still valid JSON
        return text + " " * (size - len(text.encode("utf-8")))

    path.write_text(padded(lab_files.MAX_RECORD_BYTES + 1), encoding="utf-8")
    verdict = lab_check.check_file(path)
    assert not verdict.readable and not verdict.earns_credit
    assert f"larger than {lab_files.MAX_RECORD_BYTES} bytes" in verdict.reasons[0]
    path.write_text(padded(lab_files.MAX_RECORD_BYTES), encoding="utf-8")  # at the bound exactly
    assert len(path.read_bytes()) == lab_files.MAX_RECORD_BYTES
    assert lab_check.check_file(path).earns_credit


# --------------------------------------------------------------------------- hostile contents

def test_echoed_values_are_bounded_and_escaped(tmp_path):
    record = json.loads(chapter_text())
    hostile = "\x1b[2J\x1b]0;pwned\x07" + "A" * 100_000 + "\n- fake reason"
    record["hardware"]["name"] = hostile
    record["run_label"] = hostile
    record["metrics"]["candidate"]["label"] = hostile
    path = tmp_path / "train-amp-backward_x.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    verdict = lab_check.check_file(path)
    assert not verdict.valid  # the label is wrong
    everything = "\n".join([verdict.summary, *verdict.reasons, *verdict.notes, *verdict.plausibility,
                            json.dumps(verdict.hardware)])
    assert "\x1b" not in everything and "\x07" not in everything and "\n- fake" not in everything
    assert max(len(line) for line in everything.splitlines()) < 400
    assert len(verdict.hardware["name"]) <= 80


@pytest.mark.parametrize("text, phrase", [
    ('{"seed": ' + "9" * 5000 + "}", "not valid JSON"),      # an integer too long to convert
    ("[" * 100_000 + "]" * 100_000, "not valid JSON"),         # nesting deeper than the parser
    ('{"a": 1e999}', "overflows"),
])
def test_pathological_json_is_refused_without_raising(tmp_path, text, phrase):
    path = tmp_path / "train-amp-backward_x.json"
    path.write_text(text, encoding="utf-8")
    verdict = lab_check.check_file(path)
    assert not verdict.valid and not verdict.earns_credit
    assert phrase in verdict.reasons[0]
