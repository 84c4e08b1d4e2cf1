"""Many fresh-interpreter runs for the price of one interpreter start.

One fresh interpreter imports what every run imports first (``warm``), then forks a
child per run, as many at a time as it has CPUs. The child is the run: it starts from that import alone, as a fresh
interpreter would after it, and nothing a run before it left behind (modules, conftest
constants, torch's global state) reaches it. Its output goes to a file of its own.

- :func:`pytest_exit_codes`: each run is ``python -m pytest ARGS`` with an environment
  of its own: the child sets the environment and runs ``pytest.main(ARGS)`` from the
  repository root with the root first on ``sys.path`` (as ``python -m pytest`` puts it).
  pytest and its plugins are imported before the fork, by a run that collects an empty
  folder (no conftest, no test).
- :func:`code_runs`: each run is a piece of Python run as ``__main__``; nothing but
  ``warm`` is imported before it (the torch-startup tests assert exactly that).

Run as a script (``forked_runs.py MODE WARM...``) it reads the runs as JSON on stdin and
writes their results as JSON on stdout."""
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# torch, and the compiler stack its optimizers and AMP scaler load on first use (1-2 s of a run)
TORCH = ("torch", "torch._dynamo")


def _forked(mode, runs, warm, timeout):
    done = subprocess.run([sys.executable, os.path.abspath(__file__), mode, *warm],
                          input=json.dumps(runs), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the forked runs failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def pytest_exit_codes(runs, warm=TORCH, timeout=1800):
    """``runs``: list of (pytest args, env overrides) -> list of (exit code, output tail, seconds),
    in order. ``warm``: modules imported once before the children fork."""
    results = _forked("pytest", [[list(args), dict(env)] for args, env in runs], warm, timeout)
    return [(code, output[-4000:], seconds) for code, output, seconds in results]


def code_runs(cases, warm=("torch",), timeout=600):
    """``cases``: {name: Python source} -> {name: (exit code, everything it printed)}."""
    results = _forked("code", list(cases.items()), warm, timeout)
    return {name: (code, output) for name, (code, output, _seconds) in zip(cases, results)}


def _pytest_run(args, env):
    os.environ.update(env)
    import pytest

    return int(pytest.main(args))


def _code_run(name, source):
    try:
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # the run's own failure: its traceback is its output
        traceback.print_exc()
        return 1
    return 0


def _start(body, job):
    """A child for one run, its output in a file of its own: (pid, file, start time)."""
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's exit status carries the result
        code = 70
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            code = body(*job)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid, log, started


def _run_all(body, runs, at_once):
    """Every run, ``at_once`` children at a time; [(exit code, output, seconds)] in order."""
    results, running, waiting = [None] * len(runs), {}, list(enumerate(runs))
    while waiting or running:
        while waiting and len(running) < at_once:
            index, job = waiting.pop(0)
            pid, log, started = _start(body, job)
            running[pid] = (index, log, started)
        pid, status = os.wait()
        if pid not in running:
            continue
        index, log, started = running.pop(pid)
        with log:
            log.seek(0)
            results[index] = (os.waitstatus_to_exitcode(status), log.read(), time.monotonic() - started)
    return results


def _load_plugins():
    """pytest and its installed plugins imported as a run imports them (through pytest's
    assertion rewriting), by a run that collects an empty folder: no conftest, no test."""
    import contextlib

    import pytest

    with tempfile.TemporaryDirectory() as empty, open(os.devnull, "w") as quiet, \
            contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider", "--rootdir", empty, empty])


def main():
    mode, warm = sys.argv[1], sys.argv[2:]
    runs = json.load(sys.stdin)
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever the imports print goes to stderr, not into the results
    os.chdir(ROOT)
    sys.path[0] = ROOT  # not this script's folder: the root, as ``python -m pytest`` has it
    for name in warm:
        __import__(name)  # imported once here, before any child forks
    if mode == "pytest":
        _load_plugins()
    # What the imports made lives on in every child: kept out of their collections, which
    # pytest forces at the end of each run (with torch loaded, a collection scans a lot).
    gc.collect()
    gc.freeze()
    body = {"pytest": _pytest_run, "code": _code_run}[mode]
    with results:
        json.dump(_run_all(body, runs, len(os.sched_getaffinity(0))), results)


if __name__ == "__main__":
    main()
