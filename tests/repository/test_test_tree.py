"""The test tree's own rule (docs/maintaining.md, "Where the tests live"): what two
test files share lives in tests/support/. A test file that imports another works only
when pytest happens to have put the other's folder on ``sys.path`` (collecting both),
so running one room's folder alone fails, and its fixtures travel by import."""
import ast

from support.helpers import ROOT

TESTS = ROOT / "tests"


def every_test_file():
    return [path for path in sorted(TESTS.rglob("test_*.py")) if "__pycache__" not in path.parts]


def imported_names(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]


def test_no_test_file_imports_another():
    names = {path.stem for path in every_test_file()}
    found = sorted(f"{path.relative_to(ROOT)} imports {name}" for path in every_test_file()
                   for name in set(imported_names(path)) if name in names and name != path.stem)
    assert not found, "move what they share into tests/support/:\n" + "\n".join(found)
