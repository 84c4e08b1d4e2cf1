"""Markdown for the GitHub Actions job summary: per module, then per visible test.

Every name, note and flag goes through :func:`safe_text.markdown_text`: no
heading, link, image, table row, code fence or raw HTML can come from them.
"""
from autograder.i18n import text as t
from autograder.reports import isolation_view, safe_text
from autograder.reports.tidy import tidy

# The runner refuses a step summary above its size limit (128 KiB on older
# runners); stay well below it, whatever the number of flags.
MAX_CHARS = 60_000
MAX_ITEMS = 50


def isolation_lines(isolation, lang="en"):
    if isolation_view.unconfined(isolation):
        lines = [f"> ⚠️ **{isolation_view.UNCONFINED_WARNING.render(lang)}**"]
        lines += [f"> - {safe_text.markdown_text(problem)}" for problem in isolation_view.problems(isolation)]
        return lines + [""]
    items = isolation_view.facts(isolation)
    if not items:
        return []
    # A confined run that lacked a layer says which first.
    lacking = ([safe_text.markdown_text(isolation_view.confined_line(isolation, lang)), ""]
               if isolation_view.missing_layers(isolation) else [])
    if lang != "en":  # the facts are the sandbox's English: name what they are about, point to them
        listed = "、".join(safe_text.markdown_text(label) if known else safe_text.markdown_code(label)
                          for label, known in isolation_view.aspects(isolation, lang))
        return lacking + [t("Isolation: your code ran in the sandbox (recorded: {aspects}; details in results.json, "
                            "extra_data.isolation).", lang, aspects=listed), ""]
    return lacking + [t("Isolation", lang) + ": " + "; ".join(f"{safe_text.markdown_text(key)}: "
                                                              f"{safe_text.markdown_text(value)}"
                                                              for key, value in items), ""]


def _capped(items, render_item, lang):
    lines = [render_item(item) for item in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        lines.append("> " + t("… and {count} more (see results.json).", lang, count=len(items) - MAX_ITEMS))
    return lines


def _module_cells(score, maximum, missing, entry, lang):
    """(score cell, fix cell) of one module row; no ✅ where hidden points were not run."""
    score_cell = f"{score:g} / {maximum:g}"
    if missing:
        score_cell = t("{score:g} / {maximum:g} visible · {points:g} hidden points not run", lang,
                       score=score, maximum=maximum, points=missing)
    if entry:
        return score_cell, safe_text.markdown_text(entry.get("message", ""), limit=400)
    if maximum and score >= maximum:
        return score_cell, (t("every visible test passes; the hidden tests are not run here", lang) if missing
                            else "✅")
    return score_cell, ""


def render(report):
    report = tidy(report)
    lang = report.lang or "en"
    not_run = report.hidden_not_run
    module_header, score_header = t("Module", lang), t("Score", lang)
    fix_header = t("First thing to fix", lang)
    heading = (t("Autograding, visible tests only: {score:g} / {maximum:g}", lang, score=report.score,
                 maximum=report.max_score) if not_run else
               t("Autograding: {score:g} / {maximum:g}", lang, score=report.score, maximum=report.max_score))
    lines = [f"## {heading}", "",
             f"| {module_header} | {score_header} | {fix_header} |", "| --- | ---: | --- |"]
    diagnosis = report.diagnosis if isinstance(report.diagnosis, dict) else {}
    for module, (score, maximum) in report.by_module().items():
        score_cell, fix = _module_cells(score, maximum, not_run.get(module, 0), diagnosis.get(module), lang)
        lines.append(f"| {safe_text.markdown_code(module)} | {score_cell} | {fix} |")
    headers = [t("Visible test", lang), t("Result", lang), t("Points", lang)]
    lines += ["", "| " + " | ".join(headers) + " |", "| --- | --- | ---: |"]
    for test in report.tests:
        if test.visibility == "visible":
            mark = "✅ " + t("pass", lang) if test.passed else \
                "⚠️ " + t("not graded", lang) if test.fault else "❌ " + t("fail", lang)
            lines.append(f"| {safe_text.markdown_text(test.name, limit=200)} | {mark} "
                         f"| {test.score:g} / {test.max_score:g} |")
    hidden_passed, hidden_total = report.count("hidden")
    if hidden_total:
        lines += ["", t("Hidden tests passed: {passed} / {total} (names and feedback in results.json).", lang,
                        passed=hidden_passed, total=hidden_total)]
    lines.append("")
    lines += isolation_lines(report.isolation, lang)
    lines += _capped(report.notes, lambda note: f"> {safe_text.markdown_text(note)}", lang)
    lines += _capped(report.flags, lambda flag: f"> ⚠️ {safe_text.markdown_text(flag)}", lang)
    lines.append("\n" + t("Seed: {seed}", lang, seed=safe_text.markdown_code(report.seed)))
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS].rsplit("\n", 1)[0] + "\n\n_" + t("Summary cut: see results.json.", lang) + "_\n"
    return text


def render_error(message, max_score, lang="en"):
    """The summary when no usable results exist (``message`` is ours, escaped anyway)."""
    heading = t("Autograding: {score:g} / {maximum:g}", lang, score=0, maximum=max_score)
    return f"## {heading}\n\n> {safe_text.markdown_text(message)}\n"
