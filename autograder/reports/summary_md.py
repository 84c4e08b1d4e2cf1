"""Markdown for the GitHub Actions job summary: per module, then per visible test."""


def _escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


def render(report):
    lines = [f"## Autograding: {report.score:g} / {report.max_score:g}", "",
             "| Module | Score |", "| --- | ---: |"]
    for module, (score, maximum) in report.by_module().items():
        lines.append(f"| `{module}` | {score:g} / {maximum:g} |")
    lines += ["", "| Visible test | Result | Points |", "| --- | --- | ---: |"]
    for test in report.tests:
        if test.visibility == "visible":
            mark = "✅ pass" if test.passed else "❌ fail"
            lines.append(f"| {_escape(test.name)} | {mark} | {test.score:g} / {test.max_score:g} |")
    hidden_passed, hidden_total = report.count("hidden")
    if hidden_total:
        lines += ["", f"Hidden tests passed: {hidden_passed} / {hidden_total} "
                      "(names and feedback in results.json)."]
    lines += [""] + [f"> {note}" for note in report.notes]
    lines += [f"> ⚠️ {flag}" for flag in report.flags]
    lines.append(f"\nSeed: `{report.seed}`")
    return "\n".join(lines) + "\n"
