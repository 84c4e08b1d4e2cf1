"""The benchmarks run end to end (no figure is asserted: the machine decides those)."""
import importlib.util

import pytest
from support.helpers import MODULES, ROOT

# The slow tier (docs/maintaining.md): each benchmark runs end to end (~10-90 s).
pytestmark = pytest.mark.slow



def _bench(name):
    """benchmarks/``name``.py loaded as a module, so that a test calls its main in this process."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batch_benchmark_gives_a_ratio_per_round_and_their_median(capsys):
    """Two rounds of a two-student class (the solution and the stubs): each round prints its
    own ratio, the median follows, and the totals graded both ways agree in every round."""
    code = _bench("bench_grade_many").main(["--students", "2", "--single", "1", "--warmup", "0", "--rounds", "2",
                                     "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "class: 2 synthetic students (1 ok, 1 no work since the template)" in out  # one is the stubs
    assert "round 1 of 2:" in out and "round 2 of 2:" in out
    assert out.count("ratio (per submission, --jobs 1):") == 2
    assert "median ratio over 2 rounds (--jobs 1):" in out
    assert "totals identical for the 1 student(s) graded both ways, in each of the 2 rounds" in out


def test_lab_step_profile_rehearses_on_the_cpu(capsys):
    """The GPU-lab step profile (wall vs GPU-busy time per precision path) runs its CPU rehearsal
    end to end, at its smallest: one row per path, ratios to FP32, no figure asserted. (In this
    process, as the lab's own tests load its modules.)"""
    module = _bench("bench_lab_step_profile")
    assert module.main(["--rehearse", "--rounds", "1", "--profiled-steps", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["fp32"], ["fp16"], ["bf16"])]
    assert [row[0] for row in rows] == ["fp32", "fp16", "bf16"], out
    assert rows[0][-1] == "1.00" and all(float(row[1]) > 0 for row in rows), out


def test_wire_decode_benchmark_prints_a_ratio_per_answer(capsys, monkeypatch):
    """At an eighth of the reply bound: the answers' size decides the figures, not the rows."""
    from autograder.sandbox import wire

    module = _bench("bench_wire_decode")
    monkeypatch.setattr(wire, "MAX_REPLY_BYTES", wire.MAX_REPLY_BYTES // 8)
    assert module.main(["--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith("x")]
    assert [row[:22].strip() for row in rows] == list(module.ELEMENTS)


def test_endless_loop_benchmark_compares_both_limits(capsys, monkeypatch):
    """One case, its module alone, with limits short enough for a test (the budget ends the loop
    after its first call): both grades run and the ratio is printed."""
    module = _bench("bench_endless_loop")
    monkeypatch.setenv("AUTOGRADER_CALL_TIMEOUT", "1")
    monkeypatch.setenv("AUTOGRADER_MODULE_BUDGET", "1")
    assert module.main(["--cases", "loop_todo1", "--only-module"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("loop_todo1: ") and "with the short limit" in out and "ratio" in out


def test_answer_shapes_benchmark_prints_a_ratio_per_answer(capsys):
    module = _bench("bench_answer_shapes")
    assert module.main(["--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith("x")]
    assert [row[:22].strip() for row in rows] == list(module.ANSWERS)


def test_push_benchmark_replays_the_workflows_install_and_grade(capsys):
    """The install it times is classroom.yml's (uv at the workflow's pin, the CPU torch pin, then
    requirements.txt; pip the same two steps), the sources the same for both, and a run (uv's
    install and the grade) prints the push path's line."""
    import re

    import yaml

    module = _bench("bench_push")
    workflow = yaml.safe_load(module.WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["run-autograding-tests"]
    step = next(s for s in job["steps"] if s.get("name", "").startswith("Install CPU PyTorch"))
    assert module.workflow_uv_pin() == job["env"]["UV_PIN"]
    assert 'uv pip install --system --index-url "$TORCH_INDEX_URL" "$torch_pin"' in step["run"]
    uv = module.install_commands("uv", "/v/bin/python", index=module.TORCH_INDEX)
    assert [command[-1] for command in uv] == [job["env"]["UV_PIN"], module.torch_pin(),
                                               str(module.ROOT / "requirements.txt")]
    assert uv[1][-3:-1] == ["--index-url", job["env"]["TORCH_INDEX_URL"]]
    pip = module.install_commands("pip", "/v/bin/python", wheels="/wheels")
    assert pip[0][-3:] == ["--find-links", "/wheels", module.torch_pin()] and pip[1][-1].endswith("requirements.txt")
    if module.pip_find_links() is None:
        pytest.skip("no folder of torch's CPU wheel for this machine (pip's find-links) and PyTorch's index "
                    "may be unreachable: run benchmarks/bench_push.py --torch-index by hand")
    assert module.main(["--without-pip"]) == 0  # pip's install takes minutes here: the benchmark times it
    line = capsys.readouterr().out.strip().splitlines()[-1]
    found = re.fullmatch(r"push path: uv install ([\d.]+)s \+ grade ([\d.]+)s = ([\d.]+)s \(pip install not timed\)",
                         line)
    assert found, line
    assert abs(float(found[1]) + float(found[2]) - float(found[3])) < 0.2


def test_history_benchmark_times_the_history_the_class_and_the_rerun(capsys):
    """A rehearsal of benchmarks/bench_history.py (the 100 x 20 class is ten minutes: run by hand):
    two students of four commits, every commit in their history, nothing graded on the rerun."""
    code = _bench("bench_history").main(["--students", "2", "--commits", "4", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "class: 2 students x 4 commits" in out and "grade-many --history:" in out and ": 8 commits," in out
    assert "nothing new:" in out and ", 0 jobs" in out and "under 10 minutes with --jobs 1: yes" in out


def test_grade_profile_prints_each_phase_and_what_a_test_costs(capsys):
    """One profiled grade of a module (its judge's phases marked, A's and the children's CPU
    counted) and one grade in process counted test by test; no figure asserted."""
    module = _bench("profile_grade")
    assert module.main(["--runs", "1", "--module", "amp_update"]) == 0
    out = capsys.readouterr().out
    phases = [line.split()[0] + " " + line.split()[1] for line in out.splitlines() if line.endswith("the floor")]
    assert phases[0] == "A: start," and "B: torch" in phases and phases[-1] == "all processes", out
    assert module.main(["--per-test"]) == 0
    out = capsys.readouterr().out
    assert out.count("one grade,") == 2 and "3 box starts" in out and "0 reference runs" in out, out


def test_box_work_profile_replays_one_grades_requests_module_by_module(capsys):
    """Every request of a grade of the solutions replayed once: a row per module and kind, the
    total adding up, and the errors the solutions answer on purpose only (every scenario runs)."""
    import re

    module = _bench("profile_box_work")
    assert module.main(["--passes", "1"]) == 0
    out = capsys.readouterr().out
    row = re.compile(r"  (\S+) (call|scenario) +(\d+) requests +[\d.]+ ms  \([\d.]+ ms each, (\d+) answered an error\)")
    rows = [row.fullmatch(line) for line in out.splitlines()[1:-1]]
    assert rows and all(rows), out
    total = re.fullmatch(r"  all +(\d+) requests +[\d.]+ ms", out.splitlines()[-1])
    assert total and int(total[1]) == sum(int(row[3]) for row in rows), out
    assert {row[1] for row in rows} == set(MODULES), out
    assert all(row[4] == "0" for row in rows if row[2] == "scenario"), out
