"""Does the fast tier still test every package of the grader?  ``python tools/check_tiers.py``

The fast tier is ``python -m pytest -m "not slow"`` (docs/maintaining.md says when to run which).
This collects it without running it, maps each test file that keeps a test in it to the grader
packages the file imports itself (any ``autograder...`` import, at any depth of the file; what a
helper of tests/support/ imports does not count, so that ``from support.helpers import ROOT``
covers nothing), prints every package with its fast test files and exits 1 naming the packages none
covers. tests/repository/test_tiers.py runs it; marking a room's last quick test slow fails there.
"""
import ast
import collections
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAST = "not slow"


def packages(root=ROOT):
    """Dotted names of the grader's packages (its folders with an __init__.py)."""
    return sorted(".".join(path.parent.relative_to(root).parts)
                  for path in (root / "autograder").rglob("__init__.py") if "__pycache__" not in path.parts)


def fast_tests(root=ROOT):
    """{test file (relative path): how many of its tests the fast tier runs}, from a collect-only run."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", FAST,
                           "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 5):  # 5: nothing selected, reported below as no package covered
        raise RuntimeError(f"collecting the fast tier failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return collections.Counter(line.split("::", 1)[0] for line in done.stdout.splitlines() if "::" in line)


def fast_tests_collected(config, items, root=ROOT):
    """:func:`fast_tests` read off a pytest session that collected already (a test of the tier
    itself saves collecting the tree again): ``items`` are the session's, ``config`` its config.
    None unless that session is the whole tree with nothing deselected but the slow tests (its
    own arguments are the tree, no ``-k``, ``--deselect`` or ``--ignore``, ``-m`` empty or the fast
    tier's): a test asked for alone says nothing about the tier."""
    whole = {root.resolve(), (root / "tests").resolve()}
    asked = [pathlib.Path(config.invocation_params.dir, arg).resolve() for arg in config.args]
    if not asked or any(path not in whole for path in asked):
        return None
    if config.getoption("keyword") or config.getoption("deselect") or config.getoption("ignore") \
            or config.getoption("ignore_glob") or config.getoption("markexpr") not in ("", FAST):
        return None
    # -m "not slow" keeps exactly the items with no slow mark, theirs or their module's or class's
    return collections.Counter(item.nodeid.split("::", 1)[0] for item in items
                               if item.get_closest_marker("slow") is None)


def imported(path):
    """The grader modules a file imports, as dotted names (``from a import b`` gives ``a.b``)."""
    names = set()
    for node in ast.walk(ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "autograder" or name.startswith("autograder.")}


def package_of(module, known):
    """The innermost of ``known`` packages that holds ``module``."""
    holders = [package for package in known if module == package or module.startswith(package + ".")]
    return max(holders, key=len) if holders else None


def coverage(files, known, root=ROOT):
    """{package: sorted test files that import it} over ``files``; every package of ``known`` is a key."""
    covered = {package: set() for package in known}
    for name in files:
        for module in imported(root / name):
            package = package_of(module, known)
            if package is not None:
                covered[package].add(name)
    return {package: sorted(found) for package, found in covered.items()}


def main():
    files = fast_tests()
    covered = coverage(files, packages())
    for package, found in covered.items():
        tests = sum(files[name] for name in found)
        print(f"{package:34} {len(found):3} files {tests:4} fast tests")
    bare = [package for package, found in covered.items() if not found]
    print(f"fast tier: {sum(files.values())} tests in {len(files)} files")
    if bare:
        print(f"packages no fast test imports: {', '.join(bare)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
