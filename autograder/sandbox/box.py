"""One box: a keeper process and the worker it starts, both forked from the zygote.

The keeper (trusted) enters new namespaces and forks the worker, then waits:
when the judge says ``kill`` or goes away, or the worker dies, it kills the
worker -- PID 1 of its own PID namespace, so the kernel takes every process
the student started with it -- and tells the judge how the worker ended.

The worker confines itself before the first line of student code:

1. a private mount namespace: every mount read-only, the grader's folders
   covered, a /proc of its own, one size-limited tmpfs as the only writable
   folder; as root, the interpreter is made reachable for the new uid;
2. the student's own uid (as root) or no capabilities (in a user namespace);
3. resource limits (memory, CPU time, processes, file size);
4. Landlock: read-only access to the interpreter and its own module, write
   access to its scratch only, no TCP, no signals or abstract sockets leaving
   the box.

It reports what held to the keeper through a pipe it closes before any
student code runs, so the report cannot be forged.
"""
import json
import os
import select
import signal
import sys

from autograder.sandbox import cgroups, landlock, limits, namespaces

SYSTEM_READ_ONLY = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
                    "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime",
                    "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
EXIT_CONFINEMENT_FAILED = 86
CGROUP_HEADROOM_BYTES = 512 * 2**20  # the worker's own interpreter pages on top of the student's
CGROUP_EXTRA_TASKS = 32              # threads count as tasks for the pids controller


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


# -- the keeper ------------------------------------------------------------------------------
def keeper_main(config, worker_sock, keeper_sock, log_fd):
    """Runs in a fresh child of the zygote; never returns."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        if sys.platform.startswith("linux"):
            namespaces.dumpable()
            limits.become_subreaper()  # without a PID namespace, orphans come back to us
        as_root = config.get("uid") is not None  # root of the machine, with a uid for the student
        cgroup, cgroup_problem = None, None
        if as_root and sys.platform.startswith("linux") and "cgroups" not in config.get("disable", ()):
            lim = config["limits"]
            cgroup, cgroup_problem = cgroups.box_cgroup(
                f"amp-box-{os.getpid()}", lim["memory_bytes"] + CGROUP_HEADROOM_BYTES,
                lim["max_processes"] + CGROUP_EXTRA_TASKS)
        if "namespaces" in config.get("disable", ()):  # tests of the degraded paths
            flags, problems = 0, ["namespaces: disabled for this run"]
        elif sys.platform.startswith("linux"):
            flags, problems = namespaces.enter_namespaces(as_root)
        else:
            flags, problems = 0, ["namespaces: Linux only"]
        # the worker is born inside the cgroup, which bounds everything it starts
        config["memory_bound"] = (f"{cgroup.kind}: {config['limits']['memory_bytes'] // 2**20 + 512} MiB "
                                  f"and {config['limits']['max_processes']} processes for the whole box"
                                  if cgroup else "per process (rlimit)")
        if cgroup_problem:
            problems = problems + [cgroup_problem]
        report_r, report_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            keeper_sock.close()
            worker_main(config, worker_sock, log_fd, report_w, flags, problems)
            os._exit(0)  # worker_main never returns
        os.close(report_w)
        worker_sock.close()
        os.close(log_fd)
        report = _read_report(report_r, timeout=30.0)
        _send(keeper_sock, {"pid": pid, "isolation": report})
        status = _supervise(pid, keeper_sock, own_pid_namespace=bool(flags & namespaces.CLONE_NEWPID))
        if cgroup is not None:
            cgroup.leave_and_remove()
        _send(keeper_sock, {"exit": status})
    except BaseException:  # noqa: B036 - the keeper must always reach os._exit
        code = 70
    finally:
        os._exit(code)


def _send(sock, message):
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass


def _read_report(fd, timeout):
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    try:
        report = json.loads(b"".join(chunks).decode())
        return report if isinstance(report, dict) else {}
    except ValueError:
        return {"confined": False, "problems": ["the worker stopped before confining itself"]}


def _supervise(pid, keeper_sock, own_pid_namespace):
    """Wait for the worker's end or the judge's word; returns how the worker ended."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        watched = [keeper_sock] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(watched, [], [], None if pidfd is not None else 0.05)
        if pidfd is not None and pidfd in ready or pidfd is None and _exited(pid):
            break
        if keeper_sock in ready:
            try:
                message = keeper_sock.recv(4096)
            except OSError:
                message = b""
            if not message or message == b"kill":
                _kill(pid, own_pid_namespace)
                break
    _, status = os.waitpid(pid, 0)
    if not own_pid_namespace:
        limits.kill_descendants()
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


def _exited(pid):
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(pid, own_pid_namespace):
    if not own_pid_namespace:  # best effort: the worker's group, then what /proc shows
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        limits.kill_descendants()
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


# -- the worker ------------------------------------------------------------------------------
def worker_main(config, worker_sock, log_fd, report_fd, flags, problems):
    """Confine, report, then serve the judge. Never returns."""
    code = 0
    try:
        namespaces.die_with_parent()
        keep = {worker_sock.fileno(), log_fd, report_fd}
        for fd in _open_fds():
            if fd > 2 and fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        report = confine(config, flags, problems)
        if config.get("probe"):
            os.write(report_fd, json.dumps(report).encode())
            os._exit(0)
        os.write(report_fd, json.dumps(report).encode())
        os.close(report_fd)
        if report.get("refused"):
            code = EXIT_CONFINEMENT_FAILED
            return
        from autograder.sandbox import worker
        worker.run(worker_sock, config["submission"], config["module"], log_fd,
                   scratch=config["scratch"] if report.get("scratch_writable") else None)
    except BaseException:  # noqa: B036
        code = code or 70
    finally:
        os._exit(code)


def _open_fds():
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


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
              "memory": config.get("memory_bound", "per process (rlimit)")}
    interpreter = interpreter_paths(config.get("forbidden", []))

    scratch_mounted = proc_mounted = False
    hidden = []
    if own_mounts:
        try:
            namespaces.make_private()
            if as_root:
                namespaces.mount("tmpfs", scratch, "tmpfs", 0, "size=1m,mode=0700")
                try:
                    namespaces.expose_for_others(interpreter + [config["submission"]], scratch, uid, gid)
                finally:
                    namespaces.unmount(scratch)
            for path in config.get("hide", []):
                if os.path.isdir(path):
                    try:
                        namespaces.cover(path)
                        hidden.append(path)
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
            scratch_mounted = True
        except OSError as exc:
            problems.append(f"mounts: {exc}")
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
    limits.apply_limits(lim["memory_bytes"], lim["cpu_seconds"], lim["max_processes"],
                        lim["max_file_bytes"], own_uid=as_root)
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
    if not fs_confined:
        report["fs"] = ("read-only mounts, grader folders hidden" if own_mounts and hidden
                        else "read-only mounts" if own_mounts else "none")
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
    report["confined"] = bool(fs_confined and net_blocked and signals_scoped and own_pids)
    report["problems"] = problems
    return report
