"""The honest class: independent correct solutions of every TODO, one file per imagined
author in tests/data/honest_similarity/<author>.py, put into the current stubs. What the
similarity check learns honest convergence from and is calibrated on
(tools/calibrate_similarity.py); each scores full marks (tests/engine/similarity/test_similarity.py).

An author's file holds ``FILLS`` ({TODO number: code replacing that TODO's
``raise NotImplementedError``}), optionally ``TOP`` ({module: code put after the module's
imports}: helpers, imports) and ``STRIP_TODO_COMMENTS`` (the author deletes the stub's comment
block above each TODO, as some students do). Filled into the stubs rather than kept as whole
files, so that the set follows the stubs when they change; edit a fill when a TODO's contract
changes (the full-marks test says which).
"""
import pathlib
import re
import runpy

from autograder import active_assignment

ROOT = pathlib.Path(__file__).resolve().parents[2]
SET_DIR = ROOT / "tests" / "data" / "honest_similarity"
# More authors that the calibration never reads: a class of new honest students for the tests.
HELD_OUT_DIR = ROOT / "tests" / "data" / "honest_held_out"
MODULES = active_assignment.current().modules
_TODO_LINE = re.compile(r"^(\s*)raise NotImplementedError\(['\"]TODO (\d+)")
_IMPORT = re.compile(r"^(import|from) \S")


def authors(folder=SET_DIR):
    """``{author: its namespace}`` of every author file of ``folder``, sorted by name."""
    return {path.stem: runpy.run_path(str(path)) for path in sorted(folder.glob("[a-z]*.py"))}


def fills():
    return {author: space["FILLS"] for author, space in authors().items()}


def _strip_comment_block(lines):
    """Drop the comment lines just above a TODO (the stub's explanation of it)."""
    while lines and lines[-1].lstrip().startswith("#"):
        lines.pop()


def fill(stub, answers, top="", strip_comments=False):
    """``stub`` with each ``raise NotImplementedError('TODO n...')`` replaced by answer n
    and ``top`` put after the module's imports."""
    lines, inside = [], False
    for line in stub.split("\n"):
        found = _TODO_LINE.match(line)
        if inside:  # a long TODO's raise goes on over a few lines (tools/make_stubs.py)
            inside = not line.rstrip().endswith(")")
            continue
        if found:
            inside = not line.rstrip().endswith(")")
            if strip_comments:
                _strip_comment_block(lines)
            answer = answers[int(found.group(2))]
            lines += [found.group(1) + part if part else part for part in answer.split("\n")]
        else:
            lines.append(line)
    if top:
        last_import = max(index for index, line in enumerate(lines) if _IMPORT.match(line))
        lines[last_import + 1:last_import + 1] = ["", "", *top.split("\n")]
    return "\n".join(lines)


def module_text(space, module, stub):
    """One author's ``module`` written on ``stub``."""
    return fill(stub, space["FILLS"], space.get("TOP", {}).get(module, ""), space.get("STRIP_TODO_COMMENTS", False))


def write_class(root, names=None, folder=SET_DIR):
    """``{author: folder}`` with the modules of every honest author of ``folder`` (or of ``names``)."""
    root = pathlib.Path(root)
    stubs = {module: (active_assignment.current().exercises_dir / f"{module}.py").read_text(encoding="utf-8")
             for module in MODULES}
    folders = {}
    for author, space in authors(folder).items():
        if names is not None and author not in names:
            continue
        student = root / author
        student.mkdir(parents=True, exist_ok=True)
        for module in MODULES:
            (student / f"{module}.py").write_text(module_text(space, module, stubs[module]), encoding="utf-8")
        folders[author] = student
    return folders
