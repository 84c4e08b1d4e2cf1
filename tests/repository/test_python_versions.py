"""One range of Pythons, true everywhere (docs/maintaining.md, "The Python range").

vermin (a static checker of the oldest Python each construct needs) finds nothing above
the floor in what runs on a student's or grader's machine, and nothing above 3.6 in the
check that must run on any Python 3; every file that states the range states
autograder/python_range.py's."""
import re
import subprocess
import sys

import pytest
import yaml

from autograder import python_range
from support.helpers import ROOT

# What runs on a student's or a grader's machine: the grader, the exercises and solutions
# (graded, and shipped to students / staff as they are), the GPU lab, and the tools the
# READMEs tell people to run (make_stubs, measure_mutants, readme_command).
RUNTIME = ["autograder", "exercises", "solutions", "gpu_lab", "tools"]
# And this repository's own suite and benchmarks: ci.yml runs them on the floor too.
OWN = ["tests", "benchmarks"]
# Runs first, on whatever Python the student has: it must get far enough to say which to install.
ANY_PYTHON = ["autograder/__init__.py", "autograder/__main__.py", "autograder/python_range.py"]
OLDEST_CHECKED = (3, 6)
FLOOR, CEILING = python_range.dotted(python_range.FLOOR), python_range.dotted(python_range.CEILING)


def too_new(paths, target):
    """{file: [what in it needs a Python newer than target]}: vermin's command line, in a process
    of its own, targeting exactly ``target`` ("3.10-": nothing newer), one line per finding."""
    code = "import sys, vermin; sys.exit(vermin.main())"
    argv = ["vermin", f"-t={python_range.dotted(target)}-", "--violations", "--format", "parsable",
            "--eval-annotations", "--no-tips", *[str(ROOT / path) for path in paths]]
    proc = subprocess.run([sys.executable, "-c", code, *argv[1:]], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1) and "rror" not in proc.stderr, proc.stdout + proc.stderr
    found = {}
    for line in proc.stdout.splitlines():
        path, line_no, _column, _py2, py3, feature = line.rsplit(":", 5)
        if path and feature:
            found.setdefault(path, []).append(f"line {line_no}: {feature} needs {py3}")
    assert bool(found) == (proc.returncode == 1), proc.stdout
    return found


def test_what_runs_on_a_student_or_grader_machine_needs_no_python_above_the_floor():
    assert not too_new(RUNTIME + OWN, python_range.FLOOR), f"newer than Python {FLOOR}"


def test_the_range_check_runs_on_any_python_3():
    assert not too_new(ANY_PYTHON, OLDEST_CHECKED)


def test_vermin_finds_what_the_floor_lacks(tmp_path):
    """The check can fail: the two constructs that made 3.10 grade the reference 12 / 100."""
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "toml.py").write_text("import tomllib\n", encoding="utf-8")
    (planted / "wire.py").write_text("import binascii\nbinascii.a2b_base64('', strict_mode=True)\n",
                                     encoding="utf-8")
    (planted / "fine.py").write_text("try:\n    import tomllib  # novm\nexcept ImportError:\n    tomllib = None\n",
                                     encoding="utf-8")
    found = too_new([str(planted)], python_range.FLOOR)
    assert sorted(found) == [str(planted / "toml.py"), str(planted / "wire.py")], found


# --------------------------------------------------------------------------- the range stated

def read(path):
    return (ROOT / path).read_text(encoding="utf-8")


def test_requires_python_is_the_range():
    assert re.search(rf'^requires-python = ">={re.escape(FLOOR)},<3\.{python_range.CEILING[1] + 1}"$',
                     read("pyproject.toml"), re.M)


@pytest.mark.parametrize("path", ["README.md", ".github/template/README.md", "docs/ta-guide.md",
                                  "docs/maintaining.md"])
def test_every_text_states_the_range(path):
    text = read(path)
    stated = re.findall(r"3\.(\d+)\s*(?:–|-|to)\s*3\.(\d+)", text)
    ranges = {(int(low), int(high)) for low, high in stated if int(high) - int(low) >= 2}
    assert ranges == {(python_range.FLOOR[1], python_range.CEILING[1])}, f"{path} states {ranges}"
    assert not re.search(r"Python 3\.11 (or|或) 3\.12", text), f"{path} still names the old pair"


def test_the_template_readme_states_the_range_in_both_languages():
    text = read(".github/template/README.md")
    chinese, english = text.split('<a id="english"></a>')
    assert f"CPython {FLOOR}–{CEILING}" in chinese and f"CPython {FLOOR} to {CEILING}" in english
    for half in (chinese, english):
        assert "python3 -m autograder.python_range" in half and "py -m autograder.python_range" in half
        assert "Intel" in half and "Codespaces" in half


def test_gradescope_setup_picks_a_python_in_the_range():
    from autograder.exports import gradescope

    script = gradescope.setup_script()
    assert f'MIN_PYTHON="{FLOOR}"' in script and f'MAX_PYTHON="{CEILING}"' in script
    assert (f"not ({python_range.FLOOR[0]}, {python_range.FLOOR[1]}) <= sys.version_info[:2] <= "
            f"({python_range.CEILING[0]}, {python_range.CEILING[1]})") in script
    candidates = re.search(r"for candidate in (.*); do", script).group(1).split()
    assert candidates == ["python3"] + [f"python3.{minor}" for minor in
                                        range(python_range.CEILING[1], python_range.FLOOR[1] - 1, -1)]
    assert "Ubuntu 22.04 (its python3 is 3.10)" in script


def test_the_otter_export_states_the_range():
    """(Its README is written with this text: tests/engine/exports/test_otter_export.py exports it.)"""
    from autograder.exports import otter, runtime

    assert "the grader runs on CPython {python_range}." in otter.README
    assert runtime.python_range_text() == f"{FLOOR}-{CEILING}"


def test_ci_runs_the_floor_and_the_ceiling():
    matrix = yaml.safe_load(read(".github/workflows/ci.yml"))["jobs"]["tests"]["strategy"]["matrix"]
    assert matrix["python"] == [FLOOR, CEILING]


def test_the_classroom_workflow_grades_on_a_python_in_the_range():
    for name in ("classroom.yml", "grade-class.yml"):
        versions = re.findall(r"python-version: '3\.(\d+)'|PYTHON_VERSION: '3\.(\d+)'", read(f".github/workflows/{name}"))
        minors = {int(a or b) for a, b in versions}
        assert minors and all(python_range.FLOOR[1] <= m <= python_range.CEILING[1] for m in minors), name
