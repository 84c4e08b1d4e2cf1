"""What the grader trusts besides the box (issue 17): the tamper hash never
follows a link in any path component, and whole-trajectory comparisons check
non-finite reference values position by position instead of skipping them."""
import os

import pytest
import torch

from autograder.intake import integrity
from autograder.judging.judge import Mistake, expect_relative_error


def test_a_linked_folder_in_the_middle_of_a_protected_path_is_refused(tmp_path):
    real = tmp_path / "elsewhere"
    (real / "sandbox").mkdir(parents=True)
    (real / "sandbox" / "box.py").write_text("original = True\n")
    repo = tmp_path / "repo"
    (repo / "autograder").mkdir(parents=True)
    os.symlink(real / "sandbox", repo / "autograder" / "sandbox")  # the folder, not the file, is a link
    digest = integrity.normalised_sha256(real / "sandbox" / "box.py")
    flags = integrity.compare(repo, {"files": {"autograder/sandbox/box.py": digest}})
    assert flags and "symbolic link" in flags[0], flags


def test_the_same_file_without_links_passes(tmp_path):
    repo = tmp_path / "repo"
    (repo / "autograder" / "sandbox").mkdir(parents=True)
    (repo / "autograder" / "sandbox" / "box.py").write_text("original = True\n")
    digest = integrity.normalised_sha256("autograder/sandbox/box.py", root=repo)
    assert integrity.compare(repo, {"files": {"autograder/sandbox/box.py": digest}}) == []


def test_a_planted_cache_behind_a_linked_folder_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text("x = 1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, package / "__pycache__")
    (elsewhere / "mod.cpython-311.pyc").write_bytes(b"\0" * 32)
    assert integrity.planted_caches(package) == []  # a linked cache folder is not walked ...
    (elsewhere / "mod.cpython-311.pyc").unlink()
    os.unlink(package / "__pycache__")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "mod.cpython-311.pyc").symlink_to(elsewhere / "x")
    assert integrity.planted_caches(package) == ["__pycache__/mod.cpython-311.pyc"]  # ... and a link is flagged


REFERENCE = [torch.tensor([1.0, float("nan"), float("inf"), -2.0])]


@pytest.mark.parametrize("actual", [
    [torch.tensor([1.0, 5.0, float("inf"), -2.0])],            # a number where the reference has NaN
    [torch.tensor([1.0, float("nan"), float("-inf"), -2.0])],  # the wrong infinity
    [torch.tensor([1.0, float("inf"), float("nan"), -2.0])],   # NaN and inf swapped
    [torch.tensor([9.0, float("nan"), float("inf"), -2.0])],   # the finite part is off
])
def test_non_finite_references_are_compared_position_by_position(actual):
    with pytest.raises(Mistake):
        expect_relative_error(actual, REFERENCE, "weights", 1e-6)


def test_the_same_non_finite_values_pass():
    expect_relative_error([REFERENCE[0].clone()], REFERENCE, "weights", 1e-6)
