"""The seam between the engine and an assignment: which assignment is graded,
and what its declarative description says.

An assignment is a Python package holding ``description.py`` (its modules,
TODO graph, the points only its hidden suites hold, and the dotted names of its
optional parts), ``visible/`` and ``hidden/`` suites and ``locale/<lang>/*.po``
catalogs. The engine reads it only through :func:`current`; no engine module
imports an assignment by name. The default is this repository's chapter;
``$AUTOGRADER_ASSIGNMENT`` points the engine at another: a package name
(importable from the repository's root: ``tests.toy_assignment``) or the path
of the package's folder (``chapters/vector_clip``, absolute or from the working
directory; its parent folder is then where the package is imported from), which
is how the tests grade a second, tiny assignment end to end and a chapter built
in a temporary folder.

This module imports nothing of the engine but :mod:`autograder.locations`, so
every room may use it.
"""
import dataclasses
import functools
import importlib
import importlib.util
import os
import pathlib
import sys

from autograder import locations

DEFAULT_PACKAGE = "autograder.assignment"
ENV_VAR = "AUTOGRADER_ASSIGNMENT"


class AssignmentError(Exception):
    """The description is missing or does not say what the engine needs."""


@dataclasses.dataclass(frozen=True)
class Assignment:
    package: str
    folder: pathlib.Path
    title: object                    # a catalog message (autograder.i18n.Message) or str
    modules: tuple                   # student module names, in the order reports show them
    todos: dict                      # module -> {todo number: what it builds (a message)}
    builds_on: dict                  # todo -> TODOs it uses directly
    hidden_points: dict              # module -> points only the hidden suites hold
    todo_functions: dict = dataclasses.field(default_factory=dict)  # todo -> qualified name of its function
    module_labels: dict = dataclasses.field(default_factory=dict)  # module -> how its messages name it
    optional_module: str = ""        # the results tag of optional credit (e.g. a lab), "" if none
    worker_side: str = ""            # imported by the zygote: scenarios and per-module guards
    suite_plugins: tuple = ()        # pytest plugins (fixtures) the suites use besides the engine's
    grade_hooks: str = ""            # verdicts after the suites ran, optional credit
    commands: dict = dataclasses.field(default_factory=dict)  # subcommand -> module (add_parser)
    exercises_dir: pathlib.Path = None  # the student stubs and public tests
    solutions_dir: pathlib.Path = None  # the reference solution
    template_parts: str = ""         # what a student template holds besides engine, stubs, suites
    grader_files: tuple = ()         # files outside the package its grader reads (from the repo root)
    student_readme: pathlib.Path = None  # the README of a student's repository
    similarity: dict = dataclasses.field(default_factory=dict)  # module -> {min_overlap, why}
    similarity_public: dict = dataclasses.field(default_factory=dict)  # module -> why its reference is public
    similarity_framework: dict = dataclasses.field(default_factory=dict)  # a module against a package's file

    @property
    def visible_dir(self):
        return self.folder / "visible"

    @property
    def hidden_dir(self):
        return self.folder / "hidden"

    @property
    def locale_dir(self):
        return self.folder / "locale"

    def files(self):
        return tuple(f"{module}.py" for module in self.modules)

    def module_of(self, todo):
        for module, table in self.todos.items():
            if todo in table:
                return module
        return None

    def hidden_points_of(self, module):
        return self.hidden_points.get(module, 0)

    def label(self, module):
        return self.module_labels.get(module, module)

    def hidden_tests_available(self):
        return any(self.hidden_dir.glob("test_*.py"))

    def resolve(self, name):
        """A part's module: dotted names starting with "." live in this package."""
        return importlib.import_module(name, self.package) if name else None

    def hooks(self):
        """The grade-hooks module (None when the assignment has none)."""
        return self.resolve(self.grade_hooks)

    def plugins(self):
        return [self.resolve(name) for name in self.suite_plugins]


def setting():
    """What names the active assignment: ``$AUTOGRADER_ASSIGNMENT``, else the default package."""
    return os.environ.get(ENV_VAR) or DEFAULT_PACKAGE


def _is_path(value):
    return "/" in value or os.sep in value


def absolute(value):
    """``value`` as a process started elsewhere reads it: a folder's path made absolute."""
    return str(pathlib.Path(value).resolve()) if _is_path(value) else value


def package_name():
    return importable(setting())


@functools.cache
def importable(value):
    """The package name of the assignment ``value`` names (a package name, or its folder's path:
    the folder's parent is then added to the end of ``sys.path``, so that it shadows nothing)."""
    if not _is_path(value):
        return value
    folder = pathlib.Path(value).resolve()
    if not folder.name.isidentifier() or not (folder / "__init__.py").is_file():
        raise AssignmentError(f"{value}: not an assignment package (a folder named like a Python module, "
                              "holding __init__.py and description.py)")
    if str(folder.parent) not in sys.path:
        sys.path.append(str(folder.parent))
    if folder_of(folder.name) != folder:
        raise AssignmentError(f"{value}: the name {folder.name!r} is already taken by "
                              f"{folder_of(folder.name)}: rename the folder")
    return folder.name


def use(value):
    """Make the assignment ``value`` names (a package name or a folder) the active one, for this
    process and the processes it starts (a command-line tool's ``--chapter``); returns it."""
    os.environ[ENV_VAR] = absolute(value)
    return current()


def _beside(folder, name):
    """A chapter's own ``name`` folder (its ``exercises/``, ``solutions/``) when it has one, else
    the repository's: a student's template holds the package without them, beside its exercises/."""
    return folder / name if (folder / name).is_dir() else locations.REPO_ROOT / name


@functools.cache
def folder_of(package):
    """The assignment's folder, found without importing it (the catalogs need it early)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise AssignmentError(f"assignment package {package!r} not found")
    return pathlib.Path(list(spec.submodule_search_locations)[0]).resolve()


@functools.cache
def load(package):
    try:
        description = importlib.import_module(package + ".description")
    except ModuleNotFoundError as exc:
        raise AssignmentError(f"{package}: no description module ({exc})") from exc
    missing = [name for name in ("TITLE", "MODULES", "TODOS") if not hasattr(description, name)]
    if missing:
        raise AssignmentError(f"{package}.description lacks {', '.join(missing)}")
    folder = folder_of(package)
    readme = folder / "README.md"
    return Assignment(
        package=package, folder=folder, title=description.TITLE,
        modules=tuple(description.MODULES), todos=dict(description.TODOS),
        builds_on=dict(getattr(description, "BUILDS_ON", {})),
        todo_functions=dict(getattr(description, "TODO_FUNCTIONS", {})),
        hidden_points=dict(getattr(description, "HIDDEN_POINTS", {})),
        module_labels=dict(getattr(description, "MODULE_LABELS", {})),
        optional_module=getattr(description, "OPTIONAL_MODULE", ""),
        worker_side=getattr(description, "WORKER_SIDE", ""),
        suite_plugins=tuple(getattr(description, "SUITE_PLUGINS", ())),
        grade_hooks=getattr(description, "GRADE_HOOKS", ""),
        commands=dict(getattr(description, "COMMANDS", {})),
        exercises_dir=getattr(description, "EXERCISES_DIR", None) or _beside(folder, "exercises"),
        solutions_dir=getattr(description, "SOLUTIONS_DIR", None) or _beside(folder, "solutions"),
        template_parts=getattr(description, "TEMPLATE_PARTS", ""),
        grader_files=tuple(getattr(description, "GRADER_FILES", ())),
        student_readme=getattr(description, "STUDENT_README", None) or (readme if readme.is_file() else None),
        similarity=dict(getattr(description, "SIMILARITY", {})),
        similarity_public=dict(getattr(description, "SIMILARITY_PUBLIC_REFERENCE", {})),
        similarity_framework=dict(getattr(description, "SIMILARITY_FRAMEWORK", {})),
    )


def current():
    """The assignment being graded (cached per package name)."""
    return load(package_name())
