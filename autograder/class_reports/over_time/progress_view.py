"""The progress sections of the class's pages (``grade-many --history``): the class's progress
per module over time, who is stuck (:mod:`autograder.class_reports.over_time.history`) and each
student's score over time.

The charts are inline SVG drawn here (the page loads nothing; its policy allows no image), in
a viewBox that scales to the width of a phone or a laptop; their words are HTML beside them,
in the page's language, never text inside the drawing (which would shrink with it).
"""
from autograder import active_assignment
from autograder.class_reports.over_time.history import STUCK_COMMITS, STUCK_TIME, end_of, load, stuck
from autograder.class_reports.over_time.history import progress as class_progress
from autograder.class_reports.over_time.results_files import shown, title_of, todo_name
from autograder.i18n import text as t
from autograder.reports import colours
from autograder.reports.html_page import esc, table
from autograder.reports.safe_text import markdown_code, markdown_text

STYLE = """
.progress svg { width: 100%; height: 11em; display: block; background: #fafbfc; border: 1px solid var(--line); }
.progress svg.line { height: 5em; max-width: 40em; }
.legend { display: flex; flex-wrap: wrap; gap: .2em 1.2em; margin: .3em 0; font-size: 13px; }
.legend i { display: inline-block; width: 1.4em; height: .35em; vertical-align: middle; margin-right: .3em; }
.spark { width: 9em; height: 1.8em; display: block; }
"""
WIDTH, HEIGHT, PAD = 600.0, 200.0, 8.0


class Progress:
    """What the sections need, read once: histories, when they end, who is stuck."""

    def __init__(self, output_dir, manifest, students):
        self.histories = load(output_dir, students)
        self.end = end_of(manifest, self.histories)
        self.modules = list(active_assignment.current().modules)
        self.stuck = stuck(self.histories, self.end, self.modules)
        self.mode = (manifest.get("history") or {}).get("mode", "every")


def _polyline(values, colour, width=2):
    """``values`` (0..1, one a step) as a polyline across the drawing."""
    step = (WIDTH - 2 * PAD) / max(1, len(values) - 1)
    points = " ".join(f"{PAD + index * step:.1f},{HEIGHT - PAD - value * (HEIGHT - 2 * PAD):.1f}"
                      for index, value in enumerate(values))
    return (f'<polyline fill="none" stroke="{colour}" stroke-width="{width}" vector-effect="non-scaling-stroke" '
            f'points="{points}"/>')


def _grid():
    lines = [f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d0d4d9" stroke-width="1" '
             'vector-effect="non-scaling-stroke"/>' for y in (PAD + share * (HEIGHT - 2 * PAD)
                                                               for share in (0, .25, .5, .75, 1))]
    return "".join(lines)


def _svg(label, body, height=HEIGHT, css=""):
    return (f'<svg{css} viewBox="0 0 {WIDTH:g} {height:g}" preserveAspectRatio="none" role="img" '
            f'aria-label="{esc(label, 300)}">{body}</svg>')


def score_chart(points, lang, css=' class="spark"'):
    """A student's score over time (a line through their commits), or '' with fewer than two."""
    scored = [point for point in points if point.score is not None and point.max_score]
    if len(scored) < 2:
        return ""
    values = [point.score / point.max_score for point in scored]
    label = t("Score over time: {first} to {last} in {n} commit(s)", lang, first=shown(scored[0].score),
              last=shown(scored[-1].score), n=len(scored))
    return _svg(label, _grid() + _polyline(values, colours.PALETTE[0], 2), css=css)


def student_progress(view, student, lang):
    """The student view's line: their score over time, with its words."""
    points = view.histories.get(student) or []
    scored = [point for point in points if point.score is not None]
    if not scored:
        return ""
    words = t("{first} on {start} to {last} on {stop}, {n} commit(s)", lang, first=shown(scored[0].score),
              start=scored[0].when.date().isoformat(), last=shown(scored[-1].score),
              stop=scored[-1].when.date().isoformat(), n=len(scored))
    chart = score_chart(points, lang, css=' class="line"')
    return f'<div class="progress">{chart}<p class="muted">{esc(words, 300)}</p></div>'


def _stuck_on(item, lang, escape):
    """What a stuck student is stuck on: the module, the TODO and the test that shows it."""
    if not item.diagnosis:
        return "–"
    todo = item.diagnosis.get("todo") if isinstance(item.diagnosis.get("todo"), int) else None
    words = todo_name(item.module, todo, lang)
    test = title_of(item.diagnosis.get("test"), item.module)
    shown_since = item.diagnosis_since.date().isoformat() if item.diagnosis_since else "?"
    return t("{module} · {todo} · {test} (since {since})", lang, module=escape(item.module), todo=escape(words),
             test=escape(test), since=shown_since)


def _how_long(item, lang):
    days = item.span.total_seconds() / 86400
    return t("{days} day(s), {commits} commit(s)", lang, days=f"{days:.1f}", commits=item.commits)


def _explained(view, lang):
    return t("Stuck: short of full marks, and the score has not risen over the last {commits} commits or for {days} "
             "days up to {end}; most stuck first.", lang, commits=STUCK_COMMITS, days=STUCK_TIME.days,
             end=view.end.isoformat(timespec="minutes"))


def section_html(view, lang, anchor_of=lambda student: ""):
    """The section of report.html: the class's progress per module, then who is stuck."""
    parts = ["<h2 id=\"progress\">" + t("Progress before the deadline", lang) + "</h2>"]
    days, shares = class_progress(view.histories, view.end, view.modules)
    if days:
        parts.append("<h3>" + t("The class's progress per module", lang) + "</h3>")
        body = _grid() + "".join(_polyline(values, colours.colour(module), 2.5) for module, values in shares.items())
        label = t("Share of students with each module full, per day, {first} to {last}", lang,
                  first=days[0].isoformat(), last=days[-1].isoformat())
        legend = "".join(f'<span><i style="background:{colours.colour(module)}"></i><code>{esc(module, 60)}</code> '
                         f'{round(100 * values[-1])}%</span>' for module, values in shares.items())
        parts.append(f'<div class="progress">{_svg(label, body)}<div class="legend">{legend}</div>'
                     f'<p class="muted">{esc(label, 300)} (0–100%).</p></div>')
    parts.append("<h3 id=\"stuck\">" + t("Who is stuck", lang) + "</h3>")
    parts.append("<p class=\"muted\">" + esc(_explained(view, lang), 400) + "</p>")
    if not view.stuck:
        return "\n".join(parts + ["<p>" + t("Nobody is stuck.", lang) + "</p>"])
    rows = []
    for item in view.stuck:
        link = anchor_of(item.student)
        name = esc(item.student, 200)
        rows.append([f'<a href="#{link}">{name}</a>' if link else name,
                     f"{shown(item.score)} / {shown(item.max_score)}", esc(_how_long(item, lang), 80),
                     _stuck_on(item, lang, lambda text: esc(text, 300)), score_chart(item.points, lang)])
    parts.append(table([t("Student", lang), t("Score", lang), t("Stuck for", lang), t("Stuck on", lang),
                        t("Score over time", lang)], rows, numeric=(1,), attrs=' class="stack"'))
    return "\n".join(parts)


def section_markdown(view, lang):
    """The section of report.md (tables: the charts are report.html's)."""
    lines = ["## " + t("Progress before the deadline", lang), ""]
    days, shares = class_progress(view.histories, view.end, view.modules)
    if days:
        shown_days = days[-7:]
        lines += ["### " + t("The class's progress per module", lang), "",
                  t("Share of students with each module full, at the end of each of the last days.", lang), "",
                  "| " + " | ".join([t("Exercise module", lang)] + [day.isoformat() for day in shown_days]) + " |",
                  "| --- |" + " ---: |" * len(shown_days)]
        for module, values in shares.items():
            lines.append(f"| {markdown_code(module)} | " + " | ".join(f"{round(100 * value)}%"
                                                                     for value in values[-len(shown_days):]) + " |")
        lines.append("")
    lines += ["### " + t("Who is stuck", lang), "",
              markdown_text(_explained(view, lang), 400), ""]
    if not view.stuck:
        return lines + [t("Nobody is stuck.", lang), ""]
    lines += ["| " + " | ".join([t("Student", lang), t("Score", lang), t("Stuck for", lang), t("Stuck on", lang)])
              + " |", "| --- | ---: | --- | --- |"]
    for item in view.stuck:
        lines.append(f"| {markdown_text(item.student, 200)} | {shown(item.score)} / {shown(item.max_score)} "
                     f"| {_how_long(item, lang)} | {_stuck_on(item, lang, lambda text: markdown_text(text, 300))} |")
    return lines + [""]
