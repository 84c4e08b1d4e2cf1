"""After a grade the last screen of an 80×24 terminal holds the score table and each
module's first thing to fix; repeated feedback is one line with a count; ``watch``
never cuts what a test saw; ``--quiet`` keeps each module's reason; colour only
where the terminal shows it."""
import io
import re

import pytest
from rich.cells import cell_len

from autograder.i18n import _, render
from autograder.i18n import text as t
from autograder.judging import todo_graph
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from autograder.reports import terminal
from autograder.reports.terminal import styles
from support import mutants_amp_training_step, mutants_amp_update, mutants_loss_scaler

ROWS = 24  # the screen: its last line is the shell's prompt again, the one above "results written to ..."
# one realistic mistake per module, each with long feedback
CASES = {"amp_update": (mutants_amp_update, "unscale_wrong_direction"),
         "loss_scaler": (mutants_loss_scaler, "step_unscales_again"),
         "amp_training_step": (mutants_amp_training_step, "backward_not_scaled")}


def _joined(lines):
    """Wrapped lines as one text again (what a reader reads across the breaks)."""
    return re.sub(r"\s+", "", "".join(lines))


def _last_screen(report, lang):
    after = t("results written to {path}", lang, path="results.json")
    text = terminal.render(report, lang=lang, width=80, screen=ROWS - 2) + "\n" + after
    return text.splitlines(), text.splitlines()[-(ROWS - 1):]


@pytest.fixture(scope="module", params=["zh", "en"])
def three_mistakes(request, grade_dir):
    overrides = {}
    for module, (cases, name) in CASES.items():
        overrides[module] = next(case for case in cases.CASES if case.name == name).source(module)
    lang = request.param
    return lang, grade_dir(overrides, seed=5, lang=lang, include_hidden=False)


@pytest.mark.slow
def test_the_last_screen_holds_the_scores_and_each_first_thing_to_fix(three_mistakes):
    lang, report = three_mistakes
    everything, screen = _last_screen(report, lang)
    assert all(cell_len(line) <= 80 for line in everything)
    header = next(index for index, line in enumerate(screen) if line.startswith(_("Module").render(lang)))
    assert any(line.startswith(t("TOTAL", lang)) for line in screen[header:])
    for module, entry in report.diagnosis.items():
        fix = next(index for index, line in enumerate(screen) if line.startswith(f"  {module}"))
        assert f"TODO {entry['todo']}" in screen[fix] + screen[fix + 1]
    # above the summary every failed test is listed, or counted under one that ended the same way
    above = everything[:len(everything) - len(screen) + header]
    for entry in report.diagnosis.values():
        assert _joined([entry["test"]]) in _joined(above), entry["test"]
    folded = sum(int(count) for count in re.findall(r"(\d+) (?:more failed|个未通过)", "".join(above)))
    listed = sum(line.startswith(t("FAIL", lang)) for line in above)
    assert listed + folded == sum(not test.passed for test in report.tests)


def _report(modules, lang="zh"):
    """Each module: three failed tests, with a diagnosis in the grader's own wording
    whose "what the test saw" is long."""
    tests, diagnosis = [], {}
    for module, todo in modules.items():
        saw = t("grad_norm: got {got}, expected {want}", lang, got=13855.6, want=3.38258) + " " + \
            "，".join(["这正是期望范数的 scale 倍：范数是在 unscale_ 之前、在仍处于缩放状态的梯度上测的"] * 2)
        for index in range(3):
            tests.append(Result(name=f"{module}: 测试 {index} 的标题相当长，说明它检查什么以及在什么输入上检查",
                                module=module, max_score=1.0, score=0.0, passed=False, visibility="visible",
                                output=f"TODO {todo}: 第 {index} 个提示\n{saw}"))
        test = tests[-3].name
        message = render(_("Start with TODO {todo} ({title}): “{test}” fails. {symptom}", todo=todo,
                           title=todo_graph.title(todo) or "", test=test.split(": ", 1)[-1], symptom=saw), lang)
        diagnosis[module] = {"todo": todo, "test": test, "message": message}
    return GradeReport(tests=tests, seed=1, diagnosis=diagnosis, lang=lang,
                       hidden_not_run={module: 20 for module in modules}), saw


MODULES = {"amp_update": 2, "loss_scaler": 7, "amp_training_step": 12}


def test_watch_never_cuts_what_the_test_saw():
    report, saw = _report(MODULES)
    for height in (23, 30, 60):
        lines = terminal.render(report, width=80, height=height).splitlines()
        assert len(lines) <= height and all(cell_len(line) <= 80 for line in lines)
        assert not any(line.endswith("…") for line in lines)
        assert _joined(lines).count(_joined([saw])) >= len(MODULES)
        for module, todo in MODULES.items():
            assert any(line.startswith(f"  {module}") and f"TODO {todo}" in line for line in lines)


def test_a_short_screen_words_the_first_things_to_fix_shorter_not_cut():
    report, saw = _report(MODULES)
    full = terminal.render(report, mode="quiet", width=80).splitlines()
    short = terminal.render(report, mode="quiet", width=80, screen=ROWS - 2).splitlines()
    assert len(full) > ROWS - 2 >= len(short)
    assert _joined(short).count(_joined([saw])) == len(MODULES)
    # the test's title goes first: the failed test above names it
    title = _joined(["测试 0 的标题相当长"])
    assert _joined(short).count(title) < _joined(full).count(title) == len(MODULES)


def test_quiet_keeps_each_modules_reason():
    report, _saw = _report(MODULES)
    quiet = terminal.render(report, mode="quiet", width=80)
    for module, todo in MODULES.items():
        assert re.search(rf"^  {module}：先从 TODO {todo} 入手", quiet, re.M), quiet
    assert t("FAIL", "zh") not in quiet


def test_repeated_feedback_is_one_line_with_a_count():
    """Fifteen tests that end the same way (every call after an endless loop's) under
    different TODOs' hints: the first shown, the others counted."""
    tests = [Result(name=f"loss_scaler: test {index}", module="loss_scaler", max_score=1.0, score=0.0,
                    passed=False, visibility="visible",
                    output=f"TODO {4 + index % 6}: hint {index}\nYour code did not finish within 0.5 s: "
                           "look for an endless loop.") for index in range(15)]
    report = GradeReport(tests=tests, seed=1, lang="en")
    text = terminal.render(report, width=80, lang="en")
    assert text.count("did not finish") == 1
    assert "      (14 more failed the same way in loss_scaler; --verbose lists them)" in text.splitlines()
    assert terminal.render(report, width=80, lang="en", mode="verbose").count("did not finish") == 15


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("environment, tty, coloured", [
    ({"TERM": "xterm-256color"}, True, True),
    ({"TERM": "xterm"}, True, True),
    ({"TERM": "xterm-256color", "NO_COLOR": "1"}, True, False),
    ({"TERM": "dumb"}, True, False),
    ({"TERM": "xterm-256color"}, False, False),             # a pipe, a CI log
    ({"TERM": "xterm-256color", "FORCE_COLOR": "1"}, False, True),
])
def test_colour_where_the_terminal_shows_it(monkeypatch, environment, tty, coloured):
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLORTERM", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    report, _saw = _report({"amp_update": 2})
    report.tests.append(Result(name="amp_update: \x1b[2J sneaky", module="amp_update", max_score=1.0, score=1.0,
                               passed=True, output="", visibility="visible"))
    stream = _Stream(tty)
    terminal.show(report, mode="verbose", lang="zh", stream=stream)
    written = stream.getvalue()
    assert ("\x1b[" in written) is coloured
    assert "\x1b[2J" not in written and "\\x1b[2J sneaky" in written  # student text is never obeyed
    assert re.sub(r"\x1b\[[0-9;]*m", "", written) == terminal.render(report, mode="verbose", lang="zh",
                                                                     width=80) + "\n"


def test_only_our_own_words_are_coloured():
    line = styles.line("FAIL  amp_update: title", "fail", 0, 4)
    assert styles.ansi([line], "256").startswith("\x1b[1;31mFAIL\x1b[0m  amp_update")
