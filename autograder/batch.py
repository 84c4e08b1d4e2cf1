"""Grade a whole class: ``grade-many`` and ``merge-scores``.

    python -m autograder grade-many ROOT --output-dir DIR [--jobs N] [--seed S]
                                    [--shard K/N] [--only STUDENT ...] [--timeout SECONDS]
    python -m autograder merge-scores SHARD_DIR [SHARD_DIR ...] --output-dir DIR

``ROOT`` holds one folder per student: a clone of their repository (as
``gh classroom clone student-repos`` lays them out) or just their ``exercises/``.

Speed without sharing: this process imports torch, torch._dynamo, pytest and
the grader (and loads the test modules) once; then, per student, it forks a
child that runs exactly what ``python -m autograder grade`` runs
(:func:`autograder.engine.grade_submission`, same seed, same isolation: student
code only ever runs in the sandbox workers that child forks) and writes
``DIR/<student>/results.json`` itself. This process only reads that file back.
A child that dies or outlives ``--timeout`` is killed with everything it
started; that student gets a zero with the reason, nobody else is affected.
Where ``fork`` does not exist (Windows) each student is a ``grade`` subprocess.

Everything a report needs is on disk: ``DIR/run.json`` (the seed, and per
student the status, the reason and where the submission was found) plus each
``DIR/<student>/results.json``. ``scores.csv``, ``report.md`` and the charts
are rebuilt from those after every run, so ``--only`` (re-grade one student)
and ``merge-scores`` (join shards) produce the same files a single run would.
"""
import argparse
import collections
import contextlib
import datetime
import io
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from autograder import MODULES, integrity
from autograder.sandbox import limits as os_limits

MANIFEST = "run.json"
RESULTS = "results.json"
CHILD_LOG = "grader.log"
DEFAULT_TIMEOUT_S = 900.0   # > 3 modules x (import 30 s + budget 150 s): only a stuck grader hits it
POLL_S = 0.02
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

OK, CRASHED, TIMED_OUT, NO_SUBMISSION = "ok", "crashed", "timed out", "no submission"
STATUSES = (OK, CRASHED, TIMED_OUT, NO_SUBMISSION)


class UsageError(Exception):
    """Bad arguments or input folders: exit code 2."""


# -- finding students and their submissions ---------------------------------------------------
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
    if any((student_dir / f"{module}.py").is_file() for module in MODULES):
        return student_dir, "bare", ""
    expected = ", ".join(f"{module}.py" for module in MODULES)
    return None, None, (f"no submission found: {student_dir.name}/ has no exercises/ folder and "
                        f"none of {expected}")


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


# -- one student's job -----------------------------------------------------------------------
def grade_job(submission, seed, include_hidden, with_flags):
    """What the child runs: the same call as ``python -m autograder grade``."""
    from autograder.cli_grade import tamper_flags
    from autograder.engine import grade_submission

    flags = tamper_flags(submission) if with_flags else []
    return grade_submission(submission, seed=seed, include_hidden=include_hidden, flags=flags)


def zero_report(student, seed, status, reason, submission=""):
    """The results.json of a student whose grading did not complete."""
    from autograder.results import GradeReport, TestResult

    test = TestResult(name=f"grader: {status}", module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=f"{reason}\nAsk the course staff to re-grade {student} "
                             f"(seed {seed}).")
    return GradeReport(tests=[test], seed=seed, submission=str(submission), notes=[reason])


def _write_report(report, path):
    from autograder.reports.gradescope import write_results

    write_results(report, path)


class _Job:
    """One student: started, polled, maybe killed. Subclasses: fork or subprocess."""

    def __init__(self, student, submission, layout, out_dir, seed, include_hidden, timeout):
        self.student = student
        self.submission = submission
        self.layout = layout
        self.out_dir = pathlib.Path(out_dir)
        self.results = self.out_dir / RESULTS
        self.log = self.out_dir / CHILD_LOG
        self.seed = seed
        self.include_hidden = include_hidden
        self.timeout = timeout
        self.started = None
        self.pid = None

    def prepare(self):
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in (self.results, self.log):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()

    def elapsed(self):
        return time.monotonic() - self.started

    def _verdict(self, exit_description, clean_exit):
        """(status, reason) once the process is gone."""
        if not clean_exit:
            return CRASHED, f"the grader stopped before finishing ({exit_description})"
        if _score_of(self.results) is None:
            return CRASHED, f"the grader left no readable results ({exit_description})"
        return OK, ""


def _describe_status(status):
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


class ForkJob(_Job):
    """POSIX: fork this pre-imported process; the child grades and writes results.json."""

    def start(self):
        self.prepare()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        self.started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child_main(self)  # never returns
        self.pid = pid

    def poll(self):
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: judge by the file
            return self._verdict("exit status unknown", True)
        if pid == 0:
            return None
        return self._verdict(_describe_status(status), os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0)

    def kill(self):
        kill_tree(self.pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _child_main(job):
    """The forked child: grade, write results.json, ``os._exit``. Never returns."""
    code = 70
    try:
        os.setpgid(0, 0)  # Ctrl-C reaches the batch parent only; it cleans up
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        report = grade_job(job.submission, job.seed, job.include_hidden, job.layout == "repo")
        _write_report(report, job.results)
        code = 0
    except BaseException:  # noqa: B036 - the child must always reach os._exit
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class SubprocessJob(_Job):
    """No fork (Windows) or ``--isolation subprocess``: one ``grade`` process per student."""

    def start(self):
        self.prepare()
        command = [sys.executable, "-m", "autograder", "grade", "--submission",
                   str(pathlib.Path(self.submission).resolve()), "--results", str(self.results.resolve()),
                   "--seed", str(self.seed), "--quiet"]
        if not self.include_hidden:
            command.append("--visible-only")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
        options = {"cwd": str(self.out_dir), "stdin": subprocess.DEVNULL, "env": env}
        if os.name == "nt":
            options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            options["start_new_session"] = True
        self.started = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **options)
        self.pid = self.proc.pid

    def poll(self):
        code = self.proc.poll()
        if code is None:
            return None
        if code == 1:  # grade's own failure (it wrote a crash report): say so
            return CRASHED, "the grader failed on this submission (exit code 1, see grader.log)"
        return self._verdict(f"exit code {code}", code == 0)

    def kill(self):
        if os.name != "nt":
            kill_tree(self.pid)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)


# -- process hygiene -------------------------------------------------------------------------
def kill_tree(pid):
    """SIGKILL ``pid``, its process group and every descendant (they may have
    left the group with setsid: found through /proc on Linux). Reaps only ``pid``'s
    orphans that were re-parented to us, never other children of this process."""
    for _ in range(3):  # a fork bomb may add processes while we sweep
        victims = os_limits.descendants(pid)
        for victim in victims:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
        if not victims:
            break
    with contextlib.suppress(OSError, AttributeError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def sweep_orphans(keep):
    """Kill and reap our direct children that are not jobs in ``keep``: processes a
    dead grading child left behind, re-parented to this subreaper."""
    if not os.path.isdir("/proc"):
        return 0
    me, swept = os.getpid(), 0
    for pid in os_limits.children(me):
        if pid in keep:
            continue
        kill_tree(pid)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
        swept += 1
    return swept


# -- the grader's own files ----------------------------------------------------------------------


# -- warm-up: the fixed costs, paid once ---------------------------------------------------------
def warm_up(include_hidden=True):
    """Import what every grade imports and load the test modules, so each forked
    child starts where a single ``grade`` is after its first seconds."""
    import pytest
    import torch

    torch.set_num_threads(1)  # what run_suites does; also keeps OpenMP fork-safe
    import torch._dynamo  # noqa: F401
    import autograder.engine as engine
    import autograder.judge  # noqa: F401
    import autograder.reports.gradescope  # noqa: F401
    import autograder.results  # noqa: F401
    import autograder.sandbox.worker  # noqa: F401
    from autograder.plugin import GradingPlugin

    for optional in ("autograder.scenarios", "autograder.static_checks",
                     "autograder.lab_check", "autograder.integrity", "autograder.cli_grade"):
        with contextlib.suppress(ImportError):
            __import__(optional)
    # A collect-only session imports the visible and hidden test modules (and
    # whatever inputs they build at import time). Children reuse them: pytest's
    # importlib mode takes a module already in sys.modules.
    suite_args = getattr(engine, "_suite_args", None)
    if suite_args is None:
        return
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with tempfile.TemporaryDirectory(prefix="amp-warm-") as scratch, \
                contextlib.redirect_stdout(io.StringIO()):
            pytest.main(list(suite_args(include_hidden)) + ["--collect-only"],
                         plugins=[GradingPlugin(scratch, scratch, 0)])
    except Exception:  # noqa: BLE001 - a warm-up failure only costs speed
        pass
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved


# -- progress ----------------------------------------------------------------------------------
class Progress:
    """A one-line bar on a terminal, one line per student otherwise (CI logs)."""

    def __init__(self, total, stream=None, enabled=True):
        self.total = total
        self.done = 0
        self.counts = collections.Counter()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()

    def _eta(self):
        if not self.done:
            return "--:--"
        remaining = (time.monotonic() - self.started) / self.done * (self.total - self.done)
        return f"{int(remaining // 60):02d}:{int(remaining % 60):02d}"

    def update(self, student, status, score=None):
        self.done += 1
        self.counts[status] += 1
        if not self.enabled:
            return
        problems = ", ".join(f"{count} {name}" for name, count in sorted(self.counts.items()) if name != OK)
        if self.tty:
            width = 28
            filled = int(width * self.done / self.total)
            line = (f"\rgrading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
                    f"  eta {self._eta()}" + (f"  ({problems})" if problems else ""))
            self.stream.write(line.ljust(90)[:120])
            if self.done == self.total:
                self.stream.write("\n")
        else:
            shown = status if score is None else f"{score}"
            self.stream.write(f"[{self.done}/{self.total}] {student}: {shown}\n")
        self.stream.flush()


# -- the batch ---------------------------------------------------------------------------------
def _fork_available():
    return hasattr(os, "fork") and os.name == "posix"


def _score_of(results_path):
    try:
        data = json.loads(pathlib.Path(results_path).read_text(encoding="utf-8"))
        return f"{data['score']}/{data['max_score']}"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_batch(root, output_dir, students, seed, jobs=None, timeout=DEFAULT_TIMEOUT_S,
              include_hidden=True, isolation=None, progress=True, manifest_entries=None, warnings=None,
              guard_dir=None):
    """Grade ``students`` (folder names under ``root``); return ``{student: entry}``
    where entry has ``status``, ``reason``, ``submission``, ``layout``, ``seed``, ``seconds``.
    Changes to the grader's own files (``guard_dir``, default the package) seen meanwhile
    are undone and appended to ``warnings``; ``AMP_GRADER_GUARD=0`` turns that off (for
    grader developers editing the package while a batch runs)."""

    root, output_dir = pathlib.Path(root), pathlib.Path(output_dir)
    isolation = isolation or ("fork" if _fork_available() else "subprocess")
    if isolation == "fork" and not _fork_available():
        raise UsageError("--isolation fork needs os.fork (POSIX)")
    jobs = max(1, int(jobs or _cpu_count()))
    entries = {} if manifest_entries is None else manifest_entries
    pending = collections.deque()
    bar = Progress(len(students), enabled=progress)
    for student in students:
        submission, layout, reason = locate_submission(root / student)
        entry = {"status": OK, "reason": "", "seed": seed, "layout": layout, "seconds": 0.0,
                 "submission": _relative(submission, root) if submission else ""}
        entries[student] = entry
        if submission is None:
            (output_dir / student).mkdir(parents=True, exist_ok=True)
            entry.update(status=NO_SUBMISSION, reason=reason)
            _write_report(zero_report(student, seed, NO_SUBMISSION, reason, root / student),
                          output_dir / student / RESULTS)
            bar.update(student, NO_SUBMISSION)
            continue
        job_class = ForkJob if isolation == "fork" else SubprocessJob
        pending.append(job_class(student, submission.resolve(), layout, output_dir / student, seed,
                                 include_hidden, timeout))
    if not pending:
        return entries
    if isolation == "fork":
        if progress:
            print("grade-many: loading torch and the grader once for all students...", file=sys.stderr)
        warm_up(include_hidden)
    bar.started = time.monotonic()  # the ETA counts grading only
    guard = integrity.GraderGuard(guard_dir) if os.environ.get("AMP_GRADER_GUARD", "1") != "0" else None
    warnings = [] if warnings is None else warnings

    def _guard(suspects):
        changed = guard.restore() if guard is not None else []
        if changed:
            who = ", ".join(sorted(suspects)) or "this batch"
            warnings.append(f"the grader's own files changed while grading {who} and were restored "
                            f"before the next student: {', '.join(changed[:10])}")

    os_limits.become_subreaper()
    preexisting = set(os_limits.children(os.getpid()))
    active = []
    interrupted = None

    def _stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, _stop) if hasattr(signal, "SIGTERM") else None
    try:
        while pending or active:
            while pending and len(active) < jobs:
                job = pending.popleft()
                job.start()
                active.append(job)
            time.sleep(POLL_S)
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
                _finish(job, verdict, entries)
                bar.update(job.student, entries[job.student]["status"], _score_of(job.results)
                           if entries[job.student]["status"] == OK else None)
            if finished:
                if os.path.isdir("/proc"):  # a dead child's leftovers are ours now
                    sweep_orphans({job.pid for job in active} | preexisting)
                _guard(running)
    except KeyboardInterrupt as exc:
        interrupted = exc
    finally:
        for job in active:
            job.kill()
            _finish(job, (CRASHED, "grading was interrupted"), entries)
        if interrupted is not None:
            for job in pending:  # never started: say so instead of leaving them 'ok'
                job.prepare()
                job.started = time.monotonic()
                _finish(job, (CRASHED, "not graded: the batch was interrupted"), entries)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if os.path.isdir("/proc"):
            sweep_orphans(preexisting)
        _guard([job.student for job in active])
    if interrupted is not None:
        raise BatchInterrupted(entries)
    return entries


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a batch; ``entries`` is complete (unfinished students crashed)."""

    def __init__(self, entries):
        super().__init__("interrupted")
        self.entries = entries


def _finish(job, verdict, entries):
    status, reason = verdict
    entry = entries[job.student]
    entry.update(status=status, reason=reason, seconds=round(job.elapsed(), 2))
    if status != OK:
        _write_report(zero_report(job.student, job.seed, status, reason, job.submission), job.results)


def _relative(path, root):
    try:
        return pathlib.Path(path).resolve().relative_to(pathlib.Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# -- the manifest ------------------------------------------------------------------------------
def read_manifest(output_dir):
    path = pathlib.Path(output_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("students"), dict):
        raise UsageError(f"{path}: not a grade-many manifest")
    return data


def write_manifest(output_dir, manifest):
    path = pathlib.Path(output_dir) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{MANIFEST}.tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


# -- commands ----------------------------------------------------------------------------------
def add_parser(subparsers):
    many = subparsers.add_parser(
        "grade-many", help="grade one folder per student and write a class report",
        description="Grade every student folder in ROOT (a clone of each repository, as "
                    "`gh classroom clone student-repos` lays them out, or just its exercises/). "
                    "Writes DIR/scores.csv, DIR/<student>/results.json, DIR/report.md and charts.")
    many.add_argument("root", metavar="ROOT", help="folder with one sub-folder per student")
    many.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    many.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                      help="students graded at once (default: the number of CPUs)")
    many.add_argument("--seed", type=int, default=None,
                      help="the run's seed, used for every student (default: random, or the seed "
                           "recorded in DIR/run.json when re-grading with --only)")
    many.add_argument("--shard", default=None, metavar="K/N",
                      help="grade only the K-th of N deterministic slices of ROOT (1-based)")
    many.add_argument("--only", action="append", default=None, metavar="STUDENT",
                      help="re-grade only this student (repeatable); updates DIR's CSV and report")
    many.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                      help=f"wall-clock limit per student (default {DEFAULT_TIMEOUT_S:g})")
    many.add_argument("--visible-only", action="store_true", help="run only the visible tests")
    many.add_argument("--isolation", choices=("fork", "subprocess"), default=None,
                      help="fork a pre-imported worker per student (default on POSIX) or start a "
                           "`grade` subprocess per student (default elsewhere)")
    many.add_argument("--no-progress", action="store_true", help="no progress output")
    many.set_defaults(func=run_grade_many)

    merge = subparsers.add_parser(
        "merge-scores", help="join the output folders of grade-many shards into one report",
        description="Join grade-many output folders (e.g. one per --shard K/N) into one "
                    "DIR/scores.csv, DIR/report.md and charts.")
    merge.add_argument("inputs", nargs="+", metavar="SHARD_DIR")
    merge.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    merge.set_defaults(func=run_merge_scores)
    return many


def run_grade_many(args):
    try:
        return _grade_many(args)
    except UsageError as exc:
        print(f"grade-many: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("grade-many: interrupted", file=sys.stderr)
        return 130


def _grade_many(args):
    from autograder.engine import new_seed
    from autograder.reports import class_report

    root, output_dir = pathlib.Path(args.root), pathlib.Path(args.output_dir)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    students = [s for s in discover(root) if (root / s).resolve() != output_dir.resolve()]
    shard = parse_shard(args.shard) if args.shard else None
    previous = read_manifest(output_dir)
    if args.only:
        unknown = sorted(set(args.only) - set(students))
        if unknown:
            raise UsageError(f"--only: no such student folder in {root}: {', '.join(unknown)}")
        chosen = sorted(set(args.only))
        if shard:
            chosen = [s for s in chosen if s in select_shard(students, *shard)]
    else:
        chosen = select_shard(students, *shard) if shard else students
    seed = args.seed
    if seed is None and args.only and previous:
        seed = previous.get("seed")
    seed = new_seed() if seed is None else int(seed)

    keep = previous if (args.only and previous) else None
    manifest = keep or {"students": {}}
    manifest.update({
        "version": 1, "seed": manifest.get("seed", seed) if keep else seed,
        "root": str(root.resolve()), "visible_only": bool(args.visible_only),
        "shard": f"{shard[0]}/{shard[1]}" if shard else manifest.get("shard"),
        "class_size": len(students), "started": _now(),
    })
    if not keep and shard:
        manifest["shard_students"] = chosen
    print(f"grade-many: {len(chosen)} of {len(students)} student folder(s) in {root}"
          + (f", shard {shard[0]}/{shard[1]}" if shard else "") + f"; seed {seed}", file=sys.stderr)
    started = time.monotonic()
    warnings = []
    interrupted = False
    try:
        entries = run_batch(root, output_dir, chosen, seed, jobs=args.jobs, timeout=args.timeout,
                            include_hidden=not args.visible_only, isolation=args.isolation,
                            progress=not args.no_progress, manifest_entries=manifest["students"],
                            warnings=warnings)
    except BatchInterrupted as exc:
        entries, interrupted = exc.entries, True
        warnings.append("the batch was interrupted: students marked 'crashed' with reason "
                        "'interrupted' were not graded (re-grade them with --only)")
    manifest["warnings"] = (manifest.get("warnings", []) if keep else []) + warnings
    for warning in warnings:
        print(f"grade-many: warning: {warning}", file=sys.stderr)
    manifest["students"] = entries
    manifest["finished"] = _now()
    write_manifest(output_dir, manifest)
    outputs = class_report.write_all(output_dir, manifest)
    wall = time.monotonic() - started
    counts = collections.Counter(entries[s]["status"] for s in chosen)
    problems = ", ".join(f"{counts[s]} {s}" for s in STATUSES[1:] if counts[s])
    per = wall / len(chosen) if chosen else 0.0
    print(f"grade-many: graded {len(chosen)} student(s) in {wall:.1f} s ({per:.2f} s each)"
          + (f"; {problems}" if problems else ""), file=sys.stderr)
    for path in outputs:
        print(f"wrote {path}")
    return 130 if interrupted else 0


def run_merge_scores(args):
    try:
        return _merge_scores(args)
    except UsageError as exc:
        print(f"merge-scores: {exc}", file=sys.stderr)
        return 2


def merge_manifests(manifests):
    """One manifest from several shard manifests: students joined, coverage checked."""
    merged = {"version": 1, "students": {}, "merged_from": [], "warnings": []}
    seeds, shards = set(), collections.defaultdict(set)
    for source, manifest in manifests:
        merged["merged_from"].append(str(source))
        seeds.add(manifest.get("seed"))
        if manifest.get("shard"):
            k, n = parse_shard(manifest["shard"])
            shards[n].add(k)
        for student, entry in manifest["students"].items():
            if student in merged["students"]:
                merged["warnings"].append(f"{student} appears in more than one input; "
                                          f"kept the one from {source}")
            merged["students"][student] = dict(entry, source=str(source))
        for key in ("root", "visible_only", "class_size"):
            merged.setdefault(key, manifest.get(key))
        merged["warnings"] += [f"{source}: {w}" for w in manifest.get("warnings", [])]
    for n, found in sorted(shards.items()):
        missing = sorted(set(range(1, n + 1)) - found)
        if missing:
            merged["warnings"].append("shards missing: " + ", ".join(f"{k}/{n}" for k in missing))
    if len(shards) > 1:
        merged["warnings"].append("the inputs were sharded with different N: "
                                  + ", ".join(str(n) for n in sorted(shards)))
    seeds.discard(None)
    merged["seed"] = next(iter(seeds)) if len(seeds) == 1 else None
    if len(seeds) > 1:
        merged["warnings"].append("the inputs were graded with different seeds (each student's "
                                  "seed is in scores.csv)")
    merged["shard"] = None
    return merged


def _merge_scores(args):
    from autograder.reports import class_report

    output_dir = pathlib.Path(args.output_dir)
    manifests = []
    for name in args.inputs:
        source = pathlib.Path(name)
        manifest = read_manifest(source)
        if manifest is None:
            raise UsageError(f"{source}: no {MANIFEST} (not a grade-many output folder)")
        manifests.append((source, manifest))
    merged = merge_manifests(manifests)
    merged["finished"] = _now()
    output_dir.mkdir(parents=True, exist_ok=True)
    for source, manifest in manifests:
        if source.resolve() == output_dir.resolve():
            continue
        for student in manifest["students"]:
            if merged["students"][student]["source"] != str(source):
                continue
            if (source / student).is_dir():
                shutil.copytree(source / student, output_dir / student, dirs_exist_ok=True)
    write_manifest(output_dir, merged)
    outputs = class_report.write_all(output_dir, merged)
    for warning in merged["warnings"]:
        print(f"merge-scores: warning: {warning}", file=sys.stderr)
    print(f"merge-scores: {len(merged['students'])} student(s) from {len(manifests)} input(s)",
          file=sys.stderr)
    for path in outputs:
        print(f"wrote {path}")
    return 0
