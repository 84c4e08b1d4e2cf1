"""What a box's own work costs: the requests one grade of the solutions sends to each
module's box, handed again to the worker's handler outside the sandbox.

    python benchmarks/profile_box_work.py [--passes 3]

``benchmarks/profile_grade.py --per-test`` counts a box's CPU time in its round trips:
the student's code and the scenarios' own code, plus decoding, encoding, the socket and
whatever confinement adds. This separates the first part. It grades the solutions twice
in this process (the second with the reference runs kept, as a class's slot grades each
student) and records what the judge sends each module's box during the second. A fresh
process per module then does what its box does before it serves -- the zygote's preload,
the worker's ``prepare`` and import of the module -- and hands each recorded request to
:meth:`autograder.sandbox.worker.Worker.answer`, then encodes the answer as the box
would. It prints the CPU time per module and kind of request, of the last of
``--passes`` passes: a box's first pass also pays lazy starts this leaves out, so the
figures are a floor of the work, not its cost in a box.

The replays run in child processes: ``prepare`` turns away any later import of the
grader, which this process (or a test calling :func:`main`) still needs.
"""
import argparse
import collections
import json
import pathlib
import pickle
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def record(scratch):
    """{module: [request, ...]} the judge sent during the second of two grades of the solutions
    (profile_grade.two_grades), and the copy of them it graded."""
    from autograder import active_assignment
    from autograder.sandbox import client

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from profile_grade import two_grades

    assignment = active_assignment.current()
    submission = scratch / "submission"
    submission.mkdir()
    for module in assignment.modules:
        (submission / f"{module}.py").write_bytes((assignment.solutions_dir / f"{module}.py").read_bytes())
    sent, recording = collections.defaultdict(list), []
    original = client.Sandbox._send

    def recorded_send(self, message, timeout, shapes=None):
        if recording:
            sent[self.module_name].append(message)
        return original(self, message, timeout, shapes)

    def recorded(kept, grade):
        recording[:] = [True] if kept else []
        return grade()

    client.Sandbox._send = recorded_send
    try:
        two_grades(submission, 2024, recorded)
    finally:
        client.Sandbox._send = original
    return dict(sent), submission


def replay(requests_path, submission, module, passes):
    """(A child) ``module``'s requests through a worker of its own, ``passes`` times; prints
    {"op": [count, CPU seconds of the last pass, errors answered]} as JSON. One module a
    process, as one a box: a module's guard would refuse another module's calls."""
    from autograder.sandbox import worker, zygote

    zygote.preload_shared()
    with open(requests_path, "rb") as given:
        requests = pickle.load(given)[module]
    box = worker.Worker(submission, module)
    box.prepare()
    box.handle({"op": "import"})
    costs = {}
    for _ in range(passes):
        costs = collections.defaultdict(lambda: [0, 0.0, 0])
        for request in requests:
            started = time.thread_time()
            reply = box.answer(request)
            json.dumps(box._recorded(reply))
            cost = costs[request.get("op")]
            cost[0] += 1
            cost[1] += time.thread_time() - started
            cost[2] += not reply["ok"]
    print(json.dumps(costs))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3, help="replays; the last one's figures are printed")
    args = parser.parse_args(argv)
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="profile-box-work-") as scratch:
        scratch = pathlib.Path(scratch)
        sent, submission = record(scratch)
        requests_path = scratch / "requests.pickle"
        with open(requests_path, "wb") as out:
            pickle.dump(sent, out)
        costs = {}
        for module in sent:
            child = subprocess.run([sys.executable, __file__, "--replay", str(requests_path), str(submission),
                                    module, str(args.passes)], cwd=ROOT, capture_output=True, text=True,
                                   timeout=600)
            if child.returncode != 0:
                print(child.stdout + child.stderr, file=sys.stderr)
                return 1
            for op, cost in json.loads(child.stdout.strip().splitlines()[-1]).items():
                costs[f"{module} {op}"] = cost
    print(f"the boxes' own work in one grade of the solutions (pass {args.passes} of {args.passes}, "
          "outside the sandbox):")
    for name, (count, seconds, errors) in sorted(costs.items()):
        print(f"  {name:30} {count:4} requests {seconds * 1e3:7.1f} ms  ({seconds / count * 1e3:.2f} ms each, "
              f"{errors} answered an error)")
    total = sum(seconds for _count, seconds, _errors in costs.values())
    print(f"  {'all':30} {sum(count for count, _s, _e in costs.values()):4} requests {total * 1e3:7.1f} ms")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--replay"]:
        sys.path.insert(0, str(ROOT))
        replay(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        sys.exit(0)
    sys.exit(main())
