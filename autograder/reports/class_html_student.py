"""One student's view on the class page: what a TA needs to answer "why 73?".

Score per module, the diagnosis (the TODO to fix first), the failed tests with
the feedback the student read, flags with their severity and action, how the
code was confined, which commit was graded and what came after it, similarity
partners and the lab credit. Every value from a results file is escaped
(:mod:`autograder.reports.html_page`); links go only to our own pages.
"""
import html

from autograder.reports import isolation_view
from autograder.reports.class_flags import row_flags
from autograder.reports.class_report import fmt_number, module_columns, module_of
from autograder.reports.html_page import esc, esc_block, severity_badge, table

MAX_FAILED_SHOWN = 40


def anchor(index):
    return f"student-{index}"


def similarity_link(page):
    from autograder.similarity import OUTPUT_FOLDER, PAGE_NAME

    if isinstance(page, str) and PAGE_NAME.fullmatch(page):
        return f'<a href="{OUTPUT_FOLDER}/{html.escape(page)}#m1">side by side</a>'
    return ""


def partners_of(similarity):
    """``{student: [{module, other, score, page}]}``: the flagged matches of each student."""
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
                found.setdefault(me, []).append({"module": module, "other": ", ".join(map(str, others)),
                                                 "score": _score(pair.get("score")), "page": pair.get("page")})
    torch = similarity.get("torch_reference") if isinstance(similarity.get("torch_reference"), dict) else {}
    for row in torch.get("matches", []) or []:
        if isinstance(row, dict) and row.get("flagged") is True:
            found.setdefault(row.get("student"), []).append(
                {"module": "GradScaler", "other": "torch/amp/grad_scaler.py", "score": _score(row.get("score")),
                 "page": row.get("page")})
    return found


def _score(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _modules(row, rows):
    cells = []
    for module in module_columns(rows):
        if module in row.modules:
            score, maximum = row.modules[module]
            cells.append([f"<code>{html.escape(module)}</code>", f"{fmt_number(score)} / {fmt_number(maximum)}"])
    return table(["Module", "Points"], cells, numeric=(1,)) if cells else "<p class=\"muted\">No module graded.</p>"


def _diagnosis(row):
    diagnosis = row.data.get("extra_data", {}).get("diagnosis") if isinstance(row.data.get("extra_data"), dict) else None
    if not isinstance(diagnosis, dict) or not diagnosis:
        return ""
    items = []
    for module, entry in diagnosis.items():
        if not isinstance(entry, dict):
            continue
        items.append(f"<li><code>{esc(module, 60)}</code>: fix <b>TODO {esc(entry.get('todo'), 10)}</b> first "
                     f"&mdash; shown by <i>{esc(entry.get('test'), 300)}</i>"
                     f"<pre>{esc_block(entry.get('message'), 3000, 30)}</pre></li>")
    return f"<h4>Diagnosis</h4><ul>{''.join(items)}</ul>" if items else ""


def _failed(row):
    failed = [test for test in row.tests if test.get("status") != "passed" and module_of(test) != "grader"]
    if not failed:
        return "" if row.graded else _grader_note(row)
    parts = [f"<details><summary><b>{len(failed)} failed test(s)</b> with the feedback the student read</summary>"]
    for test in failed[:MAX_FAILED_SHOWN]:
        visibility = "hidden" if test.get("visibility") != "visible" else "visible"
        parts.append(f"<p><b>{esc(test.get('name'), 300)}</b> <span class=\"muted\">({visibility}, "
                     f"{fmt_number(test.get('score', 0))}/{fmt_number(test.get('max_score', 0))})</span></p>"
                     f"<pre>{esc_block(test.get('output'), 4000, 40)}</pre>")
    if len(failed) > MAX_FAILED_SHOWN:
        parts.append(f"<p class=\"muted\">… {len(failed) - MAX_FAILED_SHOWN} more in results.json.</p>")
    return "".join(parts) + "</details>"


def _grader_note(row):
    return f"<p><b>{esc(row.status, 60)}</b>: {esc(row.reason, 600) or 'no reason recorded'}</p>"


def _flags(flags):
    if not flags:
        return "<p class=\"muted\">No flags.</p>"
    rows = [[severity_badge(flag.severity), esc(flag.what, 100), esc(flag.action, 600),
             esc(flag.detail, 600) if flag.detail else ""] for flag in flags]
    return table(["Severity", "Flag", "What it means, what to do", "Detail"], rows)


def _commit(row):
    commit = row.commit
    if not commit:
        return "the folder as it is (no deadline)"
    sha = commit.get("sha")
    if not sha:
        return ("the folder as it is (not a git repository)" if commit.get("source") == "working tree"
                else "nothing (no commit before the deadline)" if row.status == "no commit before deadline"
                else "nothing (the repository could not be read)")
    text = f"commit <code>{esc(str(sha)[:12], 12)}</code>, committed {esc(commit.get('committed_at'), 40)}"
    if commit.get("pushed_at"):
        text += f", pushed {esc(commit.get('pushed_at'), 40)}"
    later = commit.get("later_commits")
    if isinstance(later, int) and later:
        text += f"; <b>{later} later commit(s)</b> not counted"
    latest = commit.get("latest") if isinstance(commit.get("latest"), dict) else {}
    if latest.get("sha"):
        score = latest.get("score")
        text += (f"; latest <code>{esc(str(latest['sha'])[:12], 12)}</code>"
                 + (f" would score {fmt_number(score)}" if isinstance(score, (int, float)) else ""))
    return text


def _lab(row):
    if not row.lab:
        return "no lab record"
    earns = row.lab.get("earns_credit")
    credit = "yes (self-reported)" if earns is True else ("no" if earns is False else "?")
    return f"{credit}; {esc(row.lab.get('summary'), 300)}"


def _partners(partners):
    if not partners:
        return "no flagged pair"
    return "; ".join(f"{esc(p['module'], 40)} with {esc(p['other'], 200)} ({p['score']:.2f}) "
                     f"{similarity_link(p.get('page'))}" for p in partners)


def student_view(index, row, rows, partners):
    """The ``<section>`` of one student; ``partners``: their flagged similarity matches."""
    flags = row_flags(row, partners)
    word = isolation_view.status_word(row.isolation)
    problems = "; ".join(isolation_view.problems(row.isolation))
    facts = [("Status", esc(row.shown_status, 60) + (f" &mdash; {esc(row.reason, 400)}" if row.reason else "")),
             ("Total", f"{fmt_number(row.total)} / {fmt_number(row.max_score)}"),
             ("Graded", _commit(row)),
             ("Isolation", esc(word, 40) + (f" (missing: {esc(problems, 400)})" if problems else "")),
             ("Similarity", _partners(partners)),
             ("Lab credit", _lab(row))]
    facts_html = "".join(f"<div><b>{name}:</b> {value}</div>" for name, value in facts)
    return (f'<section class="student" id="{anchor(index)}"><h3>{esc(row.student, 200)}</h3>'
            f'<div class="facts">{facts_html}</div>'
            f"<h4>Score per module</h4>{_modules(row, rows)}{_diagnosis(row)}{_failed(row)}"
            f"<h4>Flags</h4>{_flags(flags)}<p><a href=\"#students\">back to the table</a></p></section>")
