"""`python -m autograder conformance`: the chapter's framework conformance check, run on a
student's amp_update.py through the sandbox, GradScaler in the judge."""
import pytest
from support.helpers import ROOT, make_submission, mutate
from support.language_check import english_runs

from autograder.assignment.conformance.check import CHECKS
from autograder.assignment.conformance.cli import check_submission, render

NO_BACKOFF = mutate("amp_update", ("'next_scale': scale * backoff_factor,", "'next_scale': scale,"))
NO_FINITE_CHECK = mutate("amp_update", ("finite = all(gradient is None or bool(torch.isfinite(gradient).all()) "
                                        "for gradient in gradients)", "finite = True"))
MULTIPLIES = mutate("amp_update", ("else gradient / scale for gradient in scaled_gradients]",
                                   "else gradient * scale for gradient in scaled_gradients]"))


def _verdicts(tmp_path, shared_boxes, source=None):
    folder = make_submission(tmp_path / "submission", {"amp_update": source} if source else None)
    verdicts, problem = check_submission(folder, boxes=shared_boxes)
    assert problem is None
    return {verdict.name: verdict for verdict in verdicts}, verdicts


@pytest.mark.slow
def test_the_solution_passes_the_chapters_four_checks(tmp_path, shared_boxes):
    by_name, verdicts = _verdicts(tmp_path, shared_boxes)
    assert [verdict.name for verdict in verdicts] == list(CHECKS)
    assert all(verdict.passed for verdict in verdicts), [(v.name, str(v.reason)) for v in verdicts]
    assert render(verdicts, "en").splitlines()[-1] == "All 4 checks passed."


@pytest.mark.parametrize("source, failing", [
    (NO_BACKOFF, {"scale_backoff_match"}),
    (NO_FINITE_CHECK, {"local_overflow_skips", "scale_backoff_match"}),
    (MULTIPLIES, {"unscaled_gradient_match"}),
], ids=["next_scale = scale", "no finite check", "unscale multiplies"])
def test_a_mistake_fails_exactly_the_checks_it_breaks(tmp_path, shared_boxes, source, failing):
    by_name, verdicts = _verdicts(tmp_path, shared_boxes, source)
    assert {name for name, verdict in by_name.items() if not verdict.passed} == failing
    assert by_name["framework_overflow_skips"].passed  # GradScaler's side never depends on the student
    text = render(verdicts, "en")
    for name in failing:
        assert f"[FAIL] {name}" in text
    assert f"{len(failing)} of 4 checks failed" in text


def test_the_backoff_failure_says_what_gradscaler_gives(tmp_path, shared_boxes):
    by_name, _verdicts_list = _verdicts(tmp_path, shared_boxes, NO_BACKOFF)
    reason = by_name["scale_backoff_match"].reason.render("en")
    assert "next_scale is 8.0" in reason and "is 4.0" in reason


def test_the_stub_says_its_todo_is_not_written(shared_boxes):
    verdicts, problem = check_submission(ROOT / "exercises", boxes=shared_boxes)
    assert problem is None
    failed = [verdict for verdict in verdicts if not verdict.passed]
    assert {verdict.name for verdict in failed} == {"unscaled_gradient_match", "local_overflow_skips",
                                                     "scale_backoff_match"}
    assert all("TODO 1: it is not written yet" in verdict.reason.render("en") for verdict in failed)


def test_a_folder_without_amp_update_is_a_usage_problem(tmp_path, shared_boxes):
    folder = make_submission(tmp_path / "submission", omit=("amp_update",))
    verdicts, problem = check_submission(folder, boxes=shared_boxes)
    assert verdicts is None and "amp_update.py is missing" in problem.render("en")


@pytest.mark.slow
def test_command_prints_in_chinese_and_exits_by_the_result(tmp_path, capsys):
    from autograder.__main__ import main

    make_submission(tmp_path / "wrong", {"amp_update": NO_BACKOFF})
    assert main(["conformance", "--submission", str(tmp_path / "wrong"), "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert "框架一致性核对" in out and "[失败] scale_backoff_match" in out and "[通过] local_overflow_skips" in out
    assert "4 项核对中有 1 项未通过" in out and not english_runs(out), english_runs(out)

    make_submission(tmp_path / "right")
    assert main(["conformance", "--submission", str(tmp_path / "right"), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert all(f"[PASS] {name}" in out for name in CHECKS) and "All 4 checks passed." in out


def test_help_states_the_exit_status(capsys):
    from autograder.__main__ import main

    with pytest.raises(SystemExit):
        main(["conformance", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "0 when all four pass, 1 when one fails" in help_text or "四项全部通过为 0" in help_text


@pytest.mark.parametrize("source, todo", [(NO_BACKOFF, 3), (NO_FINITE_CHECK, 3), (MULTIPLIES, 1)],
                         ids=["next_scale = scale", "no finite check", "unscale multiplies"])
def test_a_failure_names_its_todo_and_every_line_fits_80_columns(tmp_path, shared_boxes, source, todo):
    from rich.cells import cell_len

    _by_name, verdicts = _verdicts(tmp_path, shared_boxes, source)
    for lang, named in (("en", f"TODO {todo} ("), ("zh", f"TODO {todo}（")):
        text = render(verdicts, lang, width=80)
        assert named in text, text
        assert all(cell_len(line) <= 80 for line in text.splitlines()), text
        wide = " ".join(render(verdicts, lang, width=1000).split())
        lines = text.splitlines()
        for first, second in zip(lines, lines[1:]):  # a break between two words, never inside one ("sc" / "ale")
            last, next_ = first.split()[-1], second.split()[0]
            if last[-1].isascii() and last[-1].isalnum() and next_[0].isascii() and next_[0].isalnum():
                assert f"{last} {next_}" in wide, (first, second)
    stub, _problem = check_submission(ROOT / "exercises", boxes=shared_boxes)
    assert "TODO 1 (" not in render(stub, "en")  # "stopped at TODO 1: it is not written yet" says it already


@pytest.mark.slow
def test_a_loop_in_unscale_is_blamed_on_todo_1_in_every_check(tmp_path, shared_boxes):
    looping = mutate("amp_update", ("    gradients = [None if gradient is None else gradient / scale for gradient in "
                                    "scaled_gradients]\n", "    while True:\n        pass\n"))
    folder = make_submission(tmp_path / "submission", {"amp_update": looping})
    from autograder.sandbox.client import Limits

    verdicts, _problem = check_submission(folder, boxes=shared_boxes, limits=Limits(call_timeout=2.0))
    failed = [verdict for verdict in verdicts if not verdict.passed]
    assert {verdict.todo for verdict in failed} == {1}, [(v.name, v.todo) for v in failed]
    assert render(verdicts, "en").count("TODO 1 (unscale_gradients") == 3
