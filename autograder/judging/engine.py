"""Grade one submission: open a grading session (:func:`open_session`: the
sandbox's zygote, the contract files in a grading area, a sandbox per module --
the one way every command opens a submission), run the visible and hidden suites
in-process with :class:`~autograder.judging.plugin.GradingPlugin`, add the
assignment's optional credit, and return a :class:`~autograder.judging.results.GradeReport`.

The judge never imports student code; the suites reach it only through the
sandbox. Whatever a submission does, this returns a complete report.

Order matters: the zygote is started first (a fresh process: nothing of the
judge is in it), then everything the judge will ever import is imported,
before the first box runs student code -- nothing the judge loads later can
have been written by a student.
"""
import contextlib
import os
import tempfile
import time

from autograder import active_assignment, locations
from autograder.intake import grader_guard, submission
from autograder.intake.submitted_text import clean_list, clean_tree, one_line
from autograder.judging import feedback, suites
from autograder.judging.grading_area import area_parent
from autograder.i18n import set_language
from autograder.i18n import text as t
from autograder.judging.results import GradeReport
from autograder.judging.seeds import new_seed
from autograder.sandbox import assignment_side, isolation, uids
from autograder.sandbox.confine import limits as os_limits

PACKAGE_DIR = locations.PACKAGE_DIR


def limits_from_env():
    """Sandbox limits, tightened by tests through AUTOGRADER_* variables."""
    from autograder.sandbox.client import Limits

    limits = Limits()
    for name, field in (("AUTOGRADER_CALL_TIMEOUT", "call_timeout"),
                        ("AUTOGRADER_AFTER_TIMEOUT", "after_timeout"),
                        ("AUTOGRADER_IMPORT_TIMEOUT", "import_timeout"),
                        ("AUTOGRADER_MODULE_BUDGET", "module_budget")):
        if os.environ.get(name):
            setattr(limits, field, float(os.environ[name]))
    return limits


def hidden_tests_available():
    return suites.hidden_tests_available()


def preload_judge():
    """Import now whatever the judge uses after student code has run: its own
    modules, the assignment's plugins and hooks, pytest and torch's lazily
    imported parts. (Whoever renders reports in this process imports them
    first: the batch does, a single grade renders in another process.)"""
    import pytest  # noqa: F401
    import torch
    from autograder import torch_startup

    torch_startup.install()  # optimizers need only eager mode's answers from torch._dynamo

    import autograder.judging.feedback  # noqa: F401
    import autograder.judging.judge  # noqa: F401
    import autograder.judging.plugin  # noqa: F401
    from autograder import i18n

    assignment = active_assignment.current()
    assignment.plugins()
    assignment_side.declared()  # the shapes of its answers, which modules have a guard
    hooks = assignment.hooks()
    if hooks is not None and hasattr(hooks, "preload"):
        hooks.preload()
    for lang in i18n.LANGUAGES:  # the catalogs are read now, never after student code ran
        i18n.catalog(lang)
    torch.set_num_threads(1)  # deterministic and fair under --jobs


class Session:
    """One submission opened for grading (:func:`open_session`): its contract files
    taken into an area of their own (``specs``, the intake's ``notes``), a sandbox
    per module (``sandboxes``), the student's ``uid`` and the grader's files
    watched (``guard``). Once it is closed: ``leftovers``, how many of the
    submission's processes were still running and were killed, and ``printed``,
    module -> a summary of what its code printed."""

    def __init__(self, submission_dir, specs, notes, sandboxes, uid, guard, modules):
        self.submission_dir = submission_dir
        self.specs, self.notes, self.sandboxes = specs, notes, sandboxes
        self.uid, self.guard, self.modules = uid, guard, modules
        self.leftovers, self.printed = 0, {}

    def sources(self):
        """module -> the source text taken ('' when it was not)."""
        return {module: submission.source_of(self.specs[module]) for module in self.sandboxes}

    def run_suites(self, seed, include_hidden, apart=False):
        """The suites' results (see :mod:`autograder.judging.suites`) for the session's
        modules, their boxes asked for at once so that they confine in parallel;
        ``apart``: each module's tests in a process of its own."""
        from autograder.sandbox.client import prestart

        prestart(self.sandboxes.values(), self.modules)
        return suites.run(self.sandboxes, seed, include_hidden, self.modules, apart)


@contextlib.contextmanager
def open_session(submission_dir, boxes=None, uid=None, limits=None, lang="en", modules=None,
                 prefix="autograder-grade-"):
    """Open ``submission_dir`` for grading, the same way for every command, as a
    :class:`Session`. In order: the sandbox's zygote (``boxes``, a started box
    factory to reuse, else one started here: a fresh process, nothing of the judge
    is in it); the grader's files watched; everything the judge will import loaded
    and the judge protected, before any box runs student code; the student's
    ``uid`` (as root; default a fresh unused one); the language of the feedback
    (``lang``; None: the one in force);
    the contract files taken into an area of their own (named ``prefix``...), each
    module with its sandbox (``limits``, default the environment's). ``modules``:
    grade only these (--module). On exit every sandbox is closed, whatever of
    the submission still runs is killed, what it printed is read, the area is
    removed and a zygote started here closed."""
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Sandbox, close_all

    own_boxes = boxes is None
    if own_boxes:
        boxes = start_boxes()  # the zygote imports torch while we do
    try:
        guard = grader_guard.GraderGuards(PACKAGE_DIR, keep_contents=False)
        preload_judge()
        os_limits.protect_judge()
        if uid is None:
            uid = uids.allocate(1)[0]
        if lang is not None:
            set_language(lang)
        limits = limits or limits_from_env()
        with tempfile.TemporaryDirectory(prefix=prefix, dir=area_parent()) as area:
            specs, notes = submission.take(submission_dir, area, uid, uid)
            sandboxes = {module: Sandbox(module, specs[module], boxes, limits)
                         for module in active_assignment.current().modules}
            session = Session(submission_dir, specs, notes, sandboxes, uid, guard, modules)
            try:
                yield session
            finally:  # a cancelled grade (watch) leaves nothing running either
                close_all(sandboxes.values())
                session.leftovers = uids.kill_leftovers(uid)
                session.printed = {module: summary for module, sandbox in sandboxes.items()
                                   if (summary := sandbox.printed.summary())}
    finally:
        if own_boxes:
            boxes.close()


def _order(results):
    assignment = active_assignment.current()
    modules = list(assignment.modules) + [assignment.optional_module, "grader"]
    return sorted(results, key=lambda test: (modules.index(test.module) if test.module in modules else 99,
                                             test.visibility != "visible"))


def _points_text(points):
    return f"{points:g}"


def grade_submission(submission_dir, seed=None, include_hidden=True, limits=None, flags=None,
                     boxes=None, uid=None, lang="en", modules=None, display_dir=None, apart=False):
    """Grade ``submission_dir`` and return a complete :class:`GradeReport`.

    ``boxes``: a started box factory to reuse (batch grading hands each student
    a channel to its zygote); by default this grade starts its own. ``uid``: the
    student's uid when running as root (default: a fresh unused one).
    Grader files the submission changed on disk are flagged here; batch grading
    also restores them between students (:class:`autograder.intake.grader_guard.GraderGuard`).
    ``lang``: the language of the feedback; ``modules``: grade only these (--module);
    ``display_dir``: the submission folder as the student named it, for messages;
    ``apart``: each module's tests in a process of its own (:mod:`autograder.judging.suites`),
    for a grade that has the machine to itself."""
    assignment = active_assignment.current()
    hooks = assignment.hooks()
    seed = new_seed() if seed is None else int(seed)
    # A folder name need not be UTF-8 (os.fsdecode keeps its bytes as surrogates).
    shown_dir = one_line(str(display_dir or submission_dir), 500)
    started = time.monotonic()
    notes, flags = [], list(flags or [])
    with open_session(submission_dir, boxes, uid, limits, lang, modules) as session:
        if include_hidden and not hidden_tests_available():
            notes.append(t("Hidden tests are not available here: only the visible tests were run. "
                              "Your final grade also includes hidden tests.", lang))
        if session.guard.planted:
            flags.append("compiled files in the grader that do not match their source: "
                         + ", ".join(session.guard.planted[:10]))
        notes += session.notes
        specs = session.specs
        if not any(spec["present"] for spec in specs.values()) and \
                not any(spec["problem"] for spec in specs.values()):
            notes.append(t("No exercise module found in {folder}: expected {files}.", lang,
                              folder=shown_dir,
                              files=", ".join(assignment.files())))
        sources = session.sources()
        sandboxes = session.sandboxes
        results = session.run_suites(seed, include_hidden, apart)
    if session.leftovers:
        flags.append(f"{session.leftovers} process(es) of this submission were still running after its "
                     "boxes were closed and were killed")
    if hooks is not None and hasattr(hooks, "after_suites"):  # e.g. a rule the suites cannot see
        hooks.after_suites(results, sources=sources, guard_reports={
            module: sandbox.delegation for module, sandbox in sandboxes.items()}, flags=flags, modules=modules)
    confinement = isolation.combine([report for sandbox in sandboxes.values()
                                     for report in sandbox.isolation])
    tampered = session.guard.changes()
    if tampered:
        flags.append("grader files changed on disk while the submission ran: " + ", ".join(tampered[:10]))
    optional_tests, optional_info = [], {}
    if hooks is not None and hasattr(hooks, "optional_credit") and \
            (not modules or assignment.optional_module in modules):
        optional_tests, optional_info = hooks.optional_credit(submission_dir, lang=lang)
    results = _order(results + optional_tests)
    diagnosis = feedback.finish(results, lang, shown_dir if display_dir else "exercises", sources)
    faults = [test for test in results if test.fault]
    if faults:  # not graded (judging/plugin.py): said once for the whole grade, in every output
        notes.append(t("The grader's own code failed in {count} test(s) worth {points} point(s): they are not "
                       "graded, neither in this score nor in its maximum. This is not your mistake: tell the course "
                       "staff; grading again after they fix it counts them.", lang, count=len(faults),
                       points=_points_text(sum(test.fault["points"] for test in faults))))
    ran_hidden = include_hidden and hidden_tests_available()
    not_run = {} if ran_hidden else {module: assignment.hidden_points_of(module)
                                     for module in (modules or assignment.modules)
                                     if assignment.hidden_points_of(module)}
    # Flags, notes and the lab record quote file names, manifests and records of the
    # student's repository (tamper flags, the intake, the assignment's hooks), and what the
    # student's code printed: they enter the report here, made writable for every output.
    return GradeReport(tests=results, seed=seed, submission=one_line(str(submission_dir), 1000),
                       duration=time.monotonic() - started, flags=clean_list(flags, 1000, lines=True),
                       notes=clean_list(notes, 2000, lines=True), isolation=confinement,
                       lab=clean_tree(optional_info, 2000), diagnosis=diagnosis, lang=lang,
                       hidden_not_run=not_run, printed=clean_tree(session.printed, 20000))
