"""``report.md``: the class view of a ``grade-many`` output folder, in Markdown,
in the report's language (``--report-lang``, as ``report.html``).

Student folder names, flags, reasons, test names, isolation facts and lab
records all pass through :mod:`autograder.reports.safe_text`: nothing a
submission plants can add a heading, link, image, table row or raw HTML here.
Every field is read defensively (a results.json may come from an older grader).
How each grade was protected (isolation, lab credit, graded commits) is in
:mod:`autograder.class_reports.markdown_protection`.
"""
from autograder import active_assignment
from autograder.i18n import render_data
from autograder.i18n import text as t
from autograder.reports import isolation_view
from autograder.similarity import report_section as similarity_markdown
from autograder.class_reports import vocabulary
from autograder.class_reports.class_report import (CHARTS, optional_module, bin_labels, counted, distribution,
                                                   fmt_number, left_out, module_columns, pass_rates, students,
                                                   summary_stats, test_title)
from autograder.class_reports.diagnoses import wrong_markdown
from autograder.class_reports.over_time.changes import section_markdown as changes_markdown
from autograder.class_reports.over_time.progress_view import section_markdown as progress_markdown
from autograder.class_reports.html import extensions_of, headcount, late_policy_text, roster_text
from autograder.class_reports.markdown_protection import cell, commits, header, isolation, lab, late_work, protection
from autograder.reports.safe_text import markdown_code, markdown_text


def _image(title, path):
    return f"![{markdown_text(title)}]({path})"


def _header(rows, manifest, lang):
    lines = [markdown_text(headcount(rows, lang), 4000)]   # a paragraph each
    seed = manifest.get("seed")
    if seed is not None:
        lines.append(t("Seed {seed} (every student; re-grading with it reproduces these scores).", lang,
                       seed=markdown_code(seed)))
    if manifest.get("shard"):
        lines.append(t("Shard {shard} of the class only: use `merge-scores` for the whole class.", lang,
                       shard=markdown_text(manifest["shard"])))
    if manifest.get("merged_from"):
        lines.append(t("Merged from {n} grade-many output(s).", lang, n=len(manifest["merged_from"])))
    if manifest.get("visible_only"):
        lines.append(t("**Visible tests only**: hidden tests were not run.", lang))
    deadline = manifest.get("deadline")
    if isinstance(deadline, dict) and deadline.get("deadline"):
        when = markdown_code(deadline["deadline"])
        lines.append(t("Deadline {deadline}: each repository was graded at the last push at or before it (server "
                       "push times); see *Graded commits*.", lang, deadline=when) if deadline.get("source") == "pushed"
                     else t("Deadline {deadline}: each repository was graded at the last commit at or before it by "
                            "committer time (set by the student's machine); see *Graded commits*.", lang,
                            deadline=when))
    if late_policy_text(manifest, lang):
        lines.append(markdown_text(late_policy_text(manifest, lang), 1000) + " " + t("See *Late work*.", lang))
    if roster_text(rows, manifest, lang):
        lines.append(markdown_text(roster_text(rows, manifest, lang), 4000))
    extended = extensions_of(manifest)
    if extended:
        lines.append(t("{n} student(s) have a deadline of their own (an extension): {who}.", lang, n=len(extended),
                       who=vocabulary.listed([f"{markdown_text(student, 200)} {markdown_code(when)}"
                                              for student, when in extended], lang)))
    for warning in manifest.get("warnings", []):
        lines.append("> " + t("Warning: {warning}", lang, warning=markdown_text(render_data(warning, lang))))
    lines.append(t("Every statistic and chart below counts the {n} student(s) graded with work of their own; the "
                   "folders left out are listed under *Not in the statistics*.", lang, n=len(counted(rows))))
    return ["# " + t("Class report: {title}", lang, title=active_assignment.current().title), ""] + \
        [line for paragraph in lines for line in (paragraph, "")]


def _distribution(rows, charts, lang, note):
    stats = summary_stats(rows)
    lines = ["## " + t("Score distribution", lang), ""]
    if charts is None:
        lines += ["_" + t("Charts skipped: matplotlib is not installed (`pip install -r requirements-dev.txt`).",
                          lang) + "_", ""]
    else:
        if note:
            lines += ["_" + markdown_text(note, 600) + "_", ""]
        if "distribution" in charts:
            lines += [_image(t("Score distribution", lang), CHARTS["distribution"]), ""]
    if stats:
        lines += ["| " + " | ".join([t("Students", lang), t("Mean", lang), t("Median", lang), t("Std dev", lang),
                                     t("Min", lang), t("Max", lang), t("Full marks", lang), t("Zero", lang)]) + " |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
                  f"| {stats['students']} | {stats['mean']:.2f} | {stats['median']:g} | {stats['stdev']:.2f} "
                  f"| {stats['min']:g} | {stats['max']:g} | {stats['full']} | {stats['zero']} |", ""]
        if stats["core_max"]:
            optional = active_assignment.current().optional_module
            lines += [(t("Full marks = {points} points from the graded modules (the optional {module} credit comes "
                         "on top).", lang, points=f"{stats['core_max']:g}", module=markdown_code(optional))
                       if optional else
                       t("Full marks = {points} points from the graded modules.", lang,
                         points=f"{stats['core_max']:g}")), ""]
        edges, bin_counts = distribution(rows)
        peak = max(bin_counts) or 1
        lines += header(t("Total", lang), t("Students", lang), "", align=["---", "---:", "---"])
        for label, count in zip(bin_labels(edges), bin_counts):
            lines.append(f"| {markdown_text(label)} | {count} | {'█' * round(20 * count / peak)} |")
        lines.append("")
    return lines


def _modules(rows, charts, lang):
    modules = module_columns(rows)
    graded = counted(rows)
    lines = ["## " + t("Modules", lang), ""]
    if charts and "modules" in charts:
        lines += [_image(t("Mean score per module", lang), CHARTS["modules"]), ""]
    lines += header(t("Exercise module", lang), t("Mean", lang), t("Points available", lang), t("Full marks", lang),
                    align=["---", "---:", "---:", "---:"])
    for module in modules:
        present = [row.modules[module] for row in graded if module in row.modules]
        maximum = max((x for _, x in present), default=0.0)
        mean = sum(s for s, _ in present) / len(present) if present else 0.0
        full = sum(1 for s, x in present if x and s >= x)
        note = " " + t("(optional; students with a lab record)", lang) if module == optional_module() else ""
        lines.append(f"| {markdown_code(module)}{note} | {mean:.2f} | {maximum:g} | {full}/{len(present)} |")
    return lines + [""]


def _pass_rates(rows, columns, charts, lang):
    lines = ["## " + t("Per-test pass rates (lowest first)", lang), "",
             t("Low rates point at the mechanisms the class got wrong; *What the class got wrong* groups the "
               "students by their diagnosis.", lang), ""]
    if charts and "pass_rates" in charts:
        lines += [_image(t("Per-test pass rates", lang), CHARTS["pass_rates"]), ""]
    lines += header(t("Test", lang), t("Exercise module", lang), t("Visibility", lang), t("Points available", lang), t("Passed", lang),
                    t("Rate", lang), align=["---", "---", "---", "---:", "---:", "---:"])
    rates = pass_rates(rows, columns)
    visible, hidden = t("visible test", lang), t("hidden test", lang)
    for key, info, passed, total in sorted(rates, key=lambda r: (r[2] / r[3] if r[3] else 0, r[0])):
        rate = f"{100.0 * passed / total:.0f}%" if total else "–"
        lines.append(f"| {cell(test_title(info))} | {markdown_code(info['module'])} "
                     f"| {visible if info['visibility'] == 'visible' else hidden} "
                     f"| {info['max_score']:g} | {passed}/{total} | {rate} |")
    return lines + [""]


def _flags(rows, lang):
    from autograder.class_reports.flags import detail_text, tamper_flag

    lines = ["## " + t("Integrity flags", lang), ""]
    flagged = [(row.student, detail_text(tamper_flag(flag), lang)) for row in rows for flag in row.flags]
    flagged += [(row.student, t("the grader failed in {count} test(s), not graded: {where}", lang,
                                count=len(row.grader_faults), where="; ".join(dict.fromkeys(row.grader_faults))))
                for row in rows if row.grader_faults]
    if flagged:
        lines += header(t("Student", lang), t("Flag", lang))
        lines += [f"| {cell(student)} | {cell(text)} |" for student, text in flagged]
    else:
        lines.append(t("None.", lang))
    return lines + [""]


def _left_out(rows, lang):
    lines = ["## " + t("Not in the statistics", lang), ""]
    out = left_out(rows)
    if not out:
        return lines + [t("Every folder was graded with work of its own.", lang), ""]
    lines += header(t("Folder", lang), t("Status", lang), t("Reason", lang))
    lines += [f"| {cell(row.student)} | {cell(vocabulary.status(row.status, lang))} "
              f"| {cell(vocabulary.reason(row.reason, lang))} |" for row in out]
    if any(not row.graded and not row.folder_only and not row.absent for row in out):
        lines += ["", t("A student whose grading did not complete got 0 for now; fix the cause or re-grade them one "
                        "by one (below).", lang)]
    return lines + [""]


def _students(rows, lang):
    modules = module_columns(rows)
    late = any(row.late_work for row in rows)
    lines = ["## " + t("Students", lang), "",
             *header(t("Student", lang), t("Status", lang), t("Total", lang), *([t("Counted", lang)] if late else []),
                     *[markdown_code(m) for m in modules], t("Confinement", lang),
                     align=["---", "---", "---:"] + ["---:"] * (len(modules) + late) + ["---"])]
    for row in sorted(students(rows), key=lambda r: (-r.total, r.student)):
        cells = ([fmt_number(row.counted_score) if row.counted_score is not None else "–"] if late else []) + \
            [fmt_number(row.modules[m][0]) if m in row.modules else "–" for m in modules]
        word = vocabulary.confinement(isolation_view.status_word(row.isolation), lang)
        word = f"**{word}**" if isolation_view.unconfined(row.isolation) else word
        total = "–" if row.absent else f"{fmt_number(row.total)} / {fmt_number(row.out_of)}"
        name = cell(row.student) + (f" ({cell(row.known_as)})" if row.known_as and row.known_as != row.student else "")
        lines.append(f"| {name} | {cell(vocabulary.status(row.status, lang))} | {total} | "
                     + " | ".join(cells) + f" | {word} |")
    return lines + [""]


def _regrading(manifest, lang):
    seed = manifest.get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else "SEED"
    lines = ["## " + t("Re-grading", lang), "",
             t("Re-grade one student with the recorded seed (and deadline); scores.csv, this report and the "
               "charts are updated in place:", lang), "", "```",
             "python -m autograder grade-many ROOT --output-dir DIR --only STUDENT", "```", ""]
    if isinstance(manifest.get("deadline"), dict):
        return lines + [t("Or grade a single repository at its graded commit (SHA from *Graded commits*) "
                          "exactly as this run did:", lang), "", "```",
                        "git clone --quiet --no-local ROOT/STUDENT /tmp/clean   # never run git in the student's own .git",
                        "mkdir /tmp/at-deadline && git -C /tmp/clean archive SHA | tar -x -C /tmp/at-deadline",
                        f"python -m autograder grade --submission /tmp/at-deadline/exercises --seed {seed}",
                        "```", ""]
    return lines + [t("Or grade a single repository exactly as this run did:", lang), "", "```",
                    f"python -m autograder grade --submission ROOT/STUDENT/exercises --seed {seed}",
                    "```", ""]


def render_markdown(rows, columns, manifest, charts, similarity=None, lang="en", chart_note="", changes=None,
                    progress=None):
    """``chart_note``: why the charts are not in ``lang`` (no font has its characters), or '';
    ``changes``: what a grader change did (``--compare``), ``progress``: the students' progress
    (``--history``), or None."""
    lines = _header(rows, manifest, lang)
    lines += _distribution(rows, charts, lang, chart_note)
    if changes is not None:
        lines += changes_markdown(changes, lang)
    if progress is not None:
        lines += progress_markdown(progress, lang)
    lines += _modules(rows, charts, lang)
    lines += wrong_markdown(rows, lang)
    lines += _pass_rates(rows, columns, charts, lang)
    lines += _flags(rows, lang)
    lines += similarity_markdown.section(similarity, lang)
    lines += isolation(rows, manifest, lang)
    lines += protection(rows, lang)
    lines += lab(rows, lang)
    lines += commits(rows, lang)
    lines += late_work(rows, lang)
    lines += _left_out(rows, lang)
    lines += _students(rows, lang)
    lines += _regrading(manifest, lang)
    return "\n".join(lines)
