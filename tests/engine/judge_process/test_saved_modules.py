"""autograder/judge_process/saved_modules.py: after a save, watch grades only the saved
modules when the others' results still hold, and the report it shows is the full grade's."""
import os

import pytest

from autograder.judge_process import saved_modules
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from support import mutants_amp_update, mutants_loss_scaler
from support.helpers import MODULES, make_submission

CONTRACT = ("amp_update", "loss_scaler", "amp_training_step")


def _report(*modules, faulted=False, seed=3, flags=()):
    tests = [Result(name=f"{module}-{n}", module=module, max_score=1.0, score=1.0, passed=True, output="",
                    visibility="visible", fault={"points": 1.0} if faulted and n == 0 else None)
             for module in modules for n in range(2)]
    return GradeReport(tests=tests, seed=seed, flags=list(flags), diagnosis={module: {"todo": 1} for module in modules},
                       hidden_not_run={module: 5.0 for module in modules},
                       printed={module: {"bytes": 1, "head": "x", "more": False} for module in modules})


@pytest.fixture
def folder(tmp_path):
    for module in CONTRACT:
        (tmp_path / f"{module}.py").write_text("import torch\n", encoding="utf-8")
    return tmp_path


def test_a_saved_contract_module_alone_is_graded_again(folder):
    assert saved_modules.regrade_only(["loss_scaler.py"], _report(*CONTRACT), None, folder, CONTRACT) \
        == ["loss_scaler"]
    assert saved_modules.regrade_only(["loss_scaler.py", "amp_update.py"], _report(*CONTRACT), None, folder,
                                      CONTRACT) == ["amp_update", "loss_scaler"]


@pytest.mark.parametrize("why, saved, previous, modules", [
    ("the first grade", ["loss_scaler.py"], None, None),
    ("a helper saved", ["helpers.py"], "full", None),
    ("a helper and a module saved", ["helpers.py", "amp_update.py"], "full", None),
    ("every module saved", [f"{m}.py" for m in CONTRACT], "full", None),
    ("the session's one module", ["loss_scaler.py"], "full", ["loss_scaler"]),
    ("outside the session's modules", ["amp_update.py"], "full", ["loss_scaler", "amp_training_step"]),
    ("the last grade had a grader fault", ["loss_scaler.py"], "faulted", None),
    ("the last grade raised a flag", ["amp_update.py"], "flagged", None),
])
def test_everything_is_graded_again_where_the_last_results_may_not_hold(folder, why, saved, previous, modules):
    last = {"full": _report(*CONTRACT), "faulted": _report(*CONTRACT, faulted=True),
            "flagged": _report(*CONTRACT, flags=["loss_scaler.py: getattr(torch.amp, name) (line 3)"]),
            None: None}[previous]
    assert saved_modules.regrade_only(saved, last, modules, folder, CONTRACT) is None, why


@pytest.mark.parametrize("where, text", [
    ("amp_training_step.py", "from loss_scaler import LossScaler\n"),
    ("helpers.py", "import importlib\nimportlib.import_module('loss_scaler')\n"),
    ("lib/deep.py", "open('loss_scaler.py').read()\n"),
])
def test_a_module_another_file_names_grades_everything_again(folder, where, text):
    (folder / where).parent.mkdir(exist_ok=True)
    (folder / where).write_text(text, encoding="utf-8")
    assert saved_modules.regrade_only(["loss_scaler.py"], _report(*CONTRACT), None, folder, CONTRACT) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX named pipes")
def test_a_pipe_among_the_files_is_never_read(folder):
    """A named pipe would block the command line's read for ever: everything is graded again."""
    os.mkfifo(folder / "stuck.py")
    assert saved_modules.regrade_only(["loss_scaler.py"], _report(*CONTRACT), None, folder, CONTRACT) is None


def test_the_public_tests_naming_their_module_change_nothing(folder):
    (folder / "tests").mkdir()
    (folder / "tests" / "test_loss_scaler.py").write_text("import loss_scaler\n", encoding="utf-8")
    assert saved_modules.regrade_only(["loss_scaler.py"], _report(*CONTRACT), None, folder, CONTRACT) \
        == ["loss_scaler"]


def test_the_merge_replaces_the_regraded_modules_in_place():
    previous = _report(*CONTRACT)
    fresh = _report("loss_scaler", seed=3)
    fresh.tests[0].passed, fresh.tests[0].score = False, 0.0
    fresh.diagnosis = {"loss_scaler": {"todo": 6}}
    fresh.printed = {}
    merged = saved_modules.merged(previous, fresh, ["loss_scaler"])
    assert [t.module for t in merged.tests] == [t.module for t in previous.tests]
    assert [t.passed for t in merged.tests if t.module == "loss_scaler"] == [False, True]
    assert merged.tests[0] is previous.tests[0]
    assert merged.diagnosis == {"amp_update": {"todo": 1}, "loss_scaler": {"todo": 6},
                                "amp_training_step": {"todo": 1}}
    assert set(merged.printed) == {"amp_update", "amp_training_step"}  # loss_scaler printed nothing now
    assert merged.hidden_not_run == previous.hidden_not_run
    assert merged.score == previous.score - 1


# (seed, the module saved with a mistake, the module already wrong before)
_SAVES = [(11, mutants_amp_update.CASES[1], "amp_update", mutants_loss_scaler.CASES[0], "loss_scaler"),
          (2027, mutants_loss_scaler.CASES[3], "loss_scaler", mutants_amp_update.CASES[1], "amp_update")]


@pytest.mark.slow
@pytest.mark.parametrize("seed, saved_case, saved, earlier_case, earlier", _SAVES, ids=["amp_update", "loss_scaler"])
def test_a_watch_that_grades_one_module_again_shows_what_a_full_grade_gives(tmp_path, seed, saved_case, saved,
                                                                            earlier_case, earlier):
    """The fairness of the shortcut: after a save of one module, the report watch shows
    and writes (that module graded again, the rest kept) is the full grade of the folder
    as it now is, test for test, at two seeds; loss_scaler is the module the
    assignment's guard and review verdicts apply to."""
    from autograder.judge_process import watching
    from autograder.judge_process.grading import grade_in_clean_process

    assert set(CONTRACT) == set(MODULES)
    folder = make_submission(tmp_path / "exercises", {earlier: earlier_case.source(earlier)})

    class Saves:
        def wait(self, between=None):
            (folder / f"{saved}.py").write_text(saved_case.source(saved), encoding="utf-8")
            return [f"{saved}.py"]

        def changed(self):
            return []

    shown = []

    def show(report, status):
        shown.append((report, status))
        if len(shown) == 2:
            raise KeyboardInterrupt

    watching.watch(Saves(), folder, seed, show, include_hidden=True, lang="en", display="exercises")
    (_first, _), (after, status) = shown
    assert any(f"graded {saved} again in" in line for line in status), status
    full = grade_in_clean_process(folder, seed=seed, include_hidden=True, flags=[])

    def verdicts(report):
        return [(t.module, t.test_id, t.score, t.passed) for t in report.tests]

    assert verdicts(after) == verdicts(full)
    assert after.diagnosis == full.diagnosis and after.score < after.max_score
    assert after.by_module() == full.by_module()
