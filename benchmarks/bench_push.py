"""What a student's push waits for: classroom.yml's install and grade steps, re-played.

    python benchmarks/bench_push.py [--torch-wheels DIR | --torch-index URL] [--submission solutions]
                                    [--without-pip]

Each install starts from a fresh venv and no cache, as the workflow's does (it keeps none: a
student's run could plant a poisoned one). With uv, as the workflow installs now: uv from PyPI
at its pin (``UV_PIN`` of the workflow), the CPU torch pin, then requirements.txt, with
``UV_NO_CACHE`` and ``UV_NO_CONFIG``. With pip, as it installed before: the torch pin, then
requirements.txt. Then the workflow's grade, ``python -m autograder grade --submission ...``, in
the uv-built venv. Both installers take the same sources: PyTorch's CPU index, or where it is not
reachable (this repository's CI machines) a folder holding torch's CPU wheel standing in for it
(``--torch-wheels``, default pip's find-links) beside PyPI; no other pip or uv settings of the
machine apply. One run prints

    push path: uv install Xs + grade Ys = Zs (pip install Ws)

on a shared machine: compare the figures of one run.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "classroom.yml"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def workflow_uv_pin():
    """``uv==X.Y.Z``: the pin classroom.yml installs uv at."""
    return re.search(r"^\s*UV_PIN:\s*(uv==\S+)\s*$", WORKFLOW.read_text(encoding="utf-8"), re.M).group(1)


def torch_pin():
    return re.search(r"^torch==\S+", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M).group(0)


def pip_find_links():
    """The folder pip's own settings take wheels from on this machine, or None."""
    if os.environ.get("PIP_FIND_LINKS"):
        return os.environ["PIP_FIND_LINKS"].split()[0]
    proc = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                          capture_output=True, text=True)
    return proc.stdout.split()[0] if proc.returncode == 0 and proc.stdout.strip() else None


def clean_environ(scratch):
    """This environment without any pip or uv setting, any venv, and with caches in ``scratch``
    (each installer is also told to keep none)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PIP_", "UV_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", UV_NO_CONFIG="1", UV_NO_CACHE="1",
               XDG_CACHE_HOME=str(pathlib.Path(scratch) / "cache"))
    return env


def torch_source(wheels, index):
    """The options that put the torch pin's CPU build first, as --index-url CPU_INDEX does."""
    return ["--index-url", index] if index else ["--find-links", str(wheels)]


def install_commands(installer, python, wheels=None, index=None):
    """The commands of the workflow's install step for ``installer`` into the venv of ``python``."""
    source = torch_source(wheels, index)
    if installer == "uv":
        uv = str(pathlib.Path(python).parent / "uv")
        return [[python, "-m", "pip", "install", "--no-cache-dir", workflow_uv_pin()],
                [uv, "pip", "install", "--python", python, *source, torch_pin()],
                [uv, "pip", "install", "--python", python, "-r", str(ROOT / "requirements.txt")]]
    return [[python, "-m", "pip", "install", "--no-cache-dir", *source, torch_pin()],
            [python, "-m", "pip", "install", "--no-cache-dir", "-r", str(ROOT / "requirements.txt")]]


def run(command, env, cwd=ROOT):
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} exited {proc.returncode}:\n"
                         f"{(proc.stdout + proc.stderr)[-3000:]}")
    return proc


def installed_torch(python, env):
    return run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"], env).stdout.strip()


def timed_install(installer, scratch, wheels, index):
    """Seconds to make a fresh venv and run the install step with ``installer``; the venv's python."""
    env = clean_environ(scratch)
    venv = pathlib.Path(scratch) / f"venv-{installer}"
    base = getattr(sys, "_base_executable", sys.executable)
    started = time.perf_counter()
    run([base, "-m", "venv", str(venv)], env)
    python = str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    for command in install_commands(installer, python, wheels, index):
        run(command, env)
    seconds = time.perf_counter() - started
    version = installed_torch(python, env)
    if not index and "+cpu" not in version and sys.platform.startswith("linux"):
        raise SystemExit(f"{installer} installed torch {version}, not the CPU build of {wheels}: "
                         "is its wheel for this Python?")
    return seconds, python


def timed_grade(python, submission, scratch):
    """Seconds of the workflow's grade step (the reference solutions: a full run of every test)."""
    env = clean_environ(scratch)
    env.pop("PIP_CONFIG_FILE")
    command = [python, "-m", "autograder", "grade", "--submission", str(submission),
               "--results", str(pathlib.Path(scratch) / "results.json"), "--quiet"]
    started = time.perf_counter()
    run(command, env)
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--torch-wheels", help="a folder holding torch's CPU wheel for this Python "
                                              "(default: pip's find-links)")
    where.add_argument("--torch-index", help=f"PyTorch's CPU index where reachable ({TORCH_INDEX})")
    parser.add_argument("--submission", default=str(ROOT / "solutions"))
    parser.add_argument("--without-pip", action="store_true", help="time uv's install and the grade only")
    args = parser.parse_args(argv)
    wheels = None if args.torch_index else (args.torch_wheels or pip_find_links())
    if not args.torch_index and not wheels:
        parser.error(f"no folder of torch wheels: pass --torch-wheels DIR, or --torch-index {TORCH_INDEX}")
    scratch = tempfile.mkdtemp(prefix="bench-push-")
    try:
        uv_install, python = timed_install("uv", scratch, wheels, args.torch_index)
        grade = timed_grade(python, args.submission, scratch)
        pip_install = None if args.without_pip else timed_install("pip", scratch, wheels, args.torch_index)[0]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pip_text = "not timed" if pip_install is None else f"{pip_install:.1f}s"
    print(f"push path: uv install {uv_install:.1f}s + grade {grade:.1f}s = {uv_install + grade:.1f}s "
          f"(pip install {pip_text})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
