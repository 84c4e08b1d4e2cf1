"""Markdown for the GitHub Actions job summary: per module, then per visible test.

Every name, note and flag goes through :func:`safe_text.markdown_text`: no
heading, link, image, table row, code fence or raw HTML can come from them.
"""
from autograder.reports import isolation_view, safe_text
from autograder.reports.tidy import tidy

# The runner refuses a step summary above its size limit (128 KiB on older
# runners); stay well below it, whatever the number of flags.
MAX_CHARS = 60_000
MAX_ITEMS = 50


def isolation_lines(isolation):
    if isolation_view.unconfined(isolation):
        lines = [f"> ⚠️ **{isolation_view.UNCONFINED_WARNING}**"]
        lines += [f"> - {safe_text.markdown_text(problem)}" for problem in isolation_view.problems(isolation)]
        return lines + [""]
    items = isolation_view.facts(isolation)
    if not items:
        return []
    return ["Isolation: " + "; ".join(f"{safe_text.markdown_text(key)}: {safe_text.markdown_text(value)}"
                                      for key, value in items), ""]


def _capped(items, render):
    lines = [render(item) for item in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        lines.append(f"> … and {len(items) - MAX_ITEMS} more (see results.json).")
    return lines


def render(report):
    report = tidy(report)
    lines = [f"## Autograding: {report.score:g} / {report.max_score:g}", "",
             "| Module | Score |", "| --- | ---: |"]
    for module, (score, maximum) in report.by_module().items():
        lines.append(f"| {safe_text.markdown_code(module)} | {score:g} / {maximum:g} |")
    lines += ["", "| Visible test | Result | Points |", "| --- | --- | ---: |"]
    for test in report.tests:
        if test.visibility == "visible":
            mark = "✅ pass" if test.passed else "❌ fail"
            lines.append(f"| {safe_text.markdown_text(test.name, limit=200)} | {mark} "
                         f"| {test.score:g} / {test.max_score:g} |")
    hidden_passed, hidden_total = report.count("hidden")
    if hidden_total:
        lines += ["", f"Hidden tests passed: {hidden_passed} / {hidden_total} "
                      "(names and feedback in results.json)."]
    lines.append("")
    lines += isolation_lines(report.isolation)
    lines += _capped(report.notes, lambda note: f"> {safe_text.markdown_text(note)}")
    lines += _capped(report.flags, lambda flag: f"> ⚠️ {safe_text.markdown_text(flag)}")
    lines.append(f"\nSeed: {safe_text.markdown_code(report.seed)}")
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS].rsplit("\n", 1)[0] + "\n\n_Summary cut: see results.json._\n"
    return text


def render_error(message, max_score):
    """The summary when no usable results exist (``message`` is ours, escaped anyway)."""
    return f"## Autograding: 0 / {max_score:g}\n\n> {safe_text.markdown_text(message)}\n"
