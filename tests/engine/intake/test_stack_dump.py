"""Where a stopped call was, read from the stack a box dumps (autograder.intake.stack_dump):
faulthandler's own text is parsed (this Python's, not a copy of it), only the student's file
is kept, and whatever else a box writes is bounded and dropped."""
import faulthandler
import os
import socket
import subprocess
import sys
import threading
import time

from autograder.intake import stack_dump

STUDENT = "/box/submission/toy_sum.py"
SERVING = "/grader/autograder/sandbox/worker.py"


def real_dump(tmp_path):
    """faulthandler's dump of a call two functions deep into a file of the student's name."""
    path = tmp_path / "toy_sum.py"
    path.write_text("import faulthandler\n\ndef inner(fd):\n    faulthandler.dump_traceback(fd, all_threads=True)\n\n"
                    "def outer(fd):\n    inner(fd)\n", encoding="utf-8")
    namespace = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    out = tmp_path / "dump.txt"
    with open(out, "wb") as dump:
        namespace["outer"](dump.fileno())
    return out.read_bytes(), str(path)


def test_a_real_dump_gives_the_student_frames_outermost_first(tmp_path):
    dump, path = real_dump(tmp_path)
    assert stack_dump.frames(dump, {path}) == [(7, "outer"), (4, "inner")]
    assert stack_dump.frames(dump, {"/elsewhere/toy_sum.py"}) == []
    assert stack_dump.as_traceback([(7, "outer"), (4, "inner")], "toy_sum.py") == \
        '  File "toy_sum.py", line 7, in outer\n  File "toy_sum.py", line 4, in inner\n'


def test_the_thread_serving_the_judge_is_chosen():
    dump = (f'Thread 0x1 (most recent call first):\n  File "{STUDENT}", line 3 in helper\n\n'
            f'Current thread 0x2 (most recent call first):\n  File "{STUDENT}", line 9 in update\n'
            f'  File "{SERVING}", line 150 in handle\n').encode()
    assert stack_dump.frames(dump, {STUDENT}, SERVING) == [(9, "update")]
    assert stack_dump.frames(dump, {STUDENT}) == [(3, "helper")]  # no serving frame known: the first


def test_what_a_box_forges_is_dropped_or_bounded():
    deep = "".join(f'  File "{STUDENT}", line {n} in f{n}\n' for n in range(1, 200))
    dump = ("Current thread 0x1 (most recent call first):\n"
            f'  File "{STUDENT}", line 5 in \x1b[31mred\n'            # a name no function has
            f'  File "{STUDENT}", line 99999999 in huge\n'             # a number past any file
            f'  File "/etc/passwd", line 1 in root\n'                  # not the student's file
            f'File "{STUDENT}", line 6 in unindented\n' + deep).encode() + b"\xff\xfe\x00"
    found = stack_dump.frames(dump, {STUDENT})
    assert len(found) == stack_dump.MAX_FRAMES
    assert found[-1] == (1, "f1") and all(name.startswith("f") for _line, name in found)
    assert stack_dump.frames(b"", {STUDENT}) == [] and stack_dump.frames(b"\x00" * 100, {STUDENT}) == []


def test_read_stops_at_a_pause_at_its_bound_and_when_nothing_comes():
    ours, theirs = socket.socketpair()
    try:
        started = time.monotonic()
        assert stack_dump.read(ours, wait=0.1) == b""
        assert time.monotonic() - started < 1.0
        theirs.sendall(b"x" * (stack_dump.MAX_BYTES + 5000))
        assert len(stack_dump.read(ours)) == stack_dump.MAX_BYTES
        ours.recv(1 << 20)

        def trickle():
            theirs.sendall(b"first ")
            time.sleep(stack_dump.QUIET_S * 10)  # past the pause: not part of this dump
            theirs.sendall(b"late")
        writer = threading.Thread(target=trickle)
        writer.start()
        assert stack_dump.read(ours) == b"first "
        writer.join()
        ours.recv(1 << 20)

        def drip():  # a byte just inside every pause, for ever: not waited for past twice the wait
            try:
                while True:
                    theirs.sendall(b"y")
                    time.sleep(stack_dump.QUIET_S / 2)
            except OSError:
                pass
        threading.Thread(target=drip, daemon=True).start()
        started = time.monotonic()
        assert stack_dump.read(ours, wait=0.3)
        assert time.monotonic() - started < 0.3 * 2 + 0.5
    finally:
        ours.close()
        theirs.close()
    assert stack_dump.read(ours) == b""  # a closed socket: nothing, no error


SPINNER = """
import faulthandler, os, signal, sys
fd = int(sys.argv[1])
faulthandler.register(signal.SIGUSR2, file=fd, all_threads=True)

def spin():
    os.write(fd, b"ready")
    while True:
        pass

spin()
"""


def test_a_process_registered_as_the_worker_is_writes_its_stack_on_the_signal(tmp_path):
    """faulthandler.register as the worker uses it: the signal makes a looping process write
    where it is, while the reader drains it (faulthandler writes a few bytes at a time)."""
    script = tmp_path / "spinner.py"
    script.write_text(SPINNER, encoding="utf-8")
    ours, theirs = socket.socketpair()
    child = subprocess.Popen([sys.executable, str(script), str(theirs.fileno())], pass_fds=[theirs.fileno()])
    try:
        theirs.close()
        assert stack_dump.read(ours, wait=30.0) == b"ready"
        os.kill(child.pid, stack_dump.SIGNAL)
        found = stack_dump.frames(stack_dump.read(ours, wait=10.0), {str(script)})
    finally:
        child.kill()
        child.wait()
        ours.close()
    assert [name for _line, name in found] == ["<module>", "spin"]
    assert found[0][0] == 11 and found[1][0] in (8, 9)  # the loop's line (its "while", or its body)
