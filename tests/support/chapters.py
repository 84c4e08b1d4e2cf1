"""Every chapter the repository holds, whichever one a run has active: the checks that are about
any chapter (catalogs, imports, names) run over each.

A chapter is a package folder holding ``description.py`` and a ``visible/`` suite (this
repository's, ``autograder/assignment/``; the toy, ``tests/toy_assignment/``; one a maintainer
adds, ``chapters/<name>/``), plus the active assignment where ``$AUTOGRADER_ASSIGNMENT`` names one
outside the repository."""
import pathlib

from autograder import active_assignment

ROOT = pathlib.Path(__file__).resolve().parents[2]
SKIPPED = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache"}


def folders(root=ROOT):
    """The chapter folders under ``root``, sorted."""
    found = []
    for description in sorted(pathlib.Path(root).rglob("description.py")):
        folder = description.parent
        if SKIPPED & set(folder.relative_to(root).parts):
            continue
        if (folder / "__init__.py").is_file() and (folder / "visible").is_dir():
            found.append(folder)
    return found


def found():
    """``{name: Assignment}`` of every chapter of the repository and the active one (named by
    its package where it has one importable from the repository's root, else by its folder)."""
    chapters = {}
    for folder in folders():
        name = ".".join(folder.relative_to(ROOT).parts)
        chapters[name] = active_assignment.load(name)
    active = active_assignment.current()
    if all(chapter.folder != active.folder for chapter in chapters.values()):
        chapters[active.package] = active
    return chapters
