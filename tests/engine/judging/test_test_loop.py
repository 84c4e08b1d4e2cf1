"""The judge's own test loop (autograder/judging/test_loop.py) grades exactly as
pytest's per-test protocol does, and keeps the protocol's backstop."""
import textwrap
import time

import pytest

from autograder.judging import engine, suites, test_loop
from support.helpers import make_submission, mutate, report_view

SEED = 23



@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    base = tmp_path_factory.mktemp("loop")
    delegating = mutate("loss_scaler", ("import torch\n", "import torch\nfrom torch.amp import GradScaler\n"))
    return {
        "solution": make_submission(base / "solution"),
        # a wrong value, a crash at import, a fixture that fails in setup (no_delegation)
        "mixed": make_submission(base / "mixed", {
            "amp_update": mutate("amp_update", ("gradient / scale for gradient", "gradient * scale for gradient")),
            "amp_training_step": "raise SystemExit('bye')\n",
            "loss_scaler": delegating}),
    }


@pytest.mark.slow
def test_the_loop_grades_like_pytests_protocol(submissions, monkeypatch):
    from autograder.sandbox.boxes import start_boxes

    ran = []
    real = test_loop.run_test
    monkeypatch.setattr(test_loop, "run_test", lambda *args: ran.append(1) or real(*args))
    boxes = start_boxes()
    try:
        own = {name: engine.grade_submission(folder, seed=SEED, boxes=boxes) for name, folder in submissions.items()}
        assert len(ran) == sum(len(report.tests) for report in own.values())  # every test on the loop
        monkeypatch.setattr(test_loop, "available", lambda session: False)
        ran.clear()
        protocol = {name: engine.grade_submission(folder, seed=SEED, boxes=boxes)
                    for name, folder in submissions.items()}
        assert not ran
    finally:
        boxes.close()
    for name in submissions:
        assert report_view(own[name]) == report_view(protocol[name]), name
    assert own["solution"].score == own["solution"].max_score
    mixed = {test.module: [] for test in own["mixed"].tests}
    for test in own["mixed"].tests:
        mixed[test.module].append(test)
    assert all(not test.passed for test in mixed["loss_scaler"])  # setup (no_delegation) failed every test
    assert any("GradScaler" in str(test.detail) for test in mixed["loss_scaler"])
    assert all(test.error is not None and test.error.kind == "import" for test in mixed["amp_training_step"])


class _Recorder:
    """The grading plugin's recording surface, for a suite of our own."""

    def __init__(self):
        self.results, self.raised = {}, {}

    def begin(self, item):
        self.results[item.name] = "started"

    def take_raised(self, item):
        return self.raised.pop(item.nodeid, None)

    def record(self, item, passed, error, report=None):
        self.results[item.name] = "passed" if passed else f"failed: {type(error).__name__}: {error}"

    @pytest.hookimpl(wrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        try:
            return (yield)
        except Exception as exc:  # noqa: BLE001
            self.raised[pyfuncitem.nodeid] = exc
            return True


@pytest.mark.slow
def test_outcomes_teardown_and_the_backstop(tmp_path):
    (tmp_path / "test_cases.py").write_text(textwrap.dedent('''
        import time
        import pytest

        LOG = []

        @pytest.fixture
        def broken():
            raise RuntimeError("setup went wrong")

        @pytest.fixture
        def noisy_teardown():
            yield 1
            LOG.append("torn down")
            raise RuntimeError("teardown went wrong")

        def test_passes():
            assert True

        def test_fails():
            raise ValueError("wrong value")

        def test_setup_fails(broken):
            pass

        def test_teardown_error_keeps_the_pass(noisy_teardown):
            assert noisy_teardown == 1

        def test_hangs():
            time.sleep(30)

        def test_skips():
            pytest.skip("not here")

        def test_exits():
            raise SystemExit(3)
    '''))
    recorder = _Recorder()
    timings = {}

    class Loop:
        def pytest_runtestloop(self, session):
            started = time.monotonic()
            test_loop.run_items(session.items, recorder, timeout=1.0)
            timings["loop"] = time.monotonic() - started
            return True

    pytest.main([str(tmp_path / "test_cases.py"), "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                plugins=[recorder, Loop()])
    results = recorder.results
    assert results["test_passes"] == "passed"
    assert results["test_fails"] == "failed: ValueError: wrong value"
    assert results["test_setup_fails"] == "failed: RuntimeError: setup went wrong"
    assert results["test_teardown_error_keeps_the_pass"] == "passed"
    assert results["test_hangs"].startswith("failed: Failed: Timeout >1s")  # the plugin's "ran out of time"
    assert results["test_skips"].startswith("failed: Skipped")
    assert results["test_exits"] == "failed: SystemExit: 3"
    assert timings["loop"] < 10  # the hang was cut at the backstop


def test_this_pytest_lets_the_loop_run():
    """With the pinned pytest every test goes through the loop: a pytest that moved
    its internals would fall back to the slower protocol, and this says so."""
    def body(session):
        assert session.items
        assert test_loop.available(session)
        assert all(test_loop._fits(item) for item in session.items)

    suites._pytest_session(suites.suite_args(True), __import__(
        "autograder.judging.plugin", fromlist=["GradingPlugin"]).GradingPlugin({}, 0), body)
