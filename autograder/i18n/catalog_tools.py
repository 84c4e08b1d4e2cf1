"""Finding the message ids in the code and keeping the ``.po`` catalogs in step.

Ids are found by Babel's Python extractor (keywords ``_`` and ``t``,
message = first argument) plus the first docstring line of every graded test
(a test's title is what a student reads as its name). Each id belongs to one
catalog file, so that people translating different areas never edit the same
file. The engine's ids go to ``autograder/i18n/locale/<lang>/``: the TA's class
page to ``class_report.po``, the similarity pages to ``similarity.po``, the rest to
``grader.po``. The assignment's go to
its own ``locale/<lang>/``: the suites of a module to ``<module>.po``, a
subpackage of the assignment to ``<subpackage>.po`` (its lab, its conformance
check), everything else to ``assignment.po``. An id the engine uses stays with
the engine, so another assignment finds it translated too.

``python -m autograder.i18n.catalog_tools`` adds the missing ids (empty
translations) to the right files, moves an id whose code moved to another area
(its translation kept), and lists what is still untranslated (``--prune`` also
drops ids the code no longer uses); ``tests/engine/i18n/test_catalogs.py`` fails while
anything is missing.
"""
import ast
import contextlib
import io
import pathlib
import sys

from autograder import active_assignment, locations

PACKAGE_DIR = locations.PACKAGE_DIR
LOCALE_DIR = PACKAGE_DIR / "i18n" / "locale"
KEYWORDS = {"_": None, "t": None}
SUITE_DIRS = ("visible", "hidden")
# Engine folders with a catalog file of their own: the TA's pages (grade-many --report-lang).
ENGINE_AREAS = {"class_reports": "class_report", "similarity": "similarity"}


def assignment():
    return active_assignment.current()


def area_of(path):
    """``(catalog folder, file stem)`` that holds the ids of ``path``."""
    path = pathlib.Path(path).resolve()
    home = assignment().folder
    if home in path.parents:
        relative = path.relative_to(home)
        folder = assignment().locale_dir
        if relative.parts[0] in SUITE_DIRS:
            for module in sorted(assignment().modules, key=len, reverse=True):
                if module in path.stem:
                    return folder, module
        if len(relative.parts) > 1 and relative.parts[0] not in SUITE_DIRS + ("checks", "scenarios"):
            return folder, relative.parts[0]
        return folder, "assignment"
    relative = path.relative_to(PACKAGE_DIR)
    if relative.parts[0] in ENGINE_AREAS:
        return LOCALE_DIR, ENGINE_AREAS[relative.parts[0]]
    return LOCALE_DIR, "grader"


def _python_files():
    """The engine's files first (an id it shares with the assignment is the engine's), then the assignment's;
    the staff pages' areas last among the engine's (an id the student's side shares with them stays in
    ``grader.po``, which travels with the student template)."""
    home = assignment().folder
    engine = sorted((path for path in PACKAGE_DIR.rglob("*.py") if home not in path.parents),
                    key=lambda path: (path.relative_to(PACKAGE_DIR).parts[0] in ENGINE_AREAS, path))
    for path in engine + sorted(home.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "catalog_tools.py":
            continue
        yield path


def _titles(path):
    """First docstring lines of the test functions of a suite file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            doc = ast.get_docstring(node)
            if doc and doc.strip():
                yield node.lineno, doc.strip().splitlines()[0].strip().rstrip(".")


def _shown(path):
    """A path as the catalogs' location comments show it."""
    for base in (PACKAGE_DIR.parent, assignment().folder.parent):
        if base in path.parents:
            return str(path.relative_to(base))
    return str(path)


def _ids_of(path):
    """``(lineno, msgid)`` of every message id in the Python file ``path`` (test titles included)."""
    from babel.messages.extract import extract_python

    with open(path, "rb") as handle, contextlib.redirect_stderr(io.StringIO()) as said:
        found = list(extract_python(handle, KEYWORDS.keys(), [], {}))
    # Babel warns of every f-string among a translation call's arguments, a placeholder's value
    # (``points=f"{x:g}"``, which is right) as much as the message itself (which is wrong:
    # :func:`fstring_messages` finds those, and tests/engine/i18n/test_catalogs.py fails on them).
    # Its other warnings are passed on.
    sys.stderr.write("".join(line for line in said.getvalue().splitlines(keepends=True)
                             if "Skipping f-string" not in line))
    for lineno, _funcname, message, _comments in found:
        msgid = message[0] if isinstance(message, (tuple, list)) else message
        if isinstance(msgid, str) and msgid:
            yield lineno, msgid
    if path.parent.name in SUITE_DIRS:
        yield from _titles(path)


def fstring_messages(path):
    """Line numbers of the ``_()``/``t()`` calls in ``path`` whose message is an f-string with
    substitutions: no catalog can translate it (write ``_("... {name}", name=...)``)."""
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEYWORDS
            and node.args and isinstance(node.args[0], ast.JoinedStr)
            and any(isinstance(part, ast.FormattedValue) for part in node.args[0].values)]


def extract():
    """``{msgid: ((folder, area), "file:line")}`` for every message id in the grader."""
    found = {}
    for path in _python_files():
        relative, area = _shown(path), area_of(path)
        for lineno, msgid in _ids_of(path):
            found.setdefault(msgid, (area, f"{relative}:{lineno}"))
    return found


def keep_only_used(folder, lang="zh"):
    """Drop from every ``<lang>`` catalog under ``folder`` the ids that no Python file under
    ``folder`` uses: a copy of the grader without its hidden suites (the student template)
    then ships no hidden test's title, hint or message. Returns how many ids were dropped."""
    folder = pathlib.Path(folder)
    used = {msgid for path in folder.rglob("*.py") if "__pycache__" not in path.parts
            for _lineno, msgid in _ids_of(path)}
    dropped = 0
    for path in sorted(folder.rglob(f"locale/{lang}/*.po")):
        catalog = read_catalog(path)
        unused = [message.id for message in catalog if message.id and message.id not in used]
        for msgid in unused:
            del catalog[msgid]
        if unused:
            write_catalog(path, catalog)
            dropped += len(unused)
    return dropped


def catalog_files(lang="zh"):
    """Every catalog file of ``lang``: the engine's, then the assignment's."""
    return [path for folder in (LOCALE_DIR, assignment().locale_dir)
            for path in sorted((folder / lang).glob("*.po"))]


def read_catalog(path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as handle:
        return read_po(handle)


def write_catalog(path, catalog):
    from babel.messages.pofile import write_po

    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        write_po(handle, catalog, width=0, omit_header=False, sort_output=False)


def _location(where):
    file, line = where.rsplit(":", 1)
    return [(file, int(line))]


def sync(lang="zh", prune=False):
    """Add the missing ids to their catalog files, move ids to the file of their
    area (and with ``prune`` drop the ids the code no longer has); returns
    ``[(file, msgid)]`` still untranslated."""
    from babel.messages.catalog import Catalog

    found = extract()
    catalogs = {(path.parent.parent, path.stem): read_catalog(path) for path in catalog_files(lang)}

    def catalog_for(key):
        return catalogs.setdefault(key, Catalog(locale=lang, project="autograder", charset="utf-8"))

    changed = set()
    for key, catalog in list(catalogs.items()):
        for message in list(catalog):
            if message.id and message.id in found and found[message.id][0] != key:
                target = found[message.id][0]  # the code moved: the translation goes with it
                catalog_for(target).add(message.id, message.string, locations=_location(found[message.id][1]))
                del catalog[message.id]
                changed |= {key, target}
    known = {message.id for catalog in catalogs.values() for message in catalog if message.id}
    for msgid, (key, where) in found.items():
        if msgid not in known:
            catalog_for(key).add(msgid, "", locations=_location(where))
            changed.add(key)
    for key, catalog in catalogs.items():  # keep the "#:" location comments true
        for message in catalog:
            if message.id in found and list(message.locations) != _location(found[message.id][1]):
                message.locations = _location(found[message.id][1])
                changed.add(key)
    if prune:
        for key, catalog in catalogs.items():
            stale = [message.id for message in catalog if message.id and message.id not in found]
            for msgid in stale:
                del catalog[msgid]
            if stale:
                changed.add(key)
    for key in changed:
        folder, area = key
        write_catalog(folder / lang / f"{area}.po", catalogs[key])
    return [(f"{area}.po", message.id) for (folder, area), catalog in sorted(catalogs.items())
            for message in catalog if message.id and not message.string and message.id in found]


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder.i18n.catalog_tools",
                                     description="Add missing message ids to the catalogs; list untranslated ones.")
    parser.add_argument("lang", nargs="?", default="zh")
    parser.add_argument("--prune", action="store_true", help="also remove ids the code no longer uses")
    args = parser.parse_args(argv)
    missing = sync(args.lang, prune=args.prune)
    for area, msgid in missing:
        print(f"{area}: untranslated: {msgid}")
    print(f"{len(missing)} untranslated message(s)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
