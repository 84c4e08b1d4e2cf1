"""What the judge asks of one box: a typed, immutable configuration.

The judge builds it once per box (:func:`for_module`)
and sends it to the zygote as plain data (:meth:`BoxConfig.to_wire`, read back
by :meth:`BoxConfig.from_wire`); every layer of the box
(:mod:`autograder.sandbox.confine.layers`) reads it and none changes it. A
variant is derived with :func:`dataclasses.replace`: the CPUs a batch's grading
process runs on (``cpus``), a probe box (``probe``), what the module's guard
asks of its box (``emptied``, ``sealed``: the worker adds them, from the guard
the zygote loaded).
"""
import dataclasses
import os

# Layers a test may switch off to see the degraded paths (AUTOGRADER_SANDBOX_DISABLE).
DISABLEABLE = ("namespaces", "landlock", "cgroups", "minimal_root", "seccomp")


@dataclasses.dataclass(frozen=True)
class BoxLimits:
    """What one box may use (see :class:`autograder.sandbox.client.Limits`)."""
    memory_bytes: int    # address space on top of what the worker maps when it is confined
    cpu_seconds: int     # per process
    max_processes: int
    max_file_bytes: int  # one file (the log included)
    scratch_bytes: int   # the box's only writable folder, a tmpfs
    max_open_files: int | None = None  # on top of those open when it is confined


@dataclasses.dataclass(frozen=True)
class SealRequest:
    """Machine code a module's guard takes out of its box's reach (:mod:`code_seal`)."""
    what: str                   # for the report: "torch's ... kernels"
    addresses: tuple[int, ...]  # each function's first instruction in this process


@dataclasses.dataclass(frozen=True)
class BoxConfig:
    """One box: where its files are, who runs it, what it may use."""
    submission: str   # a folder holding only the student's module (a copy)
    scratch: str      # where the box's scratch tmpfs is mounted (outside a minimal root)
    log: str          # the box's stdout and stderr
    module: str       # the module it imports and serves
    limits: BoxLimits
    uid: int | None = None   # as root: the student's uid of its own (None: the grading user's)
    gid: int | None = None
    hide: tuple[str, ...] = ()       # folders covered where no minimal root can be built
    forbidden: tuple[str, ...] = ()  # folders no path of the box may contain (the grader)
    disable: frozenset[str] = frozenset()  # a test's switched-off layers (DISABLEABLE)
    probe: bool = False                    # report what held, run no student code
    cpus: tuple[int, ...] | None = None    # CPUs to run on (speed only; None: any)
    emptied: tuple[str, ...] = ()          # files the box sees empty (the guard's sources)
    sealed: SealRequest | None = None      # code sealed before the module is imported

    def __post_init__(self):
        for name in ("submission", "scratch", "log", "module"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"box config: {name} must be text")
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"box config: {name} must be a user or group id")
        if not isinstance(self.limits, BoxLimits):
            raise ValueError("box config: limits must be BoxLimits")
        unknown = set(self.disable) - set(DISABLEABLE)
        if unknown:
            raise ValueError(f"box config: no layer to disable named {sorted(unknown)}")

    @property
    def as_root(self):
        """The judge runs as root and picked a uid for the student."""
        return self.uid is not None

    def disabled(self, layer):
        """Whether a test switched ``layer`` (one of :data:`DISABLEABLE`) off."""
        return layer in self.disable

    def to_wire(self):
        """Plain data for the zygote (JSON)."""
        data = dataclasses.asdict(self)
        data["disable"] = sorted(self.disable)
        return data

    @classmethod
    def from_wire(cls, data):
        """The configuration :meth:`to_wire` wrote; ValueError when ``data`` is not one."""
        if not isinstance(data, dict):
            raise ValueError("box config: not an object")
        unknown = set(data) - {field.name for field in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"box config: unknown keys {sorted(unknown)}")
        try:
            limits = data["limits"]
            sealed = data.get("sealed")
            cpus = data.get("cpus")
            return cls(**dict(
                data,
                limits=BoxLimits(**{key: _whole(value, key) for key, value in limits.items()}),
                hide=tuple(data.get("hide") or ()), forbidden=tuple(data.get("forbidden") or ()),
                disable=frozenset(data.get("disable") or ()),
                cpus=None if cpus is None else tuple(cpu for cpu in cpus if type(cpu) is int),
                emptied=tuple(data.get("emptied") or ()),
                sealed=SealRequest(str(sealed["what"]), tuple(_whole(address, "address")
                                                              for address in sealed["addresses"]))
                if sealed else None))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"box config: {type(exc).__name__}: {exc}") from None


def _whole(value, name):
    if value is not None and type(value) is not int:
        raise ValueError(f"box config: {name} must be a whole number")
    return value


def for_module(spec, module, limits, **extra):
    """The configuration of ``module``'s box: its files as the intake took them
    (``spec``: :func:`autograder.intake.submission.take`), its ``limits``
    (:class:`BoxLimits`); ``extra``: other fields (``probe``)."""
    return BoxConfig(submission=spec.get("submission"), scratch=spec.get("scratch"), log=spec.get("log"),
                     module=module, limits=limits, uid=spec.get("uid"), gid=spec.get("gid"),
                     hide=tuple(spec.get("hide") or ()), forbidden=tuple(spec.get("forbidden") or ()),
                     disable=disabled_by_environment(), **extra)


def disabled_by_environment():
    """Layers switched off to test the degraded paths
    (``AUTOGRADER_SANDBOX_DISABLE=namespaces,landlock,cgroups,minimal_root,seccomp``); never for real grading."""
    return frozenset(name.strip() for name in os.environ.get("AUTOGRADER_SANDBOX_DISABLE", "").split(",")
                     if name.strip() in DISABLEABLE)
