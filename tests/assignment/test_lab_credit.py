"""grade adds the optional GPU-lab credit (tag gpu_lab) only when the student's
repository holds a benchmark record, and only real, possible records count. It also
describes the record (lab_info) for reports, and says that the credit is self-reported."""
import json
import os
import shutil
import threading

import pytest
from support.helpers import ROOT, make_submission
from support.lab_records import RECORDS

RESULTS_DIR = "benchmarks/results/train_mixed_precision_backward"
SECRET = "SECRET-51e2-never-shown"
LAB_INFO_KEYS = {"file", "self_reported", "earns_credit", "valid", "plausible", "hardware",
                 "plausibility", "summary"}


@pytest.fixture
def repo(tmp_path):
    make_submission(tmp_path / "exercises")
    (tmp_path / RESULTS_DIR).mkdir(parents=True)
    return tmp_path


def lab_run(repo, *records):
    from autograder.assignment.lab.credit import lab_results

    for source, label in records:
        shutil.copyfile(RECORDS / source, repo / RESULTS_DIR / f"train-amp-backward_{label}.json")
    return lab_results(repo / "exercises")


def lab_tests(repo, *records):
    tests, _ = lab_run(repo, *records)
    return tests


def test_no_record_no_lab_test_and_no_lab_info(repo):
    assert lab_run(repo) == ([], {})


def test_chapter_record_earns_the_credit(repo):
    (test,) = lab_tests(repo, ("chapter_default14.json", "default14"))
    assert test.module == "gpu_lab" and test.passed and test.score == test.max_score > 0
    assert test.to_gradescope()["tags"] == ["gpu_lab"]
    assert "self-reported" in test.output


def test_lab_info_describes_the_credited_record(repo):
    (test,), info = lab_run(repo, ("chapter_default14.json", "default14"))
    assert test.passed and set(info) == LAB_INFO_KEYS
    assert info["file"] == "train-amp-backward_default14.json"
    assert info["self_reported"] is True
    assert info["earns_credit"] is info["valid"] is info["plausible"] is True
    assert info["hardware"] == {"name": "NVIDIA GeForce RTX 5070 Ti", "device": "cuda",
                                "total_memory_mb": 16302.5, "capability": "12.0"}
    assert any("2.3% of the RTX 5070 Ti's FP16 dense tensor peak" in note
               for note in info["plausibility"]), info["plausibility"]
    assert "96.50" in info["summary"] and "earns the optional GPU credit" in info["summary"]
    assert json.loads(json.dumps(info, allow_nan=False)) == info  # plain JSON


def test_test_name_and_feedback_follow_the_language_and_lab_info_stays_english(repo):
    (english,), info_en = lab_run(repo, ("bad_backoffs_vs_scale.json", "mine"))
    from autograder.assignment.lab.credit import lab_results

    (chinese,), info_zh = lab_results(repo / "exercises", lang="zh")
    assert english.name == "gpu_lab: benchmark record earns optional credit"
    assert chinese.name.startswith("gpu_lab: ") and chinese.name != english.name
    assert "暂未获得 GPU 加分" in chinese.output and "scale 轨迹" in chinese.output
    assert "自行提交" in chinese.output and "- " in chinese.output
    assert info_zh == info_en  # staff reports read English
    assert (chinese.passed, chinese.score) == (english.passed, english.score)


def test_inconsistent_record_explains_why(repo):
    (test,), info = lab_run(repo, ("bad_backoffs_vs_scale.json", "mine"))
    assert not test.passed and test.score == 0 and "no GPU credit" in test.output
    assert "- " in test.output  # one line per reason
    assert "self-reported" in test.output
    assert info["valid"] is False and info["earns_credit"] is False
    assert info["hardware"]["name"] == "NVIDIA GeForce RTX 5070 Ti"


def test_impossible_record_is_refused_with_the_figure(repo):
    (test,), info = lab_run(repo, ("impossible_fp32_faster_than_gpu.json", "mine"))
    assert not test.passed and test.score == 0
    assert "faster than the RTX 5070 Ti can compute it" in test.output
    assert info["valid"] is True and info["plausible"] is False and info["earns_credit"] is False
    assert any("432.1% of the RTX 5070 Ti's FP32/TF32 peak" in note for note in info["plausibility"])


def test_smoke_record_is_not_a_claim(repo):
    assert lab_run(repo, ("cpu_smoke_sample.json", "smoke")) == ([], {})


def committed_records():
    return sorted((ROOT / RESULTS_DIR).glob("train-amp-backward_*.json"))


def test_every_committed_reference_record_is_listed_and_checks():
    """The course's reference runs in this repository's results folder are listed by content in
    REFERENCE_RECORDS (a new one must be added there) and stay valid, plausible, uncredited
    records for check-lab."""
    import hashlib

    from autograder.assignment.lab import check as lab_check
    from autograder.assignment.lab.credit import REFERENCE_RECORDS

    records = committed_records()
    assert records, "gpu_lab/STAFF.md's H200 column cites records in " + RESULTS_DIR
    for path in records:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in REFERENCE_RECORDS, f"{path.name}: add {digest} to REFERENCE_RECORDS"
        verdict = lab_check.check_file(path, root=ROOT, lang=None)
        assert verdict.valid and verdict.plausible and not verdict.earns_credit, verdict.reasons


def test_reference_records_add_no_lab_test_but_an_edited_copy_does(repo):
    """Grading this repository (its exercises/ or solutions/) leaves the course's reference records
    out; the same record with one figure changed is a student's claim and is checked."""
    source = committed_records()[0]
    shutil.copyfile(source, repo / RESULTS_DIR / source.name)
    assert lab_run(repo) == ([], {})
    record = json.loads(source.read_text(encoding="utf-8"))
    record["run_label"] = "mine"
    (repo / RESULTS_DIR / "train-amp-backward_mine.json").write_text(json.dumps(record), encoding="utf-8")
    (test,) = lab_tests(repo)
    assert not test.passed and "train-amp-backward_mine.json" in test.output


def test_best_record_counts(repo):
    (test,), info = lab_run(repo, ("bad_backoffs_vs_scale.json", "a"), ("chapter_default14.json", "b"))
    assert test.passed
    assert info["file"] == "train-amp-backward_b.json" and info["earns_credit"]


def test_without_credit_the_closest_record_explains(repo):
    # A valid record that earns no credit says more than an invalid one.
    (test,), info = lab_run(repo, ("bad_backoffs_vs_scale.json", "a"), ("nocredit_repeats_10.json", "b"))
    assert not test.passed and "at least 20" in test.output
    assert info["file"] == "train-amp-backward_b.json"


# --------------------------------------------------------------------------- hostile files

@pytest.mark.skipif(os.name == "nt", reason="POSIX symbolic links")
def test_a_linked_record_is_refused_and_its_target_never_shown(repo, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.json"
    text = (RECORDS / "chapter_default14.json").read_text(encoding="utf-8")
    outside.write_text(text.replace("NVIDIA GeForce RTX 5070 Ti", SECRET), encoding="utf-8")
    (repo / RESULTS_DIR / "train-amp-backward_default14.json").symlink_to(outside)
    (test,), info = lab_run(repo)
    assert not test.passed and test.score == 0
    assert "symbolic link" in test.output
    assert SECRET not in test.output and SECRET not in json.dumps(info)
    assert info["valid"] is False and info["hardware"]["name"] is None


@pytest.mark.skipif(os.name == "nt", reason="POSIX symbolic links")
def test_a_linked_results_folder_is_not_searched(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    shutil.copyfile(RECORDS / "chapter_default14.json", elsewhere / "train-amp-backward_default14.json")
    shutil.rmtree(repo / "benchmarks")
    (repo / "benchmarks" / "results").mkdir(parents=True)
    (repo / RESULTS_DIR).symlink_to(elsewhere, target_is_directory=True)
    assert lab_run(repo) == ([], {})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_named_like_a_record_does_not_block_the_grade(repo):
    os.mkfifo(repo / RESULTS_DIR / "train-amp-backward_fifo.json")
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("result", lab_run(repo)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "lab_results blocked on a FIFO"
    (test,), info = box["result"]
    assert not test.passed and "not a regular file" in test.output
    assert info["valid"] is False and info["earns_credit"] is False


def test_an_oversized_record_is_refused(repo):
    from autograder.assignment.lab import files as lab_files

    text = (RECORDS / "chapter_default14.json").read_text(encoding="utf-8")
    path = repo / RESULTS_DIR / "train-amp-backward_big.json"
    path.write_text(text + " " * lab_files.MAX_RECORD_BYTES, encoding="utf-8")
    (test,), info = lab_run(repo)
    assert not test.passed and "larger than" in test.output
    assert info["earns_credit"] is False


def test_hostile_hardware_strings_are_bounded_in_lab_info(repo):
    record = json.loads((RECORDS / "chapter_default14.json").read_text(encoding="utf-8"))
    record["hardware"]["name"] = "\x1b[31m" + "X" * 50_000
    record["hardware"]["capability"] = {"major": 12, "minor": 0, "extra": "Y" * 50_000}
    (repo / RESULTS_DIR / "train-amp-backward_default14.json").write_text(json.dumps(record),
                                                                          encoding="utf-8")
    (test,), info = lab_run(repo)
    dumped = json.dumps(info)
    assert "\\u001b" not in dumped and len(dumped) < 3000
    assert len(info["hardware"]["name"]) <= 80 and info["hardware"]["capability"] == "12.0"
    assert len(test.output) < 3000
