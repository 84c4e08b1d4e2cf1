"""The worker's confinement, layer by layer, before the first line of student code.

Called by the worker (:func:`autograder.sandbox.box.worker_main`) in its fresh
namespaces; each layer reports what it achieved instead of raising, and
:func:`confine` returns the isolation report:

1. the root: a minimal tree built for the box (:mod:`minimal_root`), or where
   that fails the machine's, read-only, with the grader's folders covered;
2. privileges: the student's own uid without supplementary groups (as root),
   or no capabilities (in a user namespace);
3. resource limits (memory, CPU time, processes, file size, open files);
4. Landlock: read-only access to the interpreter and its own module, write
   access to its scratch only, no TCP, no signals or abstract sockets leaving;
5. where the module's guard asks for it, its machine code sealed (:mod:`code_seal`);
6. the syscall filter (:mod:`syscall_filter`): no new sockets, memfd, IPC,
   ptrace, mounts or namespaces (and, after a seal, no new executable memory).
"""
import os
import sys

from autograder.sandbox.confine import code_seal, landlock, limits, minimal_root, namespaces, syscall_filter

SYSTEM_READ_ONLY = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
                    "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime",
                    "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
NICE = 10  # without a cgroup: a box's processes yield to the judge and to honest neighbours

def interpreter_paths(forbidden):
    """Folders the interpreter reads modules from, none of which contains a
    ``forbidden`` folder (the grader): an entry that does is replaced by its
    other children."""
    candidates = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates += [entry for entry in sys.path if entry]
    try:
        import site
        candidates += site.getsitepackages()
        if site.ENABLE_USER_SITE:
            candidates.append(site.getusersitepackages())
    except Exception:  # noqa: BLE001 - a broken site module costs only these paths
        pass
    paths = []
    for candidate in candidates:
        candidate = os.path.realpath(candidate)
        if candidate == os.path.dirname(candidate):
            continue  # never the whole file system, whatever sys.path says
        if os.path.exists(candidate):
            for path in _carve(candidate, [os.path.realpath(f) for f in forbidden]):
                if path not in paths:
                    paths.append(path)
    return paths


def _carve(path, forbidden):
    inside = [f for f in forbidden if f == path or f.startswith(path.rstrip(os.sep) + os.sep)]
    if not inside:
        return [path]
    if path in inside or not os.path.isdir(path):
        return []
    kept = []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    for name in names:
        kept += _carve(os.path.join(path, name), inside)
    return kept


def _whole_tree_read_only(config, interpreter, own_pids, problems):
    """Where no minimal root could be built: the machine's tree, read-only, the
    grader's folders covered. Returns ``(proc_mounted, scratch_mounted)``."""
    uid, gid, scratch = config.get("uid"), config.get("gid"), config["scratch"]
    proc_mounted = False
    try:
        if uid is not None:
            namespaces.mount("tmpfs", scratch, "tmpfs", 0, "size=1m,mode=0700")
            try:
                namespaces.expose_for_others(interpreter + [config["submission"]], scratch, uid, gid)
            finally:
                namespaces.unmount(scratch)
        for path in config.get("hide", []):
            if os.path.isdir(path):
                try:
                    namespaces.cover(path)
                except OSError as exc:
                    problems.append(f"cover {path}: {exc.strerror}")
        if own_pids:
            try:
                namespaces.mount_proc()
                proc_mounted = True
            except OSError as exc:
                problems.append(f"/proc of its own: {exc.strerror}")
        namespaces.read_only_everything()
        namespaces.mount_scratch(scratch, config["limits"]["scratch_bytes"],
                                 uid if uid is not None else os.geteuid(),
                                 gid if gid is not None else os.getegid())
        return proc_mounted, True
    except OSError as exc:
        problems.append(f"mounts: {exc}")
        return proc_mounted, False


def confine(config, flags, problems):
    """Apply every layer this machine allows; returns the isolation report."""
    problems = list(problems)
    uid, gid = config.get("uid"), config.get("gid")
    as_root = uid is not None  # the judge runs as root and picked a uid for the student
    linux = sys.platform.startswith("linux")
    own_mounts = bool(flags & namespaces.CLONE_NEWNS)
    own_pids = bool(flags & namespaces.CLONE_NEWPID) and os.getpid() == 1
    own_net = bool(flags & namespaces.CLONE_NEWNET)
    scratch = config["scratch"]
    report = {"clean_process": True, "platform": sys.platform, "process_namespace": own_pids,
              "memory": config.get("memory_bound") or "per process (rlimit)"}
    interpreter = interpreter_paths(config.get("forbidden", []))

    scratch_mounted = proc_mounted = False
    root = None
    if own_mounts:
        try:
            namespaces.make_private()
        except OSError as exc:
            problems.append(f"mounts: {exc}")
        if "minimal_root" not in config.get("disable", ()):
            emptied = config.get("emptied", [])  # a module guard's files, shown empty (sandbox.box)
            try:
                root, proc_mounted, root_problems = minimal_root.enter(
                    scratch, interpreter + list(SYSTEM_READ_ONLY), DEVICES, emptied, config["submission"],
                    config["limits"]["scratch_bytes"],
                    uid if uid is not None else os.geteuid(), gid if gid is not None else os.getegid(),
                    proc=own_pids)
                problems += root_problems
                scratch_mounted = True
                # the worker (and Landlock below) see the box's own paths from now on
                config["submission"], config["scratch"] = minimal_root.SUBMISSION, minimal_root.SCRATCH
                scratch = config["scratch"]
            except OSError as exc:
                problems.append(f"minimal root: {exc} (the whole file system stays visible, read-only)")
        else:
            problems.append("minimal root: disabled for this run")
        if root is None:
            proc_mounted, scratch_mounted = _whole_tree_read_only(config, interpreter, own_pids, problems)
    report["root"] = (f"minimal (pivot_root): {len(root.bound)} read-only folders and files, "
                      f"scratch, /proc of its own" if root is not None
                      else "the machine's, read-only" if own_mounts else "the machine's")
    # Privileges: never root with student code; a uid of its own as root.
    if as_root:
        try:
            namespaces.become(uid, gid)
            report["uid"] = f"uid {uid} of its own"
        except OSError as exc:
            report.update(refused=True, confined=False,
                          problems=problems + [f"could not drop root privileges: {exc}"])
            return report
    else:
        report["uid"] = f"the grading user's uid {os.geteuid()}"
        if os.geteuid() == 0 and not flags & namespaces.CLONE_NEWUSER:
            report.update(refused=True, confined=False,
                          problems=problems + ["uid 0 without a user namespace to drop its capabilities"])
            return report
        if flags & namespaces.CLONE_NEWUSER:
            try:
                namespaces.drop_capabilities()
                report["uid"] += " (no capabilities)"
            except OSError as exc:
                problems.append(f"dropping capabilities: {exc}")
    lim = config["limits"]
    cpu_shared = bool(config.get("cpu_bound"))  # a cgroup gives each box an equal CPU share
    limits.apply_limits(lim["memory_bytes"], lim["cpu_seconds"], lim["max_processes"],
                        lim["max_file_bytes"], own_uid=as_root, open_files=lim.get("max_open_files"),
                        nice=0 if cpu_shared else NICE)
    # A guard's code sealed while /proc can still be read, and only where the filter that
    # keeps it sealed (no new executable memory) follows.
    filter_wanted = linux and "seccomp" not in config.get("disable", ()) and syscall_filter.available()
    sealed = _seal(config.get("sealed"), problems) if filter_wanted else None
    if sealed:  # what a box that ends with code_seal.EXIT_SEALED reached
        report["sealed"] = sealed[0]
    # Landlock last: it also forbids the mounts above.
    abi = landlock.abi_version() if linux and "landlock" not in config.get("disable", ()) else 0
    fs_confined = False
    if abi >= 1:
        try:
            rules = landlock.Ruleset(abi)
            for path in interpreter + list(SYSTEM_READ_ONLY):
                rules.allow(path, landlock.READ_ONLY)
            rules.allow(config["submission"], landlock.READ_FILE | landlock.READ_DIR)
            for device in DEVICES:
                rules.allow(device, landlock.READ_FILE | landlock.WRITE_FILE)
            if proc_mounted:
                rules.allow("/proc", landlock.READ_FILE | landlock.READ_DIR)
            if scratch_mounted:
                rules.allow(scratch, landlock.READ_WRITE)
            rules.restrict_self()
            fs_confined = True
            report["fs"] = rules.summary()
        except OSError as exc:
            problems.append(f"Landlock: {exc}")
    else:
        problems.append("Landlock: Linux only" if not linux else "Landlock: disabled for this run"
                        if "landlock" in config.get("disable", ()) else "Landlock: not available in this kernel")
    # The syscall filter last of all, just before the student's module is imported.
    filtered = False
    if linux and "seccomp" not in config.get("disable", ()):
        try:
            report["syscalls"] = syscall_filter.install(no_new_code=sealed is not None)
            filtered = True
            if sealed:
                report["syscalls"] += f"; sealed: {sealed[0]} ({sealed[1]} functions)"
        except OSError as exc:
            problems.append(f"syscall filter: {exc.strerror or exc}")
    elif linux:
        problems.append("syscall filter: disabled for this run")
    if not filtered:
        report["syscalls"] = "not filtered"
    if sealed and not (filtered and fs_confined):  # new executable memory, or /proc/<pid>/mem, could undo it
        problems.append("code seal: " + ("no syscall filter" if not filtered else "no Landlock") +
                        " here, so the sealed code could be written back")
    if not fs_confined:
        report["fs"] = ("minimal root, read-only" if root is not None
                        else "read-only mounts, grader folders hidden" if own_mounts else "none")
    net_blocked = own_net or (fs_confined and abi >= 4)
    report["network"] = ("none (empty network namespace)" if own_net
                         else "TCP blocked (Landlock)" if net_blocked else "open")
    signals_scoped = own_pids or (fs_confined and abi >= 6) or as_root
    report["signals"] = ("own process namespace" if own_pids else "Landlock scope" if fs_confined and abi >= 6
                         else "uid of its own" if as_root else "open")
    report["scratch"] = (f"tmpfs, {lim['scratch_bytes'] // 2**20} MiB" if scratch_mounted
                         else "none (nothing writable)" if fs_confined else "unbounded folder")
    report["scratch_writable"] = scratch_mounted or not fs_confined
    # Confined: nothing outside its box readable or writable, no network, no
    # signal leaving the box, and everything it starts dies with it.
    # No pathname socket reachable: none visible (minimal root) or none creatable (filter).
    report["confined"] = bool(fs_confined and net_blocked and signals_scoped and own_pids
                              and (root is not None or filtered))
    report["memory"] = memory_words(config, lim, filtered, own_mounts)
    report["cpu"] = config.get("cpu_bound") or (f"{lim['cpu_seconds']} s of CPU per process, "
                                                 f"lower priority (nice {NICE}); no share of its own")
    report["problems"] = problems
    return report


def _seal(request, problems):
    """Seal the code a module's guard names (``{"addresses", "what"}``); returns
    ``(what, how many functions)``, or None when nothing was sealed. It holds
    under the filter that follows (no new executable memory) and Landlock
    (``/proc/<pid>/mem`` not writable)."""
    if not request:
        return None
    try:
        count = code_seal.seal(request.get("addresses") or [])
    except OSError as exc:
        problems.append(f"code seal ({request.get('what')}): {exc.strerror or exc}; "
                        "only the guard in the box's own interpreter stands")
        return None
    for mapping in code_seal.open_code():
        problems.append(f"code seal: writable or shared executable memory at {mapping}")
    return str(request.get("what")), count


def memory_words(config, lim, filtered, no_shm):
    """What bounds the box's memory, in words a TA reads without a manual; what
    does not hold is said too."""
    if config.get("memory_bound"):  # a cgroup counts everything the box holds
        return config["memory_bound"]
    mib = lim["memory_bytes"] // 2**20
    words = [f"each process at most {mib} MiB of address space, at most {lim['max_processes']} processes "
             f"(no cgroup: the box's total is not one number)"]
    held = [f"{lim['scratch_bytes'] // 2**20} MiB scratch"]
    if filtered:
        held.append("memfd, System V and POSIX IPC, socket pairs, epoll, inotify, splice and record locks refused, "
                    "pipes at 64 KiB")
    if no_shm:
        held.append("no /dev/shm")
    if lim.get("max_open_files"):
        held.append(f"{lim['max_open_files']} more open files")
    held.append(f"{limits.PENDING_SIGNALS} pending signals and timers")
    words.append(", ".join(held))
    if not filtered:
        words.append("NOT bounded (no syscall filter): memfd, System V shared memory and message queues, "
                     "socket buffers, record locks")
    return "; ".join(words)
