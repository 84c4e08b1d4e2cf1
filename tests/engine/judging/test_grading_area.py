"""Where grades keep their working copies (autograder/judging/grading_area.py), and
that nothing is left there when a grading process is killed outright or its command line
is ended by SIGTERM or SIGHUP."""
import contextlib
import os
import pathlib
import signal
import stat
import subprocess
import sys
import time

import pytest

from autograder.judging import grading_area
from autograder.sandbox.confine import limits
from support import toy
from support.helpers import ROOT, outliving, private_grading_parent, working_copies


@pytest.fixture
def no_run_folder(monkeypatch):
    monkeypatch.delenv(grading_area.RUN_FOLDER_ENV, raising=False)
    monkeypatch.setattr(grading_area, "_chosen", None)


def _new_areas(parent, before):
    """The grades' areas made in ``parent`` since ``before``, at the top or in a new run's folder."""
    found = []
    for name in working_copies(parent) - before:
        path = pathlib.Path(parent, name)
        found += [path] if name.startswith("autograder-grade-") else list(path.rglob("autograder-grade-*"))
    return found


def test_a_grades_working_copies_go_on_a_memory_file_system_where_there_is_one(monkeypatch, no_run_folder):
    if sys.platform.startswith("linux") and os.access("/dev/shm", os.W_OK | os.X_OK):
        assert grading_area.area_parent() == "/dev/shm"
    monkeypatch.setattr(grading_area.os, "access", lambda path, mode: False)
    assert grading_area.area_parent() is None  # the system's temporary folder


def test_the_run_folder_named_by_the_starting_process_comes_first(tmp_path, monkeypatch, no_run_folder):
    system = grading_area.system_parent()
    monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, str(tmp_path))
    assert grading_area.area_parent() == str(tmp_path)
    for unusable in ("relative/folder", str(tmp_path / "gone"), ""):
        monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, unusable)
        assert grading_area.area_parent() == system, unusable
    monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, str(tmp_path))
    with grading_area.areas_of_this_run() as own:  # a class's judge: its own folder inside
        assert grading_area.area_parent() == own and pathlib.Path(own).parent == tmp_path
    assert grading_area.area_parent() == str(tmp_path) and not pathlib.Path(own).exists()


def test_a_run_folder_is_traversable_not_listable_and_goes_with_what_it_holds(tmp_path, monkeypatch,
                                                                                no_run_folder):
    monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, str(tmp_path))
    with grading_area.run_folder() as folder:
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o711
        locked = pathlib.Path(folder) / "autograder-grade-x" / "scratch"
        locked.mkdir(parents=True)
        (locked / "file").write_text("left by a box", encoding="utf-8")
        locked.chmod(0)  # what a hostile box may leave in a scratch folder
    assert not pathlib.Path(folder).exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked grading processes")
def test_forked_grading_processes_inherit_the_run_folder(no_run_folder):
    with grading_area.areas_of_this_run() as folder:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, str(grading_area.area_parent()).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as answer:
            assert answer.read() == folder


def _judge_of(cli_pid, timeout=60.0):
    """The grading process (B) started by the command line ``cli_pid``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in limits.children(cli_pid):
            with contextlib.suppress(OSError):
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"judge_process" in handle.read():
                        return pid
        time.sleep(0.05)
    raise AssertionError("no grading process appeared")


def _end_mid_grade(command, tmp_path, end):
    """Start ``command`` on a submission that never finishes; once the grade has made
    its working copies, call ``end(cli_pid, judge_pid)``. Returns (exit code, output,
    the judge and its zygote if still running, working copies left). The command's
    run folder goes in a parent of this test's own: other grades on the machine
    (another test run) cannot be taken for what it left."""
    with private_grading_parent() as parent:
        before = working_copies(parent)
        folder = toy.submission(tmp_path / "sub", toy.HANGS)  # any assignment's module will do
        cli = subprocess.Popen([sys.executable, "-m", "autograder", *command, "--submission", str(folder),
                                "--results", str(tmp_path / "results.json"), "--quiet", "--lang", "en"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=dict(toy.env(), **{grading_area.RUN_FOLDER_ENV: str(parent)}))
        try:
            judge = _judge_of(cli.pid)
            deadline = time.monotonic() + 60
            while not _new_areas(parent, before):
                assert time.monotonic() < deadline, "the grade never made its working copies"
                time.sleep(0.05)
            tree = [judge] + limits.children(judge)  # the judge and its zygote
            end(cli.pid, judge)
            output, _ = cli.communicate(timeout=90)
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.wait()
        left = outliving(tree, 20)
        return cli.returncode, output.decode("utf-8", "replace"), left, working_copies(parent) - before


@pytest.mark.slow
@pytest.mark.hostile
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_grade_whose_judge_is_killed_outright_leaves_no_working_copy(tmp_path, no_run_folder):
    """SIGKILL gives the grading process no chance to clean up: the command line,
    which outlives it, removes the run's folder with the student's copies in it."""
    code, output, _, copies = _end_mid_grade(["grade"], tmp_path, lambda cli, judge: os.kill(judge, signal.SIGKILL))
    assert code != 0 and "grading process" in output, output[-2000:]
    assert not copies, copies


@pytest.mark.slow
@pytest.mark.hostile
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_grade_ended_by_sigterm_or_sighup_stops_its_judge_and_leaves_no_working_copy(tmp_path, no_run_folder,
                                                                                      signum):
    """The signal reaches the command line alone (as from kill, a cancelled CI job or a
    closed terminal): it stops the judge, which closes its boxes, before it removes the
    run's folder, and says the grade was interrupted."""
    code, output, left, copies = _end_mid_grade(["grade"], tmp_path, lambda cli, judge: os.kill(cli, signum))
    assert code == 130 and "Interrupted: the grade was stopped" in output, output[-2000:]
    assert not left, f"still running: {left}"
    assert not copies, copies
    assert not (tmp_path / "results.json").exists()


@pytest.mark.slow
@pytest.mark.hostile
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_watch_ended_by_sigterm_mid_grade_stops_its_judge_and_leaves_no_working_copy(tmp_path, no_run_folder):
    code, output, left, copies = _end_mid_grade(["watch"], tmp_path, lambda cli, judge: os.kill(cli, signal.SIGTERM))
    assert code == 0 and "Stopped watching." in output, output[-2000:]
    assert not left, f"still running: {left}"
    assert not copies, copies


def test_a_run_folder_still_filling_while_it_is_removed_is_removed_all_the_same(tmp_path, monkeypatch,
                                                                                  no_run_folder):
    """A judge killed outright leaves its boxes a moment to die: files they add after
    the first removal are removed too."""
    import threading

    monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, str(tmp_path))
    folder = grading_area.run_folder()
    stop = time.monotonic() + 0.3

    def late_writer():
        while time.monotonic() < stop:
            with contextlib.suppress(OSError):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(os.path.join(folder.name, "autograder-grade-late"))  # never the folder itself
                pathlib.Path(folder.name, "autograder-grade-late", "f").write_bytes(b"x")
            time.sleep(0)

    writer = threading.Thread(target=late_writer)
    writer.start()
    folder.cleanup()
    writer.join()
    assert list(tmp_path.iterdir()) == []
