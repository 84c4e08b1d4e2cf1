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
"""
import warnings

import torch

SEEN = []
_KEEP = []  # the dispatcher overrides live as long as the worker


class DelegationRefused(RuntimeError):
    pass


def _refusal(what):
    def refuse(*args, **kwargs):
        if what not in SEEN:
            SEEN.append(what)
        raise DelegationRefused(
            f"loss_scaler.py must be built by hand: {what} is not available to it while grading")
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


def _disable_operators():
    names = sorted({name.split("::", 1)[1] for name in torch._C._dispatch_get_all_op_names()
                    if name.startswith("aten::_amp_")})
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        for name in names:
            for key in ("CPU", "CompositeExplicitAutograd"):
                try:
                    library.impl(name, _refusal(f"torch.{name.split('.')[0]}"), key)
                except (RuntimeError, ValueError):
                    pass
    _KEEP.append(library)
    for module in (torch, torch._C._VariableFunctions):
        for name in list(dir(module)):
            if name.startswith("_amp_"):
                try:
                    setattr(module, name, _refusal(f"torch.{name}"))
                except (AttributeError, TypeError):
                    pass


def source_files():
    """PyTorch's scaler sources and their compiled caches: the loss_scaler box
    sees them empty, so no copy of GradScaler can be re-executed from disk."""
    import glob
    import os

    package = os.path.dirname(torch.__file__)
    found = []
    for folder in ("amp", "cuda/amp", "cpu/amp", "distributed/fsdp"):
        for pattern in ("*grad_scaler*.py", "__pycache__/*grad_scaler*.pyc"):
            found += glob.glob(os.path.join(package, folder, pattern))
    return sorted(found)


def install():
    _disable_classes()
    _disable_operators()
