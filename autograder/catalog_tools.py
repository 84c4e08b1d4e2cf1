"""Finding the message ids in the code and keeping the ``.po`` catalogs in step.

Ids are found by Babel's Python extractor (keywords ``_`` and ``t``,
message = first argument) plus the first docstring line of every graded test
(a test's title is what a student reads as its name). Each id belongs to one
catalog file: the suites of a module to ``<module>.po``, the GPU-lab checks to ``lab.po``,
the students' conformance check to ``conformance.po``, everything else to
``grader.po``, so that people translating different areas never edit the
same file.

``python -m autograder.catalog_tools`` adds the missing ids (empty
translations) to the right files and lists what is still untranslated
(``--prune`` also drops ids the code no longer uses);
``tests/test_catalogs.py`` fails while anything is missing.
"""
import ast
import pathlib
import sys

from autograder import MODULES

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
LOCALE_DIR = PACKAGE_DIR / "locale"
KEYWORDS = {"_": None, "t": None}
SUITE_DIRS = ("visible", "hidden")


def area_of(path):
    """The catalog file (without .po) that holds the ids of ``path``."""
    path = pathlib.Path(path)
    if path.name.startswith("lab_"):
        return "lab"
    if path.name.startswith("conformance_"):
        return "conformance"
    if path.name.startswith(("class_html", "class_flags")):
        return "class_report"   # the TA's class page (grade-many --report-lang)
    if path.parent.name in SUITE_DIRS:
        for module in sorted(MODULES, key=len, reverse=True):
            if module in path.stem:
                return module
    return "grader"


def _python_files():
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
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


def extract():
    """``{msgid: (area, "file:line")}`` for every message id in the grader."""
    from babel.messages.extract import extract_python

    found = {}
    for path in _python_files():
        relative = path.relative_to(PACKAGE_DIR.parent)
        with open(path, "rb") as handle:
            for lineno, _funcname, message, _comments in extract_python(handle, KEYWORDS.keys(), [], {}):
                msgid = message[0] if isinstance(message, (tuple, list)) else message
                if isinstance(msgid, str) and msgid:
                    found.setdefault(msgid, (area_of(path), f"{relative}:{lineno}"))
        if path.parent.name in SUITE_DIRS:
            for lineno, title in _titles(path):
                found.setdefault(title, (area_of(path), f"{relative}:{lineno}"))
    return found


def read_catalog(path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as handle:
        return read_po(handle)


def write_catalog(path, catalog):
    from babel.messages.pofile import write_po

    with open(path, "wb") as handle:
        write_po(handle, catalog, width=0, omit_header=False, sort_output=False)


def sync(lang="zh", prune=False):
    """Add the missing ids to their catalog files (and with ``prune`` drop the ids
    the code no longer has); returns ``[(area, msgid)]`` still untranslated."""
    from babel.messages.catalog import Catalog

    folder = LOCALE_DIR / lang
    folder.mkdir(parents=True, exist_ok=True)
    found = extract()
    catalogs = {}
    for path in sorted(folder.glob("*.po")):
        catalogs[path.stem] = read_catalog(path)
    known = {message.id for catalog in catalogs.values() for message in catalog if message.id}
    changed = set()
    for msgid, (area, where) in found.items():
        if msgid in known:
            continue
        catalog = catalogs.setdefault(area, Catalog(locale=lang, project="amp-backward-autograder",
                                                    charset="utf-8"))
        catalog.add(msgid, "", locations=[(where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1]))])
        changed.add(area)
    for area, catalog in catalogs.items():  # keep the "#:" location comments true
        for message in catalog:
            if message.id in found:
                where = found[message.id][1].rsplit(":", 1)
                location = [(where[0], int(where[1]))]
                if list(message.locations) != location:
                    message.locations = location
                    changed.add(area)
    if prune:
        for area, catalog in catalogs.items():
            stale = [message.id for message in catalog if message.id and message.id not in found]
            for msgid in stale:
                del catalog[msgid]
            if stale:
                changed.add(area)
    for area in changed:
        write_catalog(folder / f"{area}.po", catalogs[area])
    return [(area, message.id) for area, catalog in sorted(catalogs.items())
            for message in catalog if message.id and not message.string and message.id in found]


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder.catalog_tools",
                                     description="Add missing message ids to the catalogs; list untranslated ones.")
    parser.add_argument("lang", nargs="?", default="zh")
    parser.add_argument("--prune", action="store_true", help="also remove ids the code no longer uses")
    args = parser.parse_args(argv)
    missing = sync(args.lang, prune=args.prune)
    for area, msgid in missing:
        print(f"{area}.po: untranslated: {msgid}")
    print(f"{len(missing)} untranslated message(s)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
