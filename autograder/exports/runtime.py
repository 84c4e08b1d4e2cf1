"""What an exported grader needs to run, from one source: the repository's own
``requirements.txt`` (the packages), :mod:`autograder.python_range` (the Pythons it
runs on) and ``pyproject.toml`` (the course's language).

The Gradescope zip and the otter folder both install exactly these lines; no
export keeps a list of its own, so a package the grader starts needing (babel,
rich, pyseccomp) reaches every export with the next one.
"""
import re

from autograder import locations, python_range
from autograder.exports.template import STUDENT_LANGUAGE
from autograder.i18n import configured_language

ROOT = locations.REPO_ROOT
REQUIREMENTS = ROOT / "requirements.txt"
# CPU wheels: on Linux the default torch wheel pulls several GB of CUDA libraries.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def requirement_lines():
    """The requirement lines of requirements.txt, comments and blank lines left out."""
    lines = []
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            lines.append(line)
    if not any(requirement_name(line) == "torch" for line in lines):
        raise ValueError(f"{REQUIREMENTS.name} pins no torch: an export would not know which to install")
    return lines


def requirement_name(line):
    """``torch`` for ``torch==2.13.0``, ``pyseccomp`` for ``pyseccomp==0.1.2; sys_platform == "linux"``."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def torch_requirement():
    """The torch line of requirements.txt (``torch==2.13.0``), markers left out."""
    line = next(line for line in requirement_lines() if requirement_name(line) == "torch")
    return line.split(";", 1)[0].strip()


def python_floor():
    """``(3, 10)``: the oldest Python the grader runs on (:mod:`autograder.python_range`, which
    pyproject.toml's ``requires-python`` states too)."""
    return python_range.FLOOR


def python_ceiling():
    """``(3, 14)``: the newest Python torch's pinned release has wheels for."""
    return python_range.CEILING


def python_range_text():
    """``3.10-3.14``: the range as the exports' texts state it."""
    return f"{'.'.join(map(str, python_floor()))}-{'.'.join(map(str, python_ceiling()))}"


def course_language():
    """The language an export's feedback defaults to: ``[tool.autograder] lang`` of
    this repository's pyproject.toml (a course's private grader sets it), else the
    language export-template gives the students (this development repository sets none)."""
    return configured_language(str(ROOT)) or STUDENT_LANGUAGE
