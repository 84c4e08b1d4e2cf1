"""The stand-in for ``torch._dynamo`` (autograder/torch_startup.py): optimizers and
GradScaler run without the compiler's import, anything else gets the real package,
and a whole grade keeps torch's compiler and sympy out of the judge. Each case runs
in a fresh process: the stand-in changes ``sys.modules`` for good. One interpreter
imports torch (what every case does first) and nothing else, then forks a child per
case: each child starts from that state as a fresh interpreter would, for one import
of torch instead of one per case (support.forked_runs)."""
import json

import pytest
from support.forked_runs import code_runs

# The slow tier (docs/maintaining.md): the cases run in an interpreter that imports torch.
pytestmark = pytest.mark.slow

TRAIN = """
import json, sys, torch
from autograder import torch_startup
installed = torch_startup.install()
torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
results = {}
for name in ("SGD", "Adam", "AdamW"):
    optimizer = getattr(torch.optim, name)(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale(model(torch.ones(4, 3)).square().sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    results[name] = [round(v, 6) for v in model.weight.flatten().tolist()]
"""


CASES = {
    # the runner itself: a case's changes stay in its own process, a failing case says so
    "runner_plants": "import sys\nsys.modules['planted'] = sys\nprint('{}')",
    "runner_probe": "import json, sys\nprint(json.dumps({name: name in sys.modules for name in "
                    "('planted', 'torch', 'torch._dynamo', 'sympy', 'autograder')}))",
    "runner_fails": "raise ValueError('boom')",
    "standin": TRAIN + "print(json.dumps({'installed': installed, 'standin': torch_startup.installed(), "
                       "'sympy': 'sympy' in sys.modules, 'weights': results}))",
    "plain": TRAIN.replace("installed = torch_startup.install()", "installed = False")
             + "print(json.dumps({'weights': results}))",
    "anything_else": "import json, torch\nfrom autograder import torch_startup\ntorch_startup.install()\n"
                     "config = torch._dynamo.config\n"
                     "print(json.dumps({'standin': torch_startup.installed(), "
                     "'real': hasattr(torch._dynamo, 'optimize'), 'config': type(config).__name__}))",
    "submodule": "import json, torch\nfrom autograder import torch_startup\ntorch_startup.install()\n"
                 "import torch._dynamo.config as config\n"
                 "print(json.dumps({'standin': torch_startup.installed(), "
                 "'cache': hasattr(config, 'cache_size_limit')}))",
    "real_first": "import json, torch, torch._dynamo\nfrom autograder import torch_startup\n"
                  "print(json.dumps({'installed': torch_startup.install(), 'standin': torch_startup.installed()}))",
    "grade": "import json, sys\nfrom autograder.judging.engine import grade_submission\n"
             "report = grade_submission('solutions', seed=11)\n"
             "print(json.dumps({'score': report.score, 'max': report.max_score,"
             " 'sympy': 'sympy' in sys.modules, 'dynamo': type(sys.modules.get('torch._dynamo')).__name__,"
             " 'staff': sorted(name for name in ('matplotlib', 'copydetect', 'transformers')"
             " if name in sys.modules)}))",
}


@pytest.fixture(scope="module")
def ran():
    return code_runs(CASES)


def result(ran, name):
    """What case ``name`` printed last (JSON); the case must have exited cleanly."""
    status, out = ran[name]
    assert status == 0, out[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_the_runner_gives_each_case_a_process_of_its_own(ran):
    """Each case starts from torch imported and nothing else, whatever the cases before it
    did, and a failing case is reported as such."""
    assert result(ran, "runner_plants") == {}
    assert result(ran, "runner_probe") == {"planted": False, "torch": True, "torch._dynamo": False,
                                           "sympy": False, "autograder": False}
    status, out = ran["runner_fails"]
    assert status != 0 and "ValueError: boom" in out


def test_optimizers_and_the_scaler_run_on_the_standin(ran):
    got = result(ran, "standin")
    assert got["installed"] and got["standin"] and not got["sympy"]
    plain = result(ran, "plain")
    assert got["weights"] == plain["weights"]  # the same updates as with the real torch._dynamo


def test_anything_else_gets_the_real_package(ran):
    got = result(ran, "anything_else")
    assert got["standin"] is False and got["real"] is True


def test_a_submodule_import_gets_the_real_package(ran):
    assert result(ran, "submodule") == {"standin": False, "cache": True}


def test_install_leaves_a_real_import_alone(ran):
    assert result(ran, "real_first") == {"installed": False, "standin": False}


def test_a_grade_keeps_the_compiler_and_sympy_out_of_the_judge(ran):
    got = result(ran, "grade")
    assert got["score"] == got["max"] == 100
    assert got["sympy"] is False and got["dynamo"] == "_Standin"
    assert got["staff"] == []  # the class report's, the similarity check's and the lab's packages
