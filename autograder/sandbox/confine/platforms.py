"""Confinement for spawned workers where the Linux zygote is not used.

* macOS: ``sandbox-exec`` with a profile written here (deprecated by Apple but
  shipped, and used by browsers and build tools): no network except the
  loopback connection back to the judge, no writes outside the box's scratch
  and log, the hidden tests and solutions unreadable, no signals to others.
* Windows: a job object (kill-on-close, a process count limit, a memory
  limit). Windows has no unprivileged file-system or network confinement
  comparable to Landlock: the report says so.
* Linux with ``AUTOGRADER_SANDBOX=spawn`` (a debugging mode): resource limits only.

None of this could be exercised on the machines this project is developed on
(Linux only); every step fails soft and the isolation report says what held.
"""
import os
import shutil
import subprocess
import sys

from autograder import locations
from autograder.sandbox.confine import limits

PACKAGE_ROOT = str(locations.REPO_ROOT)


def unconfined(reason):
    return {"clean_process": True, "platform": sys.platform, "process_namespace": False,
            "fs": "none", "network": "open", "signals": "open", "uid": "the grading user's",
            "scratch": "unbounded folder", "confined": False, "problems": [reason]}


def _sbpl_string(path):
    return '"' + os.path.realpath(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def macos_profile(config):
    secret = [os.path.join(PACKAGE_ROOT, "autograder", "hidden"), os.path.join(PACKAGE_ROOT, "solutions")]
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny network*)",
        '(allow network-outbound (remote ip "localhost:*"))',
        "(deny file-write*)",
        f"(allow file-write* (subpath {_sbpl_string(config.scratch)}) (literal {_sbpl_string(config.log)})"
        ' (literal "/dev/null"))',
        "(deny file-read* " + " ".join(f"(subpath {_sbpl_string(path)})" for path in secret) + ")",
        "(deny signal)",
        "(allow signal (target self))",
    ]
    return "\n".join(lines)


def wrap_command(argv, config):
    """``(argv, isolation)``: the command, wrapped by the platform's sandbox where there is one."""
    report = _wrap(argv, config)
    if config.uid is not None:
        report[1]["uid"] = f"uid {config.uid} of its own"
    return report


def _wrap(argv, config):
    if sys.platform == "darwin":
        tool = shutil.which("sandbox-exec") or "/usr/bin/sandbox-exec"
        if os.path.exists(tool):
            report = {"clean_process": True, "platform": "darwin", "process_namespace": False,
                      "fs": "sandbox-exec profile (writes only to scratch; grader hidden)",
                      "network": "loopback to the judge only (sandbox-exec)",
                      "signals": "sandbox-exec: no signals to others", "uid": "the grading user's",
                      "scratch": "unbounded folder", "confined": False,
                      "problems": ["macOS: no process namespace; the scratch folder has no size limit"]}
            return [tool, "-p", macos_profile(config)] + list(argv), report
        return list(argv), unconfined("macOS: sandbox-exec not found")
    if os.name == "nt":
        return list(argv), unconfined("Windows: no file-system or network confinement exists for "
                                       "unprivileged processes; a job object limits processes and memory")
    return list(argv), unconfined("spawned worker (AUTOGRADER_SANDBOX=spawn): resource limits only")


def popen_options(config):
    lim = config.limits
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    uid = config.uid

    def confine():
        limits.apply_limits(lim.memory_bytes, lim.cpu_seconds, lim.max_processes, lim.max_file_bytes,
                            own_uid=uid is not None)
        if uid is not None:  # never root: a uid of its own (a failure here stops the worker)
            from autograder.sandbox.confine.namespaces import become

            become(uid, uid)

    return {"start_new_session": True, "preexec_fn": confine}


# -- Windows job objects -----------------------------------------------------------------------
def contain(process, config, isolation):
    """Windows: put ``process`` in a kill-on-close job object; returns the job (or None)."""
    if os.name != "nt":
        return None
    try:
        job = _windows_job(config.limits)
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        if not kernel32.AssignProcessToJobObject(job, int(process._handle)):
            raise OSError(ctypes.get_last_error(), "AssignProcessToJobObject")
        isolation["job"] = "job object: killed together, process count and memory limited"
        return job
    except Exception as exc:  # noqa: BLE001 - fail soft, say so
        isolation.setdefault("problems", []).append(f"job object: {exc}")
        return None


def _windows_job(lim):
    import ctypes
    from ctypes import wintypes

    class Basic(ctypes.Structure):
        _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                    ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                    ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                    ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                    ("SchedulingClass", wintypes.DWORD)]

    class Extended(ctypes.Structure):
        _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", ctypes.c_uint64 * 6),
                    ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                    ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

    kill_on_close, active_process, process_memory = 0x2000, 0x8, 0x100
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        raise OSError(ctypes.get_last_error(), "CreateJobObjectW")
    info = Extended()
    info.BasicLimitInformation.LimitFlags = kill_on_close | active_process | process_memory
    info.BasicLimitInformation.ActiveProcessLimit = int(lim.max_processes)
    info.ProcessMemoryLimit = int(lim.memory_bytes) + 3 * 2**30  # torch itself needs ~1-2 GB
    if not kernel32.SetInformationJobObject(wintypes.HANDLE(job), 9, ctypes.byref(info), ctypes.sizeof(info)):
        raise OSError(ctypes.get_last_error(), "SetInformationJobObject")
    return job


def kill(process, job):
    if job is not None and os.name == "nt":
        try:
            import ctypes

            ctypes.WinDLL("kernel32").TerminateJobObject(job, 1)
        except Exception:  # noqa: BLE001
            pass
    elif os.name != "nt":
        try:
            os.killpg(process.pid, 9)
        except OSError:
            pass
    try:
        process.kill()
    except OSError:
        pass


def release(job):
    if job is not None and os.name == "nt":
        try:
            import ctypes

            ctypes.WinDLL("kernel32").CloseHandle(job)
        except Exception:  # noqa: BLE001
            pass
