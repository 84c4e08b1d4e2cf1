"""The class's CSV files: ``scores.csv`` (one row per folder, and one per roster student without
a repository) and, with a roster, ``gradebook.csv`` in the layout Canvas imports.

Built from the rows of :mod:`autograder.class_reports.class_report`; a text cell a student
controls cannot hold a spreadsheet formula (:func:`autograder.reports.safe_text.csv_cell`).
"""
import csv
import io

from autograder import active_assignment
from autograder.class_reports.class_report import (assignment_max, fmt_number, module_columns, optional_module,
                                                   row_tests)
from autograder.i18n import render
from autograder.judging.results import CRASHED, TIMED_OUT
from autograder.reports.safe_text import as_text, csv_cell

GRADEBOOK_NAME = "gradebook.csv"
# With --deadline: which commit was graded (extra_data.submission_commit), before seed/flags/reason.
COMMIT_COLUMNS = ("commit", "committed_at", "pushed_at", "later_commits", "latest_commit", "latest_total",
                  "latest_committed_at")
# With extensions or a late policy: the deadline that applied to each student, whether it is theirs,
# and with a policy the late work counted after its penalty (the total stays the on-time total).
TERMS_COLUMNS = ("deadline", "extension", "late_commit", "late_total", "late_days", "penalty", "counted_score")
LATE_COLUMNS = TERMS_COLUMNS[2:]
# With --roster: who the folder's student is on the roster, and whether it is on it at all.
ROSTER_COLUMNS = ("identifier", "name", "github_username", "on_roster")


# Canvas's gradebook import: these columns identify a student; each further column is an assignment.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def _dict(value):
    return value if isinstance(value, dict) else {}


def commit_cells(row):
    """The COMMIT_COLUMNS of one row, as text ('' where a fact does not apply)."""
    commit = row.commit
    latest = _dict(commit.get("latest"))
    later = commit.get("later_commits")
    total = latest.get("score")
    return [as_text(commit.get("sha")), as_text(commit.get("committed_at")), as_text(commit.get("pushed_at")),
            str(later) if isinstance(later, int) and not isinstance(later, bool) else "",
            as_text(latest.get("sha")), fmt_number(total) if isinstance(total, (int, float)) else "",
            as_text(latest.get("committed_at"))]


def terms_columns(rows):
    """The TERMS_COLUMNS this class's outputs need: the deadline with extensions or a late
    policy, whether it is an extension where there are some, the late work with a policy."""
    late, extended = any(row.late_work for row in rows), any(row.extension for row in rows)
    return [column for column in TERMS_COLUMNS if (column == "deadline" and (late or extended))
            or (column == "extension" and extended) or (column in LATE_COLUMNS and late)]


def terms_cells(row, columns):
    """The ``columns`` (of TERMS_COLUMNS) of one row, as text ('' where a fact does not apply)."""
    late = row.late_work
    facts = {"deadline": row.deadline, "extension": "yes" if row.extension else "",
             "late_commit": as_text(late.get("sha")),
             "late_total": fmt_number(late["score"]) if isinstance(late.get("score"), (int, float)) else "",
             "late_days": str(late.get("days", "")) if late else "",
             "penalty": fmt_number(late["penalty"]) if isinstance(late.get("penalty"), (int, float)) else "",
             "counted_score": fmt_number(row.counted_score) if row.counted_score is not None else ""}
    return [facts[column] for column in columns]


def render_csv(rows, columns):
    modules = module_columns(rows)
    with_commits = any(row.commit for row in rows)
    terms = terms_columns(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    roster = any(row.on_roster is not None for row in rows)
    writer.writerow(["student", "status", "total", "max_score"] + modules + [key for key, _ in columns]
                    + (list(COMMIT_COLUMNS) if with_commits else []) + terms
                    + (list(ROSTER_COLUMNS) if roster else []) + ["seed", "flags", "reason"])
    full_marks = assignment_max(rows)
    for row in rows:
        maximum = full_marks if full_marks is not None else row.max_score
        cells = [csv_cell(row.student), csv_cell(row.status), fmt_number(row.total), fmt_number(maximum)]
        for module in modules:
            if module in row.modules:
                cells.append(fmt_number(row.modules[module][0]))
            else:
                cells.append("" if module == optional_module() else "0")
        tests = row_tests(row, columns)
        cells += [fmt_number(tests[key].get("score", 0)) if key in tests else "" for key, _ in columns]
        if with_commits:
            cells += [csv_cell(cell) for cell in commit_cells(row)]
        cells += [csv_cell(cell) for cell in terms_cells(row, terms)]
        if roster:
            on = row.roster or {}
            cells += [csv_cell(as_text(on.get(key))) for key in ("identifier", "name", "github_username")] + \
                ["yes" if row.on_roster else "no"]
        if row.absent:   # no folder, no score: the roster's identifier says who
            cells[:4] = ["", csv_cell(row.status), "", ""]
        flags = row.flags + [f"the grader failed (not graded): {fault}" for fault in row.grader_faults]
        cells += [csv_cell(row.seed if row.seed is not None else ""), csv_cell("; ".join(flags)),
                  csv_cell(row.reason)]
        writer.writerow(cells)
    return out.getvalue()




def gradebook_score(row):
    """The score an LMS records for ``row``: the counted score (the total without a late policy);
    None where there is none yet (no repository, a grade that did not complete: re-grade)."""
    if row.absent or row.status in (CRASHED, TIMED_OUT):
        return None
    if row.late_work:
        return row.counted_score
    return row.total


def render_gradebook(rows, lang="en"):
    """``gradebook.csv``: one row per roster student, in Canvas's import layout (the roster's name
    as Student, its identifier as SIS Login ID, the score in a column named after the
    assignment); a student without a score has an empty cell. Folders not on the roster are
    not in it (the reports list them). '' without a roster."""
    roster = [row for row in rows if row.on_roster]
    if not roster:
        return ""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(CANVAS_COLUMNS) + [csv_cell(render(active_assignment.current().title, lang))])
    for row in sorted(roster, key=lambda row: row.roster_order):
        score = gradebook_score(row)
        on = row.roster or {}
        writer.writerow([csv_cell(as_text(on.get("name")) or as_text(on.get("identifier"))), "", "",
                         csv_cell(as_text(on.get("identifier"))), "", fmt_number(score) if score is not None else ""])
    return out.getvalue()
