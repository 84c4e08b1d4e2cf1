"""Every word Chinese on the Chinese path: the help of every command, a grade's terminal
output and the job summary hold no English word outside code (identifiers, options,
paths, product names) and no space between two Chinese words."""
import re

import pytest

from autograder import __main__ as commands
from autograder.cli import argparse_text
from autograder.reports import summary_md, terminal
from support.helpers import mutate
from support.language_check import english_words, markdown_text

_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef“”"
_SPACED = re.compile(rf"[{_CJK}] [{_CJK}]")  # one space: prose (a table's columns are further apart)
# names a Chinese text keeps as they are: products, systems, the chapter's own "Step n"
NAMES = {"Markdown", "Actions", "Linux", "Gradescope", "Ubuntu", "POSIX", "Landlock", "CPU", "Ctrl-C", "Step",
         "otter-grader", "copydetect", "zip", "uv", "pip", "Linear"}
_CODE = re.compile(r"`[^`]*`|'[^']*'|\S*[\w-]+\(\S*\)|\$\w+|\[tool\.autograder\] lang|python -m autograder[\w -]*")


def _prose(text):
    """A help text without what is code: the usage lines, each option's invocation column."""
    kept, usage = [], False
    for line in text.splitlines():
        if line.startswith(("用法：", "usage:")):
            usage = True
        elif not line.strip():
            usage = False
        if usage:
            continue
        option = re.match(r"^  (-\S.*?|[A-Z][\w.]*)(  +|$)", line)
        kept.append(line[option.end():] if option else line)
    return "\n".join(kept)


def _problems(text, code=()):
    text = _CODE.sub(" 0 ", text)  # code stands there as a number would
    return sorted(set(english_words(text, allowed=NAMES, code=set(code) | {"lang"}))), _SPACED.findall(text)


def _helps(lang):
    with argparse_text.translated(lang):
        parser = commands.build_parser()
        found = {"": parser.format_help()}
        choices = next(action.choices for action in parser._actions if isinstance(action.choices, dict))
        found.update((name, command.format_help()) for name, command in choices.items())
    return found


def test_the_help_of_every_command_is_chinese():
    helps = _helps("zh")
    assert set(commands.commands()) <= set(helps)
    for name, text in helps.items():
        words, spaced = _problems(_prose(text), code=set(commands.commands()) | {"grade", "report", "main", "K", "N", "committed", "pushed", "fork"})
        assert not words and not spaced, (name or "python -m autograder", words, spaced)
    assert "位置参数：" in helps[""] and "为「" in helps[""]
    assert "``" not in helps["classroom-report"]           # no reStructuredText
    assert "Gradescope" not in helps["grade"]


def test_english_help_stays_english():
    for name, text in _helps("en").items():
        assert not re.search(f"[{_CJK}]", _prose(text).replace("混合精度反向传播", "")), name


@pytest.fixture(scope="module")
def chinese_grade(grade_dir):
    return grade_dir({"amp_update": mutate("amp_update", ("gradient / scale for gradient in scaled_gradients]",
                                                          "gradient / scale / scale for gradient in scaled_gradients]")),
                      "loss_scaler": mutate("loss_scaler", ("if growth_tracker == growth_interval:",
                                                            "if growth_tracker > growth_interval:"))},
                     seed=3, lang="zh", include_hidden=False)


@pytest.mark.slow
def test_a_chinese_grade_and_its_job_summary_are_chinese(chinese_grade):
    from support.language_check import identifiers
    from support.helpers import SOLUTIONS

    code = identifiers(*sorted(SOLUTIONS.glob("*.py"))) | {"scale", "visible"}
    for mode in ("compact", "verbose", "quiet"):
        text = terminal.render(chinese_grade, mode=mode, lang="zh", width=80)
        words, spaced = _problems(text, code)
        assert not words and not spaced, (mode, words, spaced)
    summary = summary_md.render(chinese_grade)
    words, spaced = _problems(markdown_text(summary), code)
    assert not words and not spaced, (words, spaced)
    # the sandbox's facts are named in Chinese (they were clean_process、cpu、memory、root、syscalls)
    assert "系统调用" in summary and "syscalls" not in summary
    # a gradient divided twice is not called "the norm after clipping" alone
    assert "要么梯度被除了两次 scale" in terminal.render(chinese_grade, mode="verbose", lang="zh", width=80)
