"""What a name in student source refers to, found by reading it (never running it).

:class:`Names` follows imports, aliases and assignments to dotted paths
(``import torch as T`` then ``T.cuda`` is ``torch.cuda``), and folds the string
expressions a program can compute without running anything else (``"sub" +
"process"``, f-strings of constants, ``"".join([...])``, ``%``/``.format``).
It is flow-insensitive on purpose: a name bound to a path anywhere in the file
resolves to it everywhere, which errs towards finding a use, never towards
missing one. Whatever cannot be resolved is ``None``; the caller decides
whether that is worth a look.
"""
import ast
import builtins
import re

_MAX_TEXT = 1000  # folded strings longer than this are not names anyone imports
_MAX_NUMBER = 10**6  # and no width or count above this builds one
_WIDE = re.compile(r"\d{7,}")  # a format width that would allocate megabytes in the judge
_STR_METHODS = frozenset({"join", "format", "replace", "lower", "upper", "strip", "lstrip", "rstrip",
                          "capitalize", "title", "swapcase", "casefold", "removeprefix", "removesuffix",
                          "decode", "encode"})
_BUILTINS = frozenset(dir(builtins))
IMPORTERS = ("builtins.__import__", "importlib.import_module", "importlib.__import__")


class NotConstant(Exception):
    pass


def imported_paths(node):
    """The module paths an ``import``/``from ... import`` statement loads or names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module if alias.name == "*" else f"{node.module}.{alias.name}" for alias in node.names]
    return []


def _dotted_text(node):
    """``self.x.y`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


class Names:
    def __init__(self, tree):
        self.paths = {}      # name or dotted target ("self._amp") -> dotted path
        self.strings = {}    # name -> the first constant it is bound to
        self.returns = {}    # function name -> the path all its returns resolve to
        self.stars = []      # modules imported with ``*``
        self.local = set()   # names the file binds to something of its own
        self._bind_imports(tree)
        self._collect_local(tree)
        for _round in range(8):  # aliases of aliases; a few rounds reach a fixpoint
            if not self._bind_assignments(tree):
                break

    # -- binding -------------------------------------------------------------
    def _bind_imports(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.paths[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.paths[top] = top
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.append(node.module)
                    else:
                        self.paths[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _collect_local(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.local.add(node.name)
            elif isinstance(node, ast.arg):
                self.local.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.local.add(node.id)

    def _bind_assignments(self, tree):
        changed = False
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(target, node.value) for target in node.targets]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in self.returns:
                changed |= self._guarded(self._bind_returns, node)
            for target, value in pairs:
                changed |= self._guarded(self._bind, target, value)
        return changed

    @staticmethod
    def _guarded(bind, *nodes):
        """Code nested past the recursion limit binds nothing (the scan flags it where it is used)."""
        try:
            return bind(*nodes)
        except RecursionError:
            return False

    def _bind_returns(self, node):
        found = {self.path(child.value) for child in ast.walk(node)
                 if isinstance(child, ast.Return) and child.value is not None}
        if len(found) == 1 and None not in found:
            self.returns[node.name] = found.pop()
            return True
        return False

    def _bind(self, target, value):
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            return any([self._bind(t, v) for t, v in zip(target.elts, value.elts)])
        key = _dotted_text(target)
        if key is None:
            return False
        path = self.path(value)
        if path is not None and self.paths.get(key) != path:
            self.paths[key] = path
            return True
        if isinstance(target, ast.Name) and target.id not in self.strings:
            try:
                self.strings[target.id] = self.constant(value)  # the first constant bound wins
                return True
            except NotConstant:
                pass  # perhaps once the names it uses are folded, next round
        return False

    # -- resolution ----------------------------------------------------------
    def path(self, node):
        """The dotted path ``node`` evaluates to (``torch.nn.Linear``), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.paths:
                return self.paths[node.id]
            if node.id in self.local:
                return None
            if node.id == "__builtins__":
                return "builtins"
            if node.id in _BUILTINS:
                return "builtins." + node.id
            return f"{self.stars[0]}.{node.id}" if self.stars else None
        if isinstance(node, ast.Attribute):
            key = _dotted_text(node)
            if key in self.paths:
                return self.paths[key]
            base = self.path(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call_path(node)
        if isinstance(node, ast.Subscript):
            return self._item_path(node)
        return None

    def _call_path(self, node):
        func = self.path(node.func)
        if func == "builtins.getattr" and len(node.args) >= 2:
            base = self.path(node.args[0])
            name = self.text(node.args[1])
            return f"{base}.{name}" if base and name else None
        if func == "builtins.vars" and len(node.args) == 1:
            base = self.path(node.args[0])
            return f"{base}.__dict__" if base else None
        if func in ("builtins.object.__getattribute__", "builtins.type.__getattribute__") and len(node.args) == 2:
            base, name = self.path(node.args[0]), self.text(node.args[1])
            return f"{base}.{name}" if base and name else None
        if func and func.rsplit(".", 1)[-1] in ("__getattribute__", "__getattr__") and len(node.args) == 1:
            name = self.text(node.args[0])
            return f"{func.rsplit('.', 1)[0]}.{name}" if name else None
        if isinstance(node.func, ast.Call) and self.path(node.func.func) == "operator.attrgetter" \
                and len(node.func.args) == 1 and len(node.args) == 1:
            base, name = self.path(node.args[0]), self.text(node.func.args[0])
            return f"{base}.{name}" if base and name else None
        if func in ("sys.modules.get", "sys.modules.__getitem__", "sys.modules.setdefault") and node.args:
            return self.text(node.args[0])  # the module of that name, as an import of it
        if func in IMPORTERS and node.args:
            name = self.text(node.args[0])
            if name is None:
                return None
            fromlist = node.args[3] if len(node.args) > 3 else next(
                (k.value for k in node.keywords if k.arg == "fromlist"), None)
            if func == "importlib.import_module" or (fromlist is not None and self._truthy(fromlist)):
                return name
            return name.split(".")[0]
        if isinstance(node.func, ast.Name) and node.func.id in self.returns:
            return self.returns[node.func.id]
        return None

    def _item_path(self, node):
        base = self.path(node.value)
        key = self.text(node.slice)
        if not base or key is None:
            return None
        if base == "sys.modules":
            return key
        if base == "builtins":  # __builtins__ may be the module's dict
            return f"builtins.{key}"
        if base.endswith(".__dict__"):
            return f"{base[:-len('.__dict__')]}.{key}"
        return None

    def _truthy(self, node):
        try:
            return bool(self.constant(node))
        except NotConstant:
            return True  # a fromlist we cannot read: assume the submodule is returned

    def text(self, node):
        """The string ``node`` folds to, or None."""
        try:
            value = self.constant(node)
        except NotConstant:
            return None
        return value if isinstance(value, str) else None

    # -- constant folding ------------------------------------------------------
    def constant(self, node):
        """The value of a constant expression (strings, numbers, bytes, tuples/lists of them)."""
        value = self._fold(node)
        if isinstance(value, (str, bytes)) and len(value) > _MAX_TEXT:
            raise NotConstant()
        return value

    def _fold(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.strings:
            return self.strings[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.constant(node.operand)
            if isinstance(value, (int, float)):
                return -value if isinstance(node.op, ast.USub) else value
            raise NotConstant()
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.constant(element) for element in node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod, ast.Mult)):
            return self._binary(node.op, self.constant(node.left), self.constant(node.right))
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(part) for part in node.values)
        if isinstance(node, ast.Subscript):
            return self._index(self.constant(node.value), node.slice)
        if isinstance(node, ast.Call):
            return self._fold_call(node)
        raise NotConstant()

    @staticmethod
    def _binary(op, left, right):
        if isinstance(op, ast.Mult):
            count = right if isinstance(right, int) else left
            if isinstance(count, int) and 0 <= count <= _MAX_TEXT:
                return _bounded(left * right)
            raise NotConstant()
        if isinstance(op, ast.Mod):
            _check_template(left, right)
        try:
            return _bounded(left + right if isinstance(op, ast.Add) else left % right)
        except (TypeError, ValueError, KeyError, OverflowError):
            raise NotConstant() from None

    def _formatted(self, part):
        if isinstance(part, ast.Constant):
            return part.value
        value = self.constant(part.value)
        spec = self.constant(part.format_spec) if part.format_spec is not None else ""
        _check_template(spec, ())
        conversion = {-1: format, 115: lambda v, s: format(str(v), s), 114: lambda v, s: format(repr(v), s),
                      97: lambda v, s: format(ascii(v), s)}[part.conversion]
        try:
            return conversion(value, spec)
        except (TypeError, ValueError):
            raise NotConstant() from None

    def _index(self, value, index):
        if isinstance(index, ast.Slice):
            bounds = [None if part is None else self.constant(part) for part in (index.lower, index.upper, index.step)]
            if all(bound is None or isinstance(bound, int) for bound in bounds) and bounds[2] != 0:
                return value[slice(*bounds)]
            raise NotConstant()
        position = self.constant(index)
        try:
            return value[position]
        except (TypeError, IndexError, KeyError):
            raise NotConstant() from None

    def _fold_call(self, node):
        if node.keywords:
            raise NotConstant()
        args = [self.constant(arg) for arg in node.args]
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
            owner = self.constant(node.func.value)
            method = getattr(owner, node.func.attr, None)
            if method is None:
                raise NotConstant()
            if node.func.attr == "format":
                _check_template(owner, args)
            try:
                return method(*args)
            except (TypeError, ValueError, KeyError, IndexError, LookupError):
                raise NotConstant() from None
        func = self.path(node.func)
        try:
            if func == "builtins.chr" and len(args) == 1:
                return chr(args[0])
            if func == "builtins.str" and len(args) == 1:
                return str(args[0])
            if func in ("builtins.reversed", "builtins.list", "builtins.tuple") and len(args) == 1:
                return tuple(reversed(args[0])) if func.endswith("reversed") else tuple(args[0])
        except (TypeError, ValueError, OverflowError):
            raise NotConstant() from None
        raise NotConstant()


def _bounded(value):
    if isinstance(value, (int, float)) and abs(value) > _MAX_NUMBER:
        raise NotConstant()
    return value


def _check_template(template, args):
    """Refuse a format whose width (in the template or taken from an argument) is huge."""
    values = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if isinstance(template, str) and _WIDE.search(template) or \
            any(isinstance(value, int) and abs(value) > _MAX_NUMBER for value in values):
        raise NotConstant()
