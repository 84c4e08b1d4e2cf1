"""Static checks on student source, done by reading it (never importing it)."""
import ast

# Names whose use means Module 2 delegates to PyTorch instead of building the scaler.
_DELEGATION_NAMES = ("GradScaler", "_amp_update_scale_", "_amp_foreach_non_finite_check_and_unscale_")


def find_delegation(source):
    """Return ``(line, what)`` for the first use of GradScaler or torch's private
    AMP ops in ``source`` (also as a string, e.g. via getattr), else None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # the import fails anyway and every test says so
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        text = None
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.alias):
            text = node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        if text is None:
            continue
        for name in _DELEGATION_NAMES:
            if name in text or text.startswith("_amp_"):
                return getattr(node, "lineno", 0), (name if name in text else text)
        if text in ("torch.cuda.amp", "torch.cpu.amp"):
            return getattr(node, "lineno", 0), text
    for node in ast.walk(tree):  # torch.cuda.amp / torch.cpu.amp as attribute chains
        if isinstance(node, ast.Attribute) and node.attr == "amp" and isinstance(node.value, ast.Attribute) \
                and node.value.attr in ("cuda", "cpu"):
            return node.lineno, f"torch.{node.value.attr}.amp"
    return None
