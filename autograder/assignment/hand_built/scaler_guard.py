"""Module 2 is built by hand: in the loss_scaler worker, PyTorch's own scaler
machinery refuses to run, whatever route student code takes to it.

Checked by behaviour, not by spelling (a static check is fooled by a name
built from strings or by an alias):

* every method of ``torch.amp.GradScaler`` and of every subclass of it (the
  deprecated ``torch.cuda.amp`` / ``torch.cpu.amp`` scalers) is replaced on the
  class object itself, so aliases, subclasses and objects found through ``gc``
  all reach the refusal;
* the private ``_amp_*`` operators are re-registered with the dispatcher for
  the CPU, so ``torch._amp_update_scale_``, ``torch._C._VariableFunctions``,
  ``torch.ops.aten`` and PyTorch's own Python code all land on the refusal.

Every refusal is recorded in :data:`SEEN`, which the worker returns with each
answer; the judge takes Module 2's points away and says why. Installed before
the student's module is imported.

All of that lives in the process it guards, and that process can rewrite its
own memory (torch hands out a storage over any address). What holds whatever
it rewrites: the CPU kernels behind the ``_amp_*`` operators are sealed
(:func:`sealed_code`, :mod:`autograder.sandbox.confine.code_seal`): their
first instructions end the box, on pages no file backs, and the box may make
no new executable memory. A module that reaches them, however, ends its box
with ``code_seal.EXIT_SEALED``, which the judge records as delegation.
"""
import ctypes
import functools
import gc
import glob
import os
import types
import warnings

import torch

from autograder.authoring import code_seal

SEEN = []
_MESSAGE = "loss_scaler.py must be built by hand: {what} is not available to it while grading"


class DelegationRefused(RuntimeError):
    pass


def _refusal(what):
    def refuse(*args, **kwargs):
        if what not in SEEN:
            SEEN.append(what)
        raise DelegationRefused(_MESSAGE.format(what=what))
    return refuse


def _scaler_classes():
    from torch.amp.grad_scaler import GradScaler

    found, stack = [], [GradScaler]
    while stack:
        cls = stack.pop()
        if cls not in found:
            found.append(cls)
            stack.extend(cls.__subclasses__())
    return found


def _disable_classes():
    for cls in _scaler_classes():
        name = f"{cls.__module__}.{cls.__qualname__}"
        for attribute, value in list(vars(cls).items()):
            if attribute in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__"):
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                setattr(cls, attribute, _refusal(f"{name}.{attribute}"))


def _private_names():
    """The ``_amp_*`` operators and their Python names. Listed where this module is
    imported (the zygote, before any box): listing them in each worker would read,
    and so copy, the name of every one of torch's few thousand operators."""
    operators = sorted({name.split("::", 1)[1] for name in torch._C._dispatch_get_all_op_names()
                        if name.startswith("aten::_amp_")})
    attributes = [(module, name) for module in (torch, torch._C._VariableFunctions)
                  for name in sorted(dir(module)) if name.startswith("_amp_")]
    return operators, attributes


_OPERATORS, _ATTRIBUTES = _private_names()


def _disable_operators():
    names = _OPERATORS
    # A bare dispatcher library, not a torch.library.Library: that one is a Python
    # object a gc walk finds and _destroy()s. This one is not tracked by the
    # collector, and once its last name is dropped (one leaked reference keeps it
    # alive) nothing in the interpreter leads back to it.
    library = torch._C._dispatch_library("IMPL", "aten", "", "scaler_guard", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        for name in names:
            for key in ("CPU", "CompositeExplicitAutograd"):
                try:
                    library.impl(name, key, _refusal(f"torch.{name.split('.')[0]}"), False)
                except (RuntimeError, ValueError):
                    pass
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    del library
    for module, name in _ATTRIBUTES:
        try:
            setattr(module, name, _refusal(f"torch.{name}"))
        except (AttributeError, TypeError):
            pass


@functools.cache
def _refusal_template(free_variables):
    """Code that calls a refusal held as its constant ``'_refusal_'``, with
    ``free_variables`` cells so that it can replace the code of a closure."""
    names = [f"_cell{index}" for index in range(free_variables)]
    source = ("def _outer():\n" + "".join(f"    {name} = None\n" for name in names)
              + "    def _refused(*args, **kwargs):\n"
              + (f"        ({', '.join(names)},)\n" if names else "")
              + "        return '_refusal_'(*args, **kwargs)\n    return _refused\n")
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "'str' object is not callable": it is replaced below
        exec(compile(source, "<scaler_guard>", "exec"), namespace)  # noqa: S102 - our own text
    return namespace["_outer"]().__code__


def _refusal_code(free_variables, what):
    """A code object that calls :func:`_refusal` (recorded, then raised), with
    ``free_variables`` cells so that it can replace the code of a closure. The
    refusal travels as a constant of the code: the function's own globals (those
    of PyTorch's module) are not needed."""
    code = _refusal_template(free_variables)
    refuse = _refusal(what)
    return code.replace(co_consts=tuple(refuse if const == "_refusal_" else const for const in code.co_consts))


def _reachable_from_modules(files):
    """Functions of the scaler modules that outlive the class methods replaced
    above: module-level helpers, other classes' methods, typing's overloads.
    Found by name, not through ``gc``: a forked worker's inherited heap is frozen
    (out of ``gc.get_objects()``'s reach, and walking it would copy every page)."""
    import sys
    import typing

    found = []
    package = os.path.dirname(torch.__file__)
    names = {"torch." + os.path.splitext(os.path.relpath(path, package))[0].replace(os.sep, ".")
             for path in files if path.startswith(package + os.sep)}
    # looked up by name: walking all of sys.modules would touch (and copy) every module's page
    modules = [sys.modules[name] for name in sorted(names) if name in sys.modules]
    for module in modules:
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                for candidate in (member, getattr(member, "__func__", None), getattr(member, "fget", None),
                                  getattr(member, "fset", None), getattr(member, "fdel", None)):
                    if isinstance(candidate, types.FunctionType):
                        found.append(candidate)
    registry = getattr(typing, "_overload_registry", {})
    for module in modules:
        for overloads in registry.get(module.__name__, {}).values():
            found += [item for item in overloads.values() if isinstance(item, types.FunctionType)]
    return found


def _compiled_from(files, functions):
    return [obj for obj in functions if obj.__code__.co_filename in files]


def _neutralise_originals():
    """Every function object compiled from PyTorch's scaler sources -- the
    methods replaced above are still reachable where anything else holds them --
    gets code that refuses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance() wakes deprecated lazy attributes
        if _PREPARED is not None:
            files, found = _PREPARED[0], list(_PREPARED[1])
        else:
            files = _source_forms()
            found = _compiled_from(files, _reachable_from_modules(files))
        # and those made since the zygote froze its heap (gc sees only them)
        found += _compiled_from(files, [obj for obj in gc.get_objects() if isinstance(obj, types.FunctionType)])
    for obj in found:
        try:
            obj.__code__ = _refusal_code(len(obj.__code__.co_freevars), f"{obj.__module__}.{obj.__qualname__}")
        except (ValueError, TypeError):
            pass


def _source_forms():
    """The scaler sources' paths as a code object names them (as imported, and real)."""
    return frozenset(form for path in source_files() if path.endswith(".py")
                     for form in (path, os.path.realpath(path)))


_PREPARED = None  # (source forms, functions compiled from them), found once by prepare()
_SOURCES = None
_SEALED = None    # the kernels' addresses, found once by prepare()
# The kernels behind the private operators: each operator's CPU entry point and what its
# dispatch table points to for each instruction set (DEFAULT, AVX2, AVX512, ...).
_KERNELS = rb"_amp_(?:update_scale|foreach_non_finite_check_and_unscale)_cpu_"
_KERNEL_ENTRIES = rb"_ZN2at6native\d+" + _KERNELS + rb"E"
_KERNEL_TABLES = _KERNELS + rb"stub_DECLARE_DISPATCH_type"
# Extension modules an honest module might import that torch has not loaded: in the
# sealed box no new compiled code can be mapped, so they are loaded beforehand.
_EXTENSIONS = ("decimal", "fractions", "statistics", "encodings.gbk", "encodings.gb18030",
               "encodings.big5", "encodings.hz", "encodings.gb2312")


def prepare():
    """(The zygote, once, after its imports) What every loss_scaler worker would look
    up again before its student code runs: the scaler sources on disk, the
    functions compiled from them that the modules hold, and the refusal code for
    each of their shapes. Nothing is changed here: the other workers keep the
    real GradScaler."""
    global _PREPARED, _SOURCES
    _SOURCES = tuple(_find_source_files())
    files = _source_forms()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        originals = _compiled_from(files, _reachable_from_modules(files))
    for obj in originals:
        _refusal_template(len(obj.__code__.co_freevars))
    _PREPARED = (files, originals)
    _prepare_seal()


def _prepare_seal():
    global _SEALED
    import importlib

    for name in _EXTENSIONS:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    library = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        _SEALED = code_seal.locate(library, _KERNEL_ENTRIES, _KERNEL_TABLES) if os.path.exists(library) else []
    except (OSError, ValueError, AttributeError):
        _SEALED = []  # the box reports that nothing could be sealed


def sealed_code():
    """What the loss_scaler box seals before its student code runs."""
    if _SEALED is None:
        _prepare_seal()
    return {"addresses": list(_SEALED), "what": "torch's _amp_* CPU kernels"}


def source_files():
    """PyTorch's scaler sources and their compiled caches: the loss_scaler box
    sees them empty, so no copy of GradScaler can be re-executed from disk."""
    return list(_SOURCES) if _SOURCES is not None else _find_source_files()


def _find_source_files():
    package = os.path.dirname(torch.__file__)
    found = []
    for folder in ("amp", "cuda/amp", "cpu/amp", "distributed/fsdp"):
        for pattern in ("*grad_scaler*.py", "__pycache__/*grad_scaler*.pyc"):
            found += glob.glob(os.path.join(package, folder, pattern))
    return sorted(found)


def install():
    _disable_classes()
    _disable_operators()
    _neutralise_originals()
