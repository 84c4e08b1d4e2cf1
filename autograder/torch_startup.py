"""Starting torch for grading without paying for its compiler.

Creating any ``torch.optim`` optimizer imports ``torch._dynamo`` (the
``torch.compile`` front end): its methods are wrapped with
``torch._disable_dynamo``, which imports the package on first call to ask it
for a "disabled" version of the method, and ``step`` calls
``torch._dynamo.graph_break()``. On the CPU build that import costs about as
much as ``import torch`` itself, and grading never compiles anything.

:func:`install` puts a stand-in for ``torch._dynamo`` in ``sys.modules`` that
answers those two calls the way eager mode does (the function itself, nothing
to break) and loads the real package the moment anything else is asked of it:
any other attribute, or any import of a ``torch._dynamo.*`` submodule. Code that
does use ``torch.compile`` (student code may) therefore gets the real thing,
only later. ``tests/engine/judging/test_torch_startup.py`` pins the behaviour for the torch in
requirements.txt.
"""
import importlib
import os
import sys
import types

NAME = "torch._dynamo"


class _Standin(types.ModuleType):
    """``torch._dynamo`` until something needs more than eager mode's answers."""

    def __getattr__(self, name):
        if name.startswith("__"):  # import machinery probing (__path__, __spec__...)
            raise AttributeError(name)
        return getattr(load_real(), name)


def _disable(fn=None, recursive=True, wrapping=True, reason=None):
    """Eager mode's ``torch._dynamo.disable``: nothing is compiled, so nothing to turn off."""
    return fn if fn is not None else (lambda function: function)


def _graph_break():
    return None


class _RealOnSubmodule:
    """Meta-path hook: importing ``torch._dynamo.<anything>`` loads the real package first."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(NAME + ".") and isinstance(sys.modules.get(NAME), _Standin):
            load_real()
        return None


def load_real():
    """Replace the stand-in by the real ``torch._dynamo`` (imported now) and return it."""
    import torch

    current = sys.modules.get(NAME)
    if isinstance(current, _Standin):
        del sys.modules[NAME]
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _RealOnSubmodule)]
    real = importlib.import_module(NAME)
    torch._dynamo = real
    return real


def install():
    """Import torch with the stand-in in place; True when it was installed (not when the
    real package was already imported, e.g. by code that ran before)."""
    import torch

    if NAME in sys.modules:
        return False
    standin = _Standin(NAME, "eager-mode stand-in for torch._dynamo (autograder.torch_startup)")
    standin.disable = _disable
    standin.graph_break = _graph_break
    # A package's path, so that importing a submodule reaches the meta-path hook below
    # (which swaps the real package in) instead of failing with "not a package".
    standin.__path__ = [os.path.join(os.path.dirname(torch.__file__), "_dynamo")]
    sys.modules[NAME] = standin
    torch._dynamo = standin
    sys.meta_path.insert(0, _RealOnSubmodule())
    return True


def installed():
    return isinstance(sys.modules.get(NAME), _Standin)
