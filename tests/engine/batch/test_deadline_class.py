"""grade-many --deadline on a class of git repositories with fixed commit dates.

The class (deadline 2026-12-15T23:59+08:00):
  early-good    the solutions before the deadline, the stubs (nothing works) after
  early-broken  the stubs and a sitecustomize.py before, the solutions after
  late-only     every commit after the deadline
  plain         not a git repository: the solutions, graded as they are

The first test grades with a stand-in grader (fast: which commit reaches the
grader, and how each fact is recorded); the slow one grades for real.
"""
import csv
import json
import os
import pathlib
import shutil

import pytest
from support import toy
from support.helpers import ROOT

from support.cli import main_in_process, autograder_command  # noqa: E402
from support.git_class import commit, init, state  # noqa: E402

from autograder import active_assignment  # noqa: E402
from autograder.batch import grade_class as batch, jobs as batch_jobs  # noqa: E402

DEADLINE = "2026-12-15T23:59+08:00"
BEFORE = "2026-12-14T20:00:00+08:00"
AFTER = "2026-12-16T09:30:00+08:00"
SEED = 515151
MODULES = ("amp_update", "loss_scaler", "amp_training_step")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _modules(folder):
    return {f"exercises/{m}.py": (folder / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}


def build_class(root, good=None, broken=None):
    """The class; ``good``/``broken`` are {path: text} (default: solutions / stubs)."""
    good = good or _modules(ROOT / "solutions")
    broken = broken or _modules(ROOT / "exercises")
    public = {"exercises/tests/test_public.py": "def test_nothing():\n    pass\n"}
    shas = {}
    repo = init(root / "early-good")
    shas["early-good"] = [commit(repo, {**good, **public}, BEFORE), commit(repo, broken, AFTER, "oops")]
    repo = init(root / "early-broken")
    shas["early-broken"] = [commit(repo, {**broken, **public, "sitecustomize.py": "import os\n"}, BEFORE),
                            commit(repo, good, AFTER, "fixed", remove=["sitecustomize.py"])]
    repo = init(root / "late-only")
    shas["late-only"] = [commit(repo, {**good, **public}, AFTER)]
    plain = root / "plain" / "exercises"
    plain.mkdir(parents=True)
    for relative, text in good.items():
        (root / "plain" / relative).write_text(text, encoding="utf-8")
    return shas


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def results(out, *parts):
    return json.loads(pathlib.Path(out, *parts, "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_commit_at_the_deadline_reaches_the_grader(tmp_path, monkeypatch):
    """A stand-in grader scores 2 where toy_sum.py says GOOD: the graded
    commit, the latest one beside it, the rows and the recorded facts. The
    class is the toy assignment's: which commit is graded is the engine's."""
    from autograder.judging.results import GradeReport, TestResult

    monkeypatch.setenv("AUTOGRADER_GRADER_GUARD", "0")
    monkeypatch.setenv(active_assignment.ENV_VAR, toy.PACKAGE)
    root = tmp_path / "root"
    shas = build_class(root, good={f"exercises/{toy.MODULE}.py": "GOOD = True\n"},
                       broken={f"exercises/{toy.MODULE}.py": "GOOD = False\n"})
    before = {name: state(root / name) for name in shas}
    seen = tmp_path / "seen.txt"  # written by the grading children (forked processes)

    def fake_grade(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
        text = (pathlib.Path(submission) / f"{toy.MODULE}.py").read_text(encoding="utf-8")
        with open(seen, "a", encoding="utf-8") as log:
            log.write(f"{submission}\n")
        good = text == "GOOD = True\n"
        test = TestResult(name="toy_sum: fake", module=toy.MODULE, max_score=2.0, score=2.0 if good else 0.0,
                          passed=good, output="", visibility="visible", test_id="test_fake")
        return GradeReport(tests=[test], seed=seed, submission=str(submission))

    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade)
    monkeypatch.setattr(batch, "warm_up", lambda include_hidden=True, report=True: None)
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--deadline", DEADLINE, "--also-latest", "--jobs", 2,
                           "--seed", SEED, "--no-progress", "--no-similarity") == 0
    graded = seen.read_text(encoding="utf-8").split()
    inside = [path for path in graded if path.startswith(str(root.resolve()))]
    assert len(graded) == 6 and inside == [str((root / "plain" / "exercises").resolve())]  # the rest: exports
    rows = read_csv(out / "scores.csv")
    good, broken, late, plain = rows["early-good"], rows["early-broken"], rows["late-only"], rows["plain"]
    assert (good["status"], good["total"], good["commit"], good["later_commits"]) == ("ok", "2", shas["early-good"][0], "1")
    assert (good["latest_commit"], good["latest_total"]) == (shas["early-good"][1], "0")
    assert good["committed_at"] == "2026-12-14T20:00:00+08:00" and good["pushed_at"] == ""
    assert (broken["total"], broken["commit"], broken["latest_total"]) == ("0", shas["early-broken"][0], "2")
    assert late["status"] == "no commit before deadline" and late["total"] == "0" and late["commit"] == ""
    assert "no commit on the default branch at or before 2026-12-15T23:59:00+08:00" in late["reason"]
    assert (late["latest_commit"], late["latest_total"], late["later_commits"]) == (shas["late-only"][0], "2", "1")
    assert (plain["status"], plain["total"], plain["commit"], plain["latest_commit"]) == ("ok", "2", "", "")

    record = results(out, "early-good")["extra_data"]["submission_commit"]
    assert record["sha"] == shas["early-good"][0] and record["deadline"] == "2026-12-15T23:59:00+08:00"
    assert record["source"] == "committed" and record["later_commits"] == 1
    assert record["latest"]["sha"] == shas["early-good"][1] and record["latest"]["score"] == 0
    assert record["latest"]["max_score"] == 2 and record["latest"]["status"] == "ok"
    latest = results(out, "early-good", "latest")
    assert latest["score"] == 0 and "never counted" in latest["extra_data"]["submission_commit"]["role"]
    assert results(out, "late-only")["extra_data"]["submission_commit"]["sha"] is None
    assert "not a git repository" in results(out, "plain")["extra_data"]["submission_commit"]["note"]

    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["deadline"] == {"deadline": "2026-12-15T23:59:00+08:00", "source": "committed",
                                    "also_latest": True}
    assert manifest["students"]["early-good"]["submission"] == f"early-good/exercises@{shas['early-good'][0][:12]}"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Deadline `2026-12-15T23:59:00+08:00`" in report and "## Graded commits" in report
    assert f"| early-good | ok | `{shas['early-good'][0][:12]}` | 2026-12-14T20:00:00+08:00 |" in report
    assert "| late-only | no commit before deadline | none before the deadline |" in report
    assert "| plain | ok | not a git repository: graded as it is, no deadline could be checked |" in report
    # every output says it: scores.csv and run.json too
    assert plain["reason"] == "not a git repository: graded as it is; no deadline could be checked"
    assert manifest["students"]["plain"]["reason"] == plain["reason"]
    assert {name: state(root / name) for name in shas} == before  # nothing of the students' changed

    # --only re-grades one student with the recorded deadline, and keeps the others' rows
    assert main_in_process("grade-many", root, "-o", out, "--only", "early-broken", "--no-progress") == 0
    again = read_csv(out / "scores.csv")
    assert again["early-broken"]["commit"] == shas["early-broken"][0] and again["early-broken"]["latest_total"] == "2"
    assert again["early-good"] == good


@pytest.mark.slow
def test_a_class_graded_at_the_deadline(tmp_path):
    """The real grader: a correct solution committed before the deadline and a
    broken one after gets full marks; the reverse gets the early broken one's
    zero, with the tamper flag of the graded commit's tree; similarity compares
    the graded commits."""
    root = tmp_path / "root"
    shas = build_class(root)
    out = tmp_path / "out"
    env = dict(os.environ, AUTOGRADER_GRADER_GUARD="0",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    done = autograder_command("grade-many", root, "--output-dir", out, "--deadline", DEADLINE, "--also-latest",
                              "--jobs", "2", "--seed", SEED, "--visible-only", "--no-progress", env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_csv(out / "scores.csv")
    good, broken, late, plain = rows["early-good"], rows["early-broken"], rows["late-only"], rows["plain"]
    full = float(plain["max_score"])
    assert full > 0 and float(plain["total"]) == full and plain["status"] == "ok"
    assert good["status"] == "ok" and float(good["total"]) == full and good["commit"] == shas["early-good"][0]
    assert float(good["latest_total"]) == 0
    assert broken["status"] == "no work since the template"   # the stubs at the deadline
    assert float(broken["total"]) == 0 and float(broken["latest_total"]) == full
    assert "sitecustomize.py shadows" in broken["flags"]       # the graded tree's, though gone from the clone
    assert not any("sitecustomize" in flag for flag in results(out, "early-broken", "latest")["extra_data"]["flags"])
    assert late["status"] == "no commit before deadline" and float(late["total"]) == 0
    assert float(late["latest_total"]) == full
    isolation = results(out, "early-good")["extra_data"]["isolation"]
    assert isolation.get("confined") is True, isolation
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## How each grade was protected" in report and "| early-good | confined |" in report
    pairs = json.loads((out / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    top = pairs["modules"]["loss_scaler"]["pairs"][0]
    assert {top["a"], top["b"]} == {"early-good", "plain"} and top["flagged"] is True
    assert all("early-broken" not in (row["a"], row["b"]) for module in pairs["modules"].values()
               for row in module["pairs"])  # its graded commit holds the stubs only
