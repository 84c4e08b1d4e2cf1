"""A judge process forks its zygote once torch and what both use are loaded; what only
boxes need (the confinement's modules, the guards' preparation, the syscall filter) the
zygote loads on its own while the judge goes on, and says when it is ready -- or why it
is not, which the judge's first request for a box reports as the grader's failure."""
import subprocess
import sys

import pytest

from support.helpers import ROOT

# each test starts a judge process of its own (a torch import)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote forks on Linux")]

JUDGE = """
import sys
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import boxes, zygote
from autograder.sandbox.boxes import BoxError

if sys.argv[2] == "fails":
    def preparing():
        raise RuntimeError("no syscall filter here")
    zygote._preload_boxes = preparing
factory = boxes.fork_zygote_here()
print("judge loaded the box-only modules:", "autograder.sandbox.supervisor" in sys.modules)
try:
    factory.new_channel().close()
    print("ready")
except BoxError as exc:
    print("refused:", exc)
factory.close()
"""


def judge(mode):
    done = subprocess.run([sys.executable, "-c", JUDGE, str(ROOT), mode], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_judge_goes_on_while_its_zygote_prepares_the_boxes():
    out = judge("works")
    assert "judge loaded the box-only modules: False" in out
    assert "ready" in out.splitlines()[-1]


def test_a_zygote_that_cannot_prepare_says_why_to_the_first_request():
    out = judge("fails")
    assert "refused: sandbox zygote: RuntimeError: no syscall filter here" in out
