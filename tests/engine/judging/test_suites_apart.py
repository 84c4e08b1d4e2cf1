"""A single grade runs its modules' tests in lanes, one a CPU, the judge running one and a
forked process each other (suites.run's ``apart``): it grades exactly as the modules in turn
do -- every test, its feedback, what the boxes printed, refused or reported of their
confinement -- and a forked process that fails, is cancelled or never answers is the
grader's failure, not a test's."""
import os

import pytest

from autograder.judging import engine, reference_cache, suites, test_loop
from autograder.sandbox import call_clock
from support.helpers import ROOT, make_submission, mutate

SEEDS = (11, 2024)
LANES = min(len(os.sched_getaffinity(0)), 3)  # one a CPU, one a module at most


def full_view(report):
    """All a grade writes, but the seconds it took and the student's uid (each grade has one of its own)."""
    data = report.to_gradescope()
    data.pop("execution_time")
    data["extra_data"]["isolation"].pop("uid", None)
    return data


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    base = tmp_path_factory.mktemp("apart")
    prints = mutate("amp_update", ("def global_grad_norm(", "print('norm asked')\n\n\ndef global_grad_norm("))
    wrong = {"amp_update": prints,
             "loss_scaler": mutate("loss_scaler", ("if growth_tracker == growth_interval:",
                                                   "if growth_tracker > growth_interval:"))}
    delegates = {"loss_scaler": (ROOT / "solutions" / "loss_scaler.py").read_text(encoding="utf-8")
                 + "\n_REAL = torch.amp.GradScaler\n"}
    return {"solution": make_submission(base / "solution"),
            "wrong": make_submission(base / "wrong", wrong),
            "delegates": make_submission(base / "delegates", delegates),
            "broken": make_submission(base / "broken", {"amp_training_step": "def train_step(:\n"},
                                      omit=("loss_scaler",))}


@pytest.fixture
def forks(monkeypatch):
    """How many processes the judge forked (os.fork, counted)."""
    count = []
    real = os.fork
    monkeypatch.setattr(os, "fork", lambda: count.append(1) or real())
    return count


@pytest.mark.slow
@pytest.mark.skipif(LANES < 2, reason="one CPU: the modules run in turn")
def test_modules_apart_grade_as_modules_in_turn(submissions, shared_boxes, forks):
    for seed in SEEDS:
        apart = {}
        for name, folder in submissions.items():
            in_turn = engine.grade_submission(folder, seed=seed, boxes=shared_boxes)
            assert not forks
            apart[name] = full_view(engine.grade_submission(folder, seed=seed, boxes=shared_boxes, apart=True))
            assert len(forks) == LANES - 1, name  # the judge runs one lane itself
            forks.clear()
            assert apart[name] == full_view(in_turn), (name, seed)
    assert apart["solution"]["score"] == apart["solution"]["max_score"]
    assert apart["wrong"]["extra_data"]["printed"]["amp_update"]["head"].startswith("norm asked")
    assert apart["broken"]["score"] < apart["wrong"]["score"] < apart["wrong"]["max_score"]
    refused = [test for test in apart["delegates"]["tests"] if test["tags"][0] == "loss_scaler"]
    assert refused and not any(test["status"] == "passed" for test in refused)


@pytest.mark.slow
def test_modules_apart_in_a_collected_session_hand_back_their_references(submissions, shared_boxes):
    """watch: the reference runs a module's process computed are kept for the next grade."""
    reference_cache.clear()

    def grade_twice():
        first = engine.grade_submission(submissions["solution"], seed=SEEDS[0], boxes=shared_boxes, apart=True)
        kept = len(reference_cache.entries())
        return first, kept, engine.grade_submission(submissions["solution"], seed=SEEDS[0], boxes=shared_boxes,
                                                    apart=True)

    first, kept, second = suites.kept_collected(True, grade_twice)
    assert kept > 0
    assert full_view(first) == full_view(second)
    assert first.score == first.max_score


@pytest.mark.slow
def test_one_module_alone_is_graded_in_this_process(submissions, shared_boxes, forks):
    report = engine.grade_submission(submissions["solution"], seed=SEEDS[0], boxes=shared_boxes,
                                     modules=["amp_update"], apart=True)
    assert not forks
    assert report.score == report.max_score


@pytest.mark.slow
def test_a_lane_process_that_dies_fails_the_grade_as_the_graders(submissions, shared_boxes, monkeypatch):
    real, judge = test_loop.run_items, os.getpid()

    def dies_in_the_fork(items, plugin, timeout):
        if os.getpid() != judge:
            os._exit(9)  # as a crash of our own code would leave it: no answer
        return real(items, plugin, timeout)

    monkeypatch.setattr(test_loop, "run_items", dies_in_the_fork)
    with pytest.raises(RuntimeError, match="tests failed: it ended without an answer"):
        engine.grade_submission(submissions["solution"], seed=SEEDS[0], boxes=shared_boxes, apart=True)


@pytest.mark.slow
def test_a_cancelled_grade_unwinds_from_every_module(submissions, shared_boxes, tmp_path):
    cancel = tmp_path / "cancel"
    cancel.write_bytes(b"")
    call_clock.cancel_when(str(cancel))
    try:
        with pytest.raises(call_clock.Cancelled):
            engine.grade_submission(submissions["solution"], seed=SEEDS[0], boxes=shared_boxes, apart=True)
    finally:
        call_clock.cancel_when(None)


def test_modules_are_dealt_to_lanes_one_a_cpu(monkeypatch):
    """The largest module first, each to the lane with the fewest tests so far; the judge runs
    the lane with the most; one CPU: no lanes, the modules in turn."""
    from types import SimpleNamespace

    class Item:
        def __init__(self, module):
            self.marker = SimpleNamespace(args=(module,))

        def get_closest_marker(self, name):
            return self.marker if name == "module" else None

    boxes = SimpleNamespace(new_channel=lambda: None)
    plugin = SimpleNamespace(sandboxes=lambda: {module: SimpleNamespace(boxes=boxes) for module in "abc"})
    items = [Item("a") for _ in range(5)] + [Item("b") for _ in range(3)] + [Item("c") for _ in range(4)]

    def lanes(cpus):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
        return [[module for module, _tests in lane] for lane in suites._lanes(items, plugin)]

    assert lanes(2) == [["c", "b"], ["a"]]
    assert lanes(4) == [["a"], ["c"], ["b"]]
    assert lanes(1) == []
