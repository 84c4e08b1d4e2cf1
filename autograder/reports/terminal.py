"""The table a student or TA reads in the terminal (and in the Actions log).

Feedback, flags, notes and names may hold student text: each piece goes
through :mod:`autograder.reports.safe_text`, so nothing printed here can act as
a workflow command or a terminal control sequence.
"""
from autograder.reports import isolation_view, safe_text
from autograder.reports.tidy import tidy

OUTPUT_LINES = 12


def _points(value):
    return f"{value:g}"


def isolation_lines(isolation):
    if isolation_view.unconfined(isolation):
        lines = [f"!!! WARNING: {isolation_view.UNCONFINED_WARNING}"]
        lines += [f"!!!   - {safe_text.terminal_line(problem)}" for problem in isolation_view.problems(isolation)]
        return lines
    summary = isolation_view.one_line(isolation)
    return [safe_text.terminal_line(summary)] if summary else []


def render(report, show_output=True):
    report = tidy(report)
    lines = []
    names = [safe_text.terminal_line(test.name, limit=200) for test in report.tests]
    width = min(max([len(name) for name in names] + [20]), 72)
    for test, name in zip(report.tests, names):
        mark = "PASS" if test.passed else "FAIL"
        tag = "" if test.visibility == "visible" else " (hidden)"
        lines.append(f"{mark}  {name[:width]:<{width}}  {_points(test.score):>4}/{_points(test.max_score)}{tag}")
        if show_output and not test.passed and test.output:
            lines += ["        " + line for line in safe_text.terminal_lines(test.output, OUTPUT_LINES, limit=500)]
    lines.append("")
    for module, (score, maximum) in report.by_module().items():
        lines.append(f"{safe_text.terminal_line(module, limit=20):<20} {_points(score):>6} / {_points(maximum)}")
    visible_passed, visible_total = report.count("visible")
    hidden_passed, hidden_total = report.count("hidden")
    lines.append(f"{'TOTAL':<20} {_points(report.score):>6} / {_points(report.max_score)}")
    lines.append(f"visible tests passed {visible_passed}/{visible_total}, "
                 f"hidden tests passed {hidden_passed}/{hidden_total}; seed {safe_text.terminal_line(report.seed)}")
    lines += isolation_lines(report.isolation)
    lines += [safe_text.terminal_line(note) for note in report.notes]
    lines += [f"WARNING: {safe_text.terminal_line(flag)}" for flag in report.flags]
    return "\n".join(lines)
