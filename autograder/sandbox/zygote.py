"""The zygote: a clean process that imports torch once and forks boxes.

It is started as a fresh interpreter (``python -I -B``) with a scrubbed
environment, before the judge loads any test, oracle, plugin or seed, and it
never receives any of them: a worker forked from it starts with nothing of the
judge in its memory. It never runs student code itself.

It listens on SOCK_SEQPACKET channels. Each message is one JSON object, with
file descriptors attached where noted:

* ``{"op": "box", "config": {...}}`` (a :class:`~autograder.sandbox.confine.box_config.BoxConfig`
  as plain data) + [worker socket, keeper socket, log fd]:
  as root, fork the worker and keep the box here
  (:mod:`autograder.sandbox.supervisor`); otherwise fork a box keeper
  (:func:`autograder.sandbox.box.keeper_main`); answer ``{"ok": true}``.
  Everything else about the box goes over the keeper socket.
* ``{"op": "channel"}`` + [socket]: serve one more channel (batch grading
  gives each student's judge its own).

It exits when its first channel closes.
"""
import contextlib
import json
import os
import select
import signal
import socket
import sys
import time

MAX_MESSAGE = 65536


def _preload():
    """What every worker needs, imported once here (after confinement a worker
    can no longer read the grader's files)."""
    preload_shared()
    _preload_boxes()


def preload_shared():
    """torch, started and warmed up, and the worker's side of the sandbox and of the
    assignment: what a judge process that forks its zygote needs too
    (:func:`autograder.sandbox.boxes.fork_zygote_here`), loaded once for both."""
    import torch

    torch.set_num_threads(1)
    from autograder import torch_startup

    torch_startup.install()  # optimizers need only eager mode's answers from torch._dynamo
    import torch.nn.functional  # noqa: F401

    # Low-precision CPU kernels read the CPU's features (cpuinfo: /proc, /sys) on
    # first use; a confined worker cannot, so they are initialised here.
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast("cpu", dtype=dtype):
            torch.nn.functional.linear(torch.ones(2, 2), torch.ones(2, 2)).float().sum()
        (torch.ones(4, dtype=dtype) * 2).float().square().sum().sqrt()
    # An optimizer's first step imports more of torch lazily (the profiler's hooks
    # around step); a worker that cannot read torch's files would fail there.
    weight = torch.nn.Parameter(torch.ones(2))
    for optimizer in (torch.optim.SGD([weight], lr=0.1), torch.optim.Adam([weight], lr=0.1)):
        weight.grad = torch.ones(2)
        optimizer.step()
    from autograder.sandbox import assignment_side, worker  # noqa: F401

    assignment_side.declared()  # its scenarios, the shapes of their answers
    freeze_heap()


def _preload_boxes():
    """What only the boxes need: the confinement's modules, each guard's preparation (a look-up
    in torch's library) and the compiled syscall filter. A forked zygote loads them once it
    runs on its own, while its judge goes on."""
    from autograder.sandbox import assignment_side, box, supervisor  # noqa: F401
    from autograder.sandbox.confine import landlock, namespaces, syscall_filter  # noqa: F401

    assignment_side.load()  # its guards prepared, while grader files can still be read
    syscall_filter.prepare()  # each box then loads the compiled filter (where there is libseccomp)
    freeze_heap()


def _settle():
    """Once the zygote is on its own: its heap on huge pages (cheaper forks and exits);
    as root, the box cgroups an earlier zygote killed outright left behind go."""
    if sys.platform.startswith("linux"):
        fold_heap()
        if os.geteuid() == 0:
            from autograder.sandbox.confine import cgroups

            cgroups.remove_stale()


def freeze_heap():
    """Move everything imported so far out of the garbage collector's reach: a forked
    box that collected would write to every object's header and copy every page
    of torch's heap (copy-on-write); frozen, the pages stay shared. No collection
    first: a full one costs a tenth of a second here, and what little garbage it
    would find only stays (the collector still runs on what comes after)."""
    import gc

    gc.freeze()


# A box is a fork of the zygote, whose heap holds ~150 MiB of torch's and Python's
# objects: a fork copies one page-table entry per 4 KiB page of it and the box's exit
# frees them again. glibc puts most of it on 2 MiB pages (environment.HUGE_PAGES_MALLOC);
# the rest, Python's object arenas above all, is folded with madvise(MADV_COLLAPSE)
# (Linux 6.1). Where the kernel lacks it or has no huge page free, nothing changes.
_MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20


def huge_page_pieces(maps_text):
    """``(start, length)`` of the private, writable, anonymous mappings (the heap
    included) in a ``/proc/<pid>/maps`` text, trimmed to 2 MiB boundaries."""
    found = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[1][:2] != "rw" or fields[1][3:4] != "p":
            continue
        path = fields[5] if len(fields) > 5 else ""
        if path and path != "[heap]":  # files, stacks, vdso and the like stay as they are
            continue
        low, high = (int(bound, 16) for bound in fields[0].split("-"))
        start, end = -(-low // HUGE_PAGE) * HUGE_PAGE, high // HUGE_PAGE * HUGE_PAGE
        if end > start:
            found.append((start, end - start))
    return found


def fold_heap():
    """Fold this process's anonymous memory onto huge pages (a few hundredths of a
    second); returns the bytes folded (0 where the kernel cannot)."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            found = huge_page_pieces(maps.read())
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    folded = 0
    for start, length in found:  # a kernel without MADV_COLLAPSE refuses each at once (EINVAL)
        if madvise(start, length, _MADV_COLLAPSE) == 0:
            folded += length
    return folded


def _reply(channel, message):
    try:
        channel.send(json.dumps(message).encode())
    except OSError:
        pass


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _reap(keepers):
    """Keepers that ended (their exit status is no one's business)."""
    for pid in list(keepers):
        try:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                keepers.discard(pid)
        except ChildProcessError:
            keepers.discard(pid)


def _shut_down(boxes, keepers, timeout=10.0):
    """The judge hung up: end the boxes kept here (workers killed, cgroups
    removed) and wait for keepers to finish their last word, so that none is
    left to be re-parented (and become a zombie) elsewhere."""
    deadline = time.monotonic() + timeout
    for box in boxes:
        box.kill()
    while time.monotonic() < deadline:
        _reap(keepers)
        boxes = [box for box in boxes if not box.done]
        if not boxes and not keepers:
            return
        ready = select.select([box.pidfd for box in boxes], [], [], 0.05)[0] if boxes else []
        for box in boxes:
            if box.pidfd in ready:
                box.handle(box.pidfd)
        if not boxes:
            time.sleep(0.01)


def serve(first):
    from autograder.sandbox import supervisor
    from autograder.sandbox.confine.box_config import BoxConfig

    channels = [first]
    boxes = []       # supervisor.KeptBox: the boxes this process keeps itself (as root)
    keepers = set()  # pids of keeper processes (the other boxes)
    while channels:
        watched = {fd: box for box in boxes for fd in box.fds()}
        deadlines = [box.report_deadline for box in boxes if box.report_r is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else (1.0 if keepers else None)
        ready, _, _ = select.select(channels + list(watched), [], [], timeout)
        _reap(keepers)
        for box in boxes:
            box.expire(time.monotonic())
        for fd in ready:
            if fd in watched:
                box = watched[fd]
                if not box.done and fd in box.fds():  # not closed meanwhile
                    box.handle(fd)
                continue
            if fd not in channels:
                continue
            channel = fd
            try:
                data, fds, _, _ = socket.recv_fds(channel, MAX_MESSAGE, 8)
            except OSError:
                data, fds = b"", []
            if not data:
                _close_all(fds)
                channels.remove(channel)
                channel.close()
                if channel is first:
                    _shut_down(boxes, keepers)
                    return
                continue
            try:
                request = json.loads(data.decode())
                op = request.get("op")
            except (ValueError, AttributeError):
                _close_all(fds)
                _reply(channel, {"ok": False, "error": "malformed request"})
                continue
            if op == "channel" and len(fds) == 1:
                channels.append(socket.socket(fileno=fds[0]))
                _reply(channel, {"ok": True})
            elif op == "box" and len(fds) == 3:
                # Answered first: the judge asks for its next box (or goes on) while this
                # one is forked. What happens to the box comes over its keeper socket.
                _reply(channel, {"ok": True})
                worker_sock, keeper_sock = socket.socket(fileno=fds[0]), socket.socket(fileno=fds[1])
                try:
                    config = BoxConfig.from_wire(request.get("config"))
                    kept = supervisor.fork_box(config, worker_sock, keeper_sock, fds[2], channels) \
                        if supervisor.applies(config) else None
                    if kept is None:
                        keepers.add(_fork_keeper(config, worker_sock, keeper_sock, fds[2], channels, boxes))
                    else:
                        boxes.append(kept)
                except (OSError, ValueError) as exc:  # out of processes or descriptors, or a config that is
                    _refuse_box(worker_sock, keeper_sock, fds[2], exc)  # none: this box fails, the zygote goes on
            else:
                _close_all(fds)
                _reply(channel, {"ok": False, "error": f"unknown request {op!r}"})
        boxes = [box for box in boxes if not box.done]


def _fork_keeper(config, worker_sock, keeper_sock, log_fd, channels, boxes):
    """A keeper process for a box this process does not keep itself; returns its pid."""
    from autograder.sandbox import box as keeper

    pid = os.fork()
    if pid == 0:
        try:
            for other in channels:
                other.close()
            _close_all([fd if isinstance(fd, int) else fd.detach() for box in boxes for fd in box.fds()])
            keeper.keeper_main(config, worker_sock, keeper_sock, log_fd)
        finally:
            os._exit(keeper.EXIT_CONFINEMENT_FAILED)  # never back into this loop
    _close_all([log_fd])
    worker_sock.close()
    keeper_sock.close()
    return pid


def _refuse_box(worker_sock, keeper_sock, log_fd, exc):
    """Tell the judge why its box could not be made (it reads its keeper socket), and
    let go of what the box would have had."""
    with contextlib.suppress(OSError):
        keeper_sock.send(json.dumps({"error": f"{getattr(exc, 'strerror', None) or exc}"[:200]}).encode())
    _close_all([log_fd])
    worker_sock.close()
    keeper_sock.close()


def _become_zygote():
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # workers kept here are waited for; keepers reaped
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the judge decides when we stop
    if sys.platform.startswith("linux"):
        from autograder.sandbox.confine import namespaces

        namespaces.not_dumpable()


def main():
    """``python -I -B -c BOOT PACKAGE_ROOT CONTROL_FD``."""
    control = socket.socket(fileno=int(sys.argv[2]))
    _become_zygote()
    del sys.argv[1:]
    try:
        _preload()
        _settle()
        _reply(control, {"ready": True, "pid": os.getpid()})
        serve(control)
    except BaseException as exc:  # noqa: B036 - report, then exit
        _reply(control, {"ready": False, "error": f"{type(exc).__name__}: {exc}"[:500]})
    finally:
        os._exit(0)


def forked_main(control):
    """The zygote forked from a clean grading process (see
    :mod:`autograder.judge_process.launcher`), what both use loaded already
    (:func:`preload_shared`): it loads what only boxes need while its judge goes on,
    says it is ready, as a zygote started on its own does (:func:`main`), and serves."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, control.fileno())
        os.closerange(control.fileno() + 1, 65536)
        _become_zygote()
        try:
            _preload_boxes()
            _settle()
        except BaseException as exc:  # noqa: B036 - report, then exit
            _reply(control, {"ready": False, "error": f"{type(exc).__name__}: {exc}"[:500]})
            raise
        _reply(control, {"ready": True, "pid": os.getpid()})
        serve(control)
    finally:
        os._exit(0)
