"""The stand-in for ``torch._dynamo`` (autograder/torch_startup.py): optimizers and
GradScaler run without the compiler's import, anything else gets the real package,
and a whole grade keeps torch's compiler and sympy out of the judge. Each case runs
in a fresh interpreter: the stand-in changes ``sys.modules`` for good."""
import json
import subprocess
import sys

import pytest
from support.helpers import ROOT

# The slow tier (docs/maintaining.md): each test starts an interpreter that imports torch.
pytestmark = pytest.mark.slow



def run(code):
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def test_optimizers_and_the_scaler_run_on_the_standin():
    got = run(TRAIN + "print(json.dumps({'installed': installed, 'standin': torch_startup.installed(), "
                      "'sympy': 'sympy' in sys.modules, 'weights': results}))")
    assert got["installed"] and got["standin"] and not got["sympy"]
    plain = run(TRAIN.replace("installed = torch_startup.install()", "installed = False")
                + "print(json.dumps({'weights': results}))")
    assert got["weights"] == plain["weights"]  # the same updates as with the real torch._dynamo


def test_anything_else_gets_the_real_package():
    got = run("import json, torch\nfrom autograder import torch_startup\ntorch_startup.install()\n"
              "config = torch._dynamo.config\n"
              "print(json.dumps({'standin': torch_startup.installed(), 'real': hasattr(torch._dynamo, 'optimize'),"
              " 'config': type(config).__name__}))")
    assert got["standin"] is False and got["real"] is True


def test_a_submodule_import_gets_the_real_package():
    got = run("import json, torch\nfrom autograder import torch_startup\ntorch_startup.install()\n"
              "import torch._dynamo.config as config\n"
              "print(json.dumps({'standin': torch_startup.installed(), 'cache': hasattr(config, 'cache_size_limit')}))")
    assert got == {"standin": False, "cache": True}


def test_install_leaves_a_real_import_alone():
    got = run("import json, torch, torch._dynamo\nfrom autograder import torch_startup\n"
              "print(json.dumps({'installed': torch_startup.install(), 'standin': torch_startup.installed()}))")
    assert got == {"installed": False, "standin": False}


def test_a_grade_keeps_the_compiler_and_sympy_out_of_the_judge():
    got = run("import json, sys\nfrom autograder.judging.engine import grade_submission\n"
              "report = grade_submission('solutions', seed=11)\n"
              "print(json.dumps({'score': report.score, 'max': report.max_score,"
              " 'sympy': 'sympy' in sys.modules, 'dynamo': type(sys.modules.get('torch._dynamo')).__name__,"
              " 'staff': sorted(name for name in ('matplotlib', 'copydetect', 'transformers')"
              " if name in sys.modules)}))")
    assert got["score"] == got["max"] == 100
    assert got["sympy"] is False and got["dynamo"] == "_Standin"
    assert got["staff"] == []  # the class report's, the similarity check's and the lab's packages
