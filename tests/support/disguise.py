"""A disguised copy of a Python module, as a student hiding a copy would make
it: every name the module defines renamed, top-level definitions and class
bodies reordered, docstrings dropped, comments and blank lines changed."""
import ast
import builtins


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def _new(self, name):
        return self.mapping.get(name, name)

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self._new(node.name)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self._new(node.name)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = self._new(node.attr)
        return node


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def disguise(source, keep=()):
    """``source`` with its own names renamed (``keep`` and builtins stay), reordered, re-commented."""
    tree = ast.parse(source)
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            defined.add(node.id if isinstance(node, ast.Name) else node.attr)
    defined -= set(keep) | set(dir(builtins)) | {"self", "__init__"}
    mapping = {name: f"my_{index}_{name[::-1].strip('_')}" for index, name in enumerate(sorted(defined))}
    tree = _Renamer(mapping).visit(tree)
    body = [node for node in tree.body if not _is_docstring(node)]
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    tree.body = imports + [node for node in body if node not in imports][::-1]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if len(node.body) > 1 and _is_docstring(node.body[0]):
                node.body = node.body[1:]
            if isinstance(node, ast.ClassDef):
                node.body = node.body[::-1]
    out = []
    for index, line in enumerate(ast.unparse(tree).splitlines()):
        if index % 7 == 3:
            out.append("# worked this out myself")
        out.append(line)
        if line.lstrip().startswith(("def ", "class ")):
            out.append("")
    return "\n\n".join(out) + "\n"
