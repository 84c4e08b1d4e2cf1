"""Many ``python -m pytest ARGS`` runs for the price of one interpreter start.

:func:`exit_codes` starts one fresh interpreter that imports what every run imports
(``warm``: torch by default; pytest and its plugins, loaded by a run that collects an empty
folder) and forks a child per run. The child is the run: it starts from that import alone
(no test module, no conftest loaded yet), sets the run's environment,
runs ``pytest.main(ARGS)`` from the repository root with the root first on ``sys.path``
(as ``python -m pytest`` puts it) and exits with pytest's exit code. So each run sees
what a fresh ``python -m pytest`` with that environment sees, and nothing a run before it
left behind (modules, conftest constants, torch's global state).

Run as a script it reads the runs as JSON on stdin and writes their exit codes and the
tail of their output as JSON on stdout."""
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# torch, and the compiler stack its optimizers and AMP scaler load on first use (1-2 s of a run)
TORCH = ("torch", "torch._dynamo")


def exit_codes(runs, warm=TORCH, timeout=1800):
    """``runs``: list of (args, env overrides) -> list of (exit code, output tail, seconds), in order.
    ``warm``: modules imported once before the children fork (before any run's environment is set)."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *warm],
                          input=json.dumps([[list(args), dict(env)] for args, env in runs]),
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the pytest batch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [tuple(result) for result in json.loads(done.stdout)]


def _run_one(args, env):
    """The child: one pytest run, its output in a file; returns (exit code, output tail, seconds)."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log:
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's exit status carries the result
            code = 70
            try:
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                os.environ.update(env)
                import pytest

                code = int(pytest.main(args))
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        seconds = time.monotonic() - started
        log.seek(0)
        return os.waitstatus_to_exitcode(status), log.read()[-4000:], seconds


def _load_plugins():
    """pytest and its installed plugins imported as a run imports them (through pytest's
    assertion rewriting), by a run that collects an empty folder: no conftest, no test."""
    import contextlib

    import pytest

    with tempfile.TemporaryDirectory() as empty, open(os.devnull, "w") as quiet, \
            contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider", "--rootdir", empty, empty])


def main():
    runs = json.load(sys.stdin)
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever the imports print goes to stderr, not into the results
    os.chdir(ROOT)
    sys.path[0] = ROOT  # not this script's folder: the root, as ``python -m pytest`` has it
    for name in sys.argv[1:]:
        __import__(name)  # imported once here, before any child forks
    _load_plugins()
    # What the imports made lives on in every child: kept out of their collections, which
    # pytest forces at the end of each run (with torch loaded, a collection scans a lot).
    gc.collect()
    gc.freeze()
    with results:
        json.dump([_run_one(args, env) for args, env in runs], results)


if __name__ == "__main__":
    main()
