"""What the hostile tests share: the full confinement they demand of the machine,
the limits they grade under, readers of a report's per-module results, the sweep
for processes a hostile submission tried to leave behind, and a small class graded
with one hostile student in it."""
import json
import os
import pathlib
import secrets
import signal
import time

import pytest

from autograder.sandbox.client import Limits

# Short calls, room for torch's import and a few processes: a trick meets a limit quickly.
TIGHT = Limits(call_timeout=4.0, import_timeout=8.0, module_budget=20.0, memory_bytes=1 * 2**30)
# Every process a hostile submission starts carries it (sweep finds them).
MARK = f"amphostile{secrets.token_hex(4)}"


def require_confinement(boxes):
    """The machine's isolation report, when it confines student code fully. Where it
    cannot (no Landlock, unprivileged user namespaces disabled) the test skips, naming what
    is missing -- unless AUTOGRADER_REQUIRE_CONFINEMENT=1 (set by .ci/run and CI), which
    turns a missing layer into a failure."""
    from autograder.sandbox import isolation
    from autograder.sandbox.isolation import probe_isolation

    report = probe_isolation(boxes, Limits())
    if not report.get("confined"):
        message = isolation.summary(report) + "; " + "; ".join(report.get("problems") or [])
        if os.environ.get("AUTOGRADER_REQUIRE_CONFINEMENT") == "1":
            pytest.fail("this machine must confine student code: " + message)
        pytest.skip("this machine cannot fully confine student code: " + message)
    return report


def module_tests(report, module):
    return [t for t in report.tests if t.module == module]


def report_texts(report, module):
    return "\n".join(t.output for t in module_tests(report, module))


def full_marks(report, *modules):
    table = report.by_module()
    return all(table[m][0] == table[m][1] > 0 for m in modules)


def sweep(marker):
    """Pids whose command name or command line carries ``marker``; killed (never the caller)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            text = (entry / "comm").read_bytes() + (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in text:
            found.append(int(entry.name))
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass
    return found


def graded_beside_honest(tmp_path, name, overrides, marker, call_timeout, module_budget):
    """``grade-many --jobs 2`` over a class of three, ``name`` (the solutions, with the
    modules in ``overrides`` replaced: module -> source) between ``a-honest`` and
    ``c-honest`` (graded while it runs), with the per-call limit and the module budget given (small:
    a trick meets them quickly). Returns each student's results.json and the processes
    carrying ``marker`` still running once the batch ended (killed)."""
    from support.cli import autograder_command
    from support.helpers import ROOT, make_submission

    root, out = tmp_path / "class", tmp_path / "out"
    students = ["a-honest", name, "c-honest"]
    for student in students:
        make_submission(root / student / "exercises", overrides if student == name else None)
    env = dict(os.environ, AUTOGRADER_CALL_TIMEOUT=str(call_timeout), AUTOGRADER_MODULE_BUDGET=str(module_budget),
               PYTHONPATH=str(ROOT))
    try:
        done = autograder_command("grade-many", root, "-o", out, "--jobs", "2", "--seed", "5", "--no-progress",
                                  env=env, timeout=900)
    finally:
        time.sleep(0.5)
        survivors = sweep(marker)
    assert done.returncode == 0, done.stderr[-3000:]
    return {student: json.loads((out / student / "results.json").read_text()) for student in students}, survivors


def full_marks_in_every_module(results):
    modules = results["extra_data"]["modules"]
    return all(entry["score"] == entry["max_score"] for entry in modules.values())
