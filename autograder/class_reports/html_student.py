"""One student's view on the class page: what a TA needs to answer "why 73?".

Score per module, the diagnosis (the TODO to fix first), the failed tests with
the feedback the student read, flags with their severity and action, how the
code was confined, which commit was graded and what came after it, similarity
partners and the lab credit. Every value from a results file is escaped
(:mod:`autograder.reports.html_page`); links go only to our own pages.
"""
import html

from autograder.i18n import render
from autograder.i18n import text as t
from autograder.reports import isolation_view
from autograder.class_reports import vocabulary
from autograder.class_reports.diagnoses import PROBLEMS
from autograder.class_reports.flags import detail_text, row_flags
from autograder.judging.results import NO_COMMIT
from autograder.class_reports.class_report import fmt_number, module_columns, module_of, title_of
from autograder.reports.html_page import esc, esc_block, severity_badge, table
from autograder.similarity.display import shown_score

MAX_FAILED_SHOWN = 40


def anchor(index):
    return f"student-{index}"


def similarity_link(page, lang="en"):
    from autograder.similarity.pairs import OUTPUT_FOLDER, PAGE_NAME

    if isinstance(page, str) and PAGE_NAME.fullmatch(page):
        return f'<a class="word" href="{OUTPUT_FOLDER}/{html.escape(page)}#m1">' + t("side by side", lang) + '</a>'
    return ""


def partners_of(similarity, lang="en"):
    """``{student: [{module, other, score, page}]}``: the flagged matches of each student
    (``other``: whom it matches, a group's other members listed in ``lang``)."""
    found = {}
    if not isinstance(similarity, dict):
        return found
    modules = similarity.get("modules") if isinstance(similarity.get("modules"), dict) else {}
    for module, data in modules.items():
        for pair in (data.get("pairs", []) if isinstance(data, dict) else []):
            if not isinstance(pair, dict) or pair.get("flagged") is not True:
                continue
            members = pair.get("members") if isinstance(pair.get("members"), list) else [pair.get("a"), pair.get("b")]
            for me in members:
                others = [m for m in members if m != me]
                found.setdefault(me, []).append({"module": module, "other": vocabulary.listed(map(str, others), lang),
                                                 "names": [str(other) for other in others],
                                                 "score": _score(pair.get("score")), "page": pair.get("page"),
                                                 "severity": pair.get("severity")})
    references = similarity.get("solution_reference") if isinstance(similarity.get("solution_reference"), dict) else {}
    for module, data in references.items():
        for row in (data.get("matches", []) if isinstance(data, dict) else []) or []:
            for me in _matched(row):
                found.setdefault(me, []).append(
                    {"module": module, "other": f"solutions/{module}.py", "names": [t("the reference solution", lang)],
                     "score": _score(row.get("score")),
                     "page": row.get("page"), "severity": row.get("severity")})
    torch = similarity.get("torch_reference") if isinstance(similarity.get("torch_reference"), dict) else {}
    for row in torch.get("matches", []) or []:
        for me in _matched(row):
            found.setdefault(me, []).append(
                {"module": str(torch.get("label", "framework")), "framework": True,
                 "other": str(torch.get("reference", "")).split(" (")[0], "score": _score(row.get("score")),
                 "page": row.get("page"), "severity": row.get("severity")})
    return found


def _matched(row):
    """The students of a flagged match with one file (every student who handed in that code)."""
    if not isinstance(row, dict) or row.get("flagged") is not True:
        return []
    return row.get("members") if isinstance(row.get("members"), list) else [row.get("student")]


def _score(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _modules(row, rows, lang):
    cells = []
    for module in module_columns(rows):
        if module in row.modules:
            score, maximum = row.modules[module]
            cells.append([f"<code>{html.escape(module)}</code>", f"{fmt_number(score)} / {fmt_number(maximum)}"])
    if not cells:
        return "<p class=\"muted\">" + t('No module graded.', lang) + "</p>"
    return table([t("Exercise module", lang), t("Points earned", lang)], cells, numeric=(1,))


def _diagnosis(row, lang):
    diagnosis = row.data.get("extra_data", {}).get("diagnosis") if isinstance(row.data.get("extra_data"), dict) else None
    if not isinstance(diagnosis, dict) or not diagnosis:
        return ""
    items = []
    for module, entry in diagnosis.items():
        if not isinstance(entry, dict):
            continue
        todo = f"<b>TODO {esc(entry.get('todo'), 10)}</b>"
        if entry.get("problem") in PROBLEMS:   # the whole module failed: no test shows a mechanism
            what = t("fix {todo} first &mdash; {problem}", lang, todo=todo,
                     problem=esc(render(PROBLEMS[entry["problem"]], lang), 300))
        else:
            what = t("fix {todo} first &mdash; shown by {test}", lang, todo=todo,
                     test=f"<i>{esc(title_of(entry.get('test'), module), 300)}</i>")
        items.append("<li>" + t("{name}: {value}", lang, name=f"<code>{esc(module, 60)}</code>", value=what)
                     + f"<pre>{esc_block(entry.get('message'), 3000, 30)}</pre></li>")
    return "<h4>" + t('Diagnosis', lang) + f"</h4><ul>{''.join(items)}</ul>" if items else ""


def _failed(row, lang):
    failed = [test for test in row.tests if test.get("status") != "passed" and module_of(test) != "grader"]
    if not failed:
        return "" if row.graded else _grader_note(row, lang)
    parts = ["<details><summary>" + t("{count} with the feedback the student read", lang,
                                      count="<b>" + t('{n} failed test(s)', lang, n=len(failed)) + "</b>") + "</summary>"]
    for test in failed[:MAX_FAILED_SHOWN]:
        points = vocabulary.visibility(test, fmt_number(test.get("score", 0)), fmt_number(test.get("max_score", 0)),
                                       lang)
        name = t("{name}: {value}", lang, name=f"<code>{esc(module_of(test), 60)}</code>",
                 value=f"<b>{esc(title_of(test.get('name'), module_of(test)), 300)}</b>")
        parts.append(f"<p>{name} <span class=\"muted\">{esc(points, 100)}</span></p>"
                     f"<pre>{esc_block(test.get('output'), 4000, 40)}</pre>")
    if len(failed) > MAX_FAILED_SHOWN:
        parts.append("<p class=\"muted\">" + t('… {n} more in results.json.', lang, n=len(failed) - MAX_FAILED_SHOWN) + "</p>")
    return "".join(parts) + "</details>"


def _grader_note(row, lang):
    reason = esc(vocabulary.reason(row.reason, lang), 600) or t("no reason recorded", lang)
    return "<p>" + t("{name}: {value}", lang, name=f"<b>{esc(vocabulary.status(row.status, lang), 60)}</b>",
                     value=reason) + "</p>"


def _flags(flags, lang):
    if not flags:
        return "<p class=\"muted\">" + t('No flags.', lang) + "</p>"
    rows = [[severity_badge(flag.severity, vocabulary.severity(flag.severity, lang)), esc(render(flag.what, lang), 100),
             esc(render(flag.action, lang), 600), esc(detail_text(flag, lang), 600)] for flag in flags]
    return table([t("Severity", lang), t("Flag", lang), t("What it means, what to do", lang), t("Detail", lang)], rows,
                 attrs=' class="stack"')


def _commit(row, lang):
    commit = row.commit
    if not commit:
        return t("the folder as it is (no deadline)", lang)
    sha = commit.get("sha")
    if not sha:
        if commit.get("source") == "working tree":
            return t("the folder as it is: not a git repository, so no deadline could be checked", lang)
        if row.status != NO_COMMIT:
            return t("nothing (the repository could not be read)", lang)
        parts = [t("nothing (no commit before the deadline)", lang)]   # the later work still shows, below
    else:
        text = t("commit {sha}, committed {when}", lang, sha=f"<code>{esc(str(sha)[:12], 12)}</code>",
                 when=esc(commit.get("committed_at"), 40))
        if commit.get("pushed_at"):
            text += t(", pushed {when}", lang, when=esc(commit.get("pushed_at"), 40))
        parts = [text]
    later = commit.get("later_commits")
    if isinstance(later, int) and later:
        parts.append(t("{later} not counted", lang, later="<b>" + t("{n} later commit(s)", lang, n=later) + "</b>"))
    latest = commit.get("latest") if isinstance(commit.get("latest"), dict) else {}
    if latest.get("sha"):
        score = latest.get("score")
        shown = f"<code>{esc(str(latest['sha'])[:12], 12)}</code>"
        when = esc(latest.get("committed_at"), 40)
        parts.append(t("latest {sha}, committed {when}, would score {score}", lang, sha=shown, when=when,
                       score=fmt_number(score)) if isinstance(score, (int, float))
                     else t("latest {sha}, committed {when}", lang, sha=shown, when=when))
    return vocabulary.clauses(parts, lang)


def _deadline(row, lang):
    """The deadline that applied to this student, and whether it is their own."""
    when = f"<code>{esc(row.deadline, 60)}</code>"
    if not row.extension:
        return when
    return t("{deadline}, an extension (the class's: {class_deadline})", lang, deadline=when,
             class_deadline=f"<code>{esc(row.commit.get('class_deadline'), 60)}</code>")


def _late_work(row, lang):
    """What the late policy made of this student's work: days, penalty, both scores, the counted one."""
    late = row.late_work
    if row.counted_score is None:
        return t("not counted yet: a grade it needs did not complete (re-grade this student)", lang)
    counted = f"<b>{fmt_number(row.counted_score)}</b>"
    if not late.get("sha"):
        return t("no commit in the late window; counted {counted}", lang, counted=counted)
    return t("commit {sha}, committed {when}: {days} day(s) late, {penalty} off, {score} after the penalty {after}; "
             "counted {counted}", lang, sha=f"<code>{esc(str(late['sha'])[:12], 12)}</code>",
             when=esc(late.get("committed_at"), 40), days=esc(late.get("days"), 10),
             penalty=f"{100 * float(late.get('penalty') or 0):g}%", score=fmt_number(late.get("score", 0)),
             after=fmt_number(late.get("after_penalty", 0)), counted=counted)


def _roster(row, lang):
    if not row.on_roster:
        return t("not on the roster", lang)
    on = row.roster or {}
    return vocabulary.clauses([esc(on.get(key), 200) for key in ("name", "identifier", "github_username")
                               if on.get(key)], lang)


def _lab(row, lang):
    if not row.lab:
        return t("no lab record", lang)
    earns = row.lab.get("earns_credit")
    credit = t("yes (self-reported)", lang) if earns is True else (t("no", lang) if earns is False else "?")
    return vocabulary.clauses([credit, esc(row.lab.get("summary"), 300)], lang)


def _partners(partners, lang):
    if not partners:
        return t("no flagged pair", lang)
    return vocabulary.clauses([t("{module} with {other} ({score})", lang, module=esc(p["module"], 40),
                                 other=esc(p["other"], 200), score=shown_score(p["score"]))
                               + " " + similarity_link(p.get("page"), lang) for p in partners], lang)


def student_view(index, row, rows, partners, lang="en", progress=""):
    """The ``<section>`` of one student; ``partners``: their flagged similarity matches;
    ``progress``: their score over time (``--history``), as HTML."""
    flags = row_flags(row, partners)
    word = vocabulary.confinement(isolation_view.status_word(row.isolation), lang)
    problems = "; ".join(isolation_view.problems(row.isolation))
    reason = vocabulary.reason(row.reason, lang)
    facts = [(t("Status", lang), esc(vocabulary.status(row.status, lang), 60)
              + (f" &mdash; {esc(reason, 400)}" if reason else "")),
             (t("Total", lang), f"{fmt_number(row.total)} / {fmt_number(row.out_of)}"),
             *([(t("Roster", lang), _roster(row, lang))] if row.on_roster is not None else []),
             *([(t("Deadline", lang), _deadline(row, lang))] if row.deadline else []),
             (t("Graded", lang), _commit(row, lang)),
             *([(t("Late work", lang), _late_work(row, lang))] if row.late_work else []),
             (t("Confinement", lang), esc(word, 40) + (" " + t("(missing: {problems})", lang, problems=esc(problems, 400))
                                                      if problems else "")),
             (t("Similarity", lang), _partners(partners, lang)),
             (t("Lab credit", lang), _lab(row, lang))]
    facts_html = "".join("<div>" + t("{name}: {value}", lang, name=f"<b>{name}</b>", value=value) + "</div>"
                         for name, value in facts)
    shown = esc(row.student, 200) + (f" &middot; {esc(row.known_as, 200)}" if row.known_as else "")
    return (f'<section class="student" id="{anchor(index)}"><h3>{shown}</h3>'
            f'<div class="facts">{facts_html}</div>'
            + ("<h4>" + t("Score over time", lang) + f"</h4>{progress}" if progress else "")
            + "<h4>" + t('Score per module', lang) + f"</h4>{_modules(row, rows, lang)}{_diagnosis(row, lang)}"
            f"{_failed(row, lang)}<h4>" + t('Flags', lang) + f"</h4>{_flags(flags, lang)}"
            "<p><a href=\"#students\">" + t('back to the table', lang) + "</a></p></section>")
