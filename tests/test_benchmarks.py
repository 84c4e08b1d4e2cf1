"""The batch benchmark runs end to end (no figure is asserted: the machine decides those)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _bench_grade_many():
    spec = importlib.util.spec_from_file_location("bench_grade_many", ROOT / "benchmarks" / "bench_grade_many.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batch_benchmark_gives_a_ratio_per_round_and_their_median(capsys):
    """Two rounds of a three-student class: each round prints its own ratio, the
    median follows, and the totals graded both ways agree in every round."""
    code = _bench_grade_many().main(["--students", "3", "--single", "1", "--warmup", "0", "--rounds", "2",
                                     "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "class: 3 synthetic students (3 ok)" in out
    assert "round 1 of 2:" in out and "round 2 of 2:" in out
    assert out.count("ratio (per submission, --jobs 1):") == 2
    assert "median ratio over 2 rounds (--jobs 1):" in out
    assert "totals identical for the 1 student(s) graded both ways, in each of the 2 rounds" in out


def test_endless_loop_benchmark_compares_both_limits(capsys, monkeypatch):
    """One case, with limits short enough for a test: both grades run and the ratio is printed."""
    spec = importlib.util.spec_from_file_location("bench_endless_loop", ROOT / "benchmarks" / "bench_endless_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("AUTOGRADER_CALL_TIMEOUT", "2")
    monkeypatch.setenv("AUTOGRADER_MODULE_BUDGET", "12")
    assert module.main(["--cases", "loop_todo1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("loop_todo1: ") and "with the short limit" in out and "ratio" in out
