"""The environment a judge, a zygote and a box start with
(autograder/sandbox/environment.py)."""
import os
import sys
import time

import pytest

from autograder.sandbox import environment


def test_a_forking_process_gets_no_caller_secrets_and_one_blas_thread():
    caller = {"PATH": "/usr/bin", "GITHUB_TOKEN": "secret", "GITHUB_OUTPUT": "/runner/file", "LANG": "C.UTF-8"}
    env = environment.forking_environment(caller)
    assert "GITHUB_TOKEN" not in env and "GITHUB_OUTPUT" not in env
    assert env["PATH"] == "/usr/bin" and env["OPENBLAS_NUM_THREADS"] == "1"
    assert environment.forking_environment(dict(caller, OPENBLAS_NUM_THREADS="4"))["OPENBLAS_NUM_THREADS"] == "4"
    assert environment.scrubbed_environment(env)["OPENBLAS_NUM_THREADS"] == "1"  # boxes see it too


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_the_zygote_runs_a_single_thread():
    """numpy's OpenBLAS starts no thread pool in the process every box is forked from."""
    from autograder.sandbox.boxes import ZygoteBoxes

    boxes = ZygoteBoxes.start()
    try:
        boxes.new_channel()  # answers once the zygote has imported torch (and numpy)
        time.sleep(0.2)
        assert os.listdir(f"/proc/{boxes.process.pid}/task") == [str(boxes.process.pid)]
    finally:
        boxes.close()
