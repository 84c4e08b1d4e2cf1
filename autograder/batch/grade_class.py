"""Grade a whole class: ``grade-many`` and ``merge-scores``.

    python -m autograder grade-many ROOT --output-dir DIR [--jobs N] [--seed S]
                                    [--shard K/N] [--only STUDENT ...] [--timeout SECONDS]
    python -m autograder merge-scores SHARD_DIR [SHARD_DIR ...] --output-dir DIR

``ROOT`` holds one folder per student: a clone of their repository (as
``gh classroom clone student-repos`` lays them out) or just their ``exercises/``.

Speed without sharing: the judge process (:mod:`autograder.batch.clean_process`,
a fresh interpreter as ``grade``'s; this process where the tests stand in for
parts of it) imports torch, pytest and the grader (and loads the test modules)
once, and forks one sandbox zygote before it has seen any of the job; then it
forks one grading process per job slot (:mod:`autograder.batch.slots`), which
runs for each student it is given exactly what ``python -m autograder grade`` runs
(:func:`autograder.judging.engine.grade_submission`, same seed, same isolation)
through a channel of its own to the zygote, with a uid of its own for each
student when run as root, and writes ``DIR/<student>/results.json`` itself.
Student code only ever runs in the boxes the zygote forks: nothing of the judge
is in their memory, and each dies with its whole process namespace. A grading
process that dies, fails or outlives a student's ``--timeout`` is killed; that
student gets a zero with the reason, nobody else is affected. Where ``fork``
does not exist (Windows) each student is a ``grade`` subprocess.

Before grading, a probe box says what confinement this machine gives; without
it the batch refuses to run unless ``--allow-unconfined`` is given.

Everything a report needs is on disk: ``DIR/run.json`` (the seed, and per
student the status, the reason and where the submission was found) plus each
``DIR/<student>/results.json``. ``scores.csv``, ``report.md`` and the charts
are rebuilt from those after every run, so ``--only`` (re-grade one student)
and ``merge-scores`` (join shards) produce the same files a single run would.
"""
import collections
import contextlib
import os
import pathlib
import sys
import time

from autograder.batch.jobs import (CRASHED, NO_COMMIT, NO_SUBMISSION, OK, RESULTS, STATUSES,  # noqa: F401
                                   TIMED_OUT, BatchInterrupted, ForkJob, SubprocessJob, UsageError,
                                   _score_of, _write_report, kill_tree,
                                   add_extra_data, grader_files_changed, sweep_orphans, unconfined,
                                   wait_for_any, zero_report)
from autograder.batch.plan import locate_submission  # noqa: F401  (batch.locate_submission, as before)
from autograder.batch import history as history_module
from autograder.batch.plan import plan_students, record_latest_scores, safe_write, settle_entries
from autograder.batch.progress import Progress
from autograder.judge_process import interrupts
from autograder.judging import grading_area
from autograder.sandbox.confine import limits as os_limits
from autograder.sandbox import uids

DEFAULT_TIMEOUT_S = 900.0   # > 3 modules x (import 30 s + budget 150 s): only a stuck grader hits it
POLL_S = 0.02       # where a grading process's answer cannot be watched
WAKE_S = 0.5        # at least this often: timeouts and Ctrl-C
RESERVE_NAME = ".grade-many-reserve"
RESERVE_BYTES = 4 * 2**20   # room kept for run.json, scores.csv and report.md on a full disk


def run_command(prog, work, args):
    """Run one class-grading command; a :class:`UsageError` is exit code 2, said
    on stderr (escaped: it may name a student's folder)."""
    from autograder.reports.safe_text import terminal_lines

    try:
        return work(args)
    except UsageError as exc:
        print("\n".join(terminal_lines(f"{prog}: {exc}")), file=sys.stderr)
        return 2


# -- finding students ------------------------------------------------------------------------
def discover(root):
    """Student folders of ``root`` (sorted by name; hidden folders and files skipped)."""
    root = pathlib.Path(root)
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder (expected one folder per student)")
    return sorted(entry.name for entry in root.iterdir()
                  if entry.is_dir() and not entry.is_symlink() and not entry.name.startswith("."))


def parse_shard(text):
    """``'K/N'`` with 1 <= K <= N -> ``(K, N)``."""
    try:
        k, n = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. 2/4") from None
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard {text!r}: need 1 <= K <= N")
    return k, n


def select_shard(students, k, n):
    """The K-th of N deterministic, disjoint slices (round robin over the sorted names)."""
    return [name for index, name in enumerate(sorted(students)) if index % n == k - 1]


# -- warm-up: the fixed costs, paid once ---------------------------------------------------------
def warm_up(include_hidden=True, report=True):
    """Import what every grade imports, so each forked grading process starts where a single
    ``grade`` is after its first seconds (the suites are collected by :func:`run_batch`).
    ``report``: also what the class report needs, where this process writes it."""
    import torch

    torch.set_num_threads(1)  # what run_suites does; also keeps OpenMP fork-safe
    from autograder import torch_startup

    torch_startup.install()  # optimizers need only eager mode's answers from torch._dynamo
    import autograder.judging.engine as engine
    import autograder.judging.judge  # noqa: F401
    import autograder.reports.gradescope  # noqa: F401
    import autograder.judging.results  # noqa: F401

    engine.preload_judge()
    # Every grade compares the grader's compiled caches with their sources (GraderGuards);
    # compared once here, each grading process forked from this one knows the answer.
    from autograder.intake import grader_guard

    grader_guard.GraderGuards(engine.PACKAGE_DIR, keep_contents=False)
    for optional in ("autograder.batch.manifest", "autograder.intake.integrity",
                     "autograder.reports.terminal", "autograder.reports.summary_md",
                     "autograder.reports.classroom", "autograder.reports.safe_text",
                     "autograder.reports.results_file", "autograder.reports.isolation_view",
                     "autograder.reports.tidy") + (REPORT_MODULES if report else ()):
        with contextlib.suppress(ImportError):  # the report is written after student code ran
            __import__(optional)


REPORT_MODULES = ("autograder.class_reports.class_report", "autograder.class_reports.write", "matplotlib",
                  "matplotlib.pyplot", "autograder.similarity.pairs", "autograder.similarity.side_by_side",
                  "copydetect")


# -- the batch ---------------------------------------------------------------------------------
def _fork_available():
    return hasattr(os, "fork") and os.name == "posix"


def check_confinement(boxes, allow_unconfined, warnings, probe=None):
    """Probe what a box gets here (or read the report of ``probe``, a probe box asked
    for earlier); refuse to grade a class unconfined unless allowed."""
    from autograder.sandbox import isolation as isolation_report
    from autograder.sandbox.client import Limits

    try:
        report = (probe or isolation_report.start_probe(boxes, Limits())).result()
    except Exception as exc:  # noqa: BLE001 - a probe that fails is no confinement
        report = {"confined": False, "problems": [f"the sandbox probe failed: {exc}"]}
    if not report.get("confined"):
        problems = report.get("problems") or []
        if not allow_unconfined:
            raise UsageError("student code would run without full confinement on this machine:\n  "
                             + isolation_report.summary(report) + "".join(f"\n  - {p}" for p in problems)
                             + "\nRun as root, enable unprivileged user namespaces and Landlock, "
                             "or pass --allow-unconfined to grade anyway (the report will say so).")
        warnings.append(unconfined(isolation_report.summary(report), problems))
    return report


def _reserve(output_dir):
    """Keep room for the class report: a file given back just before it is written.
    It appears under its name only once all of it is written (a rename)."""
    path = pathlib.Path(output_dir) / RESERVE_NAME
    partial = path.with_name(RESERVE_NAME + ".part")
    try:
        with open(partial, "wb") as reserve:
            reserve.write(b"\0" * RESERVE_BYTES)
            reserve.flush()
            os.fsync(reserve.fileno())
        os.replace(partial, path)
    except OSError:
        for leftover in (partial, path):
            with contextlib.suppress(OSError):
                leftover.unlink()
    return path


def release_reserve(output_dir):
    with contextlib.suppress(OSError):
        (pathlib.Path(output_dir) / RESERVE_NAME).unlink()


def run_batch(root, output_dir, students, seed, jobs=None, timeout=DEFAULT_TIMEOUT_S,
              include_hidden=True, isolation=None, progress=True, manifest_entries=None, warnings=None,
              guard_dir=None, allow_unconfined=False, info=None, deadline=None, also_latest=False,
              workdir=None, lang=None, clean_process=False, meanwhile=None, grader=None, roster=None,
              history=None):
    """Grade ``students`` (folder names under ``root``); return ``{student: entry}``
    where entry has ``status``, ``reason``, ``submission``, ``layout``, ``seed``, ``seconds``.
    Changes to the grader's own files (``guard_dir``, default the package) seen meanwhile
    are undone and appended to ``warnings``; ``AUTOGRADER_GRADER_GUARD=0`` turns that off (for
    grader developers editing the package while a batch runs). ``info`` (a dict)
    receives ``isolation``, what the probe box got on this machine, and
    ``submissions``, ``{student: folder graded}``.

    ``deadline`` (a :class:`autograder.batch.deadline.DeadlineSpec`) grades each
    repository as it was then, exported under ``workdir`` (which the caller
    removes); entries then carry ``submission_commit``, and with
    ``also_latest`` a ``latest`` entry for the branch head (see
    :mod:`autograder.batch.plan`). ``lang`` (``--lang``) is the language of every
    student's feedback; without it each repository's own setting decides. ``grader`` (which
    grader grades) goes into every results.json, ``roster`` (``{folder: its record}``) into
    those of the students on it. ``history`` (``every``, ``daily``): each student's commits
    too (:mod:`autograder.batch.history`; ``info['history']``).

    ``clean_process`` (forked grading only): the grading runs in a judge process
    of its own (:mod:`autograder.batch.clean_process`), and ``meanwhile()`` runs
    here while it does; otherwise everything runs in this process and
    ``meanwhile()`` after the grading."""
    root, output_dir = pathlib.Path(root), pathlib.Path(output_dir)
    isolation = isolation or ("fork" if _fork_available() else "subprocess")
    if isolation == "fork" and not _fork_available():
        raise UsageError("--isolation fork needs os.fork (POSIX)")
    if (deadline is not None or history) and workdir is None:
        raise ValueError("a deadline or a history needs a work folder for the commits it reads")
    jobs = max(1, int(jobs or _cpu_count()))
    entries = {} if manifest_entries is None else manifest_entries
    warnings = [] if warnings is None else warnings
    info = {} if info is None else info
    output_dir.mkdir(parents=True, exist_ok=True)
    bar = Progress(len(students), enabled=progress)
    job_class = ForkJob if isolation == "fork" else SubprocessJob

    def make_job(student, submission, layout, out_dir):
        return job_class(student, submission, layout, out_dir, seed, include_hidden, timeout)

    planned, info["submissions"] = plan_students(root, output_dir, students, seed, entries, make_job, bar,
                                                 deadline=deadline, also_latest=also_latest, workdir=workdir,
                                                 lang=lang, grader=grader, roster=roster)
    following = history_module.start(history, root, output_dir, students, entries, make_job, workdir, deadline,
                                     lang, grader, seed, include_hidden) if history else None
    planned += following.jobs if following else []
    bar.total += len(following.jobs) if following else 0
    settings = {"jobs": jobs, "include_hidden": include_hidden, "progress": progress,
                "guard_dir": guard_dir, "allow_unconfined": allow_unconfined}
    try:
        if planned and clean_process and isolation == "fork":
            from autograder.batch import clean_process

            clean_process.grade_planned(planned, output_dir, bar, warnings, info, settings, meanwhile=meanwhile)
        else:
            if planned:
                grade_planned(planned, output_dir, bar, warnings, info, settings, isolation=isolation)
            if meanwhile is not None:
                meanwhile()
    except BatchInterrupted:
        raise BatchInterrupted(entries) from None
    finally:
        if deadline is not None:
            record_latest_scores(output_dir, entries, deadline.late, students)
        settle_entries(entries)
        if following is not None:
            info["history"] = history_module.record(following)
    return entries


def grade_planned(planned, output_dir, bar, warnings, info, settings, isolation="fork", boxes=None):
    """Grade the ``planned`` jobs in this process: warm up (forked grading), probe
    what a box gets, grade with ``settings['jobs']`` at a time; each job's entry is
    filled in. ``boxes``: a started box factory (a judge process's own zygote);
    by default one is started here for forked grading."""
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.zygote import freeze_heap

    include_hidden = settings["include_hidden"]
    pending = collections.deque(planned)
    own_boxes = boxes is None and isolation == "fork"
    if own_boxes:
        boxes = start_boxes()  # the zygote loads torch meanwhile
    try:
        if isolation == "fork":
            if settings["progress"] and own_boxes:
                print("grade-many: loading torch and the grader once for all students...", file=sys.stderr)
            warm_up(include_hidden, report=own_boxes)
            freeze_heap()  # each forked process shares the warm heap instead of copying it
        os_limits.protect_judge()
        from autograder.sandbox.client import Limits
        from autograder.sandbox.isolation import start_probe

        probe_boxes = boxes or start_boxes()  # each `grade` subprocess starts the same kind
        probe = start_probe(probe_boxes, Limits())  # it confines while the suites are collected
        _reserve(output_dir)

        def grade_all():
            freeze_heap()  # the collected suites too
            try:
                info["isolation"] = check_confinement(probe_boxes, settings["allow_unconfined"], warnings, probe)
            finally:
                if probe_boxes is not boxes:
                    probe_boxes.close()
            # a grading process killed past --timeout leaves its working copies in this run's folder
            with grading_area.areas_of_this_run():
                return _grade_all(pending, boxes, settings["jobs"], bar, warnings, settings["guard_dir"])

        try:
            # the grading processes run the suites this process collected once
            from autograder.judging import suites  # the judge's (the command line never needs pytest)

            return suites.kept_collected(include_hidden, grade_all) if isolation == "fork" else grade_all()
        except BaseException:
            if not isinstance(sys.exc_info()[1], BatchInterrupted):
                release_reserve(output_dir)  # the caller writes the report only when interrupted
            raise
        finally:
            probe.close()  # read by grade_all(); here when collection failed first
    finally:
        if own_boxes:
            boxes.close()


def _grade_all(pending, boxes, jobs, bar, warnings, guard_dir):
    bar.started = time.monotonic()  # the ETA counts grading only
    from autograder.intake import grader_guard

    guard = grader_guard.GraderGuards(guard_dir) if os.environ.get("AUTOGRADER_GRADER_GUARD", "1") != "0" else None

    def _guard(suspects):
        changed = guard.restore() if guard is not None else []
        if changed:
            warnings.append(grader_files_changed(suspects, changed))

    os_limits.become_subreaper()
    preexisting = set(os_limits.children(os.getpid()))
    active = []
    interrupted = None
    pool = None
    fresh_uids = collections.deque()
    if boxes is not None:  # forked grading: kept grading processes, one per job slot
        from autograder.batch.slots import JudgeSlots

        pool = JudgeSlots(boxes)
        fresh_uids.extend(uids.allocate(len(pending)))  # a uid of its own for each student, one look at /proc

    # Ctrl-C or SIGTERM end the batch, once: the clean-up below must run to its end.
    handlers = contextlib.ExitStack()
    received = handlers.enter_context(interrupts.as_interrupt(("SIGINT", "SIGTERM"), once=True))
    try:
        while pending or active:
            received.check()
            while pending and len(active) < jobs:
                job = pending.popleft()
                if pool is not None:
                    job.pool = pool
                    job.uid = fresh_uids.popleft()
                active.append(job)  # first: a Ctrl-C during its start still finds it
                job.start()
            wait_for_any(active, WAKE_S, POLL_S)
            finished = []
            running = [job.student for job in active]
            for job in list(active):
                verdict = job.poll()
                if verdict is None and job.elapsed() > job.timeout:
                    job.kill()
                    verdict = (TIMED_OUT, f"grading did not finish within {job.timeout:g} s "
                                          f"and was stopped")
                if verdict is None:
                    continue
                active.remove(job)
                finished.append(job.student)
                _finish(job, verdict)
                status = job.entry["status"]
                bar.update(job.label, status, _score_of(job.results) if status == OK else None)
            if finished:
                if os.path.isdir("/proc"):  # a dead child's leftovers are ours now
                    sweep_orphans({job.pid for job in active} | (pool.pids() if pool else set()) | preexisting)
                _guard(running)
    except KeyboardInterrupt as exc:
        interrupted = exc
    finally:
        for job in active:
            job.kill()
            _finish(job, (CRASHED, "grading was interrupted"))
        if interrupted is not None:
            for job in pending:  # never started: say so instead of leaving them 'ok'
                job.prepare()
                job.started = time.monotonic()
                _finish(job, (CRASHED, "not graded: the batch was interrupted"))
        if pool is not None:
            pool.close()
        if os.path.isdir("/proc"):
            sweep_orphans(preexisting)
        _guard([job.student for job in active])
        handlers.close()  # the signals' earlier handlers, once the clean-up is done
    if interrupted is not None:
        raise BatchInterrupted()


def _finish(job, verdict):
    status, reason = verdict
    job.release()
    entry = job.entry
    entry.update(status=status, reason=reason, seconds=round(job.elapsed(), 2))
    # Nothing of this student may outlive its row. A grade that finished looked itself,
    # once every box of the student was dead; any other end is looked after here.
    if job.uid is not None and status != OK:
        leftovers = uids.kill_leftovers(job.uid)
        if leftovers:
            entry["reason"] = (reason + "; " if reason else "") + \
                f"{leftovers} process(es) of this student were killed after grading"
    if status != OK:
        safe_write(zero_report(job.student, job.seed, status, reason, job.submission), job.results, entry,
                   job.extra)
    elif job.extra:
        try:
            add_extra_data(job.results, job.extra)
        except (OSError, ValueError) as exc:
            entry["reason"] = f"the graded commit could not be added to results.json ({exc})"


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


