"""The fast tier (`pytest -m "not slow"`, docs/maintaining.md) keeps a test of every package of the
grader: tools/check_tiers.py maps the tier's test files to the packages they import."""
import subprocess
import sys

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


def test_the_fast_tier_covers_every_package():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "check_tiers.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"{package} " in done.stdout for package in check_tiers.packages())
