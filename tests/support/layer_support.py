"""What the tests of the box's layers share (tests/engine/sandbox/layers/test_layer_*.py): a box
configuration of files under the test's folder, a box with earlier layers'
results fed in, and a fork to apply a layer in (its mechanism changes the
process for good: mounts, uid, limits, Landlock, the filter)."""
import functools
import json
import os
import pickle
import subprocess
import sys

import pytest

from autograder.sandbox.client import Limits
from autograder.sandbox.confine.box_config import for_module
from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.confinement import Box
from autograder.sandbox.confine.layers import readable, result as results
from autograder.sandbox.boxes import PACKAGE_ROOT

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the box's layers are Linux's")
root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="needs root (CI runs these as root)")
MODULE = "student_module"
_pipe = None  # in a child of in_child: the descriptor its answer goes through


def config(tmp_path, **changes):
    """A box config for a module ``student_module`` under ``tmp_path``: its folder,
    scratch and log, as the judge would send (``changes``: fields replaced)."""
    submission, scratch = tmp_path / "submission", tmp_path / "scratch"
    for folder in (submission, scratch):
        folder.mkdir(exist_ok=True)
    (submission / f"{MODULE}.py").write_text("ANSWER = 42\n", encoding="utf-8")
    made = for_module({"submission": str(submission), "scratch": str(scratch), "log": str(tmp_path / "log")},
                      MODULE, Limits().for_box())
    import dataclasses

    return dataclasses.replace(made, **changes)


@functools.lru_cache(maxsize=1)
def _fresh_sys_path():
    """sys.path as a box's interpreter has it: a fresh ``python -I`` with the
    package root in front (as the zygote boots). The test process's own sys.path
    is not it: earlier tests in this process may have added their own folders."""
    found = subprocess.run([sys.executable, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
                           capture_output=True, text=True, check=True, timeout=60)
    return [PACKAGE_ROOT] + json.loads(found.stdout)


def box(config_, *earlier, keep_fds=()):
    """A :class:`Box` as the loop has it once ``earlier`` (results) were reported,
    reading the interpreter's folders a box's fresh interpreter has."""
    saved = sys.path[:]
    sys.path[:] = _fresh_sys_path()
    try:
        interpreter = readable.interpreter_paths(config_.forbidden)
    finally:
        sys.path[:] = saved
    return Box(config_, earlier, keep_fds, interpreter=interpreter)


def namespaces_held(flags):
    """The "namespaces" layer's result for a worker in the namespaces of ``flags``."""
    return results.applied("namespaces", "", flags=flags)


def plain(result):
    """A result as plain data (it crosses a pipe from a child)."""
    return {"layer": result.layer, "status": result.status.value, "words": result.words,
            "problems": list(result.problems), "facts": dict(result.facts)}


def errno_of(action):
    """The errno ``action()`` fails with (0 when it does not)."""
    try:
        action()
        return 0
    except OSError as exc:
        return exc.errno


def child_pipe():
    """(In a child of :func:`in_child`) the descriptor a "descriptors" layer must keep."""
    return _pipe


def in_child(body, unshare=0):
    """Run ``body()`` in a fork, after ``unshare(unshare)`` there; returns
    ``(exit code, what body returned)``, or skips when the kernel refuses the
    namespaces (nothing of the test's own process changes either way)."""
    global _pipe
    # the box's sys.path is asked of a fresh interpreter once: here, before a body that
    # drops root may no longer run this venv's python (under /root, say)
    _fresh_sys_path()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _pipe = write
        try:
            try:
                if unshare:
                    namespaces.unshare(unshare)
            except OSError as exc:
                os.write(write, pickle.dumps(("skip", f"unshare: {exc.strerror}")))
                os._exit(0)
            try:
                answer = ("ok", body())
            except BaseException as exc:  # noqa: B036 - given back to the test
                answer = ("error", f"{type(exc).__name__}: {exc}")
            os.write(write, pickle.dumps(answer))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    status = os.waitpid(pid, 0)[1]
    kind, value = pickle.loads(data) if data else ("exit", None)
    if kind == "skip":
        pytest.skip(value)
    assert kind != "error", value
    return os.waitstatus_to_exitcode(status), value
