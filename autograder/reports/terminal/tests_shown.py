"""The tests of a grade as the terminal lists them, each with its feedback, and
what the student's code printed.

In the default listing a failed test whose feedback ends the same way as an
earlier one's of its module (the same words, or the same words under another
TODO's hint: every call after an endless loop's, every test of a TODO not
written yet) is folded into one line with a count under the first.
"""
import collections

from autograder.i18n import text as t
from autograder.reports import safe_text, wrap
from autograder.reports.terminal import styles
from autograder.reports.terminal.table import points

OUTPUT_LINES = 10
FEEDBACK_INDENT = "      "
TEST_LINE_HANG = "    "   # a wrapped test line continues less indented than its feedback


def feedback_lines(output, max_lines=OUTPUT_LINES):
    """The feedback's lines, escaped; when cut, the last line (usually the error itself) is kept."""
    lines = safe_text.terminal_lines(output, None, limit=500)
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines - 2] + ["…"] + lines[-1:]
    return lines


def _test_line(test, lang):
    mark = t("PASS", lang) if test.passed else t("NOT GRADED", lang) if test.fault else t("FAIL", lang)
    tag = "" if test.visibility == "visible" else " " + t("(hidden)", lang)
    return mark, (f"{mark}  {safe_text.terminal_line(test.name, limit=300)}  "
                  f"{points(test.score)}/{points(test.max_score)}{tag}")


def _fold_key(test):
    """What a failed test's feedback says, without the hint of its own TODO (its first
    line) where more follows."""
    lines = [line for line in test.output.splitlines() if line.strip()]
    return test.module, tuple(lines[1:] if len(lines) > 1 else lines)


def blocks(tests, lang, max_lines, width, fold=False):
    """Each test and its feedback, one list of Text lines per test; with ``fold``,
    the failed tests that end as an earlier one of their module are one line under it."""
    repeats = collections.Counter(_fold_key(test) for test in tests if not test.passed and test.output)
    found, shown = [], set()
    for test in tests:
        key = _fold_key(test) if not test.passed and test.output else None
        if fold and key in shown:
            continue
        mark, head = _test_line(test, lang)
        lines = wrap.wrap(head, width, hang=TEST_LINE_HANG)
        block = [styles.line(lines[0], "pass" if test.passed else "fail", 0, len(mark))] + styles.lines(lines[1:])
        if key:
            for line in feedback_lines(test.output, max_lines):
                block += styles.lines(wrap.wrap_hanging(line, width, FEEDBACK_INDENT))
            if fold:
                shown.add(key)
                if repeats[key] > 1:
                    block += styles.lines(wrap.wrap_hanging(
                        t("({count} more failed the same way in {module}; --verbose lists them)",
                          lang, count=repeats[key] - 1, module=safe_text.terminal_line(test.module, limit=40)),
                        width, FEEDBACK_INDENT))
        found.append(block)
    return found


def _size(count):
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 1024:.1f} KiB" if count >= 1024 \
        else f"{count} B"


def printed_lines(report, lang, verbose, width):
    """What the student's code printed: with ``verbose``, each module's first lines
    (escaped, as received); else one line per module saying how much."""
    lines = []
    for module, entry in report.printed.items():  # tidy: every entry well-formed
        module = safe_text.terminal_line(module, limit=40)
        size = _size(entry["bytes"])
        if not verbose:
            lines += wrap.wrap(t("{module} printed {size} while it was graded (--verbose shows the first lines).",
                                 lang, module=module, size=size), width)
            continue
        lines += wrap.wrap(t("{module} printed {size} while it was graded; the first lines:", lang,
                             module=module, size=size), width)
        for line in safe_text.terminal_lines(entry["head"], None, limit=300):
            lines += wrap.wrap_hanging(line, width, "  | ")
        if entry["more"]:
            lines.append("  | …")
    return lines
