"""What ``grade-many`` grades for each student, before anything runs: where
the submission is, as the folder is now or (``--deadline``) as it was at the
deadline, and one grading job per submission to grade.

With a deadline each student's repository is exported at the commit that
counts (:mod:`autograder.batch.deadline`) into a private work folder, and the job is
handed that export; ``--also-latest`` adds a second job for the branch head,
written to ``DIR/<student>/latest/`` and never counted. The commit facts go
to ``run.json`` and to ``extra_data.submission_commit`` of the results.
"""
import json
import pathlib

from autograder import locations
from autograder import active_assignment
from autograder.intake import safe_files
from autograder.batch.jobs import NO_SUBMISSION, OK, RESULTS, _write_report, add_extra_data, zero_report
from autograder.judging.results import NO_WORK, NO_WORK_REASON

LATEST = "latest"   # DIR/<student>/latest/: the branch head, graded beside, never counted
LATE = "late"       # DIR/<student>/late/: with a late policy, the last commit of the late window
LATE_WORK = "late_work"   # the late policy applied to a student (run.json, results.json)
MAX_RESULTS_BYTES = 16 * 2**20
TEMPLATE_DIR = locations.REPO_ROOT / "exercises"
MAX_MODULE_BYTES = 2**20


def _normalised(raw):
    """A module's text for comparison with the stub: line endings and trailing blanks do not count."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


MAX_PYPROJECT_BYTES = 256 * 1024


def repository_language(submission, layout):
    """``[tool.autograder] lang`` of the repository being graded (the folder
    around ``exercises/``), or None. Read within a bound; never run."""
    from autograder.i18n import check_language
    from autograder.toml_reader import tomllib

    root = pathlib.Path(submission).parent if layout == "repo" else pathlib.Path(submission)
    try:
        data = tomllib.loads(safe_files.read_relative(root, "pyproject.toml", MAX_PYPROJECT_BYTES)
                             .decode("utf-8", "replace"))
    except (safe_files.UnsafeFile, ValueError):
        return None
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    setting = tool.get("autograder") if isinstance(tool.get("autograder"), dict) else {}
    return check_language(setting.get("lang")) if isinstance(setting.get("lang"), str) else None


def feedback_language(submission, layout, option=None, environ=None):
    """The language of a student's feedback: ``--lang``, ``$AUTOGRADER_LANG``, the
    graded repository's setting, the course repository's, English (as ``grade``
    would choose in that repository)."""
    import os

    from autograder.i18n import ENV_VAR, check_language, resolve_language

    environ = os.environ if environ is None else environ
    return (check_language(option) or check_language(environ.get(ENV_VAR))
            or repository_language(submission, layout)
            or resolve_language(environ={}, root=str(TEMPLATE_DIR.parent)))


def unchanged_stubs(submission, template_dir=TEMPLATE_DIR):
    """True when every module the submission holds is the template's stub as given
    (and it holds at least one): no work since the template. Read, never run."""
    seen = 0
    for module in active_assignment.current().modules:
        try:
            mine = safe_files.read_relative(submission, f"{module}.py", MAX_MODULE_BYTES)
        except safe_files.UnsafeFile:
            continue
        try:
            stub = (pathlib.Path(template_dir) / f"{module}.py").read_bytes()
        except OSError:
            return False
        if _normalised(mine) != _normalised(stub):
            return False
        seen += 1
    return seen > 0


def locate_submission(student_dir):
    """Where the exercise modules of one student folder are.

    Returns ``(submission_dir, layout, reason)``: layout ``'repo'`` for a clone
    with ``exercises/`` inside, ``'bare'`` for a folder holding the modules
    itself, or ``(None, None, reason)`` when neither is there.
    """
    student_dir = pathlib.Path(student_dir)
    exercises = student_dir / "exercises"
    if exercises.is_dir() and not exercises.is_symlink():
        return exercises, "repo", ""
    if any((student_dir / f"{module}.py").is_file() for module in active_assignment.current().modules):
        return student_dir, "bare", ""
    expected = ", ".join(f"{module}.py" for module in active_assignment.current().modules)
    return None, None, (f"no submission found: {student_dir.name}/ has no exercises/ folder and "
                        f"none of {expected}")


def relative(path, root):
    try:
        return pathlib.Path(path).resolve().relative_to(pathlib.Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def safe_write(report, path, entry, extra=None):
    """A full disk costs this student's row, not the batch."""
    try:
        pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
        _write_report(report, path, extra)
    except OSError as exc:
        entry.update(status="crashed", reason=f"{entry.get('reason') or 'not graded'}; its results "
                                              f"could not be written ({exc.strerror or exc})")


def _shown(submission, tree, student, sha):
    """How run.json names an exported submission: ``student/exercises@sha12``."""
    inside = relative(submission, tree)
    return f"{student}/{'' if inside == '.' else inside}@{sha[:12]}".replace("/@", "@")


def plan_students(root, output_dir, students, seed, entries, make_job, bar,
                  deadline=None, also_latest=False, workdir=None, lang=None, grader=None, roster=None):
    """Fill ``entries`` (one per student) and return ``(jobs, submissions)``:
    the grading jobs to run and ``{student: folder graded}`` (for similarity).
    Students with nothing to grade get their zero ``results.json`` here. ``lang``:
    ``--lang`` (else each repository's setting, :func:`feedback_language`); ``grader``:
    which grader grades, recorded in every results.json; ``roster``: ``{folder: the roster's
    record of its student}`` (``--roster``), recorded in theirs."""
    from autograder.batch.deadline import take_snapshot

    root, output_dir = pathlib.Path(root), pathlib.Path(output_dir)
    jobs, submissions = [], {}
    for index, student in enumerate(students):
        entry = {"status": OK, "reason": "", "seed": seed, "layout": None, "seconds": 0.0, "submission": ""}
        entries[student] = entry
        folder, snapshot = root / student, None
        extra = {"grader": grader} if grader else {}
        if roster and student in roster:
            extra["roster"] = roster[student]
        if deadline is not None:
            snapshot = take_snapshot(root / student, student, deadline, pathlib.Path(workdir) / f"{index:05d}",
                                     also_latest)
            entry["submission_commit"] = snapshot.record
            extra["submission_commit"] = snapshot.record
            folder = snapshot.tree or folder
        if snapshot is not None and snapshot.status:
            entry.update(status=snapshot.status, reason=snapshot.reason)
            safe_write(zero_report(student, seed, snapshot.status, snapshot.reason, root / student),
                       output_dir / student / RESULTS, entry, extra)
            bar.update(student, entry["status"])
        else:
            job = _job_for(folder, student, entry, extra, make_job, output_dir / student, seed, bar,
                           snapshot, root, lang=lang)
            if job is not None:
                jobs.append(job)
                submissions[student] = job.submission
        for kind, tree in ((LATE, snapshot and snapshot.late_tree), (LATEST, snapshot and snapshot.latest_tree)):
            if tree is None:
                continue
            beside = {"status": OK, "reason": "", "seconds": 0.0, "submission": ""}
            entry[kind] = beside
            record = snapshot.record[kind]
            extra = {"submission_commit": {"role": ROLES[kind], "sha": record["sha"],
                                           "committed_at": record["committed_at"],
                                           "deadline": snapshot.record["deadline"],
                                           **({"days_late": record["days"]} if kind == LATE else {})},
                     **({"grader": grader} if grader else {})}
            job = _job_for(tree, student, beside, extra, make_job, output_dir / student / kind, seed, bar, snapshot,
                           root, sha=record["sha"], lang=lang)
            if job is not None:
                job.label = f"{student} ({kind})"
                jobs.append(job)
                bar.total += 1
    return jobs, submissions


# What a commit graded beside the one that counts is (DIR/<student>/<kind>/results.json).
ROLES = {LATEST: "the latest commit, graded beside and never counted",
         LATE: "the last commit of the late window, counted after its penalty where that is better"}


def _job_for(folder, student, entry, extra, make_job, out_dir, seed, bar, snapshot, root, sha=None, lang=None):
    """The job grading ``folder`` for ``entry``, or None (zero written) when it holds no submission."""
    submission, layout, reason = locate_submission(folder)
    entry["layout"] = layout
    if submission is None:
        if snapshot is not None and snapshot.tree is not None:
            commit = (sha or snapshot.record["sha"])[:12]
            reason = reason.replace(f"{pathlib.Path(folder).name}/", f"{student}/ at commit {commit}")
        entry.update(status=NO_SUBMISSION, reason=reason)
        safe_write(zero_report(student, seed, NO_SUBMISSION, reason, root / student),
                   pathlib.Path(out_dir) / RESULTS, entry, extra)
        if sha is None:
            bar.update(student, NO_SUBMISSION)
        return None
    if snapshot is not None and snapshot.tree is not None:
        entry["submission"] = _shown(submission, folder, student, sha or snapshot.record["sha"])
    else:
        entry["submission"] = relative(submission, root)
    if unchanged_stubs(submission):
        entry["unchanged_stubs"] = True   # the report's "no work since the template"
    job = make_job(student, submission.resolve(), layout, out_dir)
    job.lang = entry["lang"] = feedback_language(submission, layout, lang)
    job.entry, job.extra = entry, extra
    return job


NO_DEADLINE_REASON = "not a git repository: graded as it is; no deadline could be checked"


def settle_entries(entries):
    """The statuses a finished batch records: a grade of the template's stubs is
    ``no work since the template`` (the one word run.json, scores.csv and the
    reports use), and a folder graded as it is in a deadline run says that no
    deadline could be checked for it."""
    from autograder.batch.deadline import WORKING_TREE

    for entry in entries.values():
        if entry.get("status") == OK and entry.get("unchanged_stubs") is True:
            entry.update(status=NO_WORK, reason=entry.get("reason") or NO_WORK_REASON)
        record = entry.get("submission_commit")
        if entry.get("status") in (OK, NO_WORK) and isinstance(record, dict) and record.get("source") == WORKING_TREE \
                and NO_DEADLINE_REASON not in (entry.get("reason") or ""):
            entry["reason"] = "; ".join(part for part in (entry.get("reason"), NO_DEADLINE_REASON) if part)


def _score(path):
    """``{"score", "max_score"}`` of the results file at ``path`` (None each when unreadable)."""
    try:
        data = json.loads(safe_files.read_text(str(path), MAX_RESULTS_BYTES))
        return {"score": data["score"], "max_score": data["max_score"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {"score": None, "max_score": None}


def record_latest_scores(output_dir, entries, policy=None, students=None):
    """Put the scores of the commits graded beside the one that counts in run.json and in the
    student's results.json (``submission_commit.latest`` and ``.late``): the latest commit's,
    never counted, and with a late ``policy`` the late work's, its penalty and the counted
    score (``late_work`` and ``counted_score``, :func:`autograder.batch.terms.late_policy.counted_score`).
    ``students``: those of this run (default all): no one else's results change."""
    for student, entry in entries.items():
        if students is not None and student not in students:
            continue
        commit = entry.get("submission_commit") if isinstance(entry.get("submission_commit"), dict) else {}
        for kind in (LATE, LATEST):
            graded, record = entry.get(kind), commit.get(kind)
            if isinstance(record, dict) and record.get("same_as") == LATE:
                graded, kind_dir = entry.get(LATE), LATE   # the latest commit is the late work: graded once
            else:
                kind_dir = kind
            if isinstance(graded, dict) and isinstance(record, dict):
                record.update(_score(pathlib.Path(output_dir) / student / kind_dir / RESULTS),
                              status=graded.get("status", OK), results=f"{kind_dir}/{RESULTS}")
        extra = {"submission_commit": commit} if commit else {}
        if policy is not None and commit:
            on_time = _score(pathlib.Path(output_dir) / student / RESULTS)["score"]
            late = _late_facts(entry, on_time, commit.get(LATE), policy)
            entry[LATE_WORK], entry["counted_score"] = late, late.pop("counted")
            extra.update({LATE_WORK: late, "counted_score": entry["counted_score"]})
        if extra:
            try:
                add_extra_data(pathlib.Path(output_dir) / student / RESULTS, extra)
            except (OSError, ValueError):
                pass  # run.json still has it


# A grade that did not complete through no fault of the student's: nothing can be counted yet.
_NOT_COUNTABLE = ("crashed", "timed out")


def _late_facts(entry, on_time, record, policy):
    """The late policy applied to one student: days, penalty, scores and the counted score
    (None where a grade it needs did not complete: re-grade them)."""
    from autograder.batch.terms.late_policy import counted_score

    facts = {"policy": policy.describe(), "days": 0, "penalty": 0.0}
    if entry.get("status") in _NOT_COUNTABLE:
        return dict(facts, counted=None)
    if not isinstance(record, dict) or record.get("score") is None:
        return dict(facts, counted=on_time or 0)
    if record.get("status") in _NOT_COUNTABLE:
        return dict(facts, sha=record.get("sha"), counted=None)
    days = int(record.get("days") or 0)
    penalty = policy.penalty(days)
    after, counted = counted_score(on_time or 0, record["score"], penalty)
    return dict(facts, days=days, penalty=penalty, sha=record.get("sha"), committed_at=record.get("committed_at"),
                score=record["score"], after_penalty=after, counted=counted)
