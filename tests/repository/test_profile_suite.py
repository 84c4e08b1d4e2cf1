"""benchmarks/profile_suite.py reads the kernel's accounting records and sorts a suite's
processes by kind. (Running it needs root and accton, and takes the whole suite: by hand.)"""
import importlib.util
import struct

import pytest
from support.helpers import ROOT

spec = importlib.util.spec_from_file_location("profile_suite", ROOT / "benchmarks" / "profile_suite.py")
profile_suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(profile_suite)


def record(pid, ppid, ticks, comm, forked=False, version=3):
    """One acct_v3 record as the kernel writes it; ``ticks`` of user time as a comp_t."""
    exponent = 0
    while ticks >= 1 << 13:  # a comp_t keeps 13 bits and a base-8 exponent
        ticks >>= 3
        exponent += 1
    utime = (exponent << 13) | ticks
    return struct.pack("<BBHIIIIIIf8H16s", int(forked), version, 0, 0, 0, 0, pid, ppid, 0, 0.0,
                       utime, 0, 0, 0, 0, 0, 0, 0, comm.encode())


def write(tmp_path, *records):
    path = tmp_path / "pacct"
    path.write_bytes(b"".join(records))
    return path


def test_records_are_read_with_their_times_in_seconds(tmp_path):
    path = write(tmp_path, record(10, 1, 250, "python"), record(11, 10, 100_000, "git", forked=True))
    first, second = profile_suite.read_records(path)
    assert first == {"pid": 10, "ppid": 1, "forked": False, "cpu_s": 2.5, "comm": "python"}
    assert second["forked"] and second["comm"] == "git"
    assert abs(second["cpu_s"] - 1000) < 1000 / 2 ** 10  # a comp_t keeps three significant digits


def test_another_record_version_is_refused(tmp_path):
    with pytest.raises(ValueError, match="version 2"):
        profile_suite.read_records(write(tmp_path, record(10, 1, 1, "python", version=2)))


def test_only_the_suites_processes_are_counted_each_in_its_kind(tmp_path):
    records = profile_suite.read_records(write(
        tmp_path,
        record(100, 50, 300, "python"),  # pytest
        record(101, 100, 5000, "python"),  # an xdist worker
        record(102, 101, 180, "python"),  # a judge process a test started: a torch import
        record(103, 102, 20, "python", forked=True),  # a box forked from it
        record(104, 101, 30, "python"),  # a command line that imported no torch
        record(105, 101, 40, "git"),
        record(106, 105, 5, "git", forked=True),
        record(200, 1, 9999, "python"),  # another user's process on the machine
    ))
    kinds, others = profile_suite.classify(records, 100)
    heavy = next(kind for kind in kinds if kind.startswith("fresh interpreters of"))
    assert kinds["pytest and its workers"] == [2, 53.0]
    assert kinds[heavy] == [1, 1.8]
    assert kinds["other fresh interpreters"] == [1, 0.3]
    assert kinds["forked without exec (boxes, forked runs)"] == [2, 0.25]
    assert kinds["other programs"] == [1, 0.4] and others == {"git": 0.4}
    text = profile_suite.report(kinds, others, wall_s=30, idle=4)
    assert text.splitlines()[0] == "wall 30 s; CPU 56 s in the suite's processes; machine idle 4 CPU-s"
    assert "largest other programs: git 0.4 s" in text
