"""Where a box's code was when its call ran out of time, from the stack it dumped.

Before any student code runs, the worker asks :mod:`faulthandler` to write the
stack of every Python thread to the judge's socket on :data:`SIGNAL`; when a call
runs out of time the judge has the box's keeper send that signal, reads what comes
back (:func:`read`: bounded in bytes and time), then kills the box. faulthandler
writes from C inside the signal handler, so the dump comes even while the student's
loop sits in a C call (pytest-timeout's way of showing where a test hung).

The text comes from a box: student code may unregister the handler, block the
signal, or write look-alike text to the socket. Then nothing comes back (the
feedback says what it said before), or a wrong place in the student's own file.
:func:`frames` keeps only lines in faulthandler's shape that name the module's
own file, with a line number and a function name of bounded size and plain
characters: at worst a student misleads their own feedback.
"""
import re
import select
import signal
import time

SIGNAL = getattr(signal, "SIGUSR2", None)  # None where there are no such signals (Windows)
MAX_BYTES = 32 * 1024   # far more than the 100 frames a thread's dump holds at most
WAIT_S = 1.0            # for the dump to begin: a millisecond, unless the box waits for a CPU
QUIET_S = 0.05          # once it has begun: this long without a byte ends it
MAX_FRAMES = 8          # the innermost ones are kept

# faulthandler's own line: '  File "/box/submission/m.py", line 12 in update'
_FRAME = re.compile(r'^ +File "(?P<file>[^"\n]{1,4096})", line (?P<line>\d{1,7}) in (?P<name>[\w.<>]{1,100})$')


def read(sock, wait=WAIT_S):
    """What the box writes to ``sock`` once it begins within ``wait`` seconds, until it
    pauses (:data:`QUIET_S`), :data:`MAX_BYTES` came or twice ``wait`` passed (a box
    that trickles bytes is not waited for); b"" when nothing came."""
    data = bytearray()
    started = time.monotonic()
    while len(data) < MAX_BYTES:
        now = time.monotonic()
        left = min(started + wait - now if not data else QUIET_S, started + 2 * wait - now)
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([sock], [], [], left)
            if not ready:
                break
            chunk = sock.recv(MAX_BYTES - len(data))
        except BlockingIOError:
            continue
        except (OSError, ValueError):  # the box went away, or the socket was closed
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def frames(dump, own_files, serving_file=""):
    """``[(line, function), ...]`` of the student's file in ``dump`` (faulthandler's
    text), the outermost first, at most :data:`MAX_FRAMES` (the innermost kept).
    ``own_files``: the paths the box knows the student's module by. Of several
    threads, the one serving the judge (a frame of ``serving_file``) is taken,
    else the first with a frame of the student's file."""
    threads, current = [], None
    for line in dump.decode("utf-8", "replace").splitlines():
        if line and not line[0].isspace():  # "Current thread 0x... (most recent call first):"
            current = []
            threads.append(current)
            continue
        found = _FRAME.match(line)
        if found and current is not None:
            current.append((found["file"], int(found["line"]), found["name"]))
    own = [[(line, name) for file, line, name in thread if file in own_files] for thread in threads]
    serving = [index for index, thread in enumerate(threads) if any(file == serving_file for file, _l, _n in thread)]
    chosen = next((own[index] for index in serving if own[index]), None) or next((found for found in own if found), [])
    return list(reversed(chosen[:MAX_FRAMES]))  # faulthandler lists the most recent call first


def as_traceback(found, file_label):
    """``found`` (from :func:`frames`) as the worker writes a traceback's frames, so
    that the judge reads a timeout's place as it reads an exception's."""
    return "".join(f'  File "{file_label}", line {line}, in {name}\n' for line, name in found)
