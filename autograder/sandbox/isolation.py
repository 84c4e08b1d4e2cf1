"""What confined a submission: each box's report, drawn from its layers'
results, the reports of many boxes combined into one, and what a box would get
on this machine (a probe box that runs no student code).

The verdict is made here and only here, apart from the mechanisms: a box's
worker applies its layers (:func:`autograder.sandbox.confine.confinement.confine`)
and writes :func:`box_report` of their results; a grade shows the weakest: it
is ``confined`` only when every box was. A box can be ``confined`` with a layer
missing (a minimal root stands in for the syscall filter's refusal of pathname
sockets, Landlock's TCP rule for a network namespace): the combined report then
names it in ``missing_layers``, and every summary of it says so, never a bare
"confined".
"""
import sys

from autograder import active_assignment
from autograder.sandbox.confine import limits as rlimit_words, namespaces
from autograder.sandbox.confine.layers.result import Status

KEYS = ("root", "fs", "syscalls", "network", "signals", "process_namespace", "uid", "scratch", "memory", "cpu")
MAX_PROBLEMS = 12
# (layer, the report's key, whether its value shows the layer held); a key a
# report lacks (another platform, an older grader) is not judged.
LAYERS = (
    ("minimal root", "root", lambda value: str(value).startswith("minimal")),
    ("Landlock", "fs", lambda value: str(value).startswith("Landlock")),
    ("syscall filter", "syscalls", lambda value: str(value).startswith("seccomp")),
    ("network namespace", "network", lambda value: str(value).startswith("none")),
    ("process namespace", "process_namespace", lambda value: value is True),
    ("cgroup", "memory", lambda value: str(value).startswith("cgroup")),
)


def box_report(results):
    """One box's report from its layers' results (``LayerResult``, in the order they
    ran): what held, in words a TA reads, and whether the box is ``confined``."""
    by_name = {result.layer: result for result in results}

    def held(layer):
        return layer in by_name and by_name[layer].held

    def fact(layer, name, default=None):
        return by_name[layer].fact(name, default) if layer in by_name else default

    flags = fact("namespaces", "flags", 0)
    own_mounts, own_net = bool(flags & namespaces.CLONE_NEWNS), bool(flags & namespaces.CLONE_NEWNET)
    own_pids = bool(flags & namespaces.CLONE_NEWPID)
    report = {"clean_process": True, "platform": sys.platform, "process_namespace": own_pids,
              "memory": fact("cgroup", "memory") or "per process (rlimit)"}
    minimal = held("minimal root")
    report["root"] = (by_name["minimal root"].words if minimal
                      else "the machine's, read-only" if own_mounts else "the machine's")
    if held("own uid"):
        report["uid"] = by_name["own uid"].words
    elif "own uid" in by_name and by_name["own uid"].status is Status.NOT_AVAILABLE:
        report["uid"] = f"the grading user's uid {fact('own uid', 'uid')}" + \
            (" (no capabilities)" if held("capabilities") else "")
    problems = [problem for result in results for problem in result.problems]
    if any(result.status is Status.REFUSED for result in results):
        report.update(refused=True, confined=False, problems=problems)
        return report
    sealed, fs_confined, filtered = held("code seal"), held("Landlock"), held("syscall filter")
    if sealed:  # what a box that ends with code_seal.EXIT_SEALED reached
        report["sealed"] = fact("code seal", "what")
    report["fs"] = (by_name["Landlock"].words if fs_confined else "minimal root, read-only" if minimal
                    else "read-only mounts, grader folders hidden" if own_mounts else "none")
    report["syscalls"] = by_name["syscall filter"].words if filtered else "not filtered"
    if filtered and sealed:
        report["syscalls"] += f"; sealed: {by_name['code seal'].words}"
    if sealed and not (filtered and fs_confined):  # new executable memory, or /proc/<pid>/mem, could undo it
        problems.append("code seal: " + ("no syscall filter" if not filtered else "no Landlock") +
                        " here, so the sealed code could be written back")
    abi = fact("Landlock", "abi", 0) if fs_confined else 0
    as_root = held("own uid")
    net_blocked = own_net or abi >= 4
    report["network"] = ("none (empty network namespace)" if own_net
                         else "TCP blocked (Landlock)" if net_blocked else "open")
    signals_scoped = own_pids or abi >= 6 or as_root
    report["signals"] = ("own process namespace" if own_pids else "Landlock scope" if abi >= 6
                         else "uid of its own" if as_root else "open")
    lim = fact("rlimits", "limits")
    scratch_mounted = fact("minimal root", "scratch", False) or fact("read-only tree", "scratch", False)
    report["scratch"] = (f"tmpfs, {lim.scratch_bytes // 2**20} MiB" if scratch_mounted
                         else "none (nothing writable)" if fs_confined else "unbounded folder")
    report["scratch_writable"] = scratch_mounted or not fs_confined
    # Confined: nothing outside its box readable or writable, no network, no
    # signal leaving the box, and everything it starts dies with it.
    # No pathname socket reachable: none visible (minimal root) or none creatable (filter).
    report["confined"] = bool(fs_confined and net_blocked and signals_scoped and own_pids
                              and (minimal or filtered))
    report["memory"] = fact("cgroup", "memory") or memory_words(lim, filtered, own_mounts)
    report["cpu"] = fact("cgroup", "cpu") or (f"{lim.cpu_seconds} s of CPU per process, "
                                              f"lower priority (nice {fact('rlimits', 'nice')}); no share of its own")
    report["problems"] = problems
    return report


def memory_words(lim, filtered, no_shm):
    """What bounds a box's memory without a cgroup (``lim``: its ``BoxLimits``), in
    words a TA reads without a manual; what does not hold is said too."""
    words = [f"each process at most {lim.memory_bytes // 2**20} MiB of address space, at most "
             f"{lim.max_processes} processes (no cgroup: the box's total is not one number)"]
    held = [f"{lim.scratch_bytes // 2**20} MiB scratch"]
    if filtered:
        held.append("memfd, System V and POSIX IPC, socket pairs, epoll, inotify, splice and record locks refused, "
                    "pipes at 64 KiB")
    if no_shm:
        held.append("no /dev/shm")
    if lim.max_open_files:
        held.append(f"{lim.max_open_files} more open files")
    held.append(f"{rlimit_words.PENDING_SIGNALS} pending signals and timers")
    words.append(", ".join(held))
    if not filtered:
        words.append("NOT bounded (no syscall filter): memfd, System V shared memory and message queues, "
                     "socket buffers, record locks")
    return "; ".join(words)


def missing_layers(report):
    """The layers ``report`` (one box's) shows as absent, in ``LAYERS``' order."""
    return [layer for layer, key, held in LAYERS if key in report and not held(report[key])]


def combine(reports):
    """One report from many (``{}`` when no student code ran)."""
    reports = [report for report in reports if isinstance(report, dict) and report]
    if not reports:
        return {}
    combined = {"confined": all(report.get("confined") is True for report in reports),
                "clean_process": all(report.get("clean_process") is True for report in reports)}
    for key in KEYS:
        values = []
        for report in reports:
            value = report.get(key)
            if value not in values:
                values.append(value)
        if all(isinstance(value, bool) for value in values):
            combined[key] = all(values)
        else:
            combined[key] = " / ".join(str(value) for value in values)
    problems = []
    for report in reports:
        for problem in report.get("problems") or []:
            if problem not in problems:
                problems.append(str(problem)[:300])
    combined["problems"] = problems[:MAX_PROBLEMS]
    missing = {layer for report in reports for layer in missing_layers(report)}
    combined["missing_layers"] = [layer for layer, _key, _held in LAYERS if layer in missing]
    return combined


def summary(report):
    """One line for people: what held, or why the code ran unconfined."""
    if not report:
        return "no student code ran"
    parts = [f"{key}: {report.get(key)}" for key in KEYS if key in report]
    missing = report.get("missing_layers")
    if missing is None:  # one box's report, or one from before the list existed
        missing = missing_layers(report)
    head = "NOT CONFINED" if not report.get("confined") else \
        f"confined, but without: {', '.join(missing)}" if missing else "confined"
    return f"{head} ({'; '.join(parts)})"


def probe_isolation(boxes, limits):
    """What a box would get on this machine, found by starting one that runs no
    student code (grade-many asks before grading a class)."""
    return start_probe(boxes, limits).result()


class _Probe:
    """A probe box asked for: it confines itself while the caller goes on."""

    def __init__(self, boxes, limits):
        import tempfile

        from autograder.intake import submission
        from autograder.sandbox import uids
        from autograder.sandbox.confine import platforms
        # Here, not at the top: the reports read this module's layer names and
        # need nothing that makes a box (a class report must not load torch).
        from autograder.sandbox.confine.box_config import for_module

        self._area = self._box = self._report = self._error = None
        self._boxes = boxes
        try:
            self._area = tempfile.TemporaryDirectory(prefix="autograder-probe-")
            uid = uids.allocate(1)[0]
            area = self._area.name
            specs, _ = submission.take(area, area, uid, uid)  # an empty submission: nothing to read
            first = active_assignment.current().modules[0]
            config = for_module(specs[first], first, limits.for_box(), probe=True)
            if not hasattr(boxes, "request_box"):  # spawned workers (macOS, Windows): what the platform gives
                self._report = platforms.wrap_command([], config)[1]
            else:
                self._box = boxes.request_box(config)
        except Exception as exc:  # noqa: BLE001 - given back by result()
            self._error = exc

    def result(self):
        """The probe box's isolation report (raises what starting it raised)."""
        try:
            if self._error is not None:
                raise self._error
            if self._box is not None:
                box, self._box = self._box, None
                box = self._boxes.finish_box(box, 60.0)
                box.close()
                self._report = box.isolation
            return self._report
        finally:
            self.close()

    def close(self):
        if self._box is not None:
            self._box.close()
            self._box = None
        if self._area is not None:
            self._area.cleanup()


def start_probe(boxes, limits):
    """Ask for a probe box now; :meth:`_Probe.result` waits for its report."""
    return _Probe(boxes, limits)
