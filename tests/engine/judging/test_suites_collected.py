"""Suites collected once (a batch's parent, a watch session) grade exactly like a
fresh pytest session per submission, and pytest starts only once for them."""
import pytest

from autograder.judging import engine, suites
from support.helpers import ROOT, make_submission, mutate, report_view

SEED = 11
UNSCALES_BY_MULTIPLYING = mutate("amp_update", ("gradient / scale for gradient", "gradient * scale for gradient"))


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    base = tmp_path_factory.mktemp("collected")
    wrong = {"amp_update": UNSCALES_BY_MULTIPLYING,
             "loss_scaler": mutate("loss_scaler", ("if growth_tracker == growth_interval:",
                                                   "if growth_tracker > growth_interval:"))}
    # Graded in this order in one collected session: the fixtures a suite file sets up
    # once (the student's module, its source, the delegation check) start afresh for
    # each grade, so the delegating module's refusal never reaches the next student.
    delegates = {"loss_scaler": (ROOT / "solutions" / "loss_scaler.py").read_text(encoding="utf-8")
                 + "\n_REAL = torch.amp.GradScaler\n"}
    return {
        "solution": make_submission(base / "solution"),
        "delegates": make_submission(base / "delegates", delegates),
        "wrong": make_submission(base / "wrong", wrong),
        "broken": make_submission(base / "broken", {"amp_training_step": "def train_step(:\n"},
                                  omit=("loss_scaler",)),
    }


@pytest.mark.slow
def test_collected_once_grades_like_fresh_sessions(submissions, monkeypatch, shared_boxes):
    started = []
    real = suites._pytest_session
    monkeypatch.setattr(suites, "_pytest_session", lambda *args: started.append(1) or real(*args))
    boxes = shared_boxes  # the session's zygote: a zygote of its own costs a torch import
    fresh = {name: engine.grade_submission(folder, seed=SEED, boxes=boxes)
             for name, folder in submissions.items()}
    assert len(started) == len(submissions)  # one pytest session per grade
    started.clear()

    def grade_all():
        return {name: engine.grade_submission(folder, seed=SEED, boxes=boxes)
                for name, folder in submissions.items()}

    kept = suites.kept_collected(True, grade_all)
    assert len(started) == 1  # collected once for all of them
    started.clear()
    assert suites._collected is None  # nothing is kept once the work is done
    for name in submissions:
        assert report_view(kept[name]) == report_view(fresh[name]), name
    assert fresh["solution"].score == fresh["solution"].max_score
    assert fresh["wrong"].score < fresh["wrong"].max_score
    assert fresh["broken"].score < fresh["wrong"].score
    refused = [test for test in fresh["delegates"].tests if test.module == "loss_scaler"]
    assert refused and not any(test.passed for test in refused)
    assert all("built by hand" in str(test.detail) for test in refused)
    assert all(test.passed for test in fresh["delegates"].tests if test.module != "loss_scaler")

    # --module inside a collected session runs only that module's tests, as a fresh one does
    only = suites.kept_collected(True, lambda: engine.grade_submission(
        submissions["wrong"], seed=SEED, boxes=boxes, modules=["amp_update"]))
    alone = engine.grade_submission(submissions["wrong"], seed=SEED, boxes=boxes, modules=["amp_update"])
    assert {test.module for test in only.tests} <= {"amp_update", "grader"}
    assert report_view(only) == report_view(alone)


@pytest.mark.slow
def test_a_grade_cut_short_leaves_nothing_set_up_for_the_next(submissions, monkeypatch, shared_boxes):
    """A grade that ends in the grader's own error half-way (before its last test
    tore everything down) hands nothing to the next grade in the same collected
    session (watch, a batch's grading process): no fixture of it, such as the
    previous submission's sandbox, serves the next submission."""
    from autograder.judging import test_loop

    boxes = shared_boxes
    fresh = engine.grade_submission(submissions["wrong"], seed=SEED, boxes=boxes)
    real = test_loop.run_test
    ran = []

    def cut_short(item, following, plugin, timeout):
        real(item, following, plugin, timeout)
        ran.append(item)
        if len(ran) == 30:  # in the middle of a suite file: its fixtures are still set up
            assert following is not None and following.parent is item.parent
            raise RuntimeError("the grader's own bug")

    def work():
        monkeypatch.setattr(test_loop, "run_test", cut_short)
        with pytest.raises(RuntimeError, match="own bug"):
            engine.grade_submission(submissions["solution"], seed=SEED, boxes=boxes)
        monkeypatch.setattr(test_loop, "run_test", real)
        return engine.grade_submission(submissions["wrong"], seed=SEED, boxes=boxes)

    after = suites.kept_collected(True, work)
    assert len(ran) == 30
    assert report_view(after) == report_view(fresh)


def test_what_the_work_raises_comes_out(monkeypatch):
    """Ctrl-C in a batch must reach the batch, not pytest's own interrupt report."""
    def interrupted():
        assert suites._collected is not None
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt, match="stop"):
        suites.kept_collected(True, interrupted)
    assert suites._collected is None


@pytest.mark.slow
def test_a_failed_check_keeps_its_own_feedback(tmp_path, shared_boxes):
    """Failures are recorded from the exception itself (pytest's report of it is
    skipped): the hidden test that names the mistake still says what is wrong."""
    folder = make_submission(tmp_path / "sub", {"amp_update": UNSCALES_BY_MULTIPLYING})
    report = engine.grade_submission(folder, seed=SEED, boxes=shared_boxes)
    failed = [test for test in report.tests if test.module == "amp_update" and not test.passed]
    assert failed
    assert all(str(test.detail or "") or test.error is not None for test in failed)
    assert not any("could not check this result" in str(test.detail or "") for test in failed)


@pytest.mark.slow
def test_a_suite_that_does_not_load_runs_nothing_either_way(tmp_path, monkeypatch, shared_boxes):
    """As pytest's own loop does: a grade out of fewer points is never reported.
    (Each session gets a broken file of its own: pytest keeps a module that
    failed to import, and a second session in one process would find it.)"""
    real = suites.suite_files
    solutions = engine.locations.REPO_ROOT / "solutions"

    def with_broken(name):
        broken = tmp_path / f"test_visible_{name}.py"
        broken.write_text("def test_x(:\n", encoding="utf-8")
        monkeypatch.setattr(suites, "suite_files", lambda folder, modules: real(folder, modules) + [str(broken)])

    with_broken("broken_fresh")
    fresh = engine.grade_submission(solutions, seed=SEED, boxes=shared_boxes)
    with_broken("broken_kept")
    kept = suites.kept_collected(True, lambda: engine.grade_submission(solutions, seed=SEED, boxes=shared_boxes))
    for report in (fresh, kept):
        assert [test.module for test in report.tests] == ["grader"]
        assert "could not be loaded" in str(report.tests[0].detail)
        assert report.score == 0
