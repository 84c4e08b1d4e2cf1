"""A box's confinement: its layers, one line each, in the order they must run,
and the loop that applies them before the first line of student code.

Each layer applies one mechanism and reports what held
(:mod:`autograder.sandbox.confine.layers.result`); none raises for what the
machine refuses, and none decides whether the box is confined: the verdict is
drawn from the results (:func:`autograder.sandbox.isolation.box_report`).
docs/sandbox.md has the same table with the reason for each place.
"""
import dataclasses
from collections.abc import Callable

from autograder.sandbox.confine.layers import (cgroup, landlock, namespaces, privileges, process, readable,
                                               rlimits, root, seal, syscall_filter)
from autograder.sandbox.confine.layers.result import Status


@dataclasses.dataclass(frozen=True)
class Layer:
    name: str
    apply: Callable | None  # apply(box) -> LayerResult; None: the box's maker applies it before the fork


LAYERS = (
    # By the box's maker, before it forks the worker (sandbox/box.py, sandbox/supervisor.py):
    Layer(cgroup.LAYER, None),          # first: nothing of the box is ever outside it
    Layer(namespaces.LAYER, None),      # a PID namespace holds only children forked after it
    # In the worker (confine below):
    Layer("cpu affinity", process.cpu_affinity),      # speed only, before anything else runs
    Layer("descriptors", process.descriptors),        # nothing of the zygote's or keeper's stays open
    Layer("private mounts", root.private_mounts),     # before any mount: none leaks out or in
    Layer("minimal root", root.minimal),              # mounts need the privileges the uid change drops
    Layer("read-only tree", root.read_only_tree),     # only where the minimal root failed
    Layer("own uid", privileges.own_uid),             # after the mounts; no groups, then the uid
    Layer("capabilities", privileges.capabilities),   # without root: none left in the user namespace
    Layer("rlimits", rlimits.rlimits),                # after the uid: its process count starts at zero
    Layer("code seal", seal.seal),                    # before Landlock and the filter that keep it sealed
    Layer("Landlock", landlock.landlock),             # after the mounts and the seal, which it would forbid
    Layer("syscall filter", syscall_filter.syscall_filter),  # last: refuses what every layer above uses
)
BEFORE_FORK = tuple(layer.name for layer in LAYERS if layer.apply is None)


class Box:
    """The box being confined: its configuration, the results so far (the maker's
    first), the descriptors it keeps (its channel, log and report pipe), and the
    interpreter's folders it may read (found once, before any mount)."""

    def __init__(self, config, results=(), keep_fds=(), interpreter=None):
        self.config = config
        self.results = list(results)
        self.keep_fds = frozenset(keep_fds)
        self.interpreter = readable.interpreter_paths(config.forbidden) if interpreter is None else interpreter

    def result(self, layer):
        """The result of ``layer`` (None when it has not run)."""
        return next((result for result in self.results if result.layer == layer), None)

    def held(self, layer):
        result = self.result(layer)
        return result is not None and result.held

    def fact(self, layer, name, default=None):
        result = self.result(layer)
        return default if result is None else result.fact(name, default)

    @property
    def submission(self):
        """Where the box sees the student's module folder (inside a minimal root, its own path)."""
        return self.fact("minimal root", "submission", self.config.submission)

    @property
    def scratch(self):
        return self.fact("minimal root", "scratch_path", self.config.scratch)


def confine(config, made, keep_fds=()):
    """Apply the worker's layers after ``made`` (the maker's results, in
    :data:`BEFORE_FORK`'s order); stops at a layer that refuses. Returns the
    :class:`Box`, whose ``results`` the verdict reads."""
    if tuple(result.layer for result in made) != BEFORE_FORK:
        raise ValueError(f"the maker's layers are {BEFORE_FORK}, not {[result.layer for result in made]}")
    box = Box(config, made, keep_fds)
    for layer in LAYERS[len(BEFORE_FORK):]:
        result = layer.apply(box)
        box.results.append(result)
        if result.status is Status.REFUSED:
            break
    return box
