"""grade-many / merge-scores: a small class graded in one batch must get exactly
the totals a single `grade` gives, with its report, charts, shards and re-grades.

The class (module scope, graded once by the real command line):
  amp-alice  repository layout, reference solutions
  amp-bob    repository layout, the stubs
  carol      bare exercises folder, reference solutions
  amp-dave   repository layout, loss_scaler.py has a syntax error
  amp-frank  repository layout, amp_update.py calls os._exit(3) when imported
  gina       no submission at all (a README only)
"""
import csv
import json
import os
import pathlib
import re
import shutil
import sys
import time

import pytest

from autograder.i18n import render_data
from autograder.intake import grader_guard
from autograder.sandbox.confine import limits as os_limits
from support.helpers import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.batch import grade_class as batch, jobs as batch_jobs  # noqa: E402
from autograder.class_reports import class_report  # noqa: E402
from autograder.class_reports import write as class_write  # noqa: E402
from support.cli import main_in_process, autograder_command, autograder_commands  # noqa: E402
from support.helpers import working_copies  # noqa: E402

SEED = 424242
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
           AUTOGRADER_GRADER_GUARD="0")  # never restore the shared checkout under a colleague's edits


@pytest.fixture(autouse=True)
def _no_guard_on_the_checkout(monkeypatch):
    """The grader-file guard is tested on a copy (test_guard_*), not on this checkout."""
    monkeypatch.setenv("AUTOGRADER_GRADER_GUARD", "0")


def _copy_modules(source, destination, edits=None):
    destination.mkdir(parents=True, exist_ok=True)
    for module in MODULES:
        text = (source / f"{module}.py").read_text(encoding="utf-8")
        text = (edits or {}).get(module, lambda t: t)(text)
        (destination / f"{module}.py").write_text(text, encoding="utf-8")


def build_class(root):
    solutions, stubs = ROOT / "solutions", ROOT / "exercises"
    _copy_modules(solutions, root / "amp-alice" / "exercises")
    (root / "amp-alice" / "README.md").write_text("alice\n", encoding="utf-8")
    (root / "amp-alice" / "pyproject.toml").write_text('[tool.autograder]\nlang = "zh"\n', encoding="utf-8")
    _copy_modules(stubs, root / "amp-bob" / "exercises")
    _copy_modules(solutions, root / "carol")
    _copy_modules(solutions, root / "amp-dave" / "exercises",
                  {"loss_scaler": lambda t: t + "\n\ndef broken(:\n    pass\n"})
    _copy_modules(solutions, root / "amp-frank" / "exercises",
                  {"amp_update": lambda t: "import os\nos._exit(3)\n" + t})
    (root / "gina").mkdir()
    (root / "gina" / "README.md").write_text("nothing here\n", encoding="utf-8")
    (root / "roster.csv").write_text("not a student folder\n", encoding="utf-8")
    (root / ".git").mkdir()
    return root


def run_cli(*args, timeout=600):
    return autograder_command(*args, env=ENV, timeout=timeout)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The class, graded by `python -m autograder grade-many ... --jobs 2`."""
    base = tmp_path_factory.mktemp("class")
    root = build_class(base / "root")
    out = base / "out"
    started = time.monotonic()
    proc = run_cli("grade-many", root, "--output-dir", out, "--jobs", 2, "--seed", SEED)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"root": root, "out": out, "proc": proc, "seconds": time.monotonic() - started}


@pytest.fixture(scope="module")
def single_grades(graded_class, tmp_path_factory):
    """`python -m autograder grade` of some students, two at a time, same seed."""
    root, scratch = graded_class["root"], tmp_path_factory.mktemp("single")
    chosen = {"amp-alice": root / "amp-alice" / "exercises", "carol": root / "carol",
              "amp-dave": root / "amp-dave" / "exercises", "amp-frank": root / "amp-frank" / "exercises"}
    done = autograder_commands(*[("grade", "--submission", submission, "--results", scratch / f"{student}.json",
                                  "--seed", SEED, "--quiet") for student, submission in chosen.items()], env=ENV)
    results = {}
    for student, proc in zip(chosen, done):
        assert proc.returncode == 0, proc.stderr
        results[student] = json.loads((scratch / f"{student}.json").read_text(encoding="utf-8"))
    return results


# -- discovery, shards, helpers (no grading) ------------------------------------------------------
def test_locate_submission_layouts(tmp_path):
    root = build_class(tmp_path)
    assert batch.locate_submission(root / "amp-alice")[:2] == (root / "amp-alice" / "exercises", "repo")
    assert batch.locate_submission(root / "carol")[:2] == (root / "carol", "bare")
    folder, layout, reason = batch.locate_submission(root / "gina")
    assert folder is None and layout is None and "no submission found" in reason
    assert batch.discover(root) == ["amp-alice", "amp-bob", "amp-dave", "amp-frank", "carol", "gina"]


def test_shards_partition_the_class():
    students = [f"s{i:02d}" for i in range(23)]
    for n in (1, 2, 3, 5, 30):
        slices = [batch.select_shard(students, k, n) for k in range(1, n + 1)]
        assert sorted(s for part in slices for s in part) == sorted(students)
        assert max(map(len, slices)) - min(map(len, slices)) <= 1
        assert slices == [batch.select_shard(list(reversed(students)), k, n) for k in range(1, n + 1)]
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(batch.UsageError):
            batch.parse_shard(bad)


def test_progress_bar_lines_and_tty():
    import io

    log = io.StringIO()
    bar = batch.Progress(2, stream=log)
    bar.update("a", "ok", "3/4")
    bar.update("b", "crashed")
    assert log.getvalue().splitlines() == ["[1/2] a: 3/4", "[2/2] b: crashed"]

    class Tty(io.StringIO):
        def isatty(self):
            return True

    screen = Tty()
    bar = batch.Progress(2, stream=screen)
    bar.update("a", "ok")
    bar.update("b", "timed out")
    # rich's bar: redrawn in place, left complete with the problems counted
    assert "grading" in screen.getvalue() and "\n" in screen.getvalue()
    assert "2/2" in screen.getvalue() and "1 timed out" in screen.getvalue()


# -- the batch itself ------------------------------------------------------------------------------
@pytest.mark.slow
def test_outputs_exist(graded_class):
    out = graded_class["out"]
    for name in ("scores.csv", "report.md", "report.html", "run.json", "score_distribution.png",
                 "test_pass_rates.png", "module_scores.png"):
        assert (out / name).is_file(), name
    for chart in class_report.CHARTS.values():
        data = (out / chart).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 2000, chart
    # gina (a README only) and amp-bob (the stubs) are no graded work: the summary says so
    assert "6 folder(s) in" in graded_class["proc"].stderr
    assert "4 graded with work of their own; 1 no work since the template, 1 no submission" in \
        graded_class["proc"].stderr
    assert "[6/6]" in graded_class["proc"].stderr  # progress, one line per student off a terminal


@pytest.mark.slow
def test_csv_rows_and_columns(graded_class):
    out = graded_class["out"]
    rows = read_csv(out / "scores.csv")
    assert [row["student"] for row in rows] == ["amp-alice", "amp-bob", "amp-dave", "amp-frank", "carol", "gina"]
    header = list(rows[0].keys())
    assert header[:7] == ["student", "status", "total", "max_score", *MODULES]
    tests = [column for column in header if "/" in column]
    assert tests and all(column.split("/")[0] in MODULES for column in tests)
    assert header[-3:] == ["seed", "flags", "reason"]
    by_name = {row["student"]: row for row in rows}
    for student, row in by_name.items():
        data = json.loads((out / student / "results.json").read_text(encoding="utf-8"))
        assert float(row["total"]) == data["score"], student
        assert row["seed"] == str(SEED)
        if row["status"] == "ok":
            assert sum(float(row[m]) for m in MODULES) == pytest.approx(float(row["total"]))
            assert sum(float(row[t]) for t in tests) == pytest.approx(float(row["total"]))
    alice, bob, gina = by_name["amp-alice"], by_name["amp-bob"], by_name["gina"]
    assert alice["status"] == "ok" and float(alice["total"]) == float(alice["max_score"]) > 0
    assert bob["status"] == "no work since the template" and float(bob["total"]) == 0 and float(bob["max_score"]) > 0
    assert gina["status"] == "no submission" and float(gina["total"]) == 0
    assert "no exercises/ folder" in gina["reason"] and all(gina[t] == "" for t in tests)
    dave = by_name["amp-dave"]
    assert float(dave["loss_scaler"]) == 0 and float(dave["amp_update"]) == float(alice["amp_update"])
    frank = by_name["amp-frank"]  # os._exit at import: only amp_update is lost, only for frank
    assert frank["status"] == "ok" and float(frank["amp_update"]) == 0
    assert float(frank["loss_scaler"]) == float(alice["loss_scaler"])


@pytest.mark.slow
def test_same_totals_as_single_grade(graded_class, single_grades):
    out = graded_class["out"]
    for student, single in single_grades.items():
        batched = json.loads((out / student / "results.json").read_text(encoding="utf-8"))
        assert batched["score"] == single["score"], student
        assert batched["max_score"] == single["max_score"], student
        assert [(t["test_id"], t["status"]) for t in batched["tests"]] == \
            [(t["test_id"], t["status"]) for t in single["tests"]], student
        # the same feedback, word for word, from suites collected once for the class
        # (a file is named as each command was given it: relative in the batch, as typed for grade)
        if batched["extra_data"]["lang"] == single["extra_data"]["lang"]:
            def feedback(report):
                return [re.sub(r"\S*/(\w+\.py)", r"\1", t["output"]) for t in report["tests"]]

            assert feedback(batched) == feedback(single), student
        assert batched["extra_data"]["seed"] == single["extra_data"]["seed"] == SEED
    assert sum(json.loads((out / student / "results.json").read_text(encoding="utf-8"))["extra_data"]["lang"]
               == single["extra_data"]["lang"] for student, single in single_grades.items()) >= 2


@pytest.mark.slow
def test_feedback_is_in_each_repository_language(graded_class):
    """amp-alice's repository sets zh (as the template does); the others set nothing."""
    manifest = json.loads((graded_class["out"] / "run.json").read_text(encoding="utf-8"))
    alice = json.loads((graded_class["out"] / "amp-alice" / "results.json").read_text(encoding="utf-8"))
    carol = json.loads((graded_class["out"] / "carol" / "results.json").read_text(encoding="utf-8"))
    assert alice["extra_data"]["lang"] == manifest["students"]["amp-alice"]["lang"] == "zh"
    assert "可见测试" in alice["output"] or "通过" in alice["output"]
    assert carol["extra_data"]["lang"] == "en" and "Visible tests passed" in carol["output"]


@pytest.mark.slow
def test_results_json_is_the_single_grade_format(graded_class):
    data = json.loads((graded_class["out"] / "amp-alice" / "results.json").read_text(encoding="utf-8"))
    assert {"score", "max_score", "tests", "output", "extra_data"} <= set(data)
    assert {"name", "score", "max_score", "status", "output", "visibility", "tags"} <= set(data["tests"][0])
    zero = json.loads((graded_class["out"] / "gina" / "results.json").read_text(encoding="utf-8"))
    assert zero["score"] == 0 and "no submission found" in zero["tests"][0]["output"]


@pytest.mark.slow
def test_report_markdown(graded_class):
    report = (graded_class["out"] / "report.md").read_text(encoding="utf-8")
    for heading in ("## Score distribution", "## Modules", "## What the class got wrong", "## Per-test pass rates",
                    "## Integrity flags", "## Not in the statistics", "## Students", "## Re-grading"):
        assert heading in report
    for chart in class_report.CHARTS.values():
        assert f"]({chart})" in report
    assert f"Seed `{SEED}`" in report
    assert "| gina | no submission | no submission found:" in report
    assert "| amp-alice | ok |" in report
    # every statistic is over the four students whose grading completed and who changed the stubs
    assert "6 folder(s): 5 student(s), 4 of them in the statistics. Left out: no work since the template: 1. " \
           "Folders without anything of a student: gina." in report
    assert "| 4/4 | 100% |" in report and "| 3/4 | 75% |" in report
    assert "| amp-bob | no work since the template | the modules are the template's stubs |" in report
    page = (graded_class["out"] / "report.html").read_text(encoding="utf-8")
    assert page.count('<section class="student"') == 5   # gina: a folder without a submission, no view


@pytest.mark.slow
def test_manifest_records_seed_and_layouts(graded_class):
    manifest = json.loads((graded_class["out"] / "run.json").read_text(encoding="utf-8"))
    assert manifest["seed"] == SEED and manifest["shard"] is None
    students = manifest["students"]
    assert students["amp-alice"]["layout"] == "repo" and students["amp-alice"]["submission"] == "amp-alice/exercises"
    assert students["carol"]["layout"] == "bare" and students["carol"]["submission"] == "carol"
    assert students["gina"]["status"] == "no submission"


# -- in-process runs (this process is the pre-imported parent) ----------------------------------------
@pytest.mark.slow
def test_shards_merge_to_the_unsharded_csv(graded_class, tmp_path):
    root = graded_class["root"]
    shards = []
    for k in (1, 2):
        shard_dir = tmp_path / f"shard-{k}"
        assert main_in_process("grade-many", root, "--output-dir", shard_dir, "--shard", f"{k}/2", "--seed", SEED,
                               "--jobs", 2, "--no-progress") == 0
        manifest = json.loads((shard_dir / "run.json").read_text(encoding="utf-8"))
        assert manifest["shard"] == f"{k}/2"
        shards.append(set(manifest["students"]))
    assert shards[0].isdisjoint(shards[1])
    assert shards[0] | shards[1] == set(batch.discover(root))
    merged = tmp_path / "merged"
    assert main_in_process("merge-scores", tmp_path / "shard-1", tmp_path / "shard-2", "--output-dir", merged) == 0
    assert (merged / "scores.csv").read_text(encoding="utf-8") == \
        (graded_class["out"] / "scores.csv").read_text(encoding="utf-8")
    assert (merged / "score_distribution.png").read_bytes().startswith(PNG_MAGIC)
    report = (merged / "report.md").read_text(encoding="utf-8")
    assert "Merged from 2 grade-many output(s)" in report and "Shard" not in report.split("##")[0]
    # a missing shard is reported, not silently ignored
    partial = tmp_path / "partial"
    assert main_in_process("merge-scores", tmp_path / "shard-1", "--output-dir", partial) == 0
    assert "shards missing: 2/2" in (partial / "report.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_regrade_one_student_in_place(graded_class, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(graded_class["out"], out)
    before = (out / "scores.csv").read_text(encoding="utf-8")
    untouched = (out / "amp-bob" / "results.json").stat().st_mtime_ns
    (out / "carol" / "results.json").unlink()
    assert main_in_process("grade-many", graded_class["root"], "--output-dir", out, "--only", "carol",
                           "--no-progress") == 0  # no --seed: the recorded one is reused
    assert (out / "carol" / "results.json").is_file()
    assert (out / "amp-bob" / "results.json").stat().st_mtime_ns == untouched
    assert (out / "scores.csv").read_text(encoding="utf-8") == before
    assert main_in_process("grade-many", graded_class["root"], "--output-dir", out, "--only", "nobody") == 2


@pytest.mark.slow
def test_subprocess_isolation_gives_the_same_total(graded_class, tmp_path):
    """The fallback where fork does not exist: one `grade` process per student."""
    assert main_in_process("grade-many", graded_class["root"], "--output-dir", tmp_path, "--only", "amp-dave",
                           "--seed", SEED, "--isolation", "subprocess", "--no-progress") == 0
    mine = json.loads((tmp_path / "amp-dave" / "results.json").read_text(encoding="utf-8"))
    batched = json.loads((graded_class["out"] / "amp-dave" / "results.json").read_text(encoding="utf-8"))
    assert mine["score"] == batched["score"]


HANG_TIMEOUT_S = 5  # the hang's row costs this much wall time


def _descendants():
    return os_limits.descendants(os.getpid())


@pytest.mark.slow
@pytest.mark.hostile
def test_hang_and_grader_killer_only_cost_their_own_rows(tmp_path, own_grading_parent):
    """A submission that hangs at import is stopped at --timeout; one whose import
    tries to kill the process grading it cannot reach it (its box has a PID
    namespace of its own), so that student's correct code keeps its points; the
    reference solution graded beside them is untouched. Nothing is left running.
    HANG_TIMEOUT_S is below the import limit (30 s), which would catch the hang
    first, and several times what a student here takes to grade (~1 s)."""
    root = tmp_path / "root"
    solutions = ROOT / "solutions"
    _copy_modules(solutions, root / "ok" / "exercises")
    _copy_modules(solutions, root / "hang" / "exercises", {"loss_scaler": lambda t: "while True:\n    pass\n" + t})
    _copy_modules(solutions, root / "killer" / "exercises",
                  {"amp_update": lambda t: "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + t})
    parent = own_grading_parent  # what is left there is this batch's
    before, copies_before = set(_descendants()), working_copies(parent)
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "--output-dir", out, "--jobs", 2, "--timeout", HANG_TIMEOUT_S,
                           "--seed", SEED, "--no-progress") == 0
    rows = {row["student"]: row for row in read_csv(out / "scores.csv")}
    assert rows["hang"]["status"] == "timed out" and float(rows["hang"]["total"]) == 0
    assert f"within {HANG_TIMEOUT_S} s" in rows["hang"]["reason"]
    hang = json.loads((out / "hang" / "results.json").read_text(encoding="utf-8"))
    assert hang["score"] == 0 and "timed out" in hang["tests"][0]["name"]
    assert rows["killer"]["status"] == "ok", rows["killer"]
    assert float(rows["killer"]["total"]) == float(rows["killer"]["max_score"])
    assert rows["ok"]["status"] == "ok" and float(rows["ok"]["total"]) == float(rows["ok"]["max_score"]) > 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| hang | timed out |" in report
    time.sleep(0.5)
    assert set(_descendants()) <= before
    # the killed grading process could not remove its working copies: the batch did
    assert working_copies(parent) <= copies_before


@pytest.mark.slow
def test_crashed_child_is_recorded_and_isolated(tmp_path, monkeypatch):
    """A grading child that dies without results: 'crashed', zero, reason; the
    other student in the same batch is graded normally."""
    from autograder.judging.results import GradeReport, TestResult

    root = tmp_path / "root"
    for student in ("dies", "lives"):
        (root / student).mkdir(parents=True)
        (root / student / "amp_update.py").write_text("x = 1\n", encoding="utf-8")

    def fake_grade(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
        if pathlib.Path(submission).name == "dies":
            os._exit(9)
        test = TestResult(name="amp_update: fake", module="amp_update", max_score=2.0, score=2.0,
                          passed=True, output="Passed.", visibility="visible", test_id="test_fake")
        return GradeReport(tests=[test], seed=seed, submission=str(submission))

    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade)
    monkeypatch.setattr(batch, "warm_up", lambda include_hidden=True, report=True: None)
    out = tmp_path / "out"
    entries = batch.run_batch(root, out, ["dies", "lives"], seed=5, jobs=2, progress=False)
    assert entries["dies"]["status"] == "crashed" and "exit code 9" in entries["dies"]["reason"]
    assert entries["lives"]["status"] == "ok"
    dies = json.loads((out / "dies" / "results.json").read_text(encoding="utf-8"))
    assert dies["score"] == 0 and "exit code 9" in dies["output"]
    lives = json.loads((out / "lives" / "results.json").read_text(encoding="utf-8"))
    assert lives["score"] == 2


@pytest.mark.slow
def test_a_grading_process_grades_one_student_after_another(tmp_path, monkeypatch):
    """One slot (--jobs 1): its process grades student after student; a student
    whose grading kills it or fails costs only that row, and the next student gets
    a new process."""
    from autograder.judging.results import GradeReport, TestResult

    root = tmp_path / "root"
    names = ("a-first", "b-second", "c-kills-its-grader", "d-after", "e-fails", "f-last")
    for student in names:
        (root / student).mkdir(parents=True)
        (root / student / "amp_update.py").write_text("x = 1\n", encoding="utf-8")

    def fake_grade(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
        name = pathlib.Path(submission).name
        if name == "c-kills-its-grader":
            os._exit(9)
        if name == "e-fails":
            raise RuntimeError("the judge's own bug")
        test = TestResult(name="amp_update: fake", module="amp_update", max_score=1.0, score=1.0,
                          passed=True, output=f"graded by {os.getpid()}", visibility="visible", test_id="test_fake")
        return GradeReport(tests=[test], seed=seed, submission=str(submission))

    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade)
    monkeypatch.setattr(batch, "warm_up", lambda include_hidden=True, report=True: None)
    before = set(_descendants())
    entries = batch.run_batch(root, tmp_path / "out", list(names), seed=5, jobs=1, progress=False)
    graders = {}
    for name in names:
        data = json.loads((tmp_path / "out" / name / "results.json").read_text(encoding="utf-8"))
        graders[name] = data["tests"][0]["output"]
    assert entries["c-kills-its-grader"]["status"] == "crashed" and "exit code 9" in entries["c-kills-its-grader"]["reason"]
    assert entries["e-fails"]["status"] == "crashed" and "failed on this submission" in entries["e-fails"]["reason"]
    assert all(entries[name]["status"] == "ok" for name in ("a-first", "b-second", "d-after", "f-last"))
    assert graders["a-first"] == graders["b-second"] != graders["d-after"] != graders["f-last"]
    assert "RuntimeError: the judge's own bug" in (tmp_path / "out" / "e-fails" / "grader.log").read_text()
    time.sleep(0.5)
    assert set(_descendants()) <= before  # every grading process is gone


@pytest.mark.slow
def test_report_without_matplotlib(graded_class, tmp_path, monkeypatch):
    out = tmp_path / "out"
    shutil.copytree(graded_class["out"], out)
    for chart in class_report.CHARTS.values():
        (out / chart).unlink()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    written = class_write.write_all(out, manifest)
    assert [p.name for p in written] == ["scores.csv", "report.md", "report.html"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Charts skipped: matplotlib is not installed" in report
    assert "](score_distribution.png)" not in report and "| gina | no submission |" in report


@pytest.mark.slow
def test_a_chart_that_fails_is_left_out_and_the_rest_is_written(graded_class, tmp_path, monkeypatch):
    """Each chart is drawn in a process of its own: one that fails costs only its image."""
    from autograder.class_reports import charts

    out = tmp_path / "out"
    shutil.copytree(graded_class["out"], out)
    for chart in class_report.CHARTS.values():
        (out / chart).unlink()

    def broken(path, rows, columns):
        raise RuntimeError("no font")

    monkeypatch.setitem(charts._DRAWERS, "modules", broken)
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    written = [path.name for path in class_write.write_all(out, manifest)]
    assert written == ["scores.csv", "report.md", "report.html", "score_distribution.png", "test_pass_rates.png"]
    assert (out / "test_pass_rates.png").read_bytes().startswith(PNG_MAGIC)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "](score_distribution.png)" in report and "](module_scores.png)" not in report


def test_warming_the_charts_up_leaves_nothing_behind_and_never_fails(tmp_path, monkeypatch):
    """grade-many draws a throwaway chart while it grades (its charts then fork warm)."""
    import matplotlib
    from autograder.class_reports import charts

    monkeypatch.chdir(tmp_path)
    before = set(matplotlib._pylab_helpers.Gcf.figs) if hasattr(matplotlib, "_pylab_helpers") else set()
    charts.warm()
    assert list(tmp_path.iterdir()) == []
    if hasattr(matplotlib, "_pylab_helpers"):
        assert set(matplotlib._pylab_helpers.Gcf.figs) == before  # no pyplot figure left open

    def no_font():
        raise RuntimeError("no font")

    monkeypatch.setattr(charts, "_fonts", no_font)
    charts.warm()  # a head start only: it says nothing and raises nothing


def test_a_probe_box_that_cannot_start_is_no_confinement(monkeypatch):
    """Asked for before the suites are collected, read after: a failure at either
    point refuses the class (or, allowed, grades it with the report saying so)."""
    import tempfile

    from autograder.sandbox.boxes import BoxError
    from autograder.sandbox.client import Limits
    from autograder.sandbox.isolation import start_probe

    class NoBoxes:
        def request_box(self, config):
            raise BoxError("sandbox zygote could not fork a box: no answer")

    with pytest.raises(batch.UsageError, match="without full confinement"):
        batch.check_confinement(NoBoxes(), False, [], start_probe(NoBoxes(), Limits()))
    warnings = []
    report = batch.check_confinement(NoBoxes(), True, warnings)
    assert report["confined"] is False and "could not fork a box" in report["problems"][0]
    assert warnings and render_data(warnings[0], "en").startswith("graded WITHOUT full confinement")

    def no_room(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_room)
    report = batch.check_confinement(NoBoxes(), True, [])
    assert report["confined"] is False and "No space left" in report["problems"][0]


def test_bad_usage_exits_2(tmp_path):
    assert main_in_process("grade-many", tmp_path / "missing", "--output-dir", tmp_path / "o") == 2
    assert main_in_process("grade-many", tmp_path, "--output-dir", tmp_path / "o", "--shard", "3/2") == 2
    assert main_in_process("merge-scores", tmp_path, "--output-dir", tmp_path / "o") == 2


# -- the instructor-side workflow ------------------------------------------------------------------
def test_grade_class_workflow_shape():
    """Structure of .github/workflows/grade-class.yml (actionlint runs on it in
    tests/repository/test_workflows.py where actionlint is installed)."""
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "grade-class.yml").read_text(encoding="utf-8"))
    on = workflow.get("on", workflow.get(True))
    inputs = on["workflow_dispatch"]["inputs"]
    assert {"assignment-id", "repos", "shards", "seed"} <= set(inputs)
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert list(jobs) == ["clone", "grade", "merge"]
    text = {name: yaml.safe_dump(job) for name, job in jobs.items()}
    assert "secrets." in text["clone"]
    assert "secrets." not in text["grade"] + text["merge"]  # student code runs there
    assert "gh classroom clone student-repos" in text["clone"]
    assert jobs["grade"]["needs"] == "clone"
    assert jobs["grade"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.clone.outputs.shards) }}"
    grade_run = "\n".join(step.get("run", "") for step in jobs["grade"]["steps"])
    assert "grade-many class" in grade_run and '--shard "$SHARD/$SHARDS"' in grade_run and '--seed "$SEED"' in grade_run
    assert "download.pytorch.org/whl/cpu" in yaml.safe_dump(workflow)
    merge_run = "\n".join(step.get("run", "") for step in jobs["merge"]["steps"])
    assert "merge-scores shards/shard-*" in merge_run and "GITHUB_STEP_SUMMARY" in merge_run
    uploads = [step["with"]["name"] for job in jobs.values() for step in job["steps"]
               if str(step.get("uses", "")).startswith("actions/upload-artifact")]
    assert uploads == ["class", "shard-${{ matrix.shard }}", "class-report"]
    for job in jobs.values():  # inputs reach scripts through env, never pasted into them
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step.get("name")


# -- the grader's own files -------------------------------------------------------------------------
def test_guard_restores_changed_missing_and_added_files(tmp_path):
    package = tmp_path / "pkg"
    (package / "hidden").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    (package / "suite.ini").write_text("[pytest]\n", encoding="utf-8")
    (package / "hidden" / "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
    (package / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"cache")
    guard = grader_guard.GraderGuard(package)
    assert guard.restore() == []
    (package / "hidden" / "test_a.py").write_text("def test_a():\n    pass  # always passes\n", encoding="utf-8")
    (package / "suite.ini").unlink()
    (package / "hidden" / "conftest.py").write_text("import os\n", encoding="utf-8")
    (package / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"forged")
    (package / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"fresh")
    assert guard.restore() == ["__pycache__/engine.cpython-311.pyc", "__pycache__/new.cpython-311.pyc",
                               "hidden/conftest.py", "hidden/test_a.py", "suite.ini"]
    assert (package / "hidden" / "test_a.py").read_text(encoding="utf-8").endswith("assert True\n")
    assert (package / "suite.ini").is_file() and not (package / "hidden" / "conftest.py").exists()
    assert not (package / "__pycache__" / "new.cpython-311.pyc").exists()
    assert not (package / "__pycache__" / "engine.cpython-311.pyc").exists()  # rebuilt by Python
    assert guard.restore() == []


def test_guards_cover_the_files_an_assignment_grader_reads_from_outside_the_package(monkeypatch):
    """The lab's record layout (gpu_lab/amp_lab_layout.py) is read by check-lab: its folder is
    guarded beside the package, and an edit there shows under its folder's name."""
    from autograder import active_assignment, locations

    guards = grader_guard.GraderGuards(keep_contents=False)
    folders = [guard.package_dir for guard in guards.guards]
    for name in active_assignment.current().grader_files:
        assert (locations.REPO_ROOT / name).parent.resolve() in folders, name
    lab_guard = next(guard for guard in guards.guards if guard.package_dir.name == "gpu_lab")
    monkeypatch.setattr(lab_guard, "changes", lambda: ["amp_lab_layout.py"])
    assert "gpu_lab/amp_lab_layout.py" in guards.changes()


@pytest.mark.parametrize("keep_contents", [True, False])
def test_guard_sees_edits_that_keep_size_and_times(tmp_path, monkeypatch, keep_contents):
    """Files older than the snapshot's window are compared by status only: an edit
    of the same size with its modification time put back still changes the change
    time, which no student can set. Recent files are compared by content as well."""
    package = tmp_path / "pkg"
    package.mkdir()
    old, fresh = package / "old.py", package / "fresh.py"
    old.write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(grader_guard, "RECENT_S", 0.0)  # old.py counts as old
    time.sleep(0.05)  # past the kernel's clock tick
    guard = grader_guard.GraderGuard(package, keep_contents=keep_contents)
    assert guard.by_content == set() and guard.changes() == []
    before = old.stat()
    time.sleep(0.05)
    old.write_text("x = 2\n", encoding="utf-8")
    os.utime(old, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert old.stat().st_size == before.st_size and old.stat().st_mtime_ns == before.st_mtime_ns
    assert guard.changes() == ["old.py"]
    monkeypatch.setattr(grader_guard, "RECENT_S", 60.0)
    fresh.write_text("y = 1\n", encoding="utf-8")
    guard = grader_guard.GraderGuard(package, keep_contents=keep_contents)
    assert guard.by_content == {"old.py", "fresh.py"}
    fresh.write_text("y = 3\n", encoding="utf-8")  # maybe within the same clock tick
    assert guard.changes() == ["fresh.py"]
    if keep_contents:
        assert guard.restore() == ["fresh.py"]
        assert fresh.read_text(encoding="utf-8") == "y = 1\n" and guard.changes() == []
    else:
        with pytest.raises(RuntimeError):
            guard.restore()


@pytest.mark.slow
def test_guard_in_a_batch_warns_and_restores_before_the_next_student(tmp_path, monkeypatch):
    from autograder.judging.results import GradeReport, TestResult

    monkeypatch.setenv("AUTOGRADER_GRADER_GUARD", "1")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "suite.ini").write_text("original\n", encoding="utf-8")
    root = tmp_path / "root"
    for student in ("a-tamperer", "b-next"):
        (root / student).mkdir(parents=True)
        (root / student / "loss_scaler.py").write_text("x = 1\n", encoding="utf-8")
    seen = tmp_path / "seen"
    seen.mkdir()

    def fake_grade(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
        name = pathlib.Path(submission).name
        (seen / name).write_text((package / "suite.ini").read_text(encoding="utf-8"), encoding="utf-8")
        if name == "a-tamperer":
            (package / "suite.ini").write_text("tampered\n", encoding="utf-8")
        test = TestResult(name="loss_scaler: fake", module="loss_scaler", max_score=1.0, score=1.0,
                          passed=True, output="Passed.", visibility="visible", test_id="test_fake")
        return GradeReport(tests=[test], seed=seed, submission=str(submission))

    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade)
    monkeypatch.setattr(batch, "warm_up", lambda include_hidden=True, report=True: None)
    warnings = []
    batch.run_batch(root, tmp_path / "out", ["a-tamperer", "b-next"], seed=1, jobs=1, progress=False,
                    warnings=warnings, guard_dir=package)
    assert (seen / "b-next").read_text(encoding="utf-8") == "original\n"
    assert (package / "suite.ini").read_text(encoding="utf-8") == "original\n"
    said = [render_data(warning, "en") for warning in warnings]
    assert len(said) == 1 and "a-tamperer" in said[0] and "suite.ini" in said[0], said
    assert render_data(warnings[0], "zh").startswith("评分 a-tamperer 时，评分器自己的文件被改动")


@pytest.mark.slow
def test_interrupted_batch_still_writes_its_report(tmp_path, monkeypatch):
    """SIGTERM (or Ctrl-C) mid-batch: running and pending students are recorded as
    not graded, the report is written, the exit code is 130."""
    import signal

    from autograder.judging.results import GradeReport, TestResult

    root = tmp_path / "root"
    for student in ("s1", "s2", "s3"):
        (root / student).mkdir(parents=True)
        (root / student / "amp_update.py").write_text("x = 1\n", encoding="utf-8")

    def fake_grade(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
        if pathlib.Path(submission).name == "s1":
            os.kill(os.getppid(), signal.SIGTERM)
            time.sleep(30)
        test = TestResult(name="amp_update: fake", module="amp_update", max_score=1.0, score=1.0,
                          passed=True, output="Passed.", visibility="visible", test_id="test_fake")
        return GradeReport(tests=[test], seed=seed, submission=str(submission))

    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade)
    monkeypatch.setattr(batch, "warm_up", lambda include_hidden=True, report=True: None)
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "--output-dir", out, "--jobs", 1, "--no-progress") == 130
    rows = {row["student"]: row for row in read_csv(out / "scores.csv")}
    assert rows["s1"]["status"] == "crashed" and "interrupted" in rows["s1"]["reason"]
    assert rows["s3"]["status"] == "crashed" and "not graded" in rows["s3"]["reason"]
    assert "interrupted" in (out / "report.md").read_text(encoding="utf-8")


def test_report_lists_tamper_flags_and_escapes_markdown(tmp_path):
    from autograder.reports.gradescope import write_results
    from autograder.judging.results import GradeReport, TestResult

    test = TestResult(name="amp_update: t", module="amp_update", max_score=2.0, score=2.0, passed=True,
                      output="Passed.", visibility="hidden", test_id="test_t")
    report = GradeReport(tests=[test], seed=9, submission="x", flags=["exercises/tests/test_a.py was modified | edited"])
    write_results(report, tmp_path / "we|ird" / "results.json")
    manifest = {"seed": 9, "students": {"we|ird": {"status": "ok", "reason": "", "seed": 9}}}
    class_write.write_all(tmp_path, manifest)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| we\\|ird | exercises/tests/test_a.py was modified \\| edited |" in text
    row = read_csv(tmp_path / "scores.csv")[0]
    assert row["flags"] == "exercises/tests/test_a.py was modified | edited" and row["amp_update/test_t"] == "2"
