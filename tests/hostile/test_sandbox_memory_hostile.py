"""Hostile submissions that hold memory where an address-space limit does not look
(issue 17): memfd files, /dev/shm, and many open pipes. Without root no cgroup
counts them, so the box must refuse them outright.

Harmless by construction: each hoarder asks for at most 256 MiB, and the test
removes whatever /dev/shm file of its marker exists afterwards.
"""
import pathlib

import pytest

from support.hostile import MARK, TIGHT, full_marks, report_texts
from support.hostile_submissions import REPORTING_STEP

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("confinement_here")]

HOARDER = f'''
held = 0
try:
    for index in range(32):
        fd = os.memfd_create("{MARK}-%d" % index)
        os.ftruncate(fd, 8 * 2**20)
        os.pwrite(fd, b"x" * 2**20, 0)
        held += 8
except OSError:
    pass
if held:
    FOUND.append("memfd %d MiB" % held)
held = 0
try:
    for index in range(32):
        with open("/dev/shm/{MARK}-%d" % index, "wb") as handle:
            handle.write(b"x" * 8 * 2**20)
        held += 8
except OSError:
    pass
if held:
    FOUND.append("/dev/shm %d MiB" % held)
pipes = []
try:
    for _ in range(1000):
        pipes.append(os.pipe())
except OSError:
    pass
if len(pipes) > 100:
    FOUND.append("%d pipes" % len(pipes))
for read_end, write_end in pipes:
    os.close(read_end)
    os.close(write_end)
'''


@pytest.mark.slow
def test_memory_outside_the_address_space_limit_is_refused(grade_dir):
    try:
        report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=HOARDER, use="pass")},
                           seed=41, limits=TIGHT)
    finally:
        for leftover in pathlib.Path("/dev/shm").glob(f"{MARK}-*"):
            leftover.unlink()
    texts = report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert full_marks(report, "amp_update", "loss_scaler")
    memory = report.isolation["memory"]
    assert "cgroup" in memory or ("memfd, System V" in memory and "no /dev/shm" in memory), memory


# Issue 37: kernel objects that hold memory outside every address space. Each is
# created, filled and let go of by the module's own process (detached, closed or
# kept only in the kernel), the way a determined hoarder would. Keys carry KEY_BASE
# so that whatever a regression left on a machine without an IPC namespace of the
# box's own is removed by the test (ipcrm). At most 256 MiB is asked for per kind.
KEY_BASE = 0x3A000000 | (int(MARK[-4:], 16) << 8)
KERNEL_HOARDER = f'''
import ctypes, errno, fcntl, select, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
IPC_CREAT, IPC_RMID, SEGMENT = 0o1000 | 0o600, 0, 16 * 2**20
held = 0
for index in range(16):                     # System V shared memory: 16 x 16 MiB, detached
    ident = libc.shmget({KEY_BASE} + index, SEGMENT, IPC_CREAT)
    if ident < 0:
        break
    address = libc.shmat(ident, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        break
    ctypes.memset(address, 1, SEGMENT)
    libc.shmdt(address)
    held += 16
if held:
    FOUND.append("System V shm %d MiB" % held)
class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("text", ctypes.c_char * 8000)]
sent = 0
for index in range(16):                     # System V message queues, filled to their limit
    queue = libc.msgget({KEY_BASE} + 64 + index, IPC_CREAT)
    if queue < 0:
        break
    message = Message(1, b"x" * 8000)
    while libc.msgsnd(queue, ctypes.byref(message), 8000, 0o4000) == 0:  # IPC_NOWAIT
        sent += 8000
if sent:
    FOUND.append("System V message queues %d KiB" % (sent // 1024))
if libc.semget({KEY_BASE} + 128, 250, IPC_CREAT) >= 0:
    FOUND.append("System V semaphores")
if libc.mq_open(b"/{MARK}", 0o100 | 0o2, 0o600, None) >= 0:   # O_CREAT | O_RDWR
    FOUND.append("POSIX message queue")
    libc.mq_unlink(b"/{MARK}")
try:
    pair = socket.socketpair()
    pair[0].setblocking(False)
    sent = 0
    try:
        while sent < 64 * 2**20:
            sent += pair[0].send(b"x" * 65536)
    except OSError:
        pass
    FOUND.append("socketpair holding %d KiB" % (sent // 1024))
except OSError:
    pass
for name, make in (("epoll", lambda: select.epoll()), ("inotify", lambda: libc.inotify_init1(0)),
                   ("fanotify", lambda: libc.fanotify_init(0x200, 0))):
    try:
        if make() not in (-1, None):
            FOUND.append(name)
    except OSError:
        pass
with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "{MARK}-locks"), "wb") as handle:
    handle.write(b"x" * 4096)
    handle.flush()
    locks = 0
    try:
        for offset in range(0, 4096, 2):    # one kernel object per locked byte
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            locks += 1
    except OSError:
        pass
    if locks:
        FOUND.append("%d record locks" % locks)
read_end, write_end = os.pipe()
try:
    fcntl.fcntl(write_end, 1031, 2**20)     # F_SETPIPE_SZ
    FOUND.append("a 1 MiB pipe")
except OSError:
    pass
with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "{MARK}-locks"), "rb") as handle:
    try:                                    # file pages pinned in a pipe
        if os.splice(handle.fileno(), write_end, 4096) > 0:
            FOUND.append("splice")
    except (OSError, AttributeError):
        pass
os.close(read_end)
os.close(write_end)
timers = 0
for _ in range(1000):                       # POSIX timers: a kernel object each
    timer = ctypes.c_void_p()
    if libc.timer_create(1, None, ctypes.byref(timer)) != 0:
        break
    timers += 1
if timers > 200:
    FOUND.append("%d POSIX timers" % timers)
'''


def _remove_ipc_objects():
    """Whatever the hoarder made in the machine's own IPC namespace (none, unless a
    regression left the box without one and the filter let it through)."""
    import subprocess

    for option, keys in (("-M", range(16)), ("-Q", range(64, 80)), ("-S", range(128, 129))):
        for index in keys:
            subprocess.run(["ipcrm", option, hex(KEY_BASE + index)], capture_output=True, check=False)


def test_kernel_objects_outside_the_address_space_are_refused(grade_dir):
    try:
        report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=KERNEL_HOARDER, use="pass")},
                           seed=43, limits=TIGHT)
    finally:
        _remove_ipc_objects()
    texts = report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert full_marks(report, "amp_update", "loss_scaler")
    memory = report.isolation["memory"]
    assert "cgroup" in memory or ("System V and POSIX IPC" in memory and "record locks refused" in memory), memory
