"""The order of a report on the terminal.

``grade`` prints its summary last, as test runners do: the failed tests with
their feedback (or every test, ``verbose``), then the counts, the sandbox's line
and the notes, then the score table with each module's first thing to fix, so
that the last screen holds what to do next whatever scrolled away above it.
``quiet`` prints only the summary. ``watch`` redraws one screen (``height``):
the summary first, then as many failed tests as fit.
"""
from rich.console import Console

from autograder import active_assignment, locations
from autograder.i18n import text as t
from autograder.reports import isolation_view, safe_text, wrap
from autograder.reports.terminal import fixes, styles, table, tests_shown
from autograder.reports.tidy import tidy


MIN_WIDTH = 40      # narrower terminals get lines of this width (and wrap them themselves)


def terminal_width(width=None):
    """The width to lay out for: ``width`` if given, else what rich finds for
    standard output (the terminal's size; ``COLUMNS`` when set; 80 in a pipe)."""
    if width is None:
        width = Console().width
    return max(int(width), MIN_WIDTH)


def summary(report, lang, width, room=None, cut_last=False):
    """The score table and each module's first thing to fix, in ``room`` lines where
    they fit there (None: as long as they are)."""
    wordings = fixes.wordings(report, lang)
    column = table.fix_column(report, lang, width) if wordings else None
    if column:  # beside the scores: a module takes as many lines as its entry
        fixed = len(report.by_module()) + 3 - len(wordings)  # header, rule, total, modules without an entry
        laid = fixes.fit(wordings, lambda _module, text: wrap.wrap(text, column),
                         None if room is None else room - fixed, cut_last, column)
        return table.module_table(report, lang, width, laid)
    lines = table.module_table(report, lang, width)
    if not wordings:
        return lines
    laid = fixes.fit(wordings, lambda module, text: table.fix_lines(module, text, lang, width),
                     None if room is None else room - len(lines) - 2, cut_last, width)
    lines += [styles.line(), styles.line(t("First thing to fix, per module:", lang), "heading")]
    for module, entry in laid.items():
        lines += [styles.line(entry[0], "module", 2, 2 + len(module))] + styles.lines(entry[1:])
    return lines


def isolation_lines(isolation, lang="en", audience="staff"):
    """What confined the code. ``audience``: "staff" (someone else's code: a loud
    warning and the sandbox's own reasons) or "student" (a local grade of one's own
    work: what it means for them, in their language)."""
    if isolation_view.unconfined(isolation) and audience == "student":
        return [isolation_view.UNCONFINED_FOR_STUDENTS.render(lang)]
    if isolation_view.unconfined(isolation):
        lines = ["!!! " + t("WARNING", lang) + ": " + isolation_view.UNCONFINED_WARNING.render(lang)]
        lines += [f"!!!   - {safe_text.terminal_line(problem)}" for problem in isolation_view.problems(isolation)]
        return lines
    if isolation_view.as_dict(isolation).get("confined") is True:
        return [isolation_view.confined_line(isolation, lang)]
    return []


def footer(report, lang):
    visible_passed, visible_total = report.count("visible")
    hidden_passed, hidden_total = report.count("hidden")
    seed = safe_text.terminal_line(report.seed)
    if not hidden_total:  # a note of the grade says why no hidden test ran
        return t("Visible tests ({folder}) passed {visible_passed}/{visible_total}; seed {seed}.",
                 lang, folder=_visible_folder(), visible_passed=visible_passed, visible_total=visible_total, seed=seed)
    return t("Visible tests ({folder}) passed {visible_passed}/{visible_total}; hidden tests "
             "passed {hidden_passed}/{hidden_total}; seed {seed}.", lang, folder=_visible_folder(),
             visible_passed=visible_passed, visible_total=visible_total, hidden_passed=hidden_passed,
             hidden_total=hidden_total, seed=seed)


def _visible_folder():
    """Where the visible suites are, as a student finds them from the repository's root."""
    folder = active_assignment.current().visible_dir
    try:
        return folder.relative_to(locations.REPO_ROOT).as_posix() + "/"
    except ValueError:
        return str(folder)


def _wrapped(texts, width, style=None):
    return [styles.line(piece, style) for text in texts for piece in (wrap.wrap(text, width) if text else [""])]


def report_lines(report, mode="compact", lang=None, width=80, height=None, audience="staff", screen=None):
    """The report as lines of Text, none wider than ``width``. ``screen``: the lines
    the summary may take at the end (a terminal's height, less the lines printed
    after it), its first things to fix made shorter to fit. ``height`` (compact mode):
    ``watch``'s screen of that many lines."""
    report = tidy(report)
    lang = lang or getattr(report, "lang", None) or "en"
    if mode == "quiet":
        return summary(report, lang, width, screen, cut_last=True)
    failed = [test for test in report.tests if not test.passed]
    diagnosed = {entry.get("test") for entry in report.diagnosis.values() if isinstance(entry, dict)}
    failed.sort(key=lambda test: test.name not in diagnosed)  # stable: each module's diagnosed test first
    warning = t("WARNING", lang)
    flags = _wrapped([f"{warning}: {safe_text.terminal_line(flag)}" for flag in report.flags], width, "warning")
    notes = [footer(report, lang)]
    if mode != "verbose" and len(report.tests) > len(failed) and height is None:
        notes.append(t("Passed tests are not listed: --verbose shows every test.", lang))
    notes += isolation_lines(report.isolation, lang, audience)
    notes += [safe_text.terminal_line(note) for note in report.notes]
    printed = styles.lines(tests_shown.printed_lines(report, lang, mode == "verbose", width))
    if mode == "verbose":
        heading = [styles.line(), styles.line(t("Every test:", lang), "heading")]
        listed = tests_shown.blocks(report.tests, lang, None, width)
    else:
        heading = [styles.line()] + _wrapped(
            [t("Failed tests ({count}); each module's first thing to fix is listed first:", lang,
               count=len(failed))], width, "heading") if failed else []
        listed = tests_shown.blocks(failed, lang, tests_shown.OUTPUT_LINES, width, fold=True)
    if height is not None and mode == "compact":
        return _screen(report, lang, width, height, heading, listed, notes, printed, flags, len(failed))
    lines = [line for block in [heading] + listed for line in block]
    lines += ([styles.line()] + printed if printed else []) + [styles.line()] + _wrapped(notes, width) + flags
    lines += [styles.line()] + summary(report, lang, width, screen, cut_last=True)
    while lines and not lines[0].plain:
        lines.pop(0)
    return lines


def _screen(report, lang, width, height, heading, listed, notes, printed, flags, failed):
    """``watch``'s screen: the summary (never cut), the failed tests that fit, the
    flags always and the rest of the footer while it fits."""
    head = summary(report, lang, width, max(height - len(flags), 0))
    optional = [styles.line()] + (printed + [styles.line()] if printed else []) + _wrapped(notes, width)
    while optional and len(head) + len(optional) + len(flags) > height:
        optional.pop()
    tail = optional + flags if [line.plain for line in optional] != [""] else flags
    kept = _fitting([heading] + listed, height - len(head) - len(tail), failed, lang, width)
    return head + [line for block in kept for line in block] + tail


def _fitting(blocks, room, failed, lang, width):
    """As many of ``blocks`` (a heading, then one per failed test) as fit in ``room``
    lines, then a line saying where the others are."""
    if sum(map(len, blocks)) <= room:
        return blocks
    note = _wrapped([t("({count} failed test(s) in all, not every one fits here: `python -m autograder grade` "
                       "lists them)", lang, count=failed)], width)
    kept, used = [], 0
    for block in blocks:
        if used + len(block) > room - len(note):
            break
        kept.append(block)
        used += len(block)
    if len(kept) < 2:  # no test fits, its heading alone says nothing
        return [[styles.line()] + note] if room > len(note) else []
    return kept + [note]
