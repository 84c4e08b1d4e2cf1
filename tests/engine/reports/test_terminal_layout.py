"""The terminal report fits the terminal: no line wider than its width (80 or
120 columns, Chinese or English), Chinese broken only between characters or at
spaces, never inside a word or "TODO n", and the "/" of every score in one column."""
import re

import pytest
from rich.cells import cell_len

from autograder.i18n import _, text as t
from autograder.reports import terminal, wrap
from support.helpers import mutate

STUBBED = {"amp_training_step": None}  # the stub: every test of the module fails on TODO 10
MISTAKES = {
    "amp_update": mutate("amp_update", ("gradient / scale for gradient in scaled_gradients]",
                                        "gradient * scale for gradient in scaled_gradients]")),
    "loss_scaler": mutate("loss_scaler", ("if growth_tracker == growth_interval:",
                                          "if growth_tracker + 1 >= growth_interval:")),
}


@pytest.fixture(scope="module", params=["zh", "en"])
def graded(request, grade_dir):
    """Real grades with long feedback: wrong modules, and one with hidden points not run."""
    lang = request.param
    report = grade_dir(MISTAKES, seed=21, lang=lang)
    local = grade_dir(MISTAKES, seed=21, lang=lang, include_hidden=False)
    return lang, report, local


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("mode", ["compact", "verbose", "quiet"])
def test_no_line_is_wider_than_the_terminal(graded, width, mode, monkeypatch):
    lang, report, local = graded
    monkeypatch.setenv("COLUMNS", str(width))  # what a terminal of that size tells rich
    for shown in (report, local):
        text = terminal.render(shown, mode=mode)
        too_wide = [line for line in text.splitlines() if cell_len(line) > width]
        assert not too_wide, "\n".join(too_wide)
        if mode == "compact" and shown.diagnosis:
            assert "TODO" in text
    assert local.hidden_not_run and not report.hidden_not_run


def test_the_default_width_is_the_terminals(monkeypatch):
    monkeypatch.setenv("COLUMNS", "93")
    assert terminal.terminal_width() == 93
    monkeypatch.setenv("COLUMNS", "20")
    assert terminal.terminal_width() == terminal.MIN_WIDTH
    assert terminal.terminal_width(132) == 132


def test_the_diagnosis_goes_beside_the_scores_where_it_has_room(graded):
    lang, report, local = graded
    beside, under = _("First thing to fix").render(lang), _("First thing to fix, per module:").render(lang)
    header = _("Module").render(lang)
    wide = terminal.render(report, width=160).splitlines()
    assert beside in next(line for line in wide if line.startswith(header)) and under not in wide
    # Without hidden tests the extra column leaves too little room at 80: the diagnosis goes under the table.
    narrow = terminal.render(local, width=80).splitlines()
    assert beside not in next(line for line in narrow if line.startswith(header)) and under in narrow
    for module, entry in local.diagnosis.items():
        assert any(line.startswith("  " + module) for line in narrow), module


def test_scores_line_up_on_the_slash(graded):
    for shown in graded[1:]:
        for width in (80, 120):
            lines = terminal.render(shown, mode="quiet", width=width).splitlines()
            slashes = {cell_len(line[:line.index(" / ")]) for line in lines if re.search(r"\d+ / \d+", line)}
            assert len(slashes) == 1, lines


@pytest.mark.parametrize("width", [12, 20, 33])
def test_chinese_breaks_between_characters_and_keeps_words_whole(width):
    text = ("先从 TODO 12 入手（更新边界：反缩放一次、有限值检查、全局梯度范数、梯度裁剪）：clip_grad_norm_ "
            "之前必须调用 scaler.unscale_(optimizer)，否则裁剪的是缩放后的梯度。")
    lines = wrap.wrap(text, width)
    assert all(cell_len(line) <= width for line in lines), lines
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for line in lines:
        assert not line.startswith(tuple("，。：）、")), lines     # no closing punctuation at a line start
        assert not line.endswith("（"), lines
    joined = "\n".join(lines)
    assert "TODO 12" in joined                                     # never "TODO\n12"
    if width >= 16:
        assert "clip_grad_norm_" in lines[[i for i, l in enumerate(lines) if "clip_grad" in l][0]]


def test_english_breaks_at_spaces_only():
    text = "Failed tests (67); each module's first thing to fix is listed first: unscale_gradients"
    lines = wrap.wrap(text, 30)
    assert all(cell_len(line) <= 30 for line in lines)
    assert " ".join(lines) == text


def test_a_word_longer_than_the_line_is_cut_and_continuation_lines_hang():
    lines = wrap.wrap("FAIL  toy_sum: " + "x" * 100 + " 0/1 (hidden)", 40, hang="    ")
    assert all(cell_len(line) <= 40 for line in lines), lines
    assert lines[0] == "FAIL  toy_sum:" and all(line.startswith("    ") for line in lines[1:])
    assert "".join(line.strip() for line in lines).count("x") == 100


@pytest.mark.parametrize("height", [14, 18, 23, 40])
def test_a_screen_keeps_the_table_and_the_diagnosis_and_fills_the_rest(graded, height):
    """``watch``'s screen: the table and each module's diagnosis first, never cut
    (worded shorter where the screen is short), then failed tests while they fit,
    never more lines than the screen has."""
    lang, report, local = graded
    for shown in (report, local):
        lines = terminal.render(shown, mode="compact", width=80, height=height).splitlines()
        assert len(lines) <= height or height < 18, "\n".join(lines)
        assert all(cell_len(line) <= 80 for line in lines)
        assert lines[0].startswith(_("Module").render(lang))
        for module in shown.diagnosis:
            assert any(line.lstrip().startswith(module) for line in lines), module
        assert not [line for line in lines if line.endswith(" …")]
        if any(line.startswith(t("FAIL", lang)) for line in lines) and \
                sum(line.startswith(t("FAIL", lang)) for line in lines) < len(shown.tests) - sum(
                    test.passed for test in shown.tests):  # some failed tests, not all
            assert any("python -m autograder grade" in line for line in lines[-6:])


def test_a_cut_never_splits_a_number_or_a_word():
    line = "  toy_sum: the total came back as 131072 instead of count × 2 and the run stopped"
    for width in range(30, len(line)):
        kept = terminal.cut(line, width)
        assert cell_len(kept) <= width and line.startswith(kept)
        assert line[len(kept)] == " " or not (kept[-1].isalnum() and line[len(kept)].isalnum()), kept
