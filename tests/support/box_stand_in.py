"""A box stand-in for the judge's call path (autograder.sandbox.client): a socket
pair whose far end writes whatever bytes a test chooses, so the tests of the wire
can send frames no honest worker would."""
import json
import socket
import struct
import threading
import time

from autograder.sandbox import wire


class StandInBox:
    """What a Sandbox needs of a box: a socket, a keeper's CPU count (``None``: none,
    the wall clock counts), its stack (none), kill/close/exit_status. ``answer(request_id)`` returns
    the bytes the box writes once it has read a request (then it stops writing),
    or a function that writes to the socket itself."""

    def __init__(self, answer, cpu=None, trickle_s=0.0):
        self.sock, self._theirs = socket.socketpair()
        self.isolation = {}
        self._cpu, self.closed = cpu, False
        self._thread = threading.Thread(target=self._serve, args=(answer, trickle_s), daemon=True)
        self._thread.start()

    def _serve(self, answer, trickle_s):
        try:
            request = wire.recv_frame(self._theirs)
            data = answer(request.get("id"))
            if trickle_s:
                for index in range(len(data)):
                    self._theirs.sendall(data[index:index + 1])
                    time.sleep(trickle_s)
            elif callable(data):
                data(self._theirs)
            else:
                self._theirs.sendall(data)
            self._theirs.shutdown(socket.SHUT_WR)  # and ends: a cut frame meets the end of the stream
        except OSError:
            pass  # the judge closed the box

    def usage(self):
        return None if self._cpu is None else (self._cpu, False)

    def stack(self):
        return b""  # a box that dumps no stack when its call is stopped (autograder.intake.stack_dump)

    def kill(self):
        pass

    def exit_status(self, timeout=3.0):
        return "exit code 0"

    def close(self):
        self.closed = True
        for sock in (self.sock, self._theirs):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._thread.join(5)


def framed(payload):
    return struct.pack(">I", len(payload)) + payload


def reply(request_id, value=None, **extra):
    frame = {"id": request_id, "ok": True, "result": {"value": value}}
    frame.update(extra)
    return framed(json.dumps(frame).encode())
