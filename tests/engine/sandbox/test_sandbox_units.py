"""Small pieces of the sandbox, on their own: which interpreter folders a box
may read, how box reports combine, uids for students."""
import os
import subprocess
import sys
import time

import pytest

from autograder.sandbox import isolation, uids
from autograder.sandbox.confine.layers.readable import carve


def test_carving_keeps_everything_but_the_grader(tmp_path):
    for folder in ("lib/python3/site-packages", "repo/autograder/assignment/hidden", "repo/.venv/lib", "repo/docs", "bin"):
        (tmp_path / folder).mkdir(parents=True)
    root, repo = str(tmp_path), str(tmp_path / "repo")
    kept = carve(root, [repo])
    assert repo not in kept and not any(path.startswith(repo + os.sep) for path in kept)
    assert sorted(os.path.basename(p) for p in kept) == ["bin", "lib"]
    assert carve(str(tmp_path / "repo" / ".venv"), [repo]) == [str(tmp_path / "repo" / ".venv")]
    assert carve(repo, [repo]) == []


def test_combined_report_is_the_weakest():
    strong = {"confined": True, "clean_process": True, "fs": "Landlock", "network": "none",
              "signals": "own process namespace", "process_namespace": True, "uid": "uid 5 of its own",
              "scratch": "tmpfs", "problems": []}
    weak = dict(strong, confined=False, process_namespace=False, problems=["no user namespace"])
    combined = isolation.combine([strong, weak, strong])
    assert combined["confined"] is False and combined["process_namespace"] is False
    assert combined["problems"] == ["no user namespace"]
    assert isolation.combine([strong, strong])["confined"] is True
    assert isolation.combine([]) == {}
    assert "NOT CONFINED" in isolation.summary(combined)


def test_a_confined_report_names_the_layers_it_lacks():
    """Confined with a minimal root but no syscall filter (no libseccomp binding): the
    report says so beside `confined`, and so does every summary of it."""
    full = {"confined": True, "root": "minimal (pivot_root): 9 read-only folders", "fs": "Landlock ABI 6: file system",
            "syscalls": "seccomp: no new sockets", "network": "none (empty network namespace)",
            "signals": "own process namespace", "process_namespace": True, "memory": "cgroup v2: at most 1 GiB",
            "problems": []}
    unfiltered = dict(full, syscalls="not filtered", problems=["syscall filter: no libseccomp binding"])
    assert isolation.combine([full, full])["missing_layers"] == []
    assert isolation.summary(isolation.combine([full])).startswith("confined (")
    combined = isolation.combine([full, unfiltered])
    assert combined["confined"] is True and combined["missing_layers"] == ["syscall filter"]
    assert isolation.summary(combined).startswith("confined, but without: syscall filter (")
    assert isolation.summary(unfiltered).startswith("confined, but without: syscall filter (")
    bare = dict(full, root="the machine's, read-only", network="TCP blocked (Landlock)",
                memory="each process at most 2048 MiB (no cgroup)")
    assert isolation.combine([bare])["missing_layers"] == ["minimal root", "network namespace", "cgroup"]


@pytest.mark.skipif(not uids.running_as_root(), reason="uids are handed out as root only")
def test_student_uids_are_unused_and_distinct():
    chosen = uids.allocate(5)
    assert len(set(chosen)) == 5
    assert all(uid >= uids.FIRST and not uids.processes_of(uid) for uid in chosen)


@pytest.mark.skipif(not uids.running_as_root(), reason="uids are handed out as root only")
def test_a_process_left_under_a_students_uid_is_found_and_killed():
    import subprocess

    uid = uids.allocate(1)[0]
    decoy = subprocess.Popen(["sleep", "60"], user=uid, group=uid,
                             extra_groups=[], cwd="/")
    try:
        deadline = time.monotonic() + 10
        while not uids.processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert uids.processes_of(uid) == [decoy.pid]
        assert uids.kill_leftovers(uid) == 1
        assert decoy.wait(timeout=10) == -9
        assert uids.processes_of(uid) == []
    finally:
        decoy.kill()
        decoy.wait()


def test_no_uids_without_root(monkeypatch):
    monkeypatch.setattr(uids, "running_as_root", lambda: False)
    assert uids.allocate(2) == [None, None]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="Linux /proc")
def test_tree_usage_from_known_members_equals_the_walk_of_proc():
    """A box's keeper passes its cgroup's pids instead of walking /proc per call."""
    from autograder.sandbox.confine import limits
    from support.helpers import parent_with_child

    with parent_with_child("while True: pass") as (parent, child):  # one busy child
        time.sleep(0.3)  # some CPU time of its own
        walked = limits.tree_usage(parent.pid)
        known = limits.tree_usage(parent.pid, members=[parent.pid, child, 999999999])
        assert known[1] and walked[1]  # the busy child is runnable
        assert abs(known[0] - walked[0]) < 0.2
        assert limits.tree_usage(parent.pid, members=[])[0] < known[0]  # the child counted only when named


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"), reason="cgroups need root")
def test_a_box_cgroup_lists_its_members():
    """In a forked child (joining a box cgroup moves the caller into it). The list is
    read before the worker's child is born too, as a keeper reads it on every call:
    a process started later must show in the next read (cgroup v1 keeps the list an
    open file first read)."""
    from autograder.sandbox.confine import cgroups

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            cgroup, problem = cgroups.box_cgroup(f"amp-test-members-{os.getpid()}", 4 * 2**30, 64)
            if cgroup is None:
                code = 3
            else:
                before = cgroup.members()
                inside = os.fork()  # born in the cgroup, as a box's worker is
                if inside == 0:
                    time.sleep(30)
                    os._exit(0)
                listed = cgroup.members()
                os.kill(inside, 9)
                os.waitpid(inside, 0)
                cgroup.leave_and_remove()
                # the caller (a box's keeper) is left out, what it started is not
                code = 0 if before == [] and listed == [inside] and cgroup.members() is None else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 3:
        pytest.skip("no writable cgroup hierarchy here")
    assert os.waitstatus_to_exitcode(status) == 0


def _dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_box_cgroups_go_and_live_or_young_ones_stay(tmp_path):
    """A stand-in cgroup tree: the kernel's refusal to remove a cgroup that holds a
    process is a folder that holds a file here."""
    from autograder.sandbox.confine import cgroups

    dead, now = _dead_pid(), time.time()
    for hierarchy in ("memory", "pids"):
        (tmp_path / hierarchy).mkdir()
    made = {
        "stale": tmp_path / "memory" / f"autograder-box-{dead}-1",
        "stale_v2": tmp_path / f"autograder-box-{dead}",
        "maker_alive": tmp_path / "pids" / f"autograder-box-{os.getpid()}-2",
        "young": tmp_path / "pids" / f"autograder-box-{dead}-3",
        "busy": tmp_path / "memory" / f"autograder-box-{dead}-4",
        "not_ours": tmp_path / "memory" / f"other-{dead}",
    }
    for name, path in made.items():
        path.mkdir()
        if name != "young":
            os.utime(path, (now - 2 * cgroups.STALE_AFTER_S,) * 2)
    (made["busy"] / "cgroup.procs").write_text("1234\n")
    os.utime(made["busy"], (now - 2 * cgroups.STALE_AFTER_S,) * 2)
    removed = cgroups.remove_stale(now=now, root=str(tmp_path))
    assert sorted(removed) == sorted([str(made["stale"]), str(made["stale_v2"])])
    assert all(made[name].exists() for name in ("maker_alive", "young", "busy", "not_ours"))


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"), reason="cgroups need root")
def test_a_real_stale_box_cgroup_goes_and_one_holding_a_process_stays():
    """Decoy cgroups made by this test, named after a process that has ended."""
    from autograder.sandbox.confine import cgroups

    dead = _dead_pid()
    empty, problem = cgroups.box_cgroup(f"autograder-box-{dead}-decoy-empty", 2**30, 16, join=False)
    if empty is None:
        pytest.skip(problem or "no writable cgroup hierarchy here")
    held, _ = cgroups.box_cgroup(f"autograder-box-{dead}-decoy-held", 2**30, 16, join=False)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        held.join(sleeper.pid)
        decoys = set(empty.paths + held.paths)  # other runs' stale cgroups may go too
        assert not decoys & set(cgroups.remove_stale())  # made a moment ago: a live zygote's could be
        removed = cgroups.remove_stale(now=time.time() + 2 * cgroups.STALE_AFTER_S)
        assert decoys & set(removed) == set(empty.paths)
        assert all(os.path.isdir(path) for path in held.paths)
    finally:
        sleeper.kill()
        sleeper.wait()
        held.leave_and_remove()
        empty.leave_and_remove()
    assert not any(os.path.exists(path) for path in held.paths + empty.paths)


@pytest.mark.slow
def test_a_student_traceback_shows_only_their_frames_and_reads_only_their_files(tmp_path):
    """Carets and all, as Python prints them; the grader's and torch's files are never read."""
    import importlib.util
    import linecache

    from autograder.sandbox import worker

    submission, library = tmp_path / "submission", tmp_path / "library"
    submission.mkdir()
    library.mkdir()
    (library / "helper_lib.py").write_text("def call(f, x):\n    return f(x)\n")
    (submission / "stu_mod.py").write_text(
        "import helper_lib\n\ndef f(x):\n    return helper_lib.call(g, x) + 1\n\n"
        "def g(x):\n    return {'a': 5}[x] [0]\n")
    sys.path.insert(0, str(library))
    try:
        spec = importlib.util.spec_from_file_location("stu_mod", submission / "stu_mod.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            module.f("a")
        except TypeError as exc:
            raised = exc
    finally:
        sys.path.remove(str(library))
        sys.modules.pop("helper_lib", None)
    linecache.clearcache()
    shown = worker._student_traceback(raised, str(submission))
    assert str(library / "helper_lib.py") not in linecache.cache
    import traceback

    everything = traceback.extract_tb(raised.__traceback__)  # Python's own rendering, every file read
    own = [frame for frame in everything if frame.filename.startswith(str(submission))]
    assert len(own) == 2 and len(everything) == 4  # this test, f, the library, g
    assert shown == "".join(traceback.format_list(own) + traceback.format_exception_only(TypeError, raised)) \
        .replace(str(submission) + os.sep, "")
    assert "^^^" in shown and "helper_lib" in shown and "library" not in shown
    assert worker._location(raised, str(submission)) == {"line": 7, "code": "return {'a': 5}[x] [0]", "offset": 0}


def test_an_error_walks_its_traceback_once_and_locates_the_students_frames_alone(monkeypatch):
    """Positions (a walk of a frame's code) are found for the student's frames only, once
    for the traceback and the location together: a deep recursion's error stays cheap."""
    from autograder.sandbox import worker

    looked_up = []
    real = worker._position
    monkeypatch.setattr(worker, "_position", lambda code, offset: looked_up.append(code.co_name) or real(code, offset))

    def outside(function):  # a frame in this file: not the student's
        return function()

    try:
        outside(lambda: {}["missing"])
    except KeyError as exc:
        raised = exc
    here = os.path.dirname(os.path.abspath(__file__))
    answer = worker._error(raised, here)
    assert looked_up == ["test_an_error_walks_its_traceback_once_and_locates_the_students_frames_alone",
                         "outside", "<lambda>"]
    assert answer["line"] and "KeyError: 'missing'" in answer["traceback"]
    looked_up.clear()
    assert worker._error(raised, os.path.join(here, "data"))["traceback"] == "KeyError: 'missing'\n"
    assert looked_up == []
