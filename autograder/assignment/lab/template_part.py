"""The GPU lab's part of the student template (``TEMPLATE_PARTS`` in the
description): the lab script and its README, an empty results folder, and the
staff's files left behind.

gpu_lab/STAFF.md says how check-lab judges a record's plausibility: a guide to
forging one. It stays with the course staff, and so does any link to it, and so
does the staff's script for a prepared GPU run (gpu_run.sh).
"""
import re
import shutil

from autograder.assignment.lab.layout import RECORD_PREFIX, RESULTS_RELATIVE_DIR

LAB_RESULTS = RESULTS_RELATIVE_DIR.as_posix()
STAFF_FILES = ("STAFF.md", "gpu_run.sh")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache",
                                 f"{RECORD_PREFIX}_*", "results.json", *STAFF_FILES)
STAFF_LINK = re.compile(r"[ \t]*·?[^·\n]*\[[^\]\n]*\]\(STAFF\.md\)")
# Lines for the template's .gitignore.
GITIGNORE = ("# A CPU smoke record of the GPU lab earns no credit: keep it out of commits.\n"
             f"{LAB_RESULTS}/{RECORD_PREFIX}_cpu_smoke.*\n")
# Files outside the grader that a student must not change (integrity's manifest): the lab's
# modules, among them the record layout that the grader itself executes (amp_lab_layout.py).
PROTECTED = ("gpu_lab/*.py",)


def student_lab_readme(text):
    """The lab's README without its link to the staff notes."""
    return STAFF_LINK.sub("", text)


def add(dest, root, write):
    """Copy the lab into the template at ``dest`` from the repository at ``root``."""
    shutil.copytree(root / "gpu_lab", dest / "gpu_lab", ignore=IGNORED, symlinks=False)
    readme = dest / "gpu_lab" / "README.md"
    if readme.is_file():
        write(readme, student_lab_readme(readme.read_text(encoding="utf-8")))
    write(dest / LAB_RESULTS / ".gitkeep", "")


def leaked(dest):
    """Staff files that must never be in the template."""
    return [f"gpu_lab/{name}" for name in STAFF_FILES if (dest / "gpu_lab" / name).exists()]
