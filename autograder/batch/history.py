"""A class's progress before the deadline: ``grade-many ... --history [daily]`` grades each
student's commits up to now (or their deadline), incrementally.

The commits are those of the default branch's first-parent line up to the limit (``daily``:
the last of each day, in the deadline's zone, else this machine's). A module file in a commit
is a git blob: its grade depends on nothing else (each module is graded in a box of its own),
so each distinct blob is graded once per grader (the digests of
:func:`autograder.batch.manifest.grader_identity`), seed, test set and language, and kept in
``DIR/history/grades.json``. A commit whose module files were graded before -- earlier in
this run, in an earlier run, in another student's commit (the template's stubs) -- is not
graded again; the rest is graded in the class's own batch, a file of each module a job (each
module is graded in a box of its own, so files of different commits share a job: ``modules``
of grade-many's jobs).

Writes ``DIR/<student>/history.csv`` (``sha, committed_at, score, max_score`` and one column
per module) and ``history.json`` (the same with each module's diagnosis), which the class
report reads (:mod:`autograder.class_reports.over_time.history`). The student's folder is
read as the deadline's snapshots read it: a sanitized clone, blobs read by git, nothing run.
"""
import csv
import datetime
import hashlib
import io
import json
import os
import pathlib

from autograder import active_assignment
from autograder.batch import git_snapshot
from autograder.batch.deadline import default_branch
from autograder.batch.jobs import OK

MODES = ("every", "daily")
HISTORY_DIR = "history"          # DIR/history/: the grades of module files, kept between runs
GRADES = "grades.json"
HISTORY_CSV, HISTORY_JSON = "history.csv", "history.json"
CACHE_VERSION = 1


class History:
    """The history part of one run: what is planned, then what is recorded."""

    def __init__(self, output_dir, mode, context):
        self.output_dir = pathlib.Path(output_dir)
        self.mode = mode
        self.context = context              # the grader, seed, test set: what a kept grade is valid for
        self.kept = _load(self.output_dir)  # {context: {module key: grade}}
        self.points = {}                    # student -> [{"sha", "committed_at", "timestamp", "modules": {module: key}}]
        self.scheduled = {}                 # (language, module key) -> (job, module)
        self.jobs = []
        self.notes = {}                     # student -> why there is no history

    def grades(self, lang):
        return self.kept.setdefault(_context(self.context, lang), {})


def context_of(grader, seed, include_hidden):
    """What a kept grade of a module file is valid for (the language is added per student)."""
    grader = grader or {}
    return {"suites": grader.get("suites"), "engine": grader.get("engine"), "seed": seed,
            "include_hidden": bool(include_hidden)}


def _context(context, lang):
    return hashlib.sha256(json.dumps(dict(context, lang=lang), sort_keys=True).encode()).hexdigest()[:24]


def _load(output_dir):
    path = pathlib.Path(output_dir) / HISTORY_DIR / GRADES
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    kept = data.get("grades") if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None
    return {key: value for key, value in kept.items() if isinstance(value, dict)} if isinstance(kept, dict) else {}


def _save(history):
    folder = history.output_dir / HISTORY_DIR
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{GRADES}.tmp"
    temporary.write_text(json.dumps({"version": CACHE_VERSION, "grades": history.kept}, sort_keys=True),
                         encoding="utf-8")
    os.replace(temporary, folder / GRADES)


def _paths(modules):
    return [f"exercises/{module}.py" for module in modules] + [f"{module}.py" for module in modules]


def _module_blobs(clone, sha, modules):
    """``{module: blob id or None}`` of a commit: exercises/ where it has one, else its top folder."""
    found = git_snapshot.files_at(clone, sha, _paths(modules))
    inside = any(path.startswith("exercises/") for path in found)
    return {module: found.get(f"exercises/{module}.py" if inside else f"{module}.py") for module in modules}


def _days(history, zone):
    """The last commit of each day (``history``: oldest first)."""
    last = {}
    for point in history:
        last[datetime.datetime.fromtimestamp(point[0], zone).date()] = point
    return sorted(last.values())


def start(mode, root, output_dir, students, entries, make_job, workdir, deadline, lang, grader, seed,
          include_hidden):
    """The :class:`History` of this run, its jobs planned: each student's commits up to their
    deadline (else now), in the deadline's zone (else this machine's)."""
    zone = deadline.when.tzinfo if deadline is not None else datetime.datetime.now().astimezone().tzinfo
    now = datetime.datetime.now(zone)
    progress = History(output_dir, mode, context_of(grader, seed, include_hidden))
    plan(progress, root, students, entries, make_job, workdir,
         lambda student: deadline.when_for(student) if deadline is not None else now, zone, lang)
    return progress


def plan(history, root, students, entries, make_job, workdir, until, zone, lang):
    """Add ``students``' commits to ``history`` and return the jobs that grade what is not graded
    yet. ``until(student)``: the last moment that counts for them; ``lang``: the run's ``--lang``
    (else each student's feedback language, from ``entries``)."""
    modules = list(active_assignment.current().modules)
    base = pathlib.Path(workdir) / HISTORY_DIR
    wanted = {}   # (language, module key) -> (module, blob, clone): module files not graded yet
    for index, student in enumerate(students):
        folder = pathlib.Path(root) / student
        if git_snapshot.has_repository(folder) != "repo":
            history.notes[student] = "not a git repository: no history"
            continue
        try:
            clone = git_snapshot.sanitized_clone(folder, base / f"{index:05d}" / "clone.git")
            head, _ = default_branch(clone)   # the branch the deadline reads
            limit = until(student)
            line = [] if head is None else sorted(point for point in git_snapshot.first_parent_history(clone, head)
                                                  if point[0] <= limit.timestamp())
            line = _days(line, zone) if history.mode == "daily" else line
            blobs = {sha: _module_blobs(clone, sha, modules) for _, sha in line}
        except git_snapshot.GitError as exc:
            history.notes[student] = f"the git repository could not be read: {exc}"
            continue
        language = lang or (entries.get(student) or {}).get("lang") or "en"
        graded = history.grades(language)
        points = history.points[student] = []
        for timestamp, sha in line:
            keys = {module: f"{module}:{blobs[sha][module] or 'absent'}" for module in modules}
            when = datetime.datetime.fromtimestamp(timestamp, zone).isoformat(timespec="seconds")
            points.append({"sha": sha, "committed_at": when, "timestamp": timestamp, "modules": keys,
                           "lang": language})
            for module in modules:
                if keys[module] not in graded:
                    wanted.setdefault((language, keys[module]), (module, blobs[sha][module], clone, student))
    history.jobs = _pack(history, wanted, make_job, base)
    return history.jobs


def _pack(history, wanted, make_job, base):
    """The jobs grading the ``wanted`` module files: one file of each module a job (each module is
    graded in its own box: files of different commits, even of different students, share a job)."""
    files = base / "files"
    files.mkdir(parents=True, exist_ok=True)
    by_clone = {}
    for module, blob, clone, _ in wanted.values():
        if blob:
            by_clone.setdefault(clone, []).append(blob)
    contents = {}
    for clone, blobs in by_clone.items():
        contents.update(git_snapshot.read_blobs(clone, blobs))
    queues = {}
    for (language, key), (module, blob, _, student) in sorted(wanted.items()):
        queues.setdefault(language, {}).setdefault(module, []).append((key, blob, student))
    jobs = []
    for language, per_module in queues.items():
        while any(per_module.values()):
            taken = {module: waiting.pop(0) for module, waiting in per_module.items() if waiting}
            folder = files / f"{len(jobs):05d}"
            folder.mkdir()
            for module, (_, blob, _) in taken.items():
                if blob in contents:
                    (folder / f"{module}.py").write_bytes(contents[blob])
            student = next(iter(taken.values()))[2]
            job = make_job(student, folder.resolve(), "bare", folder / "graded")
            job.modules, job.lang, job.entry, job.extra = list(taken), language, {}, None
            job.label = f"{student} (history: {len(taken)} file(s))"
            for module, (key, _, _) in taken.items():
                history.scheduled[(language, key)] = (job, module)
            jobs.append(job)
    return jobs


def _module_grades(job):
    """``{module: {"score", "max_score", "diagnosis"}}`` of a finished history job (None: not graded)."""
    if job.entry.get("status") != OK:
        return {module: None for module in job.modules}
    try:
        data = json.loads(pathlib.Path(job.results).read_text(encoding="utf-8"))
        extra = data.get("extra_data") or {}
        found = {}
        for module in job.modules:
            score = (extra.get("modules") or {}).get(module) or {}
            found[module] = {"score": score.get("score", 0), "max_score": score.get("max_score", 0),
                             "diagnosis": (extra.get("diagnosis") or {}).get(module)}
        return found
    except (OSError, ValueError, TypeError, AttributeError):
        return {module: None for module in job.modules}


def record(history):
    """Keep the grades of this run's history jobs, write each student's history.csv and
    history.json; returns what run.json records of the history."""
    for (language, key), (job, module) in history.scheduled.items():
        grade = _module_grades(job).get(module)
        if grade is not None:
            history.grades(language)[key] = grade
    _save(history)
    modules = list(active_assignment.current().modules)
    commits = 0
    for student, points in history.points.items():
        rows = []
        for point in points:
            graded = history.grades(point["lang"])
            grades = {module: graded.get(point["modules"][module]) for module in modules}
            complete = all(grade is not None for grade in grades.values())
            rows.append({"sha": point["sha"], "committed_at": point["committed_at"],
                         "score": sum(g["score"] for g in grades.values()) if complete else None,
                         "max_score": sum(g["max_score"] for g in grades.values()) if complete else None,
                         "modules": grades})
        commits += len(rows)
        _write_student(history.output_dir / student, rows, modules)
    return {"mode": history.mode, "commits": commits, "graded_jobs": len(history.jobs),
            "graded_modules": len(history.scheduled), "students": len(history.points),
            "not_read": dict(sorted(history.notes.items()))}


def _write_student(folder, rows, modules):
    folder.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["sha", "committed_at", "score", "max_score"] + modules)
    for row in rows:
        cells = [row["sha"], row["committed_at"], _cell(row["score"]), _cell(row["max_score"])]
        writer.writerow(cells + [_cell((row["modules"][module] or {}).get("score")) for module in modules])
    (folder / HISTORY_CSV).write_text(out.getvalue(), encoding="utf-8")
    (folder / HISTORY_JSON).write_text(json.dumps({"version": 1, "modules": modules, "commits": rows},
                                                  ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _cell(value):
    if value is None:
        return ""
    value = float(value)
    return f"{int(value)}" if value.is_integer() else f"{round(value, 4):g}"
