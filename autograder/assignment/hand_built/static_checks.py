"""Static checks on student source, done by reading it (never importing it).

Module 2 (``loss_scaler.py``) must be built by hand. :func:`scan` reads it and
sorts what it finds in three kinds:

* ``delegation`` -- certain use of torch's scaler: a name, import or attribute
  chain that resolves to ``torch.amp.GradScaler`` (or its module, the
  ``torch.cuda.amp``/``torch.cpu.amp`` scalers, FSDP's subclass) or to a
  ``torch._amp_*`` operator, through aliases and constant strings
  (:mod:`autograder.intake.static_names`). Module 2 earns nothing.
* ``review`` -- a sign of undoing the grader's runtime guard: the grader's own
  modules, torch's C bindings or dispatcher, ``gc`` walks, ``ctypes``, paths
  under ``/proc``, re-executing or re-reading torch's files, any use of
  ``sys.modules``, and a module looked up by a name the check cannot read
  (``getattr(torch, name)``, ``__import__(name)``). No honest scaler needs any
  of them; Module 2 is held at 0 until a TA has looked.
* ``uncertain`` -- what could reach torch's scaler but cannot be followed (an
  attribute ``GradScaler`` of an object the check cannot resolve): a flag for
  the TA, no points lost.

Names the student defines (``class DynamicGradScaler``), strings, messages,
comments and docstrings are never uses: only what resolves to torch's objects is.
"""
import ast
import functools
import sys
from dataclasses import dataclass

from autograder.authoring import IMPORTERS, Names, imported_paths

# Paths (and everything under them) that are torch's loss scaler.
_SCALER_PATHS = ("torch.amp.GradScaler", "torch.amp.grad_scaler", "torch.GradScaler",
                 "torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler",
                 "torch.cpu.amp.GradScaler", "torch.cpu.amp.grad_scaler",
                 "torch.distributed.fsdp.sharded_grad_scaler", "torch.distributed.fsdp.ShardedGradScaler")
# Paths whose use is a sign of reaching around the runtime guard: the guard itself, the
# dispatcher it registers with, the objects it keeps, and ways to find, read or re-run
# torch's files. A hand-built scaler needs none of them.
_REVIEW_PATHS = ("autograder", "torch._C", "torch._VF", "torch.library", "torch.ops", "torch._ops",
                 "torch.utils._python_dispatch", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                 "builtins.exec", "builtins.eval", "builtins.compile", "importlib.reload", "imp.reload",
                 "runpy", "ctypes", "_ctypes", "marshal", "zipimport", "linecache", "pkgutil", "site", "sysconfig",
                 "importlib.util.spec_from_file_location", "importlib.util.module_from_spec",
                 "importlib.util.find_spec", "importlib.machinery", "importlib.resources", "importlib.metadata",
                 "types.CodeType", "types.FunctionType", "sys.modules")
# Attributes of a torch object that hand out its files or code.
_SOURCE_ATTRIBUTES = ("__file__", "__spec__", "__loader__", "__path__", "__code__", "__cached__")
_SOURCE_READERS = ("inspect.getsource", "inspect.getsourcelines", "inspect.getsourcefile", "inspect.getfile",
                   "inspect.findsource")
_MODULES_WRITERS = ("pop", "popitem", "update", "setdefault", "clear", "__setitem__", "__delitem__")
# Text that names the process's own memory and maps (/proc/self/mem, /proc/<pid>/maps).
_PROC = "/proc"


@dataclass(frozen=True)
class Finding:
    kind: str   # "delegation", "review" or "uncertain"
    line: int
    what: str   # the resolved path or a short description, English (for TAs and the message)


def _under(path, prefixes):
    return any(path == prefix or path.startswith(prefix + ".") for prefix in prefixes)


def _is_scaler(path):
    return path.startswith("torch.") and (_under(path, _SCALER_PATHS)
                                          or any(part.startswith("_amp_") for part in path.split(".")))


def _is_review(path):
    parts = path.split(".")
    return _under(path, _REVIEW_PATHS) or "scaler_guard" in parts \
        or (parts[0] == "torch" and parts[-1] in _SOURCE_ATTRIBUTES)


def _annotation_nodes(tree):
    """Nodes inside annotations: they describe a value, they do not use torch's objects."""
    roots = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    return {id(child) for root in roots if root is not None for child in ast.walk(root)}


class _Scanner:
    def __init__(self, tree):
        self.names = Names(tree)
        self.annotations = _annotation_nodes(tree)
        self.found = set()

    def add(self, kind, node, what):
        if kind == "delegation" and id(node) in self.annotations:  # worth a look, not a zero
            kind, what = "uncertain", f"an annotation naming {what}"
        self.found.add(Finding(kind, getattr(node, "lineno", 0), what))

    def judge_path(self, node, path):
        if path and _is_scaler(path):
            self.add("delegation", node, path)
        if path and _is_review(path):
            self.add("review", node, path)

    def visit(self, node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for path in imported_paths(node):
                self.judge_path(node, path)
        elif isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            self.judge_path(node, self.names.path(node))
            if isinstance(node, ast.Attribute) and self.names.path(node.value) is None \
                    and (node.attr == "GradScaler" or node.attr.startswith("_amp_")):
                self.add("uncertain", node, f"the attribute {node.attr} of an object the check cannot follow")
            if isinstance(node, ast.Subscript):
                self.dynamic_item(node)
        elif isinstance(node, ast.Call):
            self.judge_path(node, self.names.path(node))
            self.call(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and self.names.path(target.value) == "sys.modules":
                    self.add("review", node, "a write to sys.modules")

    def call(self, node):
        func = self.names.path(node.func)
        if func == "builtins.getattr" and len(node.args) >= 2 and self.names.text(node.args[1]) is None:
            base = self.names.path(node.args[0])
            if base:  # a module (or what it holds) searched by a computed name
                self.add("review", node, f"getattr({base}, <a name the check cannot read>)")
        elif func in IMPORTERS and node.args:
            name = self.names.text(node.args[0])
            if name is None:
                self.add("review", node, f"{func.split('.')[-1]}(<a module name the check cannot read>)")
            self.judge_path(node, name)
        elif func in _SOURCE_READERS and node.args:
            target = self.names.path(node.args[0])
            if target is None:
                self.add("uncertain", node, f"{func} on an object the check cannot follow")
            elif target.split(".")[0] == "torch":
                self.add("review", node, f"{func}({target})")
        elif func and func.startswith("sys.modules.") and func.split(".")[-1] in _MODULES_WRITERS:
            self.add("review", node, "a write to sys.modules")

    def dynamic_item(self, node):
        base = self.names.path(node.value)
        if base and self.names.text(node.slice) is None and (base == "sys.modules" or base.endswith(".__dict__")):
            self.add("review", node, f"{base}[<a key the check cannot read>]")

    def text(self, node, docstrings):
        """A string that names a path under /proc (the process's own memory and maps)."""
        if id(node) in docstrings:
            return
        text = self.names.text(node)
        if text is not None and (text == _PROC or text.startswith(_PROC + "/") or f"{_PROC}/" in text):
            self.add("review", node, f"the path {text[:60]!r}")


def _deeper_than(tree, limit):
    """Whether ``tree`` nests more than ``limit`` nodes deep (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


@functools.lru_cache(maxsize=16)  # the suites ask once per loss_scaler test
def scan(source):
    """Every :class:`Finding` in ``source``, by line (none for source that does not parse:
    the import fails anyway and every test says so)."""
    try:
        tree = ast.parse(source)
        if _deeper_than(tree, sys.getrecursionlimit()):
            raise RecursionError  # as 3.11+ parsing says itself; 3.10 builds the tree, and reading it was quadratic
    except (SyntaxError, ValueError):
        return ()
    except (RecursionError, MemoryError):
        return (Finding("uncertain", 0, "source nested too deeply for the check to read"),)
    scanner = _Scanner(tree)
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    for node in ast.walk(tree):
        try:
            scanner.visit(node)
            if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)):
                scanner.text(node, docstrings)
        except Exception as exc:  # hostile source never stops a grade: what it hides is the TA's
            scanner.add("uncertain", node, f"code the check could not read ({type(exc).__name__})")
    return tuple(sorted(scanner.found, key=lambda finding: (finding.line, finding.kind, finding.what)))


def _first_per_line(findings, kind):
    chosen = {}
    for finding in findings:  # the longest path on a line says the most (torch.amp.GradScaler, not torch.amp)
        if finding.kind == kind and len(finding.what) > len(chosen.get(finding.line, Finding(kind, 0, "")).what):
            chosen[finding.line] = finding
    return [chosen[line] for line in sorted(chosen)]


def find_delegation(source):
    """``(line, what)`` of the first certain use of torch's scaler machinery in ``source``, else None."""
    found = _first_per_line(scan(source), "delegation")
    return (found[0].line, found[0].what) if found else None


def review_signs(source):
    """Findings that hold Module 2 at 0 pending review, one per line."""
    return _first_per_line(scan(source), "review")


def uncertain_uses(source):
    """Findings the TA should look at (no points lost), one per line."""
    return _first_per_line(scan(source), "uncertain")


def ta_flags(source):
    """The report's flags for the TA (English, like every flag): each review sign and
    each lookup the check could not read, with its line."""
    return [f"loss_scaler.py line {finding.line}: {finding.what}, a sign of undoing the built-by-hand guard; "
            "Module 2 held at 0 pending review" for finding in review_signs(source)] + \
        [f"loss_scaler.py line {finding.line}: {finding.what} may reach torch's GradScaler; check it by hand "
         "(no points taken)" for finding in uncertain_uses(source)]
