"""``report.md``: the class view of a ``grade-many`` output folder, in Markdown.

Student folder names, flags, reasons, test names, isolation facts and lab
records all pass through :mod:`autograder.reports.safe_text`: nothing a
submission plants can add a heading, link, image, table row or raw HTML here.
Every field is read defensively (a results.json may come from an older grader).
"""
import statistics

from autograder import active_assignment
from autograder.judging.results import NO_COMMIT
from autograder.reports import isolation_view
from autograder.similarity import report_section as similarity_markdown
from autograder.class_reports.class_report import (CHARTS, optional_module, STATUS_ORDER, bin_labels,
                                                   commit_cells, counted, distribution, fmt_number,
                                                   module_columns, pass_rates, summary_stats)
from autograder.reports.safe_text import markdown_code, markdown_text

MAX_PLAUSIBILITY_NOTES = 5


def _cell(text, limit=300):
    return markdown_text(text, limit) or "–"


def _header(rows, manifest):
    lines = [f"# Class report: {active_assignment.current().title}", ""]
    counts = {status: sum(1 for row in rows if row.status == status) for status in STATUS_ORDER}
    seed = manifest.get("seed")
    context = [f"{len(rows)} student(s)"]
    context += [f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s]]
    lines.append(", ".join(context) + ".")
    if seed is not None:
        lines.append(f"Seed {markdown_code(seed)} (every student; re-grading with it reproduces these scores).")
    if manifest.get("shard"):
        lines.append(f"Shard {markdown_text(manifest['shard'])} of the class only: use `merge-scores` "
                     "for the whole class.")
    if manifest.get("merged_from"):
        lines.append(f"Merged from {len(manifest['merged_from'])} grade-many output(s).")
    if manifest.get("visible_only"):
        lines.append("**Visible tests only**: hidden tests were not run.")
    deadline = manifest.get("deadline")
    if isinstance(deadline, dict) and deadline.get("deadline"):
        source = ("the last push at or before it (server push times)" if deadline.get("source") == "pushed"
                  else "the last commit at or before it by committer time (set by the student's machine)")
        lines.append(f"Deadline {markdown_code(deadline['deadline'])}: each repository was graded at {source}; "
                     "see *Graded commits*.")
    for warning in manifest.get("warnings", []):
        lines.append(f"> Warning: {markdown_text(warning)}")
    return lines + [""]


def _distribution(rows, charts):
    stats = summary_stats(rows)
    lines = ["## Score distribution", ""]
    if charts is None:
        lines += ["_Charts skipped: matplotlib is not installed (`pip install -r requirements-dev.txt`)._", ""]
    elif "distribution" in charts:
        lines += [f"![Score distribution]({CHARTS['distribution']})", ""]
    if stats:
        lines += ["| Students | Mean | Median | Std dev | Min | Max | Full marks | Zero |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
                  f"| {stats['students']} | {stats['mean']:.2f} | {stats['median']:g} | {stats['stdev']:.2f} "
                  f"| {stats['min']:g} | {stats['max']:g} | {stats['full']} | {stats['zero']} |", ""]
        if stats["core_max"]:
            optional = active_assignment.current().optional_module
            lines += [f"Full marks = {stats['core_max']:g} points from the graded modules"
                      + (f" (the optional `{optional}` credit comes on top)." if optional else "."), ""]
        edges, bin_counts = distribution(rows)
        peak = max(bin_counts) or 1
        lines += ["| Total | Students | |", "| --- | ---: | --- |"]
        for label, count in zip(bin_labels(edges), bin_counts):
            lines.append(f"| {markdown_text(label)} | {count} | {'█' * round(20 * count / peak)} |")
        lines.append("")
    return lines


def _modules(rows, charts):
    modules = module_columns(rows)
    graded = [row for row in rows if row.graded]
    lines = ["## Modules", ""]
    if charts and "modules" in charts:
        lines += [f"![Mean score per module]({CHARTS['modules']})", ""]
    lines += ["| Module | Mean | Points | Full marks |", "| --- | ---: | ---: | ---: |"]
    for module in modules:
        present = [row.modules[module] for row in graded if module in row.modules]
        maximum = max((x for _, x in present), default=0.0)
        mean = statistics.fmean([s for s, _ in present]) if present else 0.0
        full = sum(1 for s, x in present if x and s >= x)
        note = " (optional; students with a lab record)" if module == optional_module() else ""
        lines.append(f"| {markdown_code(module)}{note} | {mean:.2f} | {maximum:g} | {full}/{len(present)} |")
    return lines + [""]


def _pass_rates(rows, columns, charts):
    graded = counted(rows)
    idle = sum(1 for row in rows if row.no_work)
    lines = ["## Per-test pass rates (lowest first)", "",
             f"Over the {len(graded)} student(s) whose grading completed"
             + (f" ({idle} with no work since the template left out)" if idle else "")
             + ". Low rates point at the mechanisms the class got wrong.", ""]
    if charts and "pass_rates" in charts:
        lines += [f"![Per-test pass rates]({CHARTS['pass_rates']})", ""]
    lines += ["| Test | Module | Visibility | Points | Passed | Rate |",
              "| --- | --- | --- | ---: | ---: | ---: |"]
    rates = pass_rates(rows, columns)
    for key, info, passed, total in sorted(rates, key=lambda r: (r[2] / r[3] if r[3] else 0, r[0])):
        rate = f"{100.0 * passed / total:.0f}%" if total else "–"
        lines.append(f"| {_cell(info['name'])} | {markdown_code(info['module'])} | {_cell(info['visibility'])} "
                     f"| {info['max_score']:g} | {passed}/{total} | {rate} |")
    return lines + [""]


def _flags(rows):
    lines = ["## Integrity flags", ""]
    flagged = [(row.student, flag) for row in rows for flag in row.flags]
    if flagged:
        lines += ["| Student | Flag |", "| --- | --- |"]
        lines += [f"| {_cell(student)} | {_cell(flag)} |" for student, flag in flagged]
    else:
        lines.append("None.")
    return lines + [""]


def _isolation(rows, manifest):
    """Who ran without OS confinement (loud), and a count of the rest."""
    lines = ["## Isolation", ""]
    probe = isolation_view.one_line(manifest.get("isolation"))
    if probe:
        lines += [f"This machine's probe box, before grading: {_cell(probe, 800)}.", ""]
    unconfined = [row for row in rows if isolation_view.unconfined(row.isolation)]
    known = [row for row in rows if row.isolation]
    if unconfined:
        lines += [f"> ⚠️ **{len(unconfined)} student(s): {isolation_view.UNCONFINED_WARNING.render('en')}**", "",
                  "| Student | Problems |", "| --- | --- |"]
        for row in unconfined:
            problems = "; ".join(isolation_view.problems(row.isolation)) or "none listed"
            lines.append(f"| {_cell(row.student)} | {_cell(problems, 600)} |")
        lines.append("")
    confined = sum(1 for row in known if isolation_view.status_word(row.isolation) == "confined")
    unknown = len(known) - confined - len(unconfined)
    lines.append(f"Confined: {confined} of {len(rows)} student(s); "
                 f"not confined: {len(unconfined)}; "
                 + (f"a record that does not say (check by hand): {unknown}; " if unknown else "")
                 + f"no isolation record (no code ran, or an older grader): {len(rows) - len(known)}. "
                 "Confined means: file system confined by Landlock, no network, no signal leaving the box, "
                 "a process namespace of its own (docs/sandbox.md). Per student: *How each grade was protected*.")
    return lines + [""]


def _uid(isolation):
    return dict(isolation_view.facts(isolation)).get("uid", "")


def _protection(rows):
    """One line per student: what held while their code ran, what was flagged, what is self-reported."""
    lines = ["## How each grade was protected", "",
             "Isolation while the student's code ran (`extra_data.isolation`), tamper flags "
             "(`extra_data.flags`), the optional lab credit (self-reported: `extra_data.lab`) and what "
             "was graded.", "",
             "| Student | Isolation | Uid | Tamper flags | Lab credit | Graded |",
             "| --- | --- | --- | ---: | --- | --- |"]
    for row in rows:
        word = isolation_view.status_word(row.isolation)
        word = f"**{word}**" if word == "NOT CONFINED" else word
        earns = row.lab.get("earns_credit")
        lab = "yes (self-reported)" if earns is True else ("no" if earns is False else "–")
        lines.append(f"| {_cell(row.student)} | {word} | {_cell(_uid(row.isolation), 120)} | {len(row.flags)} "
                     f"| {lab} | {_graded_what(row)} |")
    return lines + [""]


def _graded_what(row):
    commit = row.commit
    if not commit:
        return "the folder as it is"
    if commit.get("sha"):
        return f"commit {markdown_code(str(commit['sha'])[:12])}"
    if commit.get("source") == "working tree":
        return "the folder as it is (not a git repository)"
    if row.status == NO_COMMIT:
        return "nothing (no commit before the deadline)"
    return "nothing (the repository could not be read)"


def _commits(rows):
    """With --deadline: the graded commit of every student, and the latest one beside it."""
    if not any(row.commit for row in rows):
        return []
    lines = ["## Graded commits", "",
             "The commit graded for each student, when it was committed (in the deadline's zone), how many "
             "commits came after it, and the latest commit with its score when graded with `--also-latest` "
             "(recorded beside, never counted). A late policy is yours to apply.", "",
             "| Student | Status | Graded commit | Committed | Pushed | Later commits | Latest commit | Latest score |",
             "| --- | --- | --- | --- | --- | ---: | --- | ---: |"]
    for row in rows:
        sha, committed, pushed, later, latest, latest_total = commit_cells(row)
        if not row.commit:
            sha = "–"
        elif not sha:
            sha = ("not a git repository: graded as it is" if row.commit.get("source") == "working tree"
                   else "none before the deadline" if row.status == NO_COMMIT else "– (not read)")
        else:
            sha = markdown_code(sha[:12])
        latest = markdown_code(latest[:12]) if latest else "–"
        lines.append(f"| {_cell(row.student)} | {_cell(row.status)} | {sha} | {_cell(committed)} | {_cell(pushed)} "
                     f"| {_cell(later)} | {latest} | {_cell(latest_total)} |")
    notes = [(row.student, note) for row in rows if isinstance(row.commit.get("notes"), list)
             for note in row.commit["notes"]]
    if notes:
        lines += ["", "Left out of the exported commits:", ""]
        lines += [f"- {_cell(student)}: {_cell(note)}" for student, note in notes]
    return lines + [""]


def _hardware(hardware):
    if not isinstance(hardware, dict):
        return markdown_text(hardware) or "–"
    name = markdown_text(hardware.get("name")) or "unknown GPU"
    details = [markdown_text(hardware.get("device"))]
    memory = hardware.get("total_memory_mb")
    if isinstance(memory, (int, float)) and not isinstance(memory, bool):
        details.append(f"{memory:g} MB")
    details = [detail for detail in details if detail]
    return f"{name} ({', '.join(details)})" if details else name


def _lab(rows):
    """Every record behind the optional credit, credit or not: self-reported, so staff read them."""
    optional = active_assignment.current().optional_module
    labbed = [row for row in rows if row.lab]
    if not optional and not labbed:
        return []
    lines = [f"## Optional credit: {markdown_code(optional or 'lab')} (self-reported)", "",
             "The grader checks that a record is complete, consistent and plausible for the hardware it "
             "names, not that the run took place. Ask a student to run it again when in doubt.", ""]
    if not labbed:
        return lines + ["No student has a record.", ""]
    lines += ["| Student | Record | Credit | Hardware (as reported) | Plausibility notes | Summary |",
              "| --- | --- | --- | --- | --- | --- |"]
    for row in labbed:
        lab = row.lab
        earns = lab.get("earns_credit")
        credit = "yes (self-reported)" if earns is True else ("no" if earns is False else "?")
        notes = lab.get("plausibility")
        notes = [notes] if isinstance(notes, str) else (notes if isinstance(notes, list) else [])
        shown = "; ".join(str(note) for note in notes[:MAX_PLAUSIBILITY_NOTES])
        if len(notes) > MAX_PLAUSIBILITY_NOTES:
            shown += f"; … {len(notes) - MAX_PLAUSIBILITY_NOTES} more"
        lines.append(f"| {_cell(row.student)} | {_cell(lab.get('file'), 120)} | {credit} "
                     f"| {_hardware(lab.get('hardware'))} | {_cell(shown, 600)} | {_cell(lab.get('summary'))} |")
    return lines + [""]


def _failed(rows):
    lines = ["## Crashed, timed out or without a submission", ""]
    failed = [row for row in rows if not row.graded]
    if failed:
        lines += ["| Student | Status | Reason |", "| --- | --- | --- |"]
        lines += [f"| {_cell(row.student)} | {_cell(row.status)} | {_cell(row.reason)} |" for row in failed]
        lines += ["", "Each got 0 for now; fix the cause or re-grade them one by one (below)."]
    else:
        lines.append("None.")
    return lines + [""]


def _students(rows):
    modules = module_columns(rows)
    lines = ["## Students", "",
             "| Student | Status | Total | " + " | ".join(markdown_code(m) for m in modules) + " | Isolation |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in modules) + " | --- |"]
    for row in sorted(rows, key=lambda r: (-r.total, r.student)):
        cells = [fmt_number(row.modules[m][0]) if m in row.modules else "–" for m in modules]
        isolation = isolation_view.status_word(row.isolation)
        isolation = f"**{isolation}**" if isolation == "NOT CONFINED" else isolation
        total = f"{fmt_number(row.total)} / {fmt_number(row.max_score)}"
        lines.append(f"| {_cell(row.student)} | {_cell(row.shown_status)} | {total} | " + " | ".join(cells)
                     + f" | {isolation} |")
    return lines + [""]


def _regrading(manifest):
    seed = manifest.get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else "SEED"
    lines = ["## Re-grading", "",
             "Re-grade one student with the recorded seed (and deadline); scores.csv, this report and the "
             "charts are updated in place:", "", "```",
             "python -m autograder grade-many ROOT --output-dir DIR --only STUDENT", "```", ""]
    if isinstance(manifest.get("deadline"), dict):
        return lines + ["Or grade a single repository at its graded commit (SHA from *Graded commits*) "
                        "exactly as this run did:", "", "```",
                        "git clone --quiet --no-local ROOT/STUDENT /tmp/clean   # never run git in the student's own .git",
                        "mkdir /tmp/at-deadline && git -C /tmp/clean archive SHA | tar -x -C /tmp/at-deadline",
                        f"python -m autograder grade --submission /tmp/at-deadline/exercises --seed {seed}",
                        "```", ""]
    return lines + ["Or grade a single repository exactly as this run did:", "", "```",
                    f"python -m autograder grade --submission ROOT/STUDENT/exercises --seed {seed}",
                    "```", ""]


def render_markdown(rows, columns, manifest, charts, similarity=None):
    lines = _header(rows, manifest)
    lines += _distribution(rows, charts)
    lines += _modules(rows, charts)
    lines += _pass_rates(rows, columns, charts)
    lines += _flags(rows)
    lines += similarity_markdown.section(similarity)
    lines += _isolation(rows, manifest)
    lines += _protection(rows)
    lines += _lab(rows)
    lines += _commits(rows)
    lines += _failed(rows)
    lines += _students(rows)
    lines += _regrading(manifest)
    return "\n".join(lines)
