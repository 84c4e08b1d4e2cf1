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

What is the engine's is decided by the engine's own folders (``autograder/`` but the
chapter that sits in it, :data:`CHAPTER_HOME`), whichever chapter is active: each run
reads and writes the engine's catalogs and one chapter's, the active one (``--chapter``
names another), and never another chapter's. An id two chapters use is in each one's
catalog, with each one's translation.

``python -m autograder.i18n.catalog_tools [--chapter PACKAGE|FOLDER]`` adds the missing ids
(empty translations) to the right files, moves an id whose code moved to another area
(its translation kept), and lists what is still untranslated (``--prune`` also
drops ids the code no longer uses); ``tests/engine/i18n/test_catalogs.py`` fails while
anything is missing.
"""
import ast
import contextlib
import functools
import io
import pathlib
import sys

from autograder import active_assignment, locations

PACKAGE_DIR = locations.PACKAGE_DIR
LOCALE_DIR = PACKAGE_DIR / "i18n" / "locale"
# Where the default chapter sits inside the engine's package (here, and in a student's template):
# never the engine's, whichever chapter is active.
CHAPTER_HOME = PACKAGE_DIR / "assignment"
KEYWORDS = {"_": None, "t": None}
SUITE_DIRS = ("visible", "hidden")
# Engine folders with a catalog file of their own: the TA's pages (grade-many --report-lang).
ENGINE_AREAS = {"class_reports": "class_report", "similarity": "similarity"}


def assignment():
    return active_assignment.current()


def area_of(path, chapter=None):
    """``(catalog folder, file stem)`` that holds the ids of ``path`` (a file of the engine or of
    ``chapter``, default the active assignment)."""
    path = pathlib.Path(path).resolve()
    chapter = chapter or assignment()
    if chapter.folder in path.parents:
        relative = path.relative_to(chapter.folder)
        folder = chapter.locale_dir
        if relative.parts[0] in SUITE_DIRS:
            for module in sorted(chapter.modules, key=len, reverse=True):
                if module in path.stem:
                    return folder, module
        if len(relative.parts) > 1 and relative.parts[0] not in SUITE_DIRS + ("checks", "scenarios"):
            return folder, relative.parts[0]
        return folder, "assignment"
    relative = path.relative_to(PACKAGE_DIR)
    if relative.parts[0] in ENGINE_AREAS:
        return LOCALE_DIR, ENGINE_AREAS[relative.parts[0]]
    return LOCALE_DIR, "grader"


def engine_files():
    """The engine's Python files: its package, without the chapter that sits in it; the staff pages'
    areas last (an id the student's side shares with them stays in ``grader.po``, which travels with
    the student template)."""
    return sorted((path for path in PACKAGE_DIR.rglob("*.py")
                   if CHAPTER_HOME not in path.parents and "__pycache__" not in path.parts),
                  key=lambda path: (path.relative_to(PACKAGE_DIR).parts[0] in ENGINE_AREAS, path))


def _python_files(chapter=None):
    """The engine's files first (an id it shares with the chapter is the engine's), then the chapter's
    (default the active assignment)."""
    for path in engine_files() + sorted((chapter or assignment()).folder.rglob("*.py")):
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


def _shown(path, chapter):
    """A path as the catalogs' location comments show it."""
    for base in (PACKAGE_DIR.parent, chapter.folder.parent):
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


@functools.cache
def _ids_stamped(path, _stamp):
    return tuple(_ids_of(path))


def _ids(path):
    """:func:`_ids_of`, read once per version of the file (a test checks the engine with each chapter)."""
    stat = path.stat()
    return _ids_stamped(path, (stat.st_mtime_ns, stat.st_size))


def fstring_messages(path):
    """Line numbers of the ``_()``/``t()`` calls in ``path`` whose message is an f-string with
    substitutions: no catalog can translate it (write ``_("... {name}", name=...)``)."""
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEYWORDS
            and node.args and isinstance(node.args[0], ast.JoinedStr)
            and any(isinstance(part, ast.FormattedValue) for part in node.args[0].values)]


def extract(chapter=None):
    """``{msgid: ((folder, area), "file:line")}`` for every message id of the engine and of
    ``chapter`` (default the active assignment)."""
    chapter = chapter or assignment()
    found = {}
    for path in _python_files(chapter):
        relative, area = _shown(path, chapter), area_of(path, chapter)
        for lineno, msgid in _ids(path):
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


def catalog_files(lang="zh", chapter=None):
    """Every catalog file of ``lang``: the engine's, then ``chapter``'s (default the active assignment)."""
    return [path for folder in (LOCALE_DIR, (chapter or assignment()).locale_dir)
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


def keeps_engine_catalogs(chapter):
    """Does a run for ``chapter`` write the engine's catalogs too? Only for the chapter that sits
    in the engine's package: any other chapter's run touches its own ``locale/`` alone."""
    return chapter.folder == CHAPTER_HOME.resolve()


def sync(lang="zh", prune=False, chapter=None):
    """Add the missing ids to the catalog files of ``chapter`` (default the active assignment), move
    ids to the file of their area (and with ``prune`` drop the ids the code no longer has); the
    engine's files too where :func:`keeps_engine_catalogs`. Returns ``[(file, msgid)]`` still
    untranslated, the engine's included."""
    from babel.messages.catalog import Catalog

    chapter = chapter or assignment()
    found = extract(chapter)
    catalogs = {(path.parent.parent, path.stem): read_catalog(path) for path in catalog_files(lang, chapter)}
    writable = {chapter.locale_dir} | ({LOCALE_DIR} if keeps_engine_catalogs(chapter) else set())

    def catalog_for(key):
        return catalogs.setdefault(key, Catalog(locale=lang, project="autograder", charset="utf-8"))

    def translated(key, msgid):
        message = catalogs[key].get(msgid) if key in catalogs else None
        return bool(message is not None and message.string)

    def own():
        return [key for key in catalogs if key[0] in writable]

    changed = set()
    for key in own():
        for message in list(catalogs[key]):
            target = found[message.id][0] if message.id in found else key
            if target == key:
                continue
            if target[0] in writable:  # the code moved: the translation goes with it
                catalog_for(target).add(message.id, message.string, locations=_location(found[message.id][1]))
                changed.add(target)
            elif not translated(target, message.id):
                continue  # the engine's id, which the engine's catalog does not translate: kept here
            del catalogs[key][message.id]
            changed.add(key)
    words = {message.id: message.string for catalog in catalogs.values() for message in catalog if message.id}
    for msgid, (key, where) in found.items():
        if key[0] in writable and (key not in catalogs or catalogs[key].get(msgid) is None):
            catalog_for(key).add(msgid, words.get(msgid, ""), locations=_location(where))
            changed.add(key)
    for key in own():  # keep the "#:" location comments true
        for message in catalogs[key]:
            if message.id in found and list(message.locations) != _location(found[message.id][1]):
                message.locations = _location(found[message.id][1])
                changed.add(key)
    if prune:
        for key in own():
            stale = [message.id for message in catalogs[key] if message.id and message.id not in found]
            for msgid in stale:
                del catalogs[key][msgid]
            if stale:
                changed.add(key)
    for key in changed:
        folder, area = key
        write_catalog(folder / lang / f"{area}.po", catalogs[key])
    return [(f"{area}.po", msgid) for msgid, ((folder, area), _where) in found.items()
            if not translated((folder, area), msgid)]


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder.i18n.catalog_tools",
                                     description="Add missing message ids to the catalogs; list untranslated ones.")
    parser.add_argument("lang", nargs="?", default="zh")
    parser.add_argument("--prune", action="store_true", help="also remove ids the code no longer uses")
    parser.add_argument("--chapter", help="the chapter's package or folder (default: the active assignment)")
    args = parser.parse_args(argv)
    chapter = active_assignment.use(args.chapter) if args.chapter else assignment()
    missing = sync(args.lang, prune=args.prune, chapter=chapter)
    for area, msgid in missing:
        print(f"{area}: untranslated: {msgid}")
    print(f"{len(missing)} untranslated message(s)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
