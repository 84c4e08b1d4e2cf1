"""Print, as JSON, the points the graded suites hold per module and visibility,
counted the way the grader's plugin counts them (run as a script: pytest
collection must not happen inside the calling test session)."""
import collections
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    sys.path.insert(0, str(ROOT))
    import pytest

    from autograder import active_assignment
    from autograder.judging import plugin, suites

    class Counter:
        def __init__(self):
            self.points = collections.defaultdict(float)

        def pytest_collection_modifyitems(self, config, items):
            for item in items:
                module = plugin._marker_value(item, "module") or "grader"
                visibility = plugin._marker_value(item, "visibility", "hidden")
                self.points[f"{module}|{visibility}"] += plugin._points(plugin._marker_value(item, "points", 1))

    counter = Counter()
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    assignment = active_assignment.current()
    paths = [str(assignment.visible_dir)] + ([str(assignment.hidden_dir)] if assignment.hidden_tests_available() else [])
    code = pytest.main(paths + ["-c", str(suites.SUITE_INI), "--rootdir", str(assignment.folder),
                                "--confcutdir", str(assignment.folder), "--import-mode=importlib",
                                "-p", "no:cacheprovider", "--collect-only", "-q"],
                       plugins=[counter, *assignment.plugins()])
    print("POINTS " + json.dumps(dict(counter.points)))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
