"""Hostile submissions against what a box can see and talk to (issue 17): pathname
UNIX sockets, the machine's folders, supplementary groups.

The decoy servers are sockets this test creates in folders of its own (under
/tmp, /var/tmp and the test's temporary folder), world-writable so that only
the sandbox stands between them and the box; never the machine's real sockets.
"""
import os
import shutil
import site
import socket
import sys
import tempfile
import threading

import pytest

from support.helpers import ROOT
from support.hostile import MARK, TIGHT, full_marks, report_texts
from support.hostile_submissions import REPORTING_STEP

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("confinement_here")]


class DecoyServer:
    """A UNIX stream socket that records who connected."""

    def __init__(self, folder):
        self.path = os.path.join(folder, "d.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o777)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.accepted = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(1)
            try:
                self.accepted.append(conn.recv(100) or b"connected")
            except OSError:
                self.accepted.append(b"connected")
            conn.close()

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


@pytest.fixture
def decoys():
    folders = []
    for parent in ("/tmp", "/var/tmp", str(ROOT.parent)):  # folders a box could otherwise see
        if os.path.isdir(parent) and os.access(parent, os.W_OK):
            folder = tempfile.mkdtemp(prefix=MARK[-8:], dir=parent)
            os.chmod(folder, 0o777)  # only the sandbox stands in the way
            if len(folder) < 90:
                folders.append(folder)
            else:
                os.rmdir(folder)
    servers = []
    try:  # removed even when a server could not be set up
        servers.extend(DecoyServer(folder) for folder in folders)
        yield servers
    finally:
        for server in servers:
            server.close()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


SOCKET_PROBE = '''
import socket
import sys
for path in {paths!r}:
    for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET, socket.SOCK_DGRAM):
        try:
            with socket.socket(socket.AF_UNIX, kind) as conn:
                conn.settimeout(2)
                conn.connect(path)
                conn.sendall(b"stolen")
                FOUND.append("connected to " + path)
        except OSError:
            pass
for folder in ("/run", "/var/run", "/home", "/dev/shm", "/srv", "/mnt"):
    if os.path.exists(folder):
        FOUND.append("sees " + folder)
for path in {paths!r}:
    if os.path.exists(path) or os.path.exists(os.path.dirname(path)):
        FOUND.append("sees " + path)
'''


@pytest.mark.slow
def test_pathname_unix_sockets_are_out_of_reach(grade_dir, decoys):
    paths = [server.path for server in decoys]
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=SOCKET_PROBE.format(paths=paths),
                                                                   use="pass")},
                       seed=31, limits=TIGHT)
    texts = report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert [server.accepted for server in decoys] == [[] for _ in decoys]
    assert "minimal" in report.isolation["root"]
    assert full_marks(report, "amp_update", "loss_scaler")


GROUPS_PROBE = '''
FOUND.append("groups=%r" % sorted(os.getgroups()))
with open("/proc/self/status") as status:
    FOUND.extend(line.strip() for line in status if line.startswith("Groups:"))
'''


def test_no_supplementary_groups_in_the_box(grade_dir):
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=GROUPS_PROBE, use="pass")},
                       seed=32, limits=TIGHT)
    texts = report_texts(report, "amp_training_step")
    assert "groups=" in texts, texts[:2000]
    if os.geteuid() == 0:
        assert "groups=[]" in texts and "'Groups:'" in texts, texts[:2000]
    else:  # kept in a user namespace, shown as the overflow group; what they own is not in the box
        own = set(os.getgroups()) - {os.getegid()}
        assert not [str(gid) for gid in own if f" {gid}" in texts.split("groups=")[1][:200]]


def test_the_box_root_holds_only_what_it_needs(grade_dir):
    """Checked by existence: Landlock also refuses listing the box's / itself."""
    names = ["run", "var", "tmp", "home", "srv", "mnt", "opt", "root", "boot", "media", "etc/passwd",
             "etc/shadow", "etc/group", "dev/shm", "dev/mqueue", "dev/pts", "dev/full", "sys/fs/cgroup",
             "sys/kernel", "dev/null", "dev/urandom"]
    probe = f'''
FOUND.append("seen=" + ",".join(name for name in {names!r} if os.path.lexists("/" + name)))
'''
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=probe, use="pass")},
                       seed=33, limits=TIGHT)
    texts = report_texts(report, "amp_training_step")
    assert "seen=" in texts, texts[:1500]
    seen = set(texts.split("seen=")[1].split("'")[0].split(","))
    # only the folders that lead to the interpreter (it may live under /root, /opt or /var/tmp)
    interpreter = {os.path.realpath(path).split(os.sep)[1] for path in
                   (sys.prefix, sys.base_prefix, *site.getsitepackages())}
    assert seen - interpreter == {"dev/null", "dev/urandom"}, seen
