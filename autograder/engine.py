"""Grade one submission: start the sandbox's zygote, take the contract files
into a grading area, run the visible and hidden suites in-process with
:class:`~autograder.plugin.GradingPlugin`, add the optional GPU-lab credit,
and return a :class:`~autograder.results.GradeReport`.

The judge never imports student code; the suites reach it only through the
sandbox. Whatever a submission does, this returns a complete report.

Order matters: the zygote is started first (a fresh process: nothing of the
judge is in it), then everything the judge will ever import is imported,
before the first box runs student code -- nothing the judge loads later can
have been written by a student.
"""
import contextlib
import io
import os
import pathlib
import secrets
import tempfile
import time

from autograder import MODULES, assignment_points, feedback, integrity, static_checks, submission
from autograder.i18n import _, set_language
from autograder.i18n import text as t
from autograder.results import GradeReport, TestResult
from autograder.sandbox import isolation, uids
from autograder.sandbox import limits as os_limits

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
VISIBLE_DIR = PACKAGE_DIR / "visible"
HIDDEN_DIR = PACKAGE_DIR / "hidden"
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


def preload_judge():
    """Import now whatever the judge uses after student code has run: reports,
    lab checks, pytest and torch's lazily imported parts."""
    import pytest  # noqa: F401
    import torch
    import torch._dynamo  # noqa: F401  (optimizer.step imports it on first use)

    import autograder.feedback  # noqa: F401
    import autograder.judge  # noqa: F401
    import autograder.lab_credit  # noqa: F401
    from autograder import i18n
    import autograder.plugin  # noqa: F401
    import autograder.reports.gradescope  # noqa: F401
    import autograder.static_checks  # noqa: F401
    for optional in ("autograder.reports.terminal", "autograder.reports.summary_md",
                     "autograder.reports.classroom", "autograder.reports.safe_text",
                     "autograder.reports.results_file", "autograder.reports.github_files",
                     "autograder.reports.isolation_view", "autograder.reports.tidy",
                     "autograder.cli_classroom_report"):
        with contextlib.suppress(ImportError):
            __import__(optional)
    for lang in i18n.LANGUAGES:  # the catalogs are read now, never after student code ran
        i18n.catalog(lang)
    torch.set_num_threads(1)  # deterministic and fair under --jobs


def _suite_args(include_hidden):
    paths = [str(VISIBLE_DIR)]
    if include_hidden and hidden_tests_available():
        paths.append(str(HIDDEN_DIR))
    return paths + [
        "-c", str(PACKAGE_DIR / "suite.ini"), "--rootdir", str(PACKAGE_DIR),
        "--confcutdir", str(PACKAGE_DIR), "--import-mode=importlib",
        "-p", "no:cacheprovider", "-p", "pytest_timeout", "-o", f"timeout={TEST_TIMEOUT_S}",
        # No assertion rewriting: the suites judge with expect(), and pytest would
        # otherwise load its own compiled caches of them from the grader's tree.
        "--assert=plain",
        # Feedback is built from the exception itself; pytest's own tracebacks
        # only cost time (kept with AUTOGRADER_DEBUG for staff).
        "--tb=" + ("long" if os.environ.get("AUTOGRADER_DEBUG") else "no"),
        "-q", "-rN", "--no-header", "-p", "no:unraisableexception", "-p", "no:threadexception", "-W", "ignore::UserWarning",
    ]


def run_suites(sandboxes, seed, include_hidden, modules=None):
    import pytest

    from autograder.plugin import GradingPlugin

    plugin = GradingPlugin(sandboxes, seed, modules)
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
        for sandbox in sandboxes.values():
            sandbox.close()
    results = plugin.results
    if plugin.collection_errors:
        results.append(TestResult(
            name=_("test collection"), module="grader", max_score=0.0, score=0.0, passed=False,
            output="", detail=_("Some grader tests could not be loaded; tell the course staff."),
            visibility="visible"))
    return results


def delegation_message(what):
    return _("loss_scaler.py used PyTorch's own scaler machinery while it was graded ({what}). Module 2 must "
             "be built by hand (no torch.amp.GradScaler or subclass of it, no torch.cuda.amp/torch.cpu.amp "
             "scalers, no torch._amp_* operators, however they are reached), so it earns no points until "
             "that is removed.", what=what)


def apply_delegation_verdict(results, delegation):
    """Module 2 earns nothing once the worker saw it reach for torch's scaler."""
    if not delegation:
        return results
    message = delegation_message(", ".join(delegation[:3]))
    for test in results:
        if test.module == "loss_scaler" and test.max_score:
            test.score, test.passed = 0.0, False
            test.detail, test.error, test.hint, test.blamed = message, None, None, 0
    return results


def apply_review_verdict(results, source, flags):
    """Module 2 is held at 0 pending review where its source shows signs of undoing the
    runtime guard; those and the lookups the static check cannot read become TA flags."""
    signs = static_checks.review_signs(source)
    flags += static_checks.ta_flags(source)
    if not signs or static_checks.find_delegation(source):  # a certain use says more than a sign
        return results
    message = _("loss_scaler.py line {line} uses {what}, which can switch off the grader's check that Module 2 is "
                "built by hand. "
                "Module 2 is held at 0 until the course staff have reviewed it; a scaler built by hand needs "
                "none of this, so remove it or tell the staff why it is there.",
                line=signs[0].line, what=signs[0].what)
    for test in results:
        if test.module == "loss_scaler" and test.max_score:
            test.score, test.passed = 0.0, False
            test.detail, test.error, test.hint, test.blamed = message, None, None, 0
    return results


def _order(results):
    modules = list(MODULES) + ["gpu_lab", "grader"]
    return sorted(results, key=lambda test: (modules.index(test.module) if test.module in modules else 99,
                                             test.visibility != "visible"))


def grade_submission(submission_dir, seed=None, include_hidden=True, limits=None, flags=None,
                     boxes=None, uid=None, lang="en", modules=None, display_dir=None):
    """Grade ``submission_dir`` and return a complete :class:`GradeReport`.

    ``boxes``: a started box factory to reuse (batch grading hands each student
    a channel to its zygote); by default this grade starts its own. ``uid``: the
    student's uid when running as root (default: a fresh unused one).
    Grader files the submission changed on disk are flagged here; batch grading
    also restores them between students (:class:`autograder.integrity.GraderGuard`).
    ``lang``: the language of the feedback; ``modules``: grade only these (--module);
    ``display_dir``: the submission folder as the student named it, for messages."""
    from autograder import lab_credit
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Sandbox

    seed = new_seed() if seed is None else int(seed)
    started = time.monotonic()
    own_boxes = boxes is None
    if own_boxes:
        boxes = start_boxes()  # the zygote imports torch while we do
    try:
        guard = integrity.GraderGuard(PACKAGE_DIR)
        preload_judge()
        os_limits.protect_judge()
        if uid is None:
            uid = uids.allocate(1)[0]
        set_language(lang)
        notes = []
        if include_hidden and not hidden_tests_available():
            notes.append(t("Hidden tests are not available here: only the visible tests were run. "
                              "Your final grade also includes hidden tests.", lang))
        flags = list(flags or [])
        if guard.planted:
            flags.append("compiled files in the grader that do not match their source: "
                         + ", ".join(guard.planted[:10]))
        limits = limits or limits_from_env()
        with tempfile.TemporaryDirectory(prefix="amp-grade-") as area:
            specs, intake_notes = submission.take(submission_dir, area, uid, uid)
            notes += intake_notes
            if not any(spec["present"] for spec in specs.values()) and \
                    not any(spec["problem"] for spec in specs.values()):
                notes.append(t("No exercise module found in {folder}: expected {files}.", lang,
                                  folder=str(display_dir or submission_dir),
                                  files=", ".join(f"{m}.py" for m in MODULES)))
            sources = {module: submission.source_of(specs[module]) for module in MODULES}
            sandboxes = {module: Sandbox(module, specs[module], boxes, limits) for module in MODULES}
            results = run_suites(sandboxes, seed, include_hidden, modules)
            leftovers = uids.kill_leftovers(uid)
        if leftovers:
            flags.append(f"{leftovers} process(es) of this submission were still running after its "
                         "boxes were closed and were killed")
        if not modules or "loss_scaler" in modules:
            apply_review_verdict(results, sources["loss_scaler"], flags)
        apply_delegation_verdict(results, sandboxes["loss_scaler"].delegation)  # what the worker saw says most
        confinement = isolation.combine([report for sandbox in sandboxes.values()
                                         for report in sandbox.isolation])
        tampered = guard.changes()
        if tampered:
            flags.append("grader files changed on disk while the submission ran: " + ", ".join(tampered[:10]))
        lab_tests, lab_info = ([], {}) if modules and "gpu_lab" not in modules \
            else lab_credit.lab_results(submission_dir, lang=lang)
        results = _order(results + lab_tests)
        diagnosis = feedback.finish(results, lang, str(display_dir or "exercises"), sources)
        ran_hidden = include_hidden and hidden_tests_available()
        not_run = {} if ran_hidden else {module: assignment_points.hidden_points(module)
                                         for module in (modules or MODULES) if assignment_points.hidden_points(module)}
        return GradeReport(tests=results, seed=seed, submission=str(submission_dir),
                           duration=time.monotonic() - started, flags=flags, notes=notes,
                           isolation=confinement, lab=lab_info, diagnosis=diagnosis, lang=lang,
                           hidden_not_run=not_run)
    finally:
        if own_boxes:
            boxes.close()
