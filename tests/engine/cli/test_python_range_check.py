"""Before pip's error: on a Python or computer torch's pin has no build for, the READMEs' first
command (``python3 -m autograder.python_range``) and ``python -m autograder grade`` say, in
Chinese and English, which Python to install; ``grade`` without torch says how to install it,
with the standard library only. Real old interpreters (pyenv's 3.9, 3.6) where this machine
has them; 3.15, an Intel Mac and 32-bit Windows by replacing what the check looks at."""
import io
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from autograder import python_range
from support.helpers import ROOT

CPYTHON_LINUX = {"version": (3, 12, 1), "implementation": "CPython", "system": "Linux", "machine": "x86_64",
                 "bits": 64, "glibc": "2.36", "executable": "/usr/bin/python3.12"}
WANTED = python_range.dotted(python_range.RECOMMENDED)


def old_python(minor):
    """pyenv's CPython 3.<minor> (or python3.<minor> on PATH), or None."""
    root = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv")) / "versions"
    for folder in sorted(root.glob(f"3.{minor}.*"), reverse=True):
        if (folder / "bin" / f"python3.{minor}").is_file():
            return str(folder / "bin" / f"python3.{minor}")
    return shutil.which(f"python3.{minor}")


def said(messages):
    out = io.StringIO()
    python_range.report(messages, out)
    return out.getvalue()


def facts(**changes):
    return {**CPYTHON_LINUX, **changes}


def test_a_python_and_machine_in_range_pass():
    assert python_range.problems(facts()) == []
    for system, machine in (("Linux", "aarch64"), ("Windows", "AMD64"), ("Darwin", "arm64")):
        for minor in range(python_range.FLOOR[1], python_range.CEILING[1] + 1):
            assert python_range.problems(facts(system=system, machine=machine, version=(3, minor, 0))) == []


@pytest.mark.parametrize("changes, zh, en", [
    ({"version": (3, 15, 0)}, "太新", "too new: torch==2.13.0 has no build for it yet"),
    ({"version": (3, 9, 18)}, "太旧", "too old"),
    ({"system": "Darwin", "machine": "x86_64"}, "Intel 芯片", "no build for Intel (x86-64) Macs"),
    ({"system": "Windows", "machine": "AMD64", "bits": 32}, "32 位", "This Python is 32-bit"),
    ({"system": "Linux", "machine": "armv7l", "bits": 32}, "armv7l", "x86-64 and aarch64 (ARM64) only"),
    ({"glibc": "2.17"}, "glibc 是 2.17", "glibc 2.17"),
    ({"implementation": "PyPy"}, "PyPy", "PyPy"),
])
def test_out_of_range_says_what_to_install_in_both_languages(changes, zh, en):
    found = python_range.problems(facts(**changes))
    assert len(found) == 1, found
    chinese, english = found[0]
    assert zh in chinese and en in english
    text = said(found)
    assert text.index(chinese) < text.index(english)  # Chinese first: the students' language
    if "version" in changes or changes.get("system") == "Windows":  # names the Python to install
        assert f"Python {WANTED}" in chinese and f"Python {WANTED}" in english


def test_each_platform_names_its_own_way_to_install():
    windows = python_range.problems(facts(system="Windows", machine="AMD64", version=(3, 15, 0)))[0]
    mac = python_range.problems(facts(system="Darwin", machine="arm64", version=(3, 9, 6)))[0]
    linux = python_range.problems(facts(version=(3, 8, 10)))[0]
    assert f"py -{WANTED}" in windows[0] and f"py -{WANTED}" in windows[1] and "64" in windows[1]
    assert f"brew install python@{WANTED}" in mac[1] and f"python{WANTED}" in mac[0]
    assert f"sudo apt install python{WANTED}" in linux[1] and f"uv python install {WANTED}" in linux[0]
    intel = python_range.problems(facts(system="Darwin", machine="x86_64", version=(3, 9, 6)))
    assert len(intel) == 2 and "Codespaces" in intel[1][1] and "Rosetta" in intel[1][1]


def test_what_a_python_in_range_lacks_is_found_without_importing_it():
    nothing = python_range.missing_modules(facts(version=(3, 10, 13)), lambda name: None)
    assert nothing[0] == "torch" and nothing[-1] == "tomli"  # tomllib's parser, below 3.11 only
    assert "tomli" not in python_range.missing_modules(facts(), lambda name: None)
    assert python_range.missing_modules(facts(), lambda name: None if name == "rich" else object()) == ["rich"]
    assert python_range.check_grader(["check-lab"], facts(version=(3, 15, 0))) == 0  # needs no torch
    assert python_range.check_grader(["grade"], facts()) == 0


def test_grade_on_a_python_out_of_range_says_which_to_install(capsys):
    assert python_range.check_grader(["watch"], facts(version=(3, 15, 0))) == 1
    assert "too new" in capsys.readouterr().err


def test_the_command_line_checks_before_it_imports_anything_of_torch(monkeypatch, capsys):
    from autograder import __main__

    monkeypatch.setattr(python_range, "facts", lambda: facts(system="Darwin", machine="x86_64"))
    assert __main__.main(["grade"]) == 1
    assert "no build for Intel (x86-64) Macs" in capsys.readouterr().err


def clean_env():
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.mark.parametrize("minor", [9, 6])
def test_a_real_old_python_is_told_before_pip(minor):
    """The READMEs' first step and ``grade`` itself, on a real CPython 3.9 (macOS's python3) and 3.6."""
    python = old_python(minor)
    if python is None:
        pytest.skip(f"no CPython 3.{minor} on this machine (pyenv install 3.{minor})")
    for args in (["-m", "autograder.python_range"], ["-m", "autograder", "grade"]):
        proc = subprocess.run([python, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, env=clean_env())
        assert proc.returncode == 1, proc.stderr
        assert f"Python 3.{minor}." in proc.stderr and "太旧" in proc.stderr and "too old" in proc.stderr
        assert f"CPython {python_range.dotted(python_range.FLOOR)}-{python_range.dotted(python_range.CEILING)}" \
            in proc.stderr and "Traceback" not in proc.stderr


def test_the_readme_step_passes_here_in_silence():
    proc = subprocess.run([sys.executable, "-m", "autograder.python_range"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=clean_env())
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_grade_in_a_python_without_the_requirements_says_how_to_install_them(tmp_path):
    """A bare venv (no torch, nothing): the grade names what is missing and the CPU build of torch
    to install first, with the standard library only, and still writes its results."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True,
                   env=clean_env())
    bare = tmp_path / "bare" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = subprocess.run([str(bare), "-m", "autograder", "grade", "--lang", "zh",
                           "--submission", str(ROOT / "exercises"), "--results", str(tmp_path / "r.json")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=clean_env())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "没有安装：torch、pytest" in proc.stderr and "Not installed in this Python" in proc.stderr
    assert "--index-url https://download.pytorch.org/whl/cpu" in proc.stderr
    assert (tmp_path / "r.json").is_file()
