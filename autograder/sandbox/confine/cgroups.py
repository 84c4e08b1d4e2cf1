"""A control group per box, as root: one memory bound and one process bound for
everything the student's code starts, however many processes that is, and an
equal CPU share with a cap (``cpu.weight``/``cpu.max``, v1 ``cpu.shares`` and
the CFS quota), so that a box of busy processes cannot starve its neighbours.

Resource limits (rlimits) bound each process; twenty processes of a fork
bomb each under the address-space limit can still exhaust the machine. A
cgroup counts them together, and the kernel's OOM killer then picks only
among them. cgroup v2 (a unified hierarchy: box cgroups are made at its top,
where the controllers are enabled) or the v1 ``memory`` and ``pids``
hierarchies. Without root, or where neither is writable, the box goes on with
rlimits only and the isolation report says so.

A box's cgroup is named after the process that made it (``autograder-box-<pid>...``).
One whose maker was killed outright (a judge killed with SIGKILL takes its
zygote along) stays behind, empty: the next zygote removes those
(:func:`remove_stale`).

A keeper joins the cgroup before it forks the worker (so the worker is born
inside), steps back out once it has (its own CPU time is not the box's), and
removes it once the worker is dead -- through descriptors opened before it
entered the box's mount namespace, where every mount, /sys/fs/cgroup included,
becomes read-only. Where the zygote keeps the box itself
(:mod:`autograder.sandbox.supervisor`), the worker joins first thing, before it
starts anything, and the zygote removes the cgroup.

The cgroup also counts the CPU time of every process that ever ran in it, reaped
or not (:meth:`BoxCgroup.cpu_seconds`: v2 ``cpu.stat`` ``usage_usec``, kept by
every v2 cgroup; v1 ``cpuacct.usage``, from the ``cpuacct`` hierarchy, mounted
with ``cpu`` or on its own): what the judge charges a call
(:mod:`autograder.sandbox.call_clock`).
"""
import os
import time

ROOT = "/sys/fs/cgroup"
PREFIX = "autograder-box-"
STALE_AFTER_S = 60.0  # younger ones may be a live zygote's, made a moment before its worker joins


def _write(path, value):
    with open(path, "w") as handle:
        handle.write(str(value))


CPU_PERIOD_US = 100000
CPU_CAP = 1  # CPUs one box may use at most, whatever the machine's load


def _v2_controllers():
    try:
        with open(os.path.join(ROOT, "cgroup.subtree_control")) as control:
            return control.read().split()
    except OSError:
        return []


def _v2():
    enabled = _v2_controllers()
    return "memory" in enabled and "pids" in enabled


class BoxCgroup:
    def __init__(self, name, memory_bytes, max_pids):
        self.name = name
        self.paths = []
        self.kind = None
        self.cpu = None  # what shares the CPU out, when a controller could
        self.accounting = None  # the file that counts the box's CPU time, where there is one
        if _v2():
            path = os.path.join(ROOT, name)
            os.mkdir(path)
            self.paths.append(path)
            self.kind = "cgroup v2"
            self.accounting = os.path.join(path, "cpu.stat")  # a core file: no controller needed
            _write(os.path.join(path, "memory.max"), memory_bytes)
            if os.path.exists(os.path.join(path, "memory.swap.max")):
                _write(os.path.join(path, "memory.swap.max"), 0)
            _write(os.path.join(path, "pids.max"), max_pids)
            if "cpu" in _v2_controllers():
                try:  # every box the same weight, and a cap
                    _write(os.path.join(path, "cpu.weight"), 100)
                    _write(os.path.join(path, "cpu.max"), f"{CPU_CAP * CPU_PERIOD_US} {CPU_PERIOD_US}")
                    self.cpu = f"cgroup v2: an equal CPU share (cpu.weight 100), at most {CPU_CAP} CPU"
                except OSError:
                    pass
        else:
            memory, pids = os.path.join(ROOT, "memory", name), os.path.join(ROOT, "pids", name)
            os.mkdir(memory)
            self.paths.append(memory)
            os.mkdir(pids)
            self.paths.append(pids)
            self.kind = "cgroup v1"
            _write(os.path.join(memory, "memory.limit_in_bytes"), memory_bytes)
            _write(os.path.join(pids, "pids.max"), max_pids)
            self._v1_cpu(name)
            self._v1_accounting(name)

    def _v1_cpu(self, name):
        cpu = os.path.join(ROOT, "cpu", name)
        try:
            os.mkdir(cpu)
        except OSError:
            return  # no cpu hierarchy: the report says there is no share
        self.paths.append(cpu)
        try:
            _write(os.path.join(cpu, "cpu.shares"), 1024)
            _write(os.path.join(cpu, "cpu.cfs_period_us"), CPU_PERIOD_US)
            _write(os.path.join(cpu, "cpu.cfs_quota_us"), CPU_CAP * CPU_PERIOD_US)
            self.cpu = f"cgroup v1: an equal CPU share (cpu.shares 1024), at most {CPU_CAP} CPU"
        except OSError:
            pass

    def _v1_accounting(self, name):
        """``cpuacct.usage``: in the cpu cgroup where the two are mounted together, else
        in a cgroup of the ``cpuacct`` hierarchy of its own (none: the clock falls back)."""
        together = os.path.join(ROOT, "cpu", name, "cpuacct.usage")
        if os.path.exists(together):
            self.accounting = together
            return
        cpuacct = os.path.join(ROOT, "cpuacct", name)
        try:
            os.mkdir(cpuacct)
        except OSError:
            return
        self.paths.append(cpuacct)
        self.accounting = os.path.join(cpuacct, "cpuacct.usage")

    def join(self, pid=0):
        # Opened now, used at the end (see the module's docstring).
        self.parents = [os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY) for path in self.paths]
        self.leave = [os.open(os.path.join(os.path.dirname(path), "cgroup.procs"), os.O_WRONLY)
                      for path in self.paths]
        for path in self.paths:
            _write(os.path.join(path, "cgroup.procs"), pid or os.getpid())
        self.watch()

    def step_out(self):
        """(A keeper, once the worker is born inside) Back to the parent cgroups: what
        the keeper itself spends is not the box's."""
        for leave in getattr(self, "leave", []):
            try:
                os.write(leave, str(os.getpid()).encode())
            except OSError:
                pass

    def join_self(self):
        """(A worker forked outside the cgroup) Move this process in, first thing."""
        for path in self.paths:
            _write(os.path.join(path, "cgroup.procs"), 0)  # 0: the writing process

    def watch(self):
        """(The zygote, which never joins; a keeper once it joined) Keep the box's process
        list and its CPU count at hand."""
        self._members = os.open(self.paths[0], os.O_RDONLY | os.O_DIRECTORY)
        if self.accounting is not None:
            self._accounting = os.open(os.path.dirname(self.accounting), os.O_RDONLY | os.O_DIRECTORY)

    def cpu_seconds(self):
        """CPU time of every process that ever ran in the box, however it ended and
        whoever reaped it (the kernel's own count); None where there is none."""
        try:
            handle = os.open(os.path.basename(self.accounting), os.O_RDONLY, dir_fd=self._accounting)
            try:
                text = os.read(handle, 4096)
            finally:
                os.close(handle)
            if self.kind == "cgroup v2":  # "usage_usec N" first, then user, system...
                return int(dict(line.split() for line in text.decode().splitlines())["usage_usec"]) / 1e6
            return int(text) / 1e9
        except (AttributeError, TypeError, OSError, ValueError, KeyError):
            return None

    def members(self):
        """The box's processes now, read from its cgroup (no walk of /proc), or None.
        The caller -- the keeper, which joined it first -- is left out. The list is
        opened anew each time: cgroup v1 keeps the list an open file first read, and
        one read again from its start every few tenths of a second never refreshes,
        so the processes the worker started later would go uncounted."""
        try:
            procs = os.open("cgroup.procs", os.O_RDONLY, dir_fd=self._members)
            try:
                pids = [int(pid) for pid in os.read(procs, 1 << 20).split()]
            finally:
                os.close(procs)
        except (AttributeError, OSError, ValueError):
            return None
        return [pid for pid in pids if pid != os.getpid()]

    def leave_and_remove(self):
        """Back to the parent cgroup, then remove ours (empty once the worker is dead)."""
        for leave, parent in zip(getattr(self, "leave", []), getattr(self, "parents", [])):
            try:
                os.write(leave, str(os.getpid()).encode())
            except OSError:
                pass
            try:
                os.rmdir(self.name, dir_fd=parent)
            except OSError:
                pass
            for fd in (leave, parent):
                os.close(fd)
        for held in ("_members", "_accounting"):
            if hasattr(self, held):
                os.close(getattr(self, held))
                delattr(self, held)
        if not hasattr(self, "parents"):
            for path in self.paths:
                try:
                    os.rmdir(path)
                except OSError:
                    pass


def hierarchies(root=ROOT):
    """Where a box's cgroup may be: the v2 tree, or the v1 memory, pids, cpu and cpuacct hierarchies."""
    return [root] + [os.path.join(root, controller) for controller in ("memory", "pids", "cpu", "cpuacct")]


def box_cgroup(name, memory_bytes, max_pids, join=True):
    """``(cgroup or None, problem or None)``; ``join``: move this process in (a keeper)."""
    if os.geteuid() != 0:
        return None, "cgroups: not root (memory bounded per process only)"
    try:
        cgroup = BoxCgroup(name, memory_bytes, max_pids)
    except OSError as exc:
        for leftover in (os.path.join(hierarchy, name) for hierarchy in hierarchies()):
            try:
                os.rmdir(leftover)
            except OSError:
                pass
        return None, f"cgroups: {exc.strerror or exc} (memory bounded per process only)"
    try:
        if join:
            cgroup.join()
    except OSError as exc:
        cgroup.leave_and_remove()
        return None, f"cgroups: {exc.strerror or exc} (memory bounded per process only)"
    return cgroup, None


def _maker_alive(name):
    """Whether the process named in ``autograder-box-<pid>[-...]`` still exists (True if unsure)."""
    try:
        pid = int(name[len(PREFIX):].split("-")[0])
        os.kill(pid, 0)
    except ValueError:
        return True
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's: alive
        return True
    return True


def remove_stale(now=None, root=ROOT):
    """(Root, once per zygote) Remove the box cgroups whose maker is gone and that are
    over :data:`STALE_AFTER_S` old. The kernel refuses to remove one that still holds
    a process (or a child cgroup), so a live box's is never touched. Returns the paths removed."""
    now = time.time() if now is None else now
    removed = []
    for hierarchy in hierarchies(root):
        try:
            names = [name for name in os.listdir(hierarchy) if name.startswith(PREFIX)]
        except OSError:
            continue
        for name in names:
            path = os.path.join(hierarchy, name)
            try:
                if now - os.stat(path).st_mtime < STALE_AFTER_S or _maker_alive(name):
                    continue
                os.rmdir(path)
            except OSError:
                continue
            removed.append(path)
    return removed
