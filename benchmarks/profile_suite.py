"""Where the test suite's CPU time goes, by kind of process (Linux, as root).

    python benchmarks/profile_suite.py [pytest arguments]   (default: -n auto --dist loadfile)

Runs ``python -m pytest`` with the kernel's process accounting on (``accton``, from the
acct package) and reads the record of every process that ended meanwhile. The kernel
writes one for each process, so the figures include what no hook inside Python sees: a
box or a zygote that ends with ``os._exit``, a worker killed by its limit. Counted are the
processes whose parents lead back to that pytest, in four kinds:

* pytest itself and its xdist workers: the tests' own code and the in-process grades;
* fresh interpreters (a ``python`` that was exec'd): a judge process, a zygote, a command
  line, a benchmark; those that used a CPU-second or more are counted apart, since nearly
  all of that is one ``import torch`` each (about 1.5 CPU-seconds on this machine);
* processes forked without an exec: the boxes, ``support.forked_runs``' runs;
* other programs (git, uv, Chromium, otter, ...), the three largest named.

It also prints the run's wall time and the idle CPU time of the whole machine meanwhile
(``/proc/stat``): on two CPUs, wall time is about (CPU time + idle time) / 2. Figures come
from one run on a shared machine. Turning accounting on replaces whatever file the
machine was accounting to, and the script turns it off at the end.
"""
import argparse
import collections
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid,
# btime, etime (float), then eight comp_t (utime, stime, mem, io, rw, minflt, majflt,
# swaps) and the command's name.
RECORD = struct.Struct("<BBHIIIIIIf8H16s")
AFORK = 0x01  # forked and never exec'd
AHZ = 100  # the unit of a record's times
HEAVY_S = 1.0


def comp_t(value):
    """A comp_t: 13 bits of mantissa, 3 of a base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 0x7))


def read_records(path):
    """[{pid, ppid, comm, cpu_s, forked}] of an accounting file, in the order processes ended."""
    data = pathlib.Path(path).read_bytes()
    records = []
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] != 3:  # not a v3 record: the kernel writes nothing else
            raise ValueError(f"{path}: record at byte {offset} is version {fields[1]}, not 3")
        utime, stime = comp_t(fields[10]), comp_t(fields[11])
        records.append({"pid": fields[6], "ppid": fields[7], "forked": bool(fields[0] & AFORK),
                        "cpu_s": (utime + stime) / AHZ,
                        "comm": fields[18].split(b"\0", 1)[0].decode("ascii", "replace")})
    return records


def classify(records, pytest_pid):
    """{kind: [count, cpu_s]} of the processes descended from ``pytest_pid`` (itself included)."""
    parent = {}
    for record in records:
        parent[record["pid"]] = record["ppid"]

    def descends(pid):
        seen = set()
        while pid not in seen:
            if pid == pytest_pid:
                return True
            seen.add(pid)
            if pid not in parent:
                return False
            pid = parent[pid]
        return False

    kinds = collections.defaultdict(lambda: [0, 0.0])
    others = collections.Counter()
    for record in records:
        if not descends(record["pid"]):
            continue
        python = record["comm"].startswith("python")
        if record["pid"] == pytest_pid or (record["ppid"] == pytest_pid and python and not record["forked"]):
            kind = "pytest and its workers"
        elif record["forked"]:
            kind = "forked without exec (boxes, forked runs)"
        elif python:
            kind = (f"fresh interpreters of {HEAVY_S:g} CPU-s or more (a torch import each)"
                    if record["cpu_s"] >= HEAVY_S else "other fresh interpreters")
        else:
            kind = "other programs"
            others[record["comm"]] += record["cpu_s"]
        kinds[kind][0] += 1
        kinds[kind][1] += record["cpu_s"]
    return dict(kinds), others


def idle_s():
    """The machine's idle and I/O-wait time so far, in seconds over all CPUs."""
    fields = pathlib.Path("/proc/stat").read_text().splitlines()[0].split()
    return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")


def report(kinds, others, wall_s, idle):
    total = sum(cpu for _count, cpu in kinds.values())
    lines = [f"wall {wall_s:.0f} s; CPU {total:.0f} s in the suite's processes; machine idle {idle:.0f} CPU-s"]
    for kind, (count, cpu) in sorted(kinds.items(), key=lambda item: -item[1][1]):
        lines.append(f"  {cpu:7.1f} CPU-s {cpu / total if total else 0:4.0%}  {count:5d} processes  {kind}")
    if others:
        lines.append("  largest other programs: "
                     + ", ".join(f"{name} {cpu:.1f} s" for name, cpu in others.most_common(3)))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pytest_args", nargs="*", default=["-n", "auto", "--dist", "loadfile"],
                        help="what to pass to pytest (put -- before options)")
    args = parser.parse_args(argv)
    accton = shutil.which("accton") or shutil.which("accton", path="/usr/sbin:/sbin")
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or accton is None:
        print("profile_suite needs Linux, root and accton (apt-get install acct)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="profile-suite-") as scratch:
        accounting = pathlib.Path(scratch) / "pacct"
        accounting.touch(mode=0o600)
        started = subprocess.run([accton, str(accounting)], capture_output=True, text=True)
        if started.returncode != 0:  # a container without CAP_SYS_PACCT, a kernel without BSD accounting
            print(f"accton could not turn accounting on: {started.stderr.strip() or started.stdout.strip()}",
                  file=sys.stderr)
            return 2
        try:
            idle_before, started = idle_s(), time.monotonic()
            proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                     *args.pytest_args], cwd=ROOT)
            proc.wait()
            wall, idle = time.monotonic() - started, idle_s() - idle_before
        finally:
            subprocess.run([accton, "off"], check=False, stdout=subprocess.DEVNULL)
        kinds, others = classify(read_records(accounting), proc.pid)
    print(report(kinds, others, wall, idle))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
