"""What a chapter sees of the engine: the one module an assignment imports
(``from autograder.authoring import expect, _``), as pytest's public ``pytest``
stands before ``_pytest``. Everything else of the engine may change without
telling the chapters; what is here is the contract (tests/repository/test_architecture.py
checks that the assignments import nothing else of the engine).

- messages: ``_`` (a message rendered late, in the student's language),
  ``render``, ``text``, ``LANGUAGES``, ``resolve_language``, ``set_language``,
  ``help_language``;
- the judge's helpers for the suites: ``expect`` and its kin, ``equals``,
  ``hint_only_if``, ``builds_on`` (this test builds on an earlier TODO: blame it when its
  code is wrong on the same inputs), ``Mistake``, ``StudentCodeFailed``, ``value_of``, ``raised_*``
  (``value_of`` and ``raised_type`` read a stub's NotImplementedError as "TODO n is not written
  yet", never as an answer),
  ``numbers_message``, ``known_ratio``; ``reference_cache`` (a reference run kept as plain data),
  ``todo_graph``, ``call_errors`` (what a failed call says), ``TestResult``;
- the shape of a box's answer, declared beside each run of the worker side
  (``FLOAT``, ``Record``, ``ListOf``, ``maybe`` ... of ``answer_shapes``);
- reading what a student wrote without running it: ``safe_files``,
  ``source_of``, ``static_names``' ``Names``, ``IMPORTERS``, ``imported_paths``;
  sealing code a box must not change: ``code_seal``;
- a command of the chapter's own that runs student code, as ``conformance``
  does: ``open_session`` (one submission opened as every grade opens it),
  ``run_once``, ``read_job`` and ``write_answer`` (a judge process started as
  every command starts one), ``StudentError``, ``GradingFailed``, and the
  command line's ``default_submission``, ``usage_problem``, ``print_report``,
  ``warn``, ``terminal_width``, ``wrap``; ``REPO_ROOT``.

Names are imported when first used (:data:`LAZY`): a description that needs
only ``_`` does not load torch, and the sandbox's zygote, which imports the
chapter's worker side, loads only what that uses.
"""
import importlib

# module -> the names taken from it (a name that is a submodule is that module)
LAZY = {
    "autograder.locations": ("REPO_ROOT",),
    "autograder.i18n": ("_", "LANGUAGES", "help_language", "render", "resolve_language", "set_language", "text"),
    "autograder.intake": ("safe_files",),
    "autograder.intake.answer_shapes": (
        "ANY", "BOOL", "FLOAT", "INT", "NONE", "NUMBER", "STR", "Items", "ListOf", "MapOf", "Record", "Tensor",
        "Where", "maybe", "one_of"),
    "autograder.intake.static_names": ("IMPORTERS", "Names", "imported_paths"),
    "autograder.intake.submission": ("source_of",),
    "autograder.sandbox.confine": ("code_seal",),
    "autograder.sandbox.client": ("StudentError",),
    "autograder.judging": ("call_errors", "reference_cache", "todo_graph"),
    "autograder.judging.judge": (
        "Mistake", "StudentCodeFailed", "builds_on", "describe_raised", "dtype_tolerance", "equals", "expect",
        "expect_close", "expect_float_close", "expect_relative_error", "expect_same_tensors", "expect_tensor",
        "expect_updates_close", "hint_only_if", "known_ratio", "numbers_message", "raised_instead", "raised_is",
        "raised_type", "value_of"),
    "autograder.judging.results": ("TestResult",),
    "autograder.judging.engine": ("open_session",),
    "autograder.reports": ("wrap",),
    "autograder.reports.safe_text": ("print_report", "warn"),
    "autograder.reports.terminal": ("terminal_width",),
    "autograder.judge_process.launcher": ("GradingFailed", "read_job", "run_once", "write_answer"),
    "autograder.judge_process.preflight": ("default_submission", "usage_problem"),
}
_HOME = {name: module for module, names in LAZY.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = importlib.import_module(module)
    value = getattr(found, name, None)
    if value is None:  # a submodule not imported yet
        value = importlib.import_module(f"{module}.{name}")
    globals()[name] = value
    return value


def __dir__():
    return __all__
