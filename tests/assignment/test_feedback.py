"""Feedback that finds the mistake: the per-module diagnosis, "fix TODO n first"
for tests that build on a failing TODO, one message per broken import, and
the same verdicts in Chinese and English."""
import json
import re

import pytest
from support.helpers import mutate, todos_named
from support.language_check import english_runs

from autograder.judging import feedback
from autograder.i18n import _
from autograder.reports import terminal
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from autograder.sandbox.client import StudentError


def failed(module, todo, name, detail="off", blamed=None, error=None, points=1.0):
    return Result(name=_(name), module=module, max_score=points, score=0.0, passed=False, output="",
                      todo=todo, blamed=blamed or todo, hint=_("check the thing"), detail=_(detail), error=error)


def passed(module, todo, name):
    return Result(name=_(name), module=module, max_score=1.0, score=1.0, passed=True, output="", todo=todo)


# -- the diagnosis, on results built by hand -----------------------------------------------------
def test_root_is_the_todo_the_others_build_on():
    # each saw something of its own (tests that end the same way are folded under the first)
    results = [failed("loss_scaler", 8, "side by side", "the scales differ"),
               failed("loss_scaler", 9, "round trip", "the keys differ"),
               passed("loss_scaler", 5, "scale"), failed("loss_scaler", 4, "growth")]
    diagnosis = feedback.finish(results, "en")
    assert diagnosis["loss_scaler"]["todo"] == 4
    growth = results[3]
    assert diagnosis["loss_scaler"]["test"] == growth.name == "loss_scaler: growth"
    assert growth.output.startswith("TODO 4: check the thing")
    shown = terminal.render(GradeReport(tests=results, seed=1, diagnosis=diagnosis))
    assert shown.index("FAIL  loss_scaler: growth") < shown.index("FAIL  loss_scaler: side by side"), \
        "the terminal lists the diagnosed test first"
    # their own checks did not find TODO 4 wrong: they keep naming their own TODO
    for result, own in zip(results[:2], (8, 9)):
        assert todos_named(result.output) == {own}, result.output


def test_fix_first_only_where_the_test_found_the_root_wrong():
    """A test says "fix TODO n first" only when its own check blamed TODO n (its inputs showed it
    wrong); a failing test whose verdict does not follow from TODO n names its own TODO."""
    results = [failed("amp_update", 3, "plan norm", blamed=2), failed("amp_update", 3, "plan nan"),
               failed("amp_update", 2, "fp16 norm")]
    diagnosis = feedback.finish(results, "en")
    assert diagnosis["amp_update"]["todo"] == 2
    plan_norm, plan_nan = results[0], results[1]
    assert "Fix TODO 2 first" in plan_norm.output and "What this test saw: off" in plan_norm.output
    assert todos_named(plan_nan.output) == {3} and "Fix TODO" not in plan_nan.output, plan_nan.output


def test_independent_failures_keep_their_own_hints():
    results = [failed("loss_scaler", 4, "growth"), failed("loss_scaler", 5, "scale", points=3.0)]
    diagnosis = feedback.finish(results, "en")
    assert diagnosis["loss_scaler"]["todo"] == 5, "5 does not build on 4: the larger loss comes first"
    assert {frozenset(todos_named(r.output)) for r in results} == {frozenset({4}), frozenset({5})}


def test_a_check_can_blame_another_todo():
    results = [failed("loss_scaler", 8, "side by side", blamed=7)]
    diagnosis = feedback.finish(results, "en")
    assert diagnosis["loss_scaler"]["todo"] == 7
    assert todos_named(results[0].output) == {7}


def test_feedback_is_bounded():
    """A check may quote what the student's code returned: never more than MAX_OUTPUT characters."""
    results = [failed("amp_update", 1, "huge", detail="x" * 100_000)]
    diagnosis = feedback.finish(results, "en")
    assert len(results[0].output) == feedback.MAX_OUTPUT and results[0].output.endswith("…")
    assert len(diagnosis["amp_update"]["message"]) <= feedback.MAX_OUTPUT


def test_full_marks_have_no_diagnosis():
    assert feedback.finish([passed("amp_update", 1, "fine")], "en") == {}


def test_a_broken_import_is_reported_once_with_its_line():
    error = StudentError("import", "SyntaxError", "expected ':'", "", line=3, code="    def update(self)", offset=20)
    source = "class A:\n    # TODO 8: update\n    def update(self)\n        pass\n"
    results = [failed("loss_scaler", 4, f"test {n}", error=error) for n in range(5)]
    diagnosis = feedback.finish(results, "en", "exercises", {"loss_scaler": source})
    first, rest = results[0].output, [r.output for r in results[1:]]
    assert first.startswith("exercises/loss_scaler.py could not be imported: SyntaxError: expected ':'")
    assert "line 3: def update(self)" in first and first.splitlines()[2].rstrip().endswith("^")
    assert len(set(rest)) == 1 and "could not be used" in rest[0]
    assert diagnosis["loss_scaler"]["todo"] == 8 and "(line 3)" in diagnosis["loss_scaler"]["message"]
    assert diagnosis["loss_scaler"]["problem"] == "import"    # the class report groups by it
    assert "importlib" not in "\n".join(r.output for r in results)
    assert "problem" not in feedback.finish([failed("loss_scaler", 4, "growth")], "en")["loss_scaler"]


def test_todo_at_line_prefers_the_enclosing_function():
    source = "def a():\n    # TODO 4: x\n    pass\n\ndef b():\n    x = (\n    # TODO 5: y\n    pass\n"
    assert feedback.todo_at_line(source, 6, "loss_scaler") == 5
    assert feedback.todo_at_line(source, 3, "loss_scaler") == 4
    assert feedback.todo_at_line("", 1, "loss_scaler") == 4


def test_a_written_mistake_comes_before_an_unwritten_todo():
    """TODO 1 divides in place while TODO 2 and 3 still raise their stubs' NotImplementedError: the
    diagnosis names TODO 1, though the unwritten TODOs fail more tests and more points."""
    def stub(todo):
        return StudentError("exception", "NotImplementedError", f"TODO {todo}: not yet", "tb")

    results = [failed("amp_update", 1, "unscale", blamed=1),
               failed("amp_update", 2, "norm", error=stub(2), blamed=2, points=2.0),
               failed("amp_update", 3, "plan", error=stub(2), blamed=2, points=3.0),
               failed("amp_update", 3, "skip", error=stub(3), blamed=3, points=3.0)]
    diagnosis = feedback.finish(results, "en")
    assert diagnosis["amp_update"]["todo"] == 1 and diagnosis["amp_update"]["test"] == "amp_update: unscale"
    assert results[1].output == "TODO 2 is not written yet (it raises NotImplementedError)."
    # with nothing written, the first TODO in the stub's order
    unwritten = [failed("amp_update", 3, "skip", error=stub(3), blamed=3, points=3.0),
                 failed("amp_update", 2, "norm", error=stub(2), blamed=2)]
    assert feedback.finish(unwritten, "en")["amp_update"]["todo"] == 2


def test_a_hint_is_shown_only_where_its_condition_holds():
    """A test's hint names one mistake; a check that found another (hint_only_if False) goes without it."""
    from autograder.judging.judge import Mistake, hint_only_if
    from autograder.judging.plugin import GradingPlugin

    outputs = []
    for condition in (True, False):
        result = failed("amp_update", 2, "fp16 norm")
        result.blamed, result.detail = 0, None
        try:
            with hint_only_if(condition):
                raise Mistake(_("the norm is the sum of the per-tensor norms"))
        except Mistake as mistake:
            GradingPlugin._failure(result, mistake, True)
            result.blamed = result.blamed or result.todo
        diagnosis = feedback.finish([result], "en")
        outputs.append((result.output, diagnosis["amp_update"]["message"]))
    assert "check the thing" in outputs[0][0]
    assert all("check the thing" not in text for text in outputs[1]), outputs[1]
    assert "sum of the per-tensor norms" in outputs[1][0] and "TODO 2" in outputs[1][0]


def test_an_unwritten_todo_is_one_short_line():
    error = StudentError("exception", "NotImplementedError", "TODO 2: update `squared_sum`", "tb")
    results = [failed("amp_update", 2, "norm", blamed=2, error=error)]
    feedback.finish(results, "zh")
    assert results[0].output == "TODO 2 还没有实现（它抛出 NotImplementedError）。"


# -- the terminal -------------------------------------------------------------------------------------
def _report(lang):
    results = [failed("loss_scaler", 4, "update_scale grows exactly every growth_interval clean iterations"),
               passed("amp_update", 1, "unscale"), passed("amp_training_step", 10, "validate")]
    diagnosis = feedback.finish(results, lang)
    return GradeReport(tests=results, seed=1, diagnosis=diagnosis, lang=lang)


def test_chinese_table_lines_up():
    """CJK characters are two columns wide: the score column ends at the same display column."""
    from rich.cells import cell_len

    lines = terminal.render(_report("zh"), mode="quiet").splitlines()  # the table first
    table = lines[:lines.index("")] if "" in lines else lines
    rows = [line for line in table if re.search(r"\d+ / \d+", line)]
    assert len(rows) == 4 and any(re.search(r"[\u4e00-\u9fff]", row) for row in rows)
    ends = {cell_len(row[:re.search(r"\d+ / \d+", row).end()]) for row in rows}
    assert len(ends) == 1, table
    assert "模块" in lines[0] and "得分" in lines[0]


def test_quiet_prints_only_totals_and_verbose_every_test():
    report = _report("en")
    quiet = terminal.render(report, mode="quiet")  # the table and each module's first thing to fix
    assert "TOTAL" in quiet and "PASS" not in quiet and "FAIL" not in quiet and "Start with TODO 4" in quiet
    compact = terminal.render(report, mode="compact")
    assert "FAIL" in compact and "PASS" not in compact and "Start with TODO 4" in compact
    verbose = terminal.render(report, mode="verbose")
    assert verbose.count("PASS") == 2 and "FAIL" in verbose


def test_long_feedback_keeps_its_last_line():
    lines = terminal.feedback_lines("\n".join(f"line {n}" for n in range(30)), max_lines=6)
    assert len(lines) == 6 and lines[-1] == "line 29" and lines[-2] == "…"


# -- whole grades ---------------------------------------------------------------------------------------
WRONG = [
    ("amp_update", [("gradient / scale for gradient in scaled_gradients]",
                     "gradient * scale for gradient in scaled_gradients]")]),
    ("loss_scaler", [("if growth_tracker == growth_interval:", "if growth_tracker + 1 >= growth_interval:")]),
    ("amp_training_step", [("        weighted_loss = loss * weight\n", "        weighted_loss = loss\n")]),
]


@pytest.mark.slow
@pytest.mark.parametrize("module, replacements", WRONG, ids=[module for module, _r in WRONG])
def test_chinese_feedback_has_no_english_sentences_and_the_same_scores(grade_dir, module, replacements):
    source = mutate(module, *replacements)
    chinese = grade_dir({module: source}, seed=99, lang="zh")
    english = grade_dir({module: source}, seed=99, lang="en")
    assert [t.score for t in chinese.tests] == [t.score for t in english.tests]
    assert chinese.diagnosis[module]["todo"] == english.diagnosis[module]["todo"]
    texts = [t.name + "\n" + t.output for t in chinese.tests] + [d["message"] for d in chinese.diagnosis.values()]
    texts.append(terminal.render(chinese, mode="verbose"))
    texts.append(json.dumps(chinese.to_gradescope()["output"], ensure_ascii=False))
    leftovers = sorted({run for text in texts for run in english_runs(text)})
    assert not leftovers, leftovers


@pytest.mark.slow
def test_fp16_hint_only_for_fp16_squares(grade_dir):
    """A sum of norms that converts to FP32 is told what its norm is, never "convert to FP32 before squaring";
    squares taken in FP16 are."""
    hint = "先把每个梯度转为 FP32 再平方"
    for squares, wanted in (("(squared_sum.sqrt() + gradient.float().norm()) ** 2", False),
                            ("squared_sum + gradient.square().float().sum()", True)):
        source = mutate("amp_update", ("squared_sum = squared_sum + gradient.float().square().sum()",
                                       "squared_sum = " + squares))
        report = grade_dir({"amp_update": source}, seed=12, lang="zh", modules=["amp_update"])
        texts = [t.output for t in report.tests if not t.passed] + [report.diagnosis["amp_update"]["message"]]
        assert any(hint in text for text in texts) == wanted, texts
        assert report.diagnosis["amp_update"]["todo"] == 2


def test_grading_one_module(grade_dir):
    report = grade_dir({}, seed=5, modules=["loss_scaler"])
    assert {t.module for t in report.tests} == {"loss_scaler"} and report.score == report.max_score
