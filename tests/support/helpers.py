"""Shared helpers for the project's tests: build submissions from the reference
solutions with targeted edits, grade them in-process, and look at the processes
a command left."""
import contextlib
import os
import pathlib
import shutil
import signal
import time

from autograder import active_assignment
from autograder.judging import call_errors

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASSIGNMENT = active_assignment.current()  # the chapter, or $AUTOGRADER_ASSIGNMENT's package
SOLUTIONS = ASSIGNMENT.solutions_dir
MODULES = ASSIGNMENT.modules


def report_view(report):
    """What a student and the class report read of a grade, test by test."""
    return [(test.test_id, test.module, test.score, test.max_score, test.passed, str(test.detail or ""),
             call_errors.describe(test.error, f"{test.module}.py") if test.error is not None else "", test.blamed)
            for test in report.tests]


def solution_source(module):
    return (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")


def mutate(module, *replacements):
    """The solution of ``module`` with each (old, new) replaced exactly once."""
    source = solution_source(module)
    for old, new in replacements:
        assert source.count(old) == 1, f"mutation anchor not found once in {module}: {old!r}"
        source = source.replace(old, new)
    return source


def make_submission(directory, overrides=None, omit=()):
    """A submission folder: the solutions, with some modules replaced or left out."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    overrides = overrides or {}
    for module in MODULES:
        if module in omit:
            continue
        source = overrides.get(module, solution_source(module))
        (directory / f"{module}.py").write_text(source, encoding="utf-8")
    for name, source in overrides.items():  # extra helper files
        if name not in MODULES:
            (directory / name).write_text(source, encoding="utf-8")
    return directory


def public_tests_run(folder, *args, timeout_s=None):
    """The chapter's public tests (exercises/tests) on the modules in ``folder``, as
    ``AMP_EXERCISES_DIR=folder python -m pytest -q -p no:cacheprovider ARGS`` runs them:
    ``(pytest arguments, environment)``, a run for :func:`support.forked_runs.pytest_exit_codes`.
    ``timeout_s``: each public test's limit instead of the student's 20 s
    (support/public_timeout.py), for a submission whose loop never ends."""
    env = {"AMP_EXERCISES_DIR": str(folder)}
    plugin = []
    if timeout_s is not None:
        env["PUBLIC_TESTS_TIMEOUT_S"] = str(timeout_s)
        plugin = ["-p", "tests.support.public_timeout"]
    return ["-q", "-p", "no:cacheprovider", *plugin, *map(str, args)], env


def box_specs(tmp_path, overrides=None):
    """The boxes' specs of a submission (the solutions, ``overrides`` replacing modules)
    taken into a grading area under ``tmp_path``, with a uid of its own."""
    return taken_in(tmp_path, make_submission(tmp_path / "sub", overrides))


def taken_in(tmp_path, folder):
    """The boxes' specs of the submission in ``folder`` (the active assignment's
    modules) taken into a grading area under ``tmp_path``, with a uid of its own."""
    from autograder.intake import submission
    from autograder.sandbox import uids

    uid = uids.allocate(1)[0]
    (tmp_path / "area").mkdir()
    return submission.take(folder, tmp_path / "area", uid, uid)[0]


def copy_tree(source, destination):
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def copy_grader(destination):
    """A throwaway copy of the grader in ``destination``: its package, and the files outside it
    that the assignment's grader reads (``GRADER_FILES``), as every export ships them."""
    from autograder import active_assignment

    copy_tree(ROOT / "autograder", destination / "autograder")
    for name in active_assignment.current().grader_files:
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, destination / name)
    return destination


def scores(report):
    """(module -> score, set of failed test ids)"""
    return ({module: score for module, (score, _) in report.by_module().items()},
            {test.test_id for test in report.tests if not test.passed})


class Mutant:
    """A single-mistake submission: the reference solution with ``replacements``
    applied, its mistake in TODO ``todo``; ``must_fail``: test ids that must fail.
    ``unwritten``: TODOs left as the stub has them (a student still at work), so
    that the grade must tell the written mistake from what is not written yet.
    ``as_written``: the file as a student's is, the solution's fences gone (the
    stub's comments are what marks each TODO there). ``limits``: the sandbox's
    limits (:class:`~autograder.sandbox.client.Limits` fields) for a mistake that
    costs time limits: an endless loop."""

    def __init__(self, name, todo, replacements, must_fail=(), unwritten=(), as_written=False, limits=None):
        self.name, self.todo = name, todo
        self.replacements, self.must_fail = list(replacements), set(must_fail)
        self.unwritten = tuple(unwritten)
        self.as_written = as_written
        self.limits = dict(limits or {})

    def __repr__(self):
        return f"Mutant({self.name!r}, TODO {self.todo})"

    def source(self, module):
        """The submitted file: the mutated solution, its ``unwritten`` TODOs stubbed."""
        source = mutate(module, *self.replacements)
        if self.unwritten or self.as_written:
            import sys

            sys.path.insert(0, str(ROOT / "tools"))
            import make_stubs

            source = make_stubs.make_stub(source, set(self.unwritten))
        return source

    def sandbox_limits(self):
        """The limits to grade it with (None: the grader's own)."""
        from autograder.sandbox.client import Limits

        return Limits(**self.limits) if self.limits else None


# An endless loop costs its first call's limit and a short one (0.5 s) for each later call;
# the mutants' loops run under small limits (the slowest correct call of the chapter is
# charged about 0.06 s) and a module budget that one call spends: the module's later calls
# are not run. LOOP_LIMITS: a first call of 1 s, then four with the short limit, for the
# walkthrough's path (each later call placed where it looped, not at its test's TODO).
BUDGETED_LOOP_LIMITS = {"call_timeout": 0.5, "module_budget": 0.5}
LOOP_LIMITS = {"call_timeout": 1.0, "module_budget": 3.0}


def endless_loops(module, cases, limits=BUDGETED_LOOP_LIMITS):
    """One mutant per ``{todo: (name, a test id that meets the loop)}``: an endless loop at
    the start of that TODO's code, in a file as a student writes it."""
    return [Mutant(name, todo, [endless_loop(module, todo)], [test_id], as_written=True, limits=limits)
            for todo, (name, test_id) in cases.items()]


def endless_loop(module, todo):
    """The replacement that starts TODO ``todo``'s code in the solution of ``module`` with
    an endless loop. The block is found by its fence (``# >>> TODO n: ...``), so that a
    reworded or rewrapped solution keeps the mutant."""
    import re

    fence = re.search(rf"^([ \t]*)# >>> TODO {todo}:[^\n]*\n", solution_source(module), re.M)
    assert fence, f"no fence of TODO {todo} in {module}"
    indent = fence.group(1)
    return fence.group(0), f"{fence.group(0)}{indent}while True:  # never ends\n{indent}    pass\n"


def todos_named(text):
    """The TODO numbers a feedback text names ('TODO n', 'TODO n/m')."""
    import re

    return {int(number) for number in re.findall(r"TODO\s*(\d+)", text or "")}


def said_once_per_module(outputs, *needles):
    """A module that cannot be used is explained once, on its first test; every
    other test of the module points there. True when ``outputs`` (one module's, in
    order) read that way and the first holds every needle."""
    return bool(outputs) and all(needle in outputs[0] for needle in needles) \
        and all("could not be used" in output for output in outputs[1:])


def interruptible():
    """``preexec_fn`` for a command a test interrupts as a terminal's Ctrl-C would: SIGINT
    at its default, whatever this test run inherited (a background job ignores it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)



def running(pid):
    """Whether ``pid`` is a live process, not a zombie (Linux: read from /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@contextlib.contextmanager
def parent_with_child(child_code):
    """A Python process of its own (this test process has other descendants) that
    started one child running ``child_code``: yields ``(parent Popen, child pid)``;
    both are killed after."""
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys, time\n"
                               f"child = subprocess.Popen([sys.executable, '-c', {child_code!r}])\n"
                               "print(child.pid, flush=True)\ntime.sleep(120)"],
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        yield parent, child
    finally:
        for pid in (child, parent.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        parent.wait()


def outliving(pids, timeout):
    """Which of ``pids`` still run after waiting up to ``timeout`` seconds for them to end."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [pid for pid in pids if running(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def grading_parent():
    """Where grades make their working copies when no run folder is named."""
    import tempfile

    from autograder.judging import grading_area

    return pathlib.Path(grading_area.system_parent() or tempfile.gettempdir())


@contextlib.contextmanager
def private_grading_parent():
    """A folder beside :func:`grading_parent` for one test's grades (named to them
    in ``AUTOGRADER_AREAS``): what they leave is theirs, whatever else grades on
    the machine meanwhile. Traversable by all, as the boxes' uids need."""
    import shutil
    import tempfile

    folder = pathlib.Path(tempfile.mkdtemp(prefix="autograder-test-parent-", dir=grading_parent()))
    try:
        folder.chmod(0o711)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def working_copies(parent=None):
    """This user's grading folders (grades' areas and runs' folders of them) in
    ``parent`` (default :func:`grading_parent`); another user's test run may share
    the machine."""
    found = set()
    for pattern in ("autograder-grade-*", "autograder-areas-*"):
        for path in pathlib.Path(parent or grading_parent()).glob(pattern):
            with contextlib.suppress(OSError):
                if path.lstat().st_uid == os.getuid():
                    found.add(path.name)
    return found
