"""Every CPython of the range this machine carries, graded for real (docs/maintaining.md, "The
Python range"): a venv built from requirements.txt alone (with uv, as the READMEs' uv line), the
README's student path in it (the Python check, the public tests on the stubs), the reference
solutions graded full marks, and a known mistake losing points with the right test failing and
nothing blamed on the student that is the grader's.

Pythons: pyenv's (``$PYENV_ROOT/versions/3.X.Y``) and ``python3.X`` on PATH, one per minor
version. This machine's pip config carries torch's CPU wheel for its own Python (given to uv
as find-links, as .ci/run does); other Pythons get torch's CPU build from PyTorch's index where it
is reachable (GitHub's runners) and PyPI's CUDA build (several GB) where it is not (this
repository's CI machines).
uv's cache, shared by all of them, downloads each wheel once, and each finished venv is kept
between runs under a key of requirements.txt, the install options and the Python
(tests/support/export_envs.py).
"""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import pytest
from support import export_envs
from support.helpers import ROOT, make_submission
from support.mutants_amp_update import CASES

from autograder import python_range

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not export_envs.LINUX, reason=export_envs.NOT_LINUX)]

MINORS = range(python_range.FLOOR[1], python_range.CEILING[1] + 1)
MISTAKE = next(case for case in CASES if case.name == "unscale_wrong_direction")  # TODO 1
# What a grade says when the grader's own code failed (3.10 once said the first two of a correct answer).
GRADER_FAULT = ("could not be read", "unreadable answer", "takes no keyword arguments", "could not check this")


def candidates(minor):
    root = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv")) / "versions"
    for folder in sorted(root.glob(f"3.{minor}.*"), reverse=True):
        yield folder / "bin" / f"python3.{minor}"
    found = shutil.which(f"python3.{minor}", path=export_envs.clean_environ()["PATH"])
    if found:
        yield pathlib.Path(found)


def cpython(minor):
    """A working CPython 3.<minor> of this machine, or None (a pyenv shim of a version that is
    not installed answers with an error)."""
    for path in candidates(minor):
        if not path.is_file():
            continue
        proc = subprocess.run([str(path), "-c", "import sys, platform; print(platform.python_implementation(), "
                               "*sys.version_info[:2])"], capture_output=True, text=True, env=export_envs.clean_environ())
        if proc.returncode == 0 and proc.stdout.split() == ["CPython", "3", str(minor)]:
            return str(path)
    return None


def uv_environ():
    """uv with one cache for every Python's venv, none of uv's config files, and this machine's
    local wheels where pip's config has some (torch's CPU wheel for the machine's Python)."""
    env = export_envs.clean_environ(UV_CACHE_DIR=str(export_envs.cache_root() / "uv-cache"), UV_NO_CONFIG="1")
    links = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                           capture_output=True, text=True).stdout.strip() or os.environ.get("PIP_FIND_LINKS", "")
    if links:
        env["UV_FIND_LINKS"] = links.split()[0]
    return env


def pytorch_index_reachable():
    """Whether PyTorch's CPU index resolves here (GitHub's runners: yes; this repository's CI
    machines: no, and PyPI's CUDA build stands in)."""
    try:
        socket.getaddrinfo("download.pytorch.org", 443)
    except OSError:
        return False
    return True


# As the READMEs' uv line: compiled at install, since the grader never lets Python write its caches
# (without them each grade here would compile torch again).
INSTALL_OPTIONS = ("--compile-bytecode",)


def built_venv(python):
    """The python of a venv made by uv from requirements.txt for ``python`` (kept between runs)."""
    requirements = (ROOT / "requirements.txt").read_bytes()

    def build(folder):
        uv = [sys.executable, "-m", "uv"]
        env = uv_environ()
        export_envs.run_logged(uv + ["venv", "--python", python, str(folder / "venv")], folder / "venv.log", env=env)
        cpu = ["--torch-backend", "cpu"] if pytorch_index_reachable() else []  # else PyPI's: several GB
        export_envs.run_logged(uv + ["pip", "install", *INSTALL_OPTIONS, "--python",
                                     str(folder / "venv" / "bin" / "python"), *cpu,
                                     "-r", str(folder / "requirements.txt")], folder / "install.log", env=env)

    # the options are part of the key: a venv built without them is built again
    folder = export_envs.cached("python-range", {"requirements.txt": requirements,
                                                 "install-options": " ".join(INSTALL_OPTIONS).encode()}, build, python)
    return str(folder / "venv" / "bin" / "python")


def run(python, *args, timeout=900):
    env = export_envs.clean_environ(PYTHONDONTWRITEBYTECODE="1")
    env.pop("AUTOGRADER_LANG", None)
    env.pop("AMP_EXERCISES_DIR", None)
    return subprocess.run([python, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


def graded(python, submission, results, *options):
    proc = run(python, "-m", "autograder", "grade", "--submission", submission, "--results", results,
               "--seed", "2024", "--lang", "en", "--quiet", *options)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(pathlib.Path(results).read_text(encoding="utf-8"))


@pytest.mark.parametrize("minor", MINORS, ids=lambda minor: f"3.{minor}")
def test_this_python_grades_for_real(minor, tmp_path):
    if sys.version_info[:2] == (3, minor) and not os.environ.get("AUTOGRADER_RANGE_OWN_PYTHON"):
        pytest.skip(f"3.{minor} runs this suite: every other test grades on it (AUTOGRADER_RANGE_OWN_PYTHON=1 "
                    "builds its venv from requirements.txt too)")
    python = cpython(minor)
    if python is None:
        pytest.skip(f"no CPython 3.{minor} on this machine (pyenv install 3.{minor})")
    venv = built_venv(python)

    # The README's student path: the check, then the public tests on the stubs (each fails at its TODO).
    check = run(venv, "-m", "autograder.python_range")
    assert (check.returncode, check.stderr) == (0, ""), check.stderr
    public = run(venv, "-m", "pytest", "-q", "-p", "no:cacheprovider", "exercises/tests/test_amp_update.py")
    assert public.returncode == 1 and "NotImplementedError" in public.stdout, public.stdout[-2000:]

    full = graded(venv, ROOT / "solutions", tmp_path / "solutions.json")
    assert full["score"] == full["max_score"] > 0, [t["name"] for t in full["tests"] if t["score"] < t["max_score"]]

    wrong = make_submission(tmp_path / "mistake", {"amp_update": MISTAKE.source("amp_update")})
    report = graded(venv, wrong, tmp_path / "mistake.json", "--module", "amp_update")
    assert report["score"] < report["max_score"]
    failed = [test for test in report["tests"] if test["score"] < test["max_score"]]
    assert {tag for test in failed for tag in test["tags"]} == {"amp_update"}, [test["name"] for test in failed]
    assert any(must in json.dumps(test) for must in MISTAKE.must_fail for test in failed), failed[:2]
    for test in failed:
        assert not any(words in test.get("output", "") for words in GRADER_FAULT), test
