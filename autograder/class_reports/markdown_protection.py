"""The sections of ``report.md`` that say how each grade was protected and what
was graded: isolation, one line per student, the self-reported lab credit and,
with ``--deadline``, the graded commits. In the report's language; every value
a submission controls goes through :mod:`autograder.reports.safe_text`."""
from autograder import active_assignment
from autograder.i18n import text as t
from autograder.judging.results import NO_COMMIT
from autograder.reports import isolation_view
from autograder.class_reports import vocabulary
from autograder.class_reports.class_report import fmt_number, repositories
from autograder.class_reports.csv_files import commit_cells
from autograder.reports.safe_text import markdown_code, markdown_record, markdown_text

MAX_PLAUSIBILITY_NOTES = 5


def cell(text, limit=300):
    return markdown_text(text, limit) or "–"


def header(*names, align=None):
    """A table's first two lines: ``names`` (translated already), then ``align`` (``---`` each by default)."""
    return ["| " + " | ".join(names) + " |", "| " + " | ".join(align or ["---"] * len(names)) + " |"]


def isolation(rows, manifest, lang):
    """Who ran without OS confinement (loud), and a count of the rest."""
    rows = repositories(rows)
    lines = ["## " + t("Isolation of the students' code", lang), ""]
    probe = isolation_view.one_line(manifest.get("isolation"))
    if probe:
        # the sandbox's own record, as it wrote it (its words are English in every report)
        lines += [t("This machine's probe box, before grading: {probe}.", lang, probe=markdown_record(probe, 800)), ""]
    unconfined = [row for row in rows if isolation_view.unconfined(row.isolation)]
    known = [row for row in rows if row.isolation]
    if unconfined:
        warning = t("{n} student(s): {warning}", lang, n=len(unconfined),
                    warning=isolation_view.UNCONFINED_WARNING.render(lang))
        lines += [f"> ⚠️ **{warning}**", ""] + header(t("Student", lang), t("Problems", lang))
        for row in unconfined:
            problems = "; ".join(isolation_view.problems(row.isolation)) or t("none listed", lang)
            lines.append(f"| {cell(row.student)} | {cell(problems, 600)} |")
        lines.append("")
    confined = sum(1 for row in known if isolation_view.status_word(row.isolation) == "confined")
    unknown = len(known) - confined - len(unconfined)
    parts = [t("Confined: {n} of {total} student(s)", lang, n=confined, total=len(rows)),
             t("not confined: {n}", lang, n=len(unconfined))]
    if unknown:
        parts.append(t("a record that does not say (check by hand): {n}", lang, n=unknown))
    parts.append(t("no isolation record (no code ran, or an older grader): {n}", lang, n=len(rows) - len(known)))
    lines.append(vocabulary.sentences([
        vocabulary.sentence(vocabulary.clauses(parts, lang), lang),
        t("Confined means: file system confined by Landlock, no network, no signal leaving the box, a process "
          "namespace of its own (docs/sandbox.md). Per student: *How each grade was protected*.", lang)], lang))
    return lines + [""]


def _uid(facts):
    return dict(isolation_view.facts(facts)).get("uid", "")


def _credit(earns, lang, none="–"):
    return t("yes (self-reported)", lang) if earns is True else (t("no", lang) if earns is False else none)


def protection(rows, lang):
    """One line per student: what held while their code ran, what was flagged, what is self-reported."""
    lines = ["## " + t("How each grade was protected", lang), "",
             t("Isolation while the student's code ran (`extra_data.isolation`), tamper flags (`extra_data.flags`), "
               "the optional lab credit (self-reported: `extra_data.lab`) and what was graded.", lang), "",
             *header(t("Student", lang), t("Confinement", lang), t("Uid", lang), t("Tamper flags", lang),
                     t("Lab credit", lang), t("Graded", lang), align=["---", "---", "---", "---:", "---", "---"])]
    for row in repositories(rows):
        word = vocabulary.confinement(isolation_view.status_word(row.isolation), lang)
        word = f"**{word}**" if isolation_view.unconfined(row.isolation) else word
        lines.append(f"| {cell(row.student)} | {word} | {cell(vocabulary.uid(_uid(row.isolation), lang), 120)} | {len(row.flags)} "
                     f"| {_credit(row.lab.get('earns_credit'), lang)} | {graded_what(row, lang)} |")
    return lines + [""]


def graded_what(row, lang):
    commit = row.commit
    if not commit:
        return t("the folder as it is", lang)
    if commit.get("sha"):
        return t("commit {sha}", lang, sha=markdown_code(str(commit["sha"])[:12]))
    if commit.get("source") == "working tree":
        return t("the folder as it is: not a git repository, so no deadline could be checked", lang)
    if row.status == NO_COMMIT:
        return t("nothing (no commit before the deadline)", lang)
    return t("nothing (the repository could not be read)", lang)


def commits(rows, lang):
    """With --deadline: the graded commit of every student, and the latest one beside it."""
    rows = repositories(rows)
    if not any(row.commit for row in rows):
        return []
    extended = any(row.extension for row in rows)
    lines = ["## " + t("Graded commits", lang), "",
             t("The commit graded for each student, when it was committed (in the deadline's zone), how many "
               "commits came after it, and the latest commit with its score when graded with `--also-latest` "
               "(recorded beside, never counted). A late policy (`[tool.autograder.late]` or `--late-policy`) counts "
               "late work under *Late work*.", lang), "",
             *header(t("Student", lang), t("Status", lang), t("Graded commit", lang), t("Committed", lang),
                     t("Pushed", lang), t("Later commits", lang), t("Latest commit", lang),
                     t("Latest committed", lang), t("Latest score", lang),
                     *([t("Deadline", lang)] if extended else []),
                     align=["---"] * 5 + ["---:", "---", "---", "---:"] + (["---"] if extended else []))]
    for row in rows:
        sha, committed, pushed, later, latest, latest_total, latest_at = commit_cells(row)
        if not row.commit:
            sha = "–"
        elif not sha:
            sha = (t("not a git repository: graded as it is, no deadline could be checked", lang)
                   if row.commit.get("source") == "working tree"
                   else t("none before the deadline", lang) if row.status == NO_COMMIT else t("– (not read)", lang))
        else:
            sha = markdown_code(sha[:12])
        latest = markdown_code(latest[:12]) if latest else "–"
        lines.append(f"| {cell(row.student)} | {cell(vocabulary.status(row.status, lang))} | {sha} | {cell(committed)} "
                     f"| {cell(pushed)} | {cell(later)} | {latest} | {cell(latest_at)} | {cell(latest_total)} |"
                     + (f" {_deadline(row, lang)} |" if extended else ""))
    notes = [(row.student, note) for row in rows if isinstance(row.commit.get("notes"), list)
             for note in row.commit["notes"]]
    if notes:
        lines += ["", t("Left out of the exported commits:", lang), ""]
        lines += [f"- {cell(student)}: {cell(note)}" for student, note in notes]
    return lines + [""]


def late_work(rows, lang):
    """With a late policy: every student's on-time and late scores, the days and the penalty."""
    rows = [row for row in repositories(rows) if row.late_work]
    if not rows:
        return []
    lines = ["## " + t("Late work", lang), "",
             t("The last commit of each student's late window, its days late and penalty; the counted score is the "
               "better of the on-time total and the late score after its penalty.", lang), "",
             *header(t("Student", lang), t("On time", lang), t("Late commit", lang), t("Committed", lang),
                     t("Days late", lang), t("Penalty", lang), t("Late score", lang), t("After the penalty", lang),
                     t("Counted", lang), align=["---", "---:", "---", "---", "---:", "---:", "---:", "---:", "---:"])]
    for row in sorted(rows, key=lambda r: r.student):
        late = row.late_work
        sha = markdown_code(str(late["sha"])[:12]) if late.get("sha") else "–"
        numbers = [fmt_number(late[key]) if isinstance(late.get(key), (int, float)) and late.get("sha") else "–"
                   for key in ("days", "penalty", "score", "after_penalty")]
        if late.get("sha"):
            numbers[1] = f"{100 * float(late.get('penalty') or 0):g}%"
        counted = fmt_number(row.counted_score) if row.counted_score is not None else t("not counted yet", lang)
        lines.append(f"| {cell(row.student)} | {fmt_number(row.total)} | {sha} | {cell(late.get('committed_at'))} | "
                     + " | ".join(numbers) + f" | {cell(counted)} |")
    return lines + [""]


def _deadline(row, lang):
    if not row.extension:
        return cell(row.deadline)
    return t("{deadline} (an extension)", lang, deadline=cell(row.deadline))


def _hardware(hardware, lang):
    if not isinstance(hardware, dict):
        return markdown_text(hardware) or "–"
    name = markdown_text(hardware.get("name")) or t("unknown GPU", lang)
    details = [markdown_text(hardware.get("device"))]
    memory = hardware.get("total_memory_mb")
    if isinstance(memory, (int, float)) and not isinstance(memory, bool):
        details.append(f"{memory:g} MB")
    details = [detail for detail in details if detail]
    return f"{name} ({', '.join(details)})" if details else name


def lab(rows, lang):
    """Every record behind the optional credit, credit or not: self-reported, so staff read them."""
    optional = active_assignment.current().optional_module
    labbed = [row for row in rows if row.lab]
    if not optional and not labbed:
        return []
    lines = ["## " + t("Optional credit: {module} (self-reported)", lang, module=markdown_code(optional or "lab")), "",
             t("The grader checks that a record is complete, consistent and plausible for the hardware it names, not "
               "that the run took place. Ask a student to run it again when in doubt.", lang), ""]
    if not labbed:
        return lines + [t("No student has a record.", lang), ""]
    lines += header(t("Student", lang), t("Record", lang), t("Credit", lang), t("Hardware (as reported)", lang),
                    t("Plausibility notes", lang), t("Summary", lang))
    for row in labbed:
        record = row.lab
        notes = record.get("plausibility")
        notes = [notes] if isinstance(notes, str) else (notes if isinstance(notes, list) else [])
        shown = "; ".join(str(note) for note in notes[:MAX_PLAUSIBILITY_NOTES])
        if len(notes) > MAX_PLAUSIBILITY_NOTES:
            shown += "; " + t("… {n} more", lang, n=len(notes) - MAX_PLAUSIBILITY_NOTES)
        lines.append(f"| {cell(row.student)} | {cell(record.get('file'), 120)} "
                     f"| {_credit(record.get('earns_credit'), lang, '?')} | {_hardware(record.get('hardware'), lang)} "
                     f"| {cell(shown, 600)} | {cell(record.get('summary'))} |")
    return lines + [""]
