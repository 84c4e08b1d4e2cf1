"""grade adds the optional GPU-lab credit (tag gpu_lab) only when the student's
repository holds a benchmark record, and only real records count."""
import shutil

import pytest

from helpers import ROOT, make_submission

RECORDS = ROOT / "tests" / "data" / "lab_records"
RESULTS_DIR = "benchmarks/results/train_mixed_precision_backward"


@pytest.fixture
def repo(tmp_path):
    make_submission(tmp_path / "exercises")
    (tmp_path / RESULTS_DIR).mkdir(parents=True)
    return tmp_path


def lab_tests(repo, *records):
    from autograder.lab_credit import lab_results

    for source, label in records:
        shutil.copyfile(RECORDS / source, repo / RESULTS_DIR / f"train-amp-backward_{label}.json")
    return lab_results(repo / "exercises")


def test_no_record_no_lab_test(repo):
    assert lab_tests(repo) == []


def test_chapter_record_earns_the_credit(repo):
    (test,) = lab_tests(repo, ("chapter_default14.json", "default14"))
    assert test.module == "gpu_lab" and test.passed and test.score == test.max_score > 0
    assert test.to_gradescope()["tags"] == ["gpu_lab"]


def test_inconsistent_record_explains_why(repo):
    (test,) = lab_tests(repo, ("bad_backoffs_vs_scale.json", "mine"))
    assert not test.passed and test.score == 0 and "no GPU credit" in test.output
    assert "- " in test.output  # one line per reason


def test_smoke_record_is_not_a_claim(repo):
    assert lab_tests(repo, ("cpu_smoke_sample.json", "smoke")) == []


def test_best_record_counts(repo):
    (test,) = lab_tests(repo, ("bad_backoffs_vs_scale.json", "a"), ("chapter_default14.json", "b"))
    assert test.passed
