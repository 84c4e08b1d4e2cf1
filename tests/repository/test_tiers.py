"""The fast tier (`pytest -m "not slow"`, docs/maintaining.md) keeps a test of every package of the
grader: tools/check_tiers.py maps the tier's test files to the packages they import."""
import sys
import types

from support.helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import check_tiers  # noqa: E402


def test_a_package_without_a_fast_test_is_named(tmp_path):
    (tmp_path / "test_a.py").write_text("from autograder.sandbox.confine import rlimits\n"
                                        "def f():\n    import autograder.judging.engine\n")
    (tmp_path / "test_b.py").write_text("from autograder import locations\nfrom support.helpers import ROOT\n")
    known = ["autograder", "autograder.judging", "autograder.sandbox", "autograder.sandbox.confine"]
    covered = check_tiers.coverage(["test_a.py", "test_b.py"], known, root=tmp_path)
    assert covered == {"autograder": ["test_b.py"], "autograder.judging": ["test_a.py"],
                       "autograder.sandbox": [], "autograder.sandbox.confine": ["test_a.py"]}


def test_the_fast_tier_covers_every_package(request, monkeypatch, capsys):
    """tools/check_tiers.py's verdict; where this session collected the whole tree, on the
    collection it made already (check_tiers.fast_tests_collected), else on one of its own."""
    collected = check_tiers.fast_tests_collected(request.config, request.session.items)
    if collected is not None:
        monkeypatch.setattr(check_tiers, "fast_tests", lambda root=ROOT: collected)
    code = check_tiers.main()
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert all(f"{package} " in out.out for package in check_tiers.packages())


def _config(args=("tests",), **options):
    """A stand-in for a pytest config: what fast_tests_collected reads of one."""
    chosen = {"keyword": "", "deselect": None, "ignore": None, "ignore_glob": None, "markexpr": ""}
    chosen.update(options)
    return types.SimpleNamespace(args=list(args), invocation_params=types.SimpleNamespace(dir=ROOT),
                                 getoption=chosen.__getitem__)


def _item(nodeid, slow=False):
    return types.SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: object() if slow and name == "slow"
                                 else None)


def test_only_a_collection_of_the_whole_tree_stands_for_the_fast_tier():
    items = [_item("tests/a/test_x.py::test_one"), _item("tests/a/test_x.py::test_two"),
             _item("tests/b/test_y.py::test_slow", slow=True)]
    expected = {"tests/a/test_x.py": 2}
    for config in (_config(), _config(args=(".",)), _config(markexpr="not slow")):
        assert check_tiers.fast_tests_collected(config, items) == expected
    for config in (_config(args=()), _config(args=("tests/repository",)), _config(args=("tests/a/test_x.py::test_one",)),
                   _config(keyword="tiers"), _config(deselect=["tests/a/test_x.py::test_two"]),
                   _config(ignore=["tests/b"]), _config(ignore_glob=["*_y.py"]), _config(markexpr="slow"),
                   _config(markexpr="hostile")):
        assert check_tiers.fast_tests_collected(config, items) is None
