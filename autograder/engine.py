"""Grade one submission: copy its modules to a scratch folder, run the visible
and hidden suites in-process with :class:`~autograder.plugin.GradingPlugin`,
add the optional GPU-lab credit, and return a :class:`~autograder.results.GradeReport`.

The judge never imports student code; the suites reach it only through the
sandbox. Whatever a submission does, this returns a complete report.
"""
import contextlib
import io
import os
import pathlib
import secrets
import shutil
import stat
import tempfile
import time

from autograder import MODULES, integrity
from autograder.results import GradeReport, TestResult
from autograder.sandbox import limits as os_limits

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
VISIBLE_DIR = PACKAGE_DIR / "visible"
HIDDEN_DIR = PACKAGE_DIR / "hidden"
MAX_SOURCE_BYTES = 1 * 2**20
TEST_TIMEOUT_S = 240  # backstop only: every sandbox call has its own, shorter limit


def limits_from_env():
    """Sandbox limits, tightened by tests through AUTOGRADER_* variables."""
    from autograder.sandbox.client import Limits

    limits = Limits()
    for name, field in (("AUTOGRADER_CALL_TIMEOUT", "call_timeout"),
                        ("AUTOGRADER_IMPORT_TIMEOUT", "import_timeout"),
                        ("AUTOGRADER_MODULE_BUDGET", "module_budget")):
        if os.environ.get(name):
            setattr(limits, field, float(os.environ[name]))
    return limits


def new_seed():
    return secrets.randbelow(2**31)


def hidden_tests_available():
    return any(HIDDEN_DIR.glob("test_*.py"))


def copy_submission(submission_dir, destination):
    """Copy the top-level ``*.py`` files of a submission (no links, no folders,
    nothing huge) into ``destination``, readable by an unprivileged worker."""
    destination.mkdir(parents=True)
    os.chmod(destination, 0o755)
    copied = []
    for path in sorted(pathlib.Path(submission_dir).glob("*.py")):
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            continue
        shutil.copyfile(path, destination / path.name)
        os.chmod(destination / path.name, 0o644)
        copied.append(path.name)
    return copied


def _suite_args(include_hidden):
    paths = [str(VISIBLE_DIR)]
    if include_hidden and hidden_tests_available():
        paths.append(str(HIDDEN_DIR))
    return paths + [
        "-c", str(PACKAGE_DIR / "suite.ini"), "--rootdir", str(PACKAGE_DIR),
        "--confcutdir", str(PACKAGE_DIR), "--import-mode=importlib",
        "-p", "no:cacheprovider", "-p", "pytest_timeout", "-o", f"timeout={TEST_TIMEOUT_S}",
        # Feedback is built from the exception itself; pytest's own tracebacks
        # only cost time (kept with AUTOGRADER_DEBUG for staff).
        "--tb=" + ("long" if os.environ.get("AUTOGRADER_DEBUG") else "no"),
        "-q", "-rN", "--no-header", "-p", "no:unraisableexception", "-p", "no:threadexception", "-W", "ignore::UserWarning",
    ]


def run_suites(submission_copy, scratch, seed, include_hidden, limits=None):
    import pytest
    import torch
    # optimizer.step() imports torch._dynamo on first use (~2 s). Import it once
    # here so that every forked worker inherits it instead of paying again.
    import torch._dynamo  # noqa: F401

    from autograder.plugin import GradingPlugin

    torch.set_num_threads(1)  # deterministic, fork-safe, fair under --jobs
    plugin = GradingPlugin(str(submission_copy), str(scratch), seed, limits)
    log = io.StringIO()  # pytest's own terminal output: the report is ours
    saved_env = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no plugins a student could install
    try:
        with contextlib.redirect_stdout(log):
            pytest.main(_suite_args(include_hidden), plugins=[plugin])
    finally:
        if saved_env is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved_env
        os_limits.kill_descendants()
    results = plugin.results
    if plugin.collection_errors:
        results.append(TestResult(
            name="grader: test collection", module="grader", max_score=0.0, score=0.0, passed=False,
            output="Some grader tests could not be loaded; tell the course staff.", visibility="visible"))
    return results


def _order(results):
    modules = list(MODULES) + ["gpu_lab", "grader"]
    return sorted(results, key=lambda t: (modules.index(t.module) if t.module in modules else 99,
                                          t.visibility != "visible"))


def grade_submission(submission_dir, seed=None, include_hidden=True, limits=None, flags=None):
    """Grade ``submission_dir`` and return a complete :class:`GradeReport`.

    Grader files the submission changed on disk are flagged here; batch grading
    also restores them between students (:class:`autograder.integrity.GraderGuard`)."""
    seed = new_seed() if seed is None else int(seed)
    started = time.monotonic()
    guard = integrity.GraderGuard(PACKAGE_DIR)
    os_limits.become_subreaper()
    notes = []
    if include_hidden and not hidden_tests_available():
        notes.append("Hidden tests are not available here: only the visible tests were run. "
                     "Your final grade also includes hidden tests.")
    with tempfile.TemporaryDirectory(prefix="amp-grade-") as scratch:
        scratch = pathlib.Path(scratch)
        os.chmod(scratch, 0o755)
        copy = scratch / "submission"
        copied = copy_submission(submission_dir, copy)
        present = [m for m in MODULES if f"{m}.py" in copied]
        if not present:
            notes.append(f"No exercise module found in {submission_dir}: expected "
                         + ", ".join(f"{m}.py" for m in MODULES) + ".")
        results = run_suites(copy, scratch, seed, include_hidden, limits or limits_from_env())
    flags = list(flags or [])
    tampered = guard.changes()
    if tampered:
        flags.append("grader files changed on disk while the submission ran: " + ", ".join(tampered[:10]))
    from autograder.lab_credit import lab_results

    results += lab_results(submission_dir)
    return GradeReport(tests=_order(results), seed=seed, submission=str(submission_dir),
                       duration=time.monotonic() - started, flags=flags, notes=notes)
