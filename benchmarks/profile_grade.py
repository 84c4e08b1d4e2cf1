"""Where a grade's time goes: the CPU time of each phase of ``python -m autograder grade``
(interpreter start, torch's import, the zygote, pytest and the collection, the tests, the
report), as a share of one ``import torch``, and what a test costs.

    python benchmarks/profile_grade.py [--runs 5] [--module MODULE] [--per-test]

CPU time, not wall time: what each process computed, which another user's work on a shared
machine hardly changes (wall time there mostly measures the others). The judge process (B)
marks its phases as it passes them (a boot of its own wraps a few of the engine's functions;
nothing is graded differently); the command line (A) counts its own before and after B.
"zygote, boxes" is what B's children computed besides the processes that ran the modules'
tests apart. Interleaved with ``python -c 'import torch'`` (the floor), medians printed.

``--per-test``: one grade of the solutions in this process (its reference runs computed,
then one more with them kept, as in a class or a watch session): per test, the round trips
to the boxes, the bytes they carried, the judge's and the boxes' CPU time; box starts and
reference runs per grade.
"""
import json
import os
import pathlib
import resource
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- in the judge process (B) -------------------------------------------------------------------
def judge_with_marks(out):
    """B's boot: mark each phase's end (this process's CPU time), then serve as B does."""
    started = time.monotonic()
    marks = [("interpreter start", _own_cpu(), 0.0)]

    def mark(name):
        marks.append((name, _own_cpu(), time.monotonic() - started))

    from autograder.judge_process import grading, launcher
    from autograder.sandbox import zygote

    mark("role imported")
    me = os.getpid()
    name = "preload_shared" if hasattr(zygote, "preload_shared") else "_preload"  # what the judge loads for both
    preload = getattr(zygote, name)

    def marked_preload():
        import torch  # noqa: F401

        mark("torch imported")
        preload()
        if os.getpid() == me:
            mark("torch warmed up, worker side loaded")

    setattr(zygote, name, marked_preload)
    grade, tests = grading.grade, {}

    def marked_grade(job, boxes):
        mark("zygote forked, job read")
        from autograder.judging import engine, suites

        preload_judge, run_suites, run_items = engine.preload_judge, engine.Session.run_suites, suites._run_items

        def marked_preload_judge():
            preload_judge()
            mark("judge preloaded")

        def marked_run_suites(self, *args, **kwargs):
            mark("session opened")
            return run_suites(self, *args, **kwargs)

        def marked_run_items(*args, **kwargs):
            mark("pytest started, suites collected")
            before = _children_cpu()
            try:
                return run_items(*args, **kwargs)
            finally:
                mark("tests (judge's share)")
                tests["apart"] = _children_cpu() - before

        engine.preload_judge, engine.Session.run_suites, suites._run_items = \
            marked_preload_judge, marked_run_suites, marked_run_items
        report = grade(job, boxes)
        mark("feedback, report")
        return report

    grading.grade = marked_grade
    exit_ = os._exit

    def marked_exit(code):
        if os.getpid() == me:
            mark("boxes closed, exit")
            with open(out, "w", encoding="utf-8") as answer:
                json.dump({"marks": marks, "apart": tests.get("apart", 0.0), "children": _children_cpu()}, answer)
        exit_(code)

    os._exit = marked_exit
    launcher.judge_main()


# -- in the command line (A) --------------------------------------------------------------------
def command_line_with_marks(out, argv):
    """(A, in a child of the profiler) ``python -m autograder`` with ``argv``, its judge started
    with :func:`judge_with_marks`; A's own CPU before, while and after B runs goes to ``out.a``."""
    from autograder.judge_process import launcher

    launcher._BOOT = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/benchmarks']; "
                      f"import profile_grade; profile_grade.judge_with_marks({str(out)!r})")
    marks, start, close = {}, launcher.Judge.__init__, launcher.Judge.close

    def started(self, *args, **kwargs):
        marks["A before B"] = _own_cpu()
        start(self, *args, **kwargs)

    def closed(self, *args, **kwargs):
        marks["A while B ran"] = _own_cpu()
        close(self, *args, **kwargs)

    launcher.Judge.__init__, launcher.Judge.close = started, closed
    from autograder import __main__ as entry

    entry.main(argv)
    marks["A after B"] = _own_cpu()
    pathlib.Path(str(out) + ".a").write_text(json.dumps(marks), encoding="utf-8")


def profiled_grade(argv, scratch):
    """One ``python -m autograder`` with ``argv`` (a grade), profiled: ``{phase: CPU seconds}``
    of A, B and B's children."""
    import subprocess
    import tempfile

    out = pathlib.Path(tempfile.mkstemp(dir=scratch, suffix=".json")[1])
    subprocess.run([sys.executable, __file__, "--command-line", str(out), *argv], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    judge = json.loads(out.read_text(encoding="utf-8"))
    a = json.loads(pathlib.Path(str(out) + ".a").read_text(encoding="utf-8"))
    phases = {"A: start, arguments (before B)": a["A before B"],
              "A: outputs prepared (while B runs)": a["A while B ran"] - a["A before B"],
              "A: report written (after B)": a["A after B"] - a["A while B ran"]}
    previous = 0.0
    for name, cpu, _wall in judge["marks"]:
        phases["B: " + name] = phases.get("B: " + name, 0.0) + cpu - previous
        previous = cpu
    phases["modules' tests, apart"] = judge["apart"]
    phases["zygote, boxes"] = judge["children"] - judge["apart"]
    return phases


def floor_cpu():
    import subprocess

    before = _children_cpu()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return _children_cpu() - before


def phases_table(args):
    import statistics
    import tempfile

    grade = ["grade", "--submission", args.submission, "--seed", str(args.seed), "--quiet"]
    if args.module:
        grade += ["--module", args.module]
    floors, runs = [], []
    with tempfile.TemporaryDirectory(prefix="profile-grade-") as scratch:
        for _ in range(args.runs):  # interleaved: both see the same machine
            floors.append(floor_cpu())
            runs.append(profiled_grade(grade + ["--results", str(pathlib.Path(scratch) / "results.json")], scratch))
    floor = statistics.median(floors)
    print(f"CPU time of `python -m autograder {' '.join(grade)}` by phase, median of {args.runs} "
          f"(floor: python -c 'import torch', {floor:.2f} s CPU)")
    total = 0.0
    for name in runs[0]:
        value = statistics.median(run.get(name, 0.0) for run in runs)
        total += value
        print(f"  {name:42s} {value:6.3f} s  {value / floor:5.2f}x the floor")
    print(f"  {'all processes':42s} {total:6.3f} s  {total / floor:5.2f}x the floor")
    return 0


# -- per test (in this process) -----------------------------------------------------------------
def _schedstat(pid):
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as stat:
            return int(stat.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def two_grades(submission, seed, around):
    """Grade ``submission`` twice in this process, on one zygote and in one kept collection:
    the first computes the reference runs, the second keeps them (as a class's slot or a
    watch session grades). ``around(kept, grade)`` runs each: ``grade()`` grades and returns
    the report; its return values come back in a list."""
    from autograder.judging import engine, reference_cache, suites
    from autograder.sandbox.boxes import start_boxes

    boxes = start_boxes()
    engine.preload_judge()
    try:
        reference_cache.clear()
        return suites.kept_collected(True, lambda: [
            around(kept, lambda: engine.grade_submission(submission, seed=seed, boxes=boxes))
            for kept in (False, True)])
    finally:
        boxes.close()


def per_test(args):
    """Round trips, bytes, judge and box CPU per test; box starts and reference runs per grade."""
    import collections

    from autograder.judging import reference_cache
    from autograder.sandbox import client, wire

    counts = collections.Counter()
    request, send, recv, cached = client.Sandbox._request, wire.send_frame, wire.recv_frame, reference_cache.cached
    start = client.Sandbox._start

    def counted_start(self):
        counts["box starts"] += 1
        return start(self)

    def counted_request(self, message, *rest, **kwargs):
        pid = self._box.pid if self._box is not None else None
        box_before, judge_before = _schedstat(pid) if pid else None, time.process_time()
        try:
            return request(self, message, *rest, **kwargs)
        finally:
            counts["round trips"] += 1
            counts["judge CPU in round trips"] += time.process_time() - judge_before
            box_after = _schedstat(pid) if pid else None
            if box_before is not None and box_after is not None:
                counts["box CPU in round trips"] += box_after - box_before

    def counted_send(sock, message, deadline=None):
        counts["bytes"] += len(wire._ENCODER.encode(message))
        return send(sock, message, deadline)

    def counted_recv(sock, deadline=None, max_bytes=wire.MAX_FRAME_BYTES):
        frame = recv(sock, deadline, max_bytes)
        counts["bytes"] += len(wire._ENCODER.encode(frame))
        return frame

    def counted_cached(kind, spec, compute):
        def timed():
            counts["reference runs"] += 1
            started = time.process_time()
            try:
                return compute()
            finally:
                counts["judge CPU in reference runs"] += time.process_time() - started
        return cached(kind, spec, timed)

    originals = (request, start, send, recv, cached)
    client.Sandbox._request, client.wire.send_frame, client.wire.recv_frame = counted_request, counted_send, counted_recv
    client.Sandbox._start = counted_start
    reference_cache.cached = counted_cached

    def counted(kept, grade):
        counts.clear()
        started = time.process_time()
        report = grade()
        counts["judge CPU"] = time.process_time() - started
        return kept, len(report.tests), dict(counts)

    try:
        rows = two_grades(args.submission, args.seed, counted)
    finally:
        client.Sandbox._request, client.Sandbox._start, client.wire.send_frame, client.wire.recv_frame, \
            reference_cache.cached = originals
    for kept, tests, found in rows:
        print(f"one grade, {tests} tests, reference runs {'kept from the grade before' if kept else 'computed'}:")
        print(f"  round trips {found.get('round trips', 0) / tests:.2f} a test, {found.get('bytes', 0) / tests:,.0f} "
              f"bytes a test; {found.get('box starts', 0)} box starts; {found.get('reference runs', 0)} reference "
              f"runs ({found.get('judge CPU in reference runs', 0) * 1000:.0f} ms)")
        print(f"  judge CPU {found.get('judge CPU', 0) / tests * 1000:.2f} ms a test "
              f"(round trips {found.get('judge CPU in round trips', 0) / tests * 1000:.2f} ms), box CPU in round trips "
              f"{found.get('box CPU in round trips', 0) / tests * 1000:.2f} ms a test")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--command-line"]:  # the profiler's own child: A, profiled
        command_line_with_marks(argv[1], argv[2:])
        return 0
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--submission", default=str(ROOT / "solutions"))
    parser.add_argument("--module", default=None, help="profile `grade --module MODULE`")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--per-test", action="store_true", help="what each test costs (in this process)")
    args = parser.parse_args(argv)
    return per_test(args) if args.per_test else phases_table(args)


if __name__ == "__main__":
    sys.exit(main())
