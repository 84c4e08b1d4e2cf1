"""The repository's commit-msg hook (.githooks/commit-msg) refuses subjects over 72 characters
and a body glued to the subject, and lets a short subject, a long body and fixups through."""
import shutil
import subprocess

import pytest
from support.helpers import ROOT

HOOK = ROOT / ".githooks" / "commit-msg"
pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")


def run_hook(tmp_path, message):
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run(["sh", str(HOOK), str(path)], capture_output=True, text=True)


@pytest.mark.parametrize("message", [
    "sandbox: refuse System V IPC in the syscall filter\n",
    "batch: " + "x" * 65 + "\n\n" + "why " * 80 + "\n",
    "i18n: 中文消息" + "字" * 62 + "\n",  # 72 characters, 200 bytes
    "fixup! " + "y" * 90 + "\n",
    "reports: short\n# a comment git strips\n",
])
def test_accepted(tmp_path, message):
    done = run_hook(tmp_path, message)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("message, said", [
    ("x" * 73 + "\n", "73 characters"),
    ("sandbox: subject\nbody glued to it\n", "second line blank"),
])
def test_refused(tmp_path, message, said):
    done = run_hook(tmp_path, message)
    assert done.returncode == 1 and said in done.stderr
