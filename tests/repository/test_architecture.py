"""The layout stays what docs/architecture.md says: every folder it names
exists, every package has its line, rooms import only the rooms listed above
them, no import circles, small modules and folders, no engine module names
the assignment it grades, and the student's side never imports the staff's."""
import ast
import collections
import fnmatch
import functools
import re

from autograder import active_assignment, staff_side
from support import chapters
from support.helpers import ROOT

PACKAGE = ROOT / "autograder"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
CHAPTER_HOME = PACKAGE / "assignment"  # where a chapter sits inside the engine's package
MAX_LINES = 420  # "about 400": a module past it is usually two concerns
MAX_MODULES = 12


@functools.cache  # room_of asks for every import; a walk of the tree each time cost ~9 s
def modules():
    """dotted name -> path of every module of the grader."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_names(path):
    """Every dotted name the module at ``path`` imports, at any depth of its code, with
    the names of a ``LAZY`` table (module -> names, imported when first used:
    :mod:`autograder.authoring`)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Assign) and [getattr(target, "id", "") for target in node.targets] == ["LAZY"]:
            yield from (f"{module}.{name}" for module, names in ast.literal_eval(node.value).items()
                        for name in names)


def imports():
    """module -> the grader modules it imports (at any depth of its code)."""
    known = modules()

    def resolve(name):
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name

    edges = collections.defaultdict(set)
    for name, path in known.items():
        for target in imported_names(path):
            found = resolve(target) if target.startswith("autograder") else ""
            if found and found != name:
                edges[name].add(found)
    return edges


def rooms():
    """The folders of the rooms table, in its order (lowest first)."""
    table = DOC.split("## The rooms", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for match in re.finditer(r"^\| `(autograder/[\w/]*)` \|", table, re.M)]


def room_of(module):
    path = "/".join(module.split(".")[:-1]) + "/" if module in modules() and \
        modules()[module].name != "__init__.py" else module.replace(".", "/") + "/"
    best = max((room for room in rooms() if path.startswith(room)), key=len)
    return best


def test_every_path_the_page_names_exists():
    named = set(re.findall(r"`((?:autograder|tests|docs)/[\w./]*)`", DOC))
    assert named, "docs/architecture.md names no folder"
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_every_package_has_its_line():
    packages = sorted(f"{path.parent.relative_to(ROOT).as_posix()}/" for path in PACKAGE.rglob("__init__.py")
                      if "__pycache__" not in path.parts)
    missing = [package for package in packages if f"`{package}`" not in DOC]
    assert not missing, f"packages without a line in docs/architecture.md: {missing}"


def test_every_package_says_what_it_owns():
    silent = [str(path.relative_to(ROOT)) for path in PACKAGE.rglob("__init__.py")
              if "__pycache__" not in path.parts and not ast.get_docstring(ast.parse(path.read_text()))]
    assert not silent, f"packages without a docstring: {silent}"


def test_no_import_circles():
    edges = imports()
    state, cycles = {}, []

    def visit(node, trail):
        state[node] = "open"
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                cycles.append(trail[trail.index(target):] + [target])
            elif target not in state:
                visit(target, trail + [target])
        state[node] = "done"

    for module in sorted(modules()):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles[:5])


def test_rooms_import_only_the_rooms_above_them():
    order = rooms()
    assert order[0] == "autograder/" and "autograder/assignment/" in order
    upward = sorted({f"{module} -> {target}" for module, targets in imports().items() for target in targets
                     if order.index(room_of(target)) > order.index(room_of(module))})
    assert not upward, "imports that point up the rooms table of docs/architecture.md:\n" + "\n".join(upward)


def test_modules_and_folders_stay_small():
    long = [f"{path.relative_to(ROOT)} ({count} lines)" for path in modules().values()
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, f"modules over {MAX_LINES} lines: {long}"
    crowded = collections.Counter(path.parent for path in modules().values() if path.name != "__init__.py")
    assert not [folder for folder, count in crowded.items() if count > MAX_MODULES], crowded.most_common(3)


def test_no_engine_module_names_a_chapter():
    """Not this chapter, nor any other the repository holds (nor the active one)."""
    names = [name for chapter in chapters.found().values() for name in (*chapter.modules, str(chapter.title))]
    pattern = re.compile("|".join(re.escape(name) for name in names))
    engine = [path for path in modules().values() if CHAPTER_HOME not in path.parents]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in engine
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, "engine modules that name a chapter:\n" + "\n".join(found)


# Named by the staff docs, but written only into an exported student template.
TEMPLATE_ONLY = {"autograder/assignment/hidden/README.md"}


def test_the_staff_docs_name_only_paths_that_exist():
    docs = [ROOT / "README.md", ROOT / "gpu_lab" / "STAFF.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {(doc.relative_to(ROOT).as_posix(), match.group(1)) for doc in docs
             for match in re.finditer(r"(?<![\w/.])(autograder/[\w./-]*\w/?)(?![\w*<{])", doc.read_text(encoding="utf-8"))}
    missing = sorted(f"{doc}: {path}" for doc, path in named
                     if path not in TEMPLATE_ONLY and not (ROOT / path).exists())
    assert not missing, "staff docs name paths that do not exist:\n" + "\n".join(missing)


# The one module of the command line the others import: the options they share.
CLI_SHARED = "autograder.cli.common"


def test_command_line_modules_import_no_other_but_the_shared_options():
    """A command's module parses its arguments and gives the exit code; what two
    commands share lives in the rooms below (or, for argparse options, in CLI_SHARED)."""
    crossing = sorted(f"{module} -> {target}" for module, targets in imports().items() for target in targets
                      if module.startswith("autograder.cli.") and target.startswith("autograder.cli.")
                      and target != CLI_SHARED)
    assert not crossing, "command-line modules that import another:\n" + "\n".join(crossing)


def test_only_the_command_line_imports_the_command_line():
    users = sorted(f"{module} -> {target}" for module, targets in imports().items() for target in targets
                   if target.startswith("autograder.cli") and not module.startswith("autograder.cli"))
    assert not users, "modules outside the command line that import it:\n" + "\n".join(users)


# What an assignment imports of the engine (as a plug-in imports pytest, not _pytest).
AUTHORING = "autograder.authoring"


def chapter_import_problems(chapter):
    """What ``chapter``'s modules import against its rules: of the engine only autograder.authoring,
    as a pytest plugin imports pytest, not _pytest; its own modules relatively, never by its package's
    name, which a student's template changes to autograder.assignment (only the chapter that sits
    there may name it)."""
    own = (chapter.package,) if chapter.folder == CHAPTER_HOME else ()
    problems = []
    for path in sorted(chapter.folder.rglob("*.py")):
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for name in imported_names(path):
            if any(name == package or name.startswith(package + ".") for package in own):
                continue
            if name.startswith("autograder.") and name != AUTHORING and not name.startswith(AUTHORING + "."):
                problems.append(f"{shown}: {name} (the engine past {AUTHORING})")
            elif name == chapter.package or name.startswith(chapter.package + "."):
                problems.append(f"{shown}: {name} (its own package by name: import it relatively)")
    return problems


def test_every_chapter_imports_only_the_authoring_surface_and_itself_relatively():
    found = chapters.found()
    assert {"autograder.assignment", "tests.toy_assignment"} <= set(found)
    problems = [problem for chapter in found.values() for problem in chapter_import_problems(chapter)]
    assert not problems, "chapter modules that import past their rules:\n" + "\n".join(problems)


def test_the_chapter_import_check_can_fail(tmp_path):
    folder = tmp_path / "widgets"
    (folder / "visible").mkdir(parents=True)
    (folder / "visible" / "test_visible_widget.py").write_text(
        "from autograder.judging.judge import expect\nfrom widgets import checks\nfrom .. import helpers\n",
        encoding="utf-8")
    chapter = active_assignment.Assignment(package="widgets", folder=folder, title="Widgets", modules=("widget",),
                                           todos={}, builds_on={}, hidden_points={})
    problems = chapter_import_problems(chapter)
    assert len(problems) == 2 and "the engine past" in problems[0] and "import it relatively" in problems[1]


def test_the_authoring_surface_names_only_what_exists():
    import importlib.util

    from autograder import authoring

    missing = [f"{module}.{name}" for module, names in authoring.LAZY.items() for name in names
               if not hasattr(importlib.import_module(module), name)
               and importlib.util.find_spec(f"{module}.{name}") is None]
    assert not missing, missing
    assert sorted(dir(authoring)) == sorted(name for names in authoring.LAZY.values() for name in names)


def test_the_authoring_surface_loads_only_what_is_used():
    """A description needs ``_``: it must not cost torch (the command line reads it)."""
    import subprocess
    import sys

    code = ("import sys; from autograder.authoring import REPO_ROOT, _\n"
            "print(sorted(name for name in ('torch', 'pytest', 'rich', 'autograder.judging.judge') if name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# --------------------------------------------------------------------------- the student's side and the staff's

def _relative(path):
    return path.relative_to(ROOT).as_posix()


def student_side_crossings(edges, paths):
    """``module -> target`` for every import of a staff-side module by a student-side one."""
    def staff(module):
        return staff_side.is_staff(_relative(paths[module]))
    return sorted(f"{module} -> {target}" for module, targets in edges.items() for target in targets
                  if not staff(module) and staff(target))


def test_the_student_side_never_imports_the_staff_side():
    """The student template leaves the staff's side out (autograder/staff_side.py): a student-side
    module that imports it, even inside a function, would fail there."""
    crossing = student_side_crossings(imports(), modules())
    assert not crossing, ("student-side modules that import the staff's side (autograder/staff_side.py; move the "
                          "piece both use to the student's side):\n" + "\n".join(crossing))


def test_the_seam_check_can_fail():
    paths = modules()
    edges = {"autograder.cli.common": {"autograder.exports.runtime"},
             "autograder.exports.runtime": {"autograder.i18n"}, "autograder.batch.plan": {"autograder.locations"}}
    assert student_side_crossings(edges, paths) == ["autograder.cli.common -> autograder.exports.runtime"]


def test_the_seam_names_what_exists_and_keeps_the_student_commands():
    files = [_relative(path) for path in ROOT.joinpath("autograder").rglob("*")
             if path.is_file() and "__pycache__" not in path.parts]
    stale = [pattern for pattern in staff_side.STAFF_SIDE if not any(fnmatch.fnmatchcase(f, pattern) for f in files)]
    assert not stale, f"autograder/staff_side.py names what does not exist: {stale}"
    from autograder.__main__ import COMMANDS

    student = {name for name, module in COMMANDS.items()
               if not staff_side.is_staff(module.replace(".", "/") + ".py")}
    assert {"grade", "watch", "classroom-report"} <= student
    assert not student & {"grade-many", "merge-scores", "similarity", "export-template", "export-gradescope",
                          "export-otter"}
    assert not any(staff_side.is_staff(_relative(path)) for path in active_assignment.current().folder.rglob("*")
                   if path.is_relative_to(ROOT))  # a chapter outside the repository is no file of its engine
    assert "autograder/staff_side.py" in DOC


def test_no_message_of_the_student_side_lives_in_a_staff_catalog():
    """The staff's catalogs stay behind with the staff's side: an id a student-side file uses must be
    in one that travels (catalog_tools puts a shared id in grader.po)."""
    from autograder.i18n import catalog_tools

    assignment = active_assignment.current()
    sources = [path for path in modules().values() if not staff_side.is_staff(_relative(path))]
    sources += [path for path in assignment.folder.rglob("*.py") if "__pycache__" not in path.parts]
    used = {msgid for path in sources for _line, msgid in catalog_tools._ids_of(path)}
    staff_catalogs = [path for path in catalog_tools.catalog_files("zh")
                      if ROOT in path.parents and staff_side.is_staff(_relative(path))]
    assert staff_catalogs, "no staff catalog found: the check would be empty"
    stranded = sorted(f"{path.name}: {message.id}" for path in staff_catalogs
                      for message in catalog_tools.read_catalog(path) if message.id in used)
    assert not stranded, "ids of the student's side in a staff catalog:\n" + "\n".join(stranded[:20])
