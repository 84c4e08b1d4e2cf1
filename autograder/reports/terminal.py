"""The table a student or TA reads in the terminal."""


def _points(value):
    return f"{value:g}"


def render(report, show_output=True):
    lines = []
    width = max([len(test.name) for test in report.tests] + [20])
    width = min(width, 72)
    for test in report.tests:
        mark = "PASS" if test.passed else "FAIL"
        tag = "" if test.visibility == "visible" else " (hidden)"
        lines.append(f"{mark}  {test.name[:width]:<{width}}  {_points(test.score):>4}/{_points(test.max_score)}{tag}")
        if show_output and not test.passed and test.output:
            lines += ["        " + line for line in test.output.splitlines()[:12]]
    lines.append("")
    for module, (score, maximum) in report.by_module().items():
        lines.append(f"{module:<20} {_points(score):>6} / {_points(maximum)}")
    visible_passed, visible_total = report.count("visible")
    hidden_passed, hidden_total = report.count("hidden")
    lines.append(f"{'TOTAL':<20} {_points(report.score):>6} / {_points(report.max_score)}")
    lines.append(f"visible tests passed {visible_passed}/{visible_total}, "
                 f"hidden tests passed {hidden_passed}/{hidden_total}; seed {report.seed}")
    lines += report.notes
    lines += [f"WARNING: {flag}" for flag in report.flags]
    return "\n".join(lines)
