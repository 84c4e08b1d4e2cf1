"""The built-by-hand check reads loss_scaler.py: what resolves to torch's scaler is
delegation (Module 2 earns 0), signs of undoing the runtime guard hold Module 2 at 0
pending review, lookups it cannot read are TA flags; names, strings and messages of
the student's own never count."""
import pytest
from support.helpers import ROOT, mutate, solution_source
from support.language_check import english_runs

from autograder.assignment.hand_built.static_checks import (find_delegation, review_signs, scan, ta_flags,
                                                            uncertain_uses)

DELEGATING = {
    "attribute chain": "import torch\nscaler = torch.amp.GradScaler('cpu')\n",
    "torch.GradScaler": "import torch\nscaler = torch.GradScaler('cpu')\n",
    "import alias": "import torch as T\nscaler = T.amp.GradScaler('cpu')\n",
    "from torch import amp as a": "from torch import amp as a\nscaler = a.GradScaler('cpu')\n",
    "from-import alias": "from torch.amp import GradScaler as G\n",
    "the module": "from torch.amp import grad_scaler\n",
    "import of the module": "import torch.amp.grad_scaler as gs\n",
    "assigned alias": "import torch\nx = torch.amp\ny = x\nscaler = y.GradScaler('cpu')\n",
    "alias on self": ("import torch\nclass S:\n    def __init__(self):\n        self.amp = torch.amp\n"
                      "    def make(self):\n        return self.amp.GradScaler('cpu')\n"),
    "function returning the module": "import torch\ndef amp():\n    return torch.amp\nscaler = amp().GradScaler\n",
    "subclass": "import torch\nclass Mine(torch.amp.GradScaler):\n    pass\n",
    "cuda scaler": "from torch.cuda.amp import GradScaler\n",
    "cuda chain": "import torch\ns = torch.cuda.amp.GradScaler()\n",
    "cpu scaler": "import torch\ns = torch.cpu.amp.GradScaler()\n",
    "fsdp subclass": "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler\n",
    "getattr concatenation": "import torch\ns = getattr(torch.amp, 'Grad' + 'Scaler')\n",
    "getattr f-string": "import torch\npart = 'Grad'\ns = getattr(torch.amp, f'{part}Scaler')\n",
    "getattr join": "import torch\ns = getattr(torch.amp, ''.join(['Grad', 'Scaler']))\n",
    "getattr percent": "import torch\ns = getattr(torch.amp, '%sScaler' % 'Grad')\n",
    "getattr format": "import torch\ns = getattr(torch.amp, '{}{}'.format('Grad', 'Scaler'))\n",
    "getattr reversed": "import torch\ns = getattr(torch.amp, 'relacSdarG'[::-1])\n",
    "getattr chr": "import torch\ns = getattr(torch.amp, chr(71) + 'radScaler')\n",
    "vars": "import torch\ns = vars(torch.amp)['Grad' + 'Scaler']\n",
    "__dict__": "import torch\ns = torch.amp.__dict__['GradScaler']\n",
    "import_module": "import importlib\nm = importlib.import_module('torch.' + 'amp.' + 'grad_scaler')\n",
    "__import__": "m = __import__('torch.amp.grad_' + 'scaler')\n",
    "sys.modules read": "import sys\nm = sys.modules['torch.amp.grad_scaler']\n",
    "__getattribute__": "import torch\ns = torch.amp.__getattribute__('Grad' + 'Scaler')\n",
    "object.__getattribute__": "import torch\ns = object.__getattribute__(torch.amp, 'GradScaler')\n",
    "operator.attrgetter": "import operator, torch\ns = operator.attrgetter('amp.GradScaler')(torch)\n",
    "star import": "from torch.amp import *\ns = GradScaler('cpu')\n",
    "private op": "import torch\nop = torch._amp_update_scale_\n",
    "private op via getattr": "import torch\nop = getattr(torch, '_amp_' + 'foreach_non_finite_check_and_unscale_')\n",
    "private op via _VariableFunctions": "import torch\nop = torch._C._VariableFunctions._amp_update_scale_\n",
    "private op via aten": "import torch\nop = getattr(torch.ops.aten, '_amp_' + 'update_scale_')\n",
}

HONEST = {
    "own class named like a framework's": "class DynamicGradScaler:\n    pass\n\nShardedGradScaler = DynamicGradScaler\n",
    "own class named GradScaler": "class GradScaler:\n    pass\n\nscaler = GradScaler()\n",
    "GradScaler's own message": ("def step(closure=None):\n    if closure is not None:\n"
                                 "        raise RuntimeError('Closure use is not currently supported if GradScaler "
                                 "is enabled.')\n"),
    "strings and comments": ("'''Behaves like torch.amp.GradScaler('cpu').'''\n# not torch.cuda.amp.GradScaler\n"
                             "NAME = 'torch.amp.GradScaler'\nOPS = ('_amp_update_scale_', 'torch._C')\n"),
    "autocast from torch.amp": "import torch\nctx = torch.amp.autocast('cpu')\nfrom torch.amp import autocast\n",
    "constant getattr elsewhere in torch": "import torch\ndtype = getattr(torch, 'float' + '16')\n",
    "compile of re and torch": "import re\nimport torch\npattern = re.compile('x')\nfast = torch.compile\n",
    "student's own helpers": "def getsource(x):\n    return x\n\ndef compile(x):\n    return x\n\ncompile(getsource(1))\n",
    "foreach ops": "import torch\ntorch._foreach_mul_([torch.ones(1)], 0.5)\n",
    "getattr on its own objects": ("class S:\n    def get(self, name):\n        return getattr(self, name)\n"
                                   "def state(optimizer, key):\n    return getattr(optimizer, key, None)\n"),
    "a docstring naming /proc": '"""Reads nothing under /proc/self; plain arithmetic."""\nx = 1\n',
}

UNCERTAIN = {
    "attribute of an unknown object": "def make(module):\n    return module.GradScaler('cpu')\n",
    "inspect on an unknown object": "import inspect\ndef show(x):\n    return inspect.getsource(x)\n",
    "an annotation": "import torch\ndef load(self, other: torch.amp.GradScaler) -> 'GradScaler':\n    pass\n",
}

REVIEW = {
    "the grader's guard": "import autograder.assignment.hand_built.scaler_guard\n",
    "the grader assembled": "guard = __import__('auto' + 'grader')\n",
    "the guard module from anywhere": "from somewhere import scaler_guard\n",
    "torch._C": "import torch\ntorch._C._dispatch_tls_set_dispatch_key_excluded(0, False)\n",
    "torch.library": "import torch\nlib = torch.library.Library('aten', 'IMPL')\n",
    "torch.ops dispatcher": "import torch\nkernels = torch.ops.aten.add.default.py_kernels\n",
    "gc.get_objects": "import gc\nobjects = gc.get_objects()\n",
    "gc.get_referrers": "from gc import get_referrers as refs\n",
    "gc.get_referents": "import gc\ngc.get_referents(object())\n",
    "exec": "exec('x = 1')\n",
    "eval": "y = eval('1 + 1')\n",
    "compile": "code = compile('x = 1', 'f', 'exec')\n",
    "torch.__file__": "import torch\npath = torch.__file__\n",
    "a torch module's __file__": "import torch\npath = torch.amp.autocast_mode.__file__\n",
    "inspect.getsource on torch": "import inspect, torch\ntext = inspect.getsource(torch.amp)\n",
    "importlib.reload": "import importlib, torch\nimportlib.reload(torch.amp)\n",
    "sys.modules assignment": "import sys\nsys.modules['torch.amp'] = None\n",
    "sys.modules deletion": "import sys\ndel sys.modules['torch.amp']\n",
    "sys.modules pop": "import sys\nsys.modules.pop('torch.amp', None)\n",
    "exec through __builtins__": "run = __builtins__['ex' + 'ec']\n",
    "find_spec": "import importlib.util\nspec = importlib.util.find_spec('torch')\n",
    "importlib.resources": "from importlib import resources\nfiles = resources.files('torch')\n",
    "spec_from_file_location": "import importlib.util\nspec = importlib.util.spec_from_file_location('g', 'x.py')\n",
    # issue 37: the guard found through the process's memory, names fetched at run time
    "getattr with a runtime name": "import torch\nname = input()\ns = getattr(torch.amp, name)\n",
    "getattr on torch with a runtime name": "import torch\ndef op(name):\n    return getattr(torch.ops.aten, name)\n",
    "getattr on any module": "import math\nf = getattr(math, input())\n",
    "a module's __dict__ with a runtime key": "import torch\nf = vars(torch)[input()]\n",
    "import_module with a runtime name": "import importlib, sys\nm = importlib.import_module(sys.argv[1])\n",
    "__import__ of a decoded name": "m = __import__(bytes.fromhex('746f726368').decode())\n",
    "sys.modules with a runtime key": "import sys\nm = sys.modules[input()]\n",
    "sys.modules.get": "import sys\nm = sys.modules.get('torch')\n",
    "sys.modules bound to a name": "import sys\nget = sys.modules.get\n",
    "sys.modules walked": "import sys\nfor name in list(sys.modules):\n    pass\n",
    "ctypes": "import ctypes\ndata = ctypes.string_at(id(1), 8)\n",
    "ctypes from sys.modules": "import sys\nc = sys.modules.get('ct' + 'ypes')\n",
    "_ctypes": "from _ctypes import PyObj_FromPtr\n",
    "/proc/self/maps": "with open('/proc/self/maps') as f:\n    text = f.read()\n",
    "/proc assembled": "path = '/pr' + 'oc/' + 'self/mem'\n",
    "/proc/<pid>/mem in an f-string": "import os\npath = f'/proc/{os.getpid()}/mem'\n",
    "/proc joined": "import os\npath = os.path.join('/proc', 'self', 'maps')\n",
}


def kinds(source):
    return {finding.kind for finding in scan(source)}


@pytest.mark.parametrize("source", DELEGATING.values(), ids=DELEGATING.keys())
def test_every_use_of_torch_scaler_is_certain(source):
    found = find_delegation(source)
    assert found, source
    line, what = found
    assert line >= 1
    assert what.startswith("torch.") and ("GradScaler" in what or "grad_scaler" in what or "_amp_" in what)


def test_the_line_and_the_resolved_path_are_named():
    assert find_delegation("import torch as T\n\n\nx = T.amp.GradScaler('cpu')\n") == (4, "torch.amp.GradScaler")
    assert find_delegation("import torch\ns = getattr(torch.amp, 'Grad' + 'Scaler')\n") == (2, "torch.amp.GradScaler")


@pytest.mark.parametrize("source", HONEST.values(), ids=HONEST.keys())
def test_own_names_strings_and_messages_never_count(source):
    assert scan(source) == ()


@pytest.mark.parametrize("source", UNCERTAIN.values(), ids=UNCERTAIN.keys())
def test_a_lookup_that_cannot_be_read_is_a_flag_not_a_zero(source):
    assert find_delegation(source) is None and review_signs(source) == []
    assert uncertain_uses(source)
    assert all("no points taken" in flag for flag in ta_flags(source))


@pytest.mark.parametrize("source", REVIEW.values(), ids=REVIEW.keys())
def test_signs_of_undoing_the_guard_hold_for_review(source):
    signs = review_signs(source)
    assert signs and find_delegation(source) is None
    assert any(f"line {signs[0].line}:" in flag and "pending review" in flag for flag in ta_flags(source))


def test_source_that_does_not_parse_has_no_findings():
    assert scan("def broken(:\n") == () and find_delegation("def broken(:\n") is None


def test_hostile_source_cannot_break_or_bloat_the_check():
    """Nesting deeper than the recursion limit is a flag; a format width of 10**8 is not folded
    (it would build a 100 MB string in the judge), so the lookup stays unread."""
    deep = "import torch\nx = torch" + ".a" * 20000 + "\n"
    assert [f.kind for f in scan(deep)] == ["uncertain"]
    for wide in ("f\"{'a':>99999999}\"", "'{0:{1}}'.format('a', 99999999)", "'%99999999s' % 'a'"):
        assert [f.kind for f in scan(f"import torch\nx = getattr(torch, {wide})\n")] == ["review"]


def _honest_sources():
    from support import mutants_loss_scaler

    sources = {"solution": solution_source("loss_scaler"),
               "stub": (ROOT / "exercises" / "loss_scaler.py").read_text(encoding="utf-8")}
    for variant in sorted((ROOT / "tests" / "variants").glob("loss_scaler*.py")):
        sources[variant.name] = variant.read_text(encoding="utf-8")
    for case in mutants_loss_scaler.CASES:
        sources[case.name] = mutate("loss_scaler", *case.replacements)
    return sources


def test_every_honest_scaler_in_the_repository_trips_nothing():
    tripped = {name: scan(source) for name, source in _honest_sources().items() if scan(source)}
    assert not tripped
    assert len(_honest_sources()) > 20  # the mutants were found


# -- end to end, through the grader --------------------------------------------------------------
_GRADSCALER_WORDED = [
    ('"Attempting to unscale FP16 gradients: master weights must stay FP32."',
     '"Attempting to unscale FP16 gradients: GradScaler refuses them if GradScaler is enabled."'),
    ('"The source state dict is empty."',
     '"The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler."'),
]


def _renamed_class():
    """The class under the name Megatron-LM gives it (fairscale's is ShardedGradScaler)."""
    return mutate("loss_scaler", ("class LossScaler:", "class DynamicGradScaler:")) + "\n\nLossScaler = DynamicGradScaler\nShardedGradScaler = DynamicGradScaler\n"


def _helper(code):
    return mutate("loss_scaler", ("    def update(self):\n", "    def _helper(self):\n" + code + "\n    def update(self):\n"))


def _scaler(report):
    tests = [t for t in report.tests if t.module == "loss_scaler"]
    assert tests
    return tests, sum(t.score for t in tests), sum(t.max_score for t in tests)


@pytest.mark.slow
@pytest.mark.parametrize("name, source", [("DynamicGradScaler", _renamed_class()),
                                          ("GradScaler's messages", mutate("loss_scaler", *_GRADSCALER_WORDED))])
def test_honest_scaler_named_or_worded_like_gradscaler_gets_full_marks(grade_dir, name, source):
    report = grade_dir({"loss_scaler": source}, seed=31, modules=("loss_scaler",))
    tests, score, total = _scaler(report)
    assert total == report.by_module()["loss_scaler"][1] > 30  # every loss_scaler test ran
    assert score == total, [f"{t.test_id}: {t.output}" for t in tests if not t.passed]
    assert not report.flags


@pytest.mark.parametrize("name, code", [
    ("GradScaler", "        return torch.amp.GradScaler('cpu')\n"),
    ("getattr concatenation", "        return getattr(torch.amp, 'Grad' + 'Scaler')\n"),
])
def test_delegating_scaler_still_gets_zero(grade_dir, name, code):
    """Even in a helper nothing calls: the static check names the line."""
    source = _helper(code)
    line = source.splitlines().index(code.rstrip("\n")) + 1
    report = grade_dir({"loss_scaler": source}, seed=32, modules=("loss_scaler",))
    tests, score, _total = _scaler(report)
    assert score == 0
    assert all(f"line {line} uses torch.amp.GradScaler" in t.output for t in tests[:1])


def test_tamper_sign_holds_module_2_for_review(grade_dir):
    source = _helper("        import gc\n        return len(gc.get_objects())\n")
    line = source.splitlines().index("        return len(gc.get_objects())") + 1
    report = grade_dir({"loss_scaler": source}, seed=33, modules=("loss_scaler",))
    tests, score, _total = _scaler(report)
    assert score == 0
    assert "held at 0 until the course staff have reviewed it" in tests[0].output
    assert any(f"loss_scaler.py line {line}: gc.get_objects" in flag and "pending review" in flag
               for flag in report.flags)


def test_uncertain_lookup_is_flagged_and_keeps_the_points(grade_dir):
    source = _helper("        return type(self).GradScaler\n")
    report = grade_dir({"loss_scaler": source}, seed=34, modules=("loss_scaler",))
    tests, score, total = _scaler(report)
    assert score == total, [f"{t.test_id}: {t.output}" for t in tests if not t.passed]
    assert any("attribute GradScaler" in flag and "no points taken" in flag for flag in report.flags)


def test_a_module_searched_by_a_computed_name_holds_module_2_for_review(grade_dir):
    """Issue 37's round: names fetched through sys.modules and a computed getattr."""
    source = _helper("        import sys\n        name = type(self).__name__[:0]\n"
                     "        return getattr(sys.modules.get('torch'), name or 'autocast')\n")
    report = grade_dir({"loss_scaler": source}, seed=35, modules=("loss_scaler",))
    tests, score, _total = _scaler(report)
    assert score == 0
    assert "held at 0 until the course staff have reviewed it" in tests[0].output


def test_review_hold_speaks_both_languages_and_spares_other_modules():
    from autograder.assignment.hand_built.verdicts import apply_review_verdict
    from autograder.judging.results import TestResult

    results = [TestResult(name=n, module=m, max_score=1.0, score=1.0, passed=True, output="")
               for n, m in (("a", "loss_scaler"), ("b", "amp_update"))]
    flags = []
    apply_review_verdict(results, "import gc\n\nobjects = gc.get_objects()\n", flags)
    held, other = results
    assert (held.score, held.passed, other.score, other.passed) == (0.0, False, 1.0, True)
    assert "line 3 uses gc.get_objects" in held.detail.render("en")
    chinese = held.detail.render("zh")
    assert "第 3 行" in chinese and "复核" in chinese and not english_runs(chinese)
    assert flags == ["loss_scaler.py line 3: gc.get_objects, a sign of undoing the built-by-hand guard; "
                     "Module 2 held at 0 pending review"]
