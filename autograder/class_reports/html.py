"""``report.html``: the TA's class page, one self-contained file.

Sections: the class at a glance (distribution, module means, pass rate per
test by title), a table of every student (sortable by any column and
filterable by a small inline script allowed by its hash; without script it is
sorted by total), and a view per student (:mod:`autograder.class_reports.html_student`).
Built from the same rows as ``report.md`` (:mod:`autograder.class_reports.class_report`).
"""
import collections
import html

from autograder import active_assignment
from autograder.reports import colours
from autograder.i18n import render_data
from autograder.i18n import text as t
from autograder.reports import isolation_view
from autograder.class_reports import vocabulary
from autograder.class_reports.diagnoses import wrong_html
from autograder.class_reports.over_time.changes import section_html as changes_html
from autograder.class_reports.over_time.progress_view import STYLE as PROGRESS_STYLE
from autograder.class_reports.over_time.progress_view import section_html as progress_html
from autograder.class_reports.over_time.progress_view import student_progress
from autograder.class_reports.flags import row_flags, worst
from autograder.class_reports.html_student import anchor, partners_of, similarity_link, student_view
from autograder.class_reports.csv_files import commit_cells
from autograder.class_reports.class_report import (optional_module, STATUS_ORDER, bin_labels, counted,
                                                   distribution, fmt_number, left_out, module_columns,
                                                   module_means, pass_rates, students, summary_stats, test_title)
from autograder.reports.html_page import bar_chart, esc, page, severity_badge, table
from autograder.similarity.display import members_text, row_members, shown_range, shown_score, stored_text

# The class page's own pieces (the frame's style is autograder.reports.html_page's).
STYLE = """
/* On a phone the students table keeps readable columns and scrolls inside its box; everywhere
   it is one line a student (a long list of partners is cut, the whole list in its title). */
#students-table { min-width: 50em; } #students-table td { white-space: nowrap; padding: .25em .4em; }
/* Its headings may take two lines, at a space (never inside a word, nor between CJK characters)
   or after a module name's underscore, so that a column is as wide as its values. */
#students-table th { white-space: normal; word-break: keep-all; padding: .25em .4em; }
#students-table th code { overflow-wrap: normal; }
#students-table th[data-sort]:after { content: "\2195"; font-size: 11px; }
.similar { max-width: 9em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.wrong { border-left: 4px solid var(--line); padding: .1em 0 .1em .8em; margin: 1em 0; }
.wrong h3 { overflow-wrap: anywhere; } .wrong .feedback p { margin: .4em 0 .2em; }
"""

# Sorting and filtering of the students table; no student text is ever put in here.
SCRIPT = """
(function () {
  var table = document.getElementById('students-table');
  if (!table) { return; }
  var body = table.tBodies[0];
  var filter = document.getElementById('filter');
  filter.classList.remove('hidden');
  filter.addEventListener('input', function () {
    var needle = filter.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function (row) {
      row.style.display = row.textContent.toLowerCase().indexOf(needle) >= 0 ? '' : 'none';
    });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell, column) {
    cell.addEventListener('click', function () {
      var numeric = cell.getAttribute('data-sort') === 'num';
      // numbers: highest first on the first click; text: A to Z first
      var down = cell.getAttribute('data-down') ? cell.getAttribute('data-down') !== '1' : numeric;
      cell.setAttribute('data-down', down ? '1' : '0');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute('data-v') || a.cells[column].textContent;
        var y = b.cells[column].getAttribute('data-v') || b.cells[column].textContent;
        var order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
        return down ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""


def _header(rows, manifest, lang):
    parts = ["<h1>" + t("Class report: {title}", lang, title=active_assignment.current().title) + "</h1>",
             "<nav><a href=\"#glance\">" + t("At a glance", lang) + "</a><a href=\"#wrong\">"
             + t("What the class got wrong", lang) + "</a><a href=\"#students\">" + t("Students", lang) + "</a>"
             + ("<a href=\"#progress\">" + t("Progress", lang) + "</a>" if manifest.get("history") else "") +
             "<a href=\"#similarity\">" + t("Similarity", lang) + "</a><a href=\"similarity/index.html\">"
             + t("All similarity pairs", lang) + "</a></nav>",
             f"<p>{esc(headcount(rows, lang), 2000)}</p>"]
    seed = manifest.get("seed")
    if seed is not None:
        parts.append("<p>" + t("Seed {seed} (every student).", lang, seed=f"<code>{esc(seed, 40)}</code>") + "</p>")
    if manifest.get("shard"):
        parts.append("<p class=\"note\">" + t("Shard {shard} of the class only.", lang, shard=esc(manifest["shard"], 20))
                     + "</p>")
    if manifest.get("visible_only"):
        parts.append("<p class=\"note\">" + t("Visible tests only: hidden tests were not run.", lang) + "</p>")
    deadline = manifest.get("deadline")
    if isinstance(deadline, dict) and deadline.get("deadline"):
        when = f"<code>{esc(deadline['deadline'], 60)}</code>"
        parts.append("<p>" + (t("Deadline {deadline}, by the time each commit was pushed.", lang, deadline=when)
                              if deadline.get("source") == "pushed" else
                              t("Deadline {deadline}, by the time each commit was made (its committer time).", lang,
                                deadline=when)) + "</p>")
    if late_policy_text(manifest, lang):
        parts.append(f"<p>{esc(late_policy_text(manifest, lang), 1000)}</p>")
    roster = roster_text(rows, manifest, lang)
    if roster:
        parts.append(f"<p>{esc(roster, 4000)}</p>")
    extended = extensions_of(manifest)
    if extended:
        parts.append("<p>" + t("{n} student(s) have a deadline of their own (an extension): {who}.", lang,
                               n=len(extended), who=vocabulary.listed(
                                   [f"{esc(student, 200)} <code>{esc(when, 60)}</code>" for student, when in extended],
                                   lang)) + "</p>")
    for warning in manifest.get("warnings", []) or []:
        parts.append("<p class=\"note\">" + t("Run warning: {warning}", lang,
                                                warning=esc(render_data(warning, lang), 1000)) + "</p>")
    return "\n".join(parts)


def roster_text(rows, manifest, lang):
    """What the roster says of the class ('' without one): its students, who has no repository,
    which folders are on no roster row (graded all the same)."""
    recorded = manifest.get("roster") if isinstance(manifest.get("roster"), dict) else None
    if recorded is None:
        return ""
    on = [row for row in rows if row.on_roster]
    text = [t("Roster {file}: {n} student(s), {absent} of them without a repository.", lang,
              file=str(recorded.get("file", "")), n=len(on), absent=sum(1 for row in on if row.absent))]
    strangers = [row.student for row in students(rows) if row.on_roster is False]
    if strangers:
        text.append(t("Not on the roster (graded all the same): {names}.", lang,
                      names=vocabulary.listed(strangers, lang)))
    return vocabulary.sentences(text, lang)


def late_policy_text(manifest, lang):
    """The run's late policy in words ('' without one)."""
    policy = manifest.get("late_policy") if isinstance(manifest.get("late_policy"), dict) else None
    if not policy:
        return ""
    return t("Late policy: {penalty} of the late score is taken off per started day after a student's deadline, "
             "for at most {days} day(s) (declared in {source}); the counted score is the better of the on-time score "
             "and the late score after its penalty.", lang, penalty=f"{100 * float(policy.get('penalty_per_day', 0)):g}%",
             days=policy.get("max_days"), source=policy.get("source", ""))


def extensions_of(manifest):
    """``[(student, their deadline)]`` that run.json records, by name."""
    found = manifest.get("extensions") if isinstance(manifest.get("extensions"), dict) else {}
    return sorted((str(student), str(entry.get("deadline", ""))) for student, entry in found.items()
                  if isinstance(entry, dict))


def _glance(rows, columns, lang):
    stats = summary_stats(rows)
    parts = ["<h2 id=\"glance\">" + t("The class at a glance", lang) + "</h2>",
             "<p class=\"muted\">" + over_whom(rows, lang) + "</p>"]
    if stats:
        parts.append(table([t("Students", lang), t("Mean", lang), t("Median", lang), t("Std dev", lang),
                            t("Min", lang), t("Max", lang), t("Full marks", lang), t("Zero", lang)],
                           [[str(stats["students"]), f"{stats['mean']:.1f}", f"{stats['median']:g}",
                             f"{stats['stdev']:.1f}", f"{stats['min']:g}", f"{stats['max']:g}", str(stats["full"]),
                             str(stats["zero"])]], numeric=tuple(range(8))))
    edges, counts = distribution(rows)
    parts.append("<h3>" + t("Score distribution (students per 10 points)", lang) + "</h3>")
    peak = max(counts + [1])
    parts.append(bar_chart([(html.escape(label), count, "") for label, count in zip(bin_labels(edges), counts)],
                           maximum=peak, unit=""))
    parts.append("<h3>" + t("Mean score per module (% of the module)", lang) + "</h3>")
    items = []
    for module, mean in module_means(rows).items():
        note = " " + t("(optional)", lang) if module == optional_module() else ""
        items.append((f"<code>{html.escape(module)}</code>{note}", mean, f"m-{colours.key(module)}"))
    parts.append(bar_chart(items))
    parts.append("<h3>" + t("Pass rate per test, lowest first", lang) + "</h3><p class=\"muted\">"
                 + t("Colour: the module.", lang) + "</p>")
    rates = sorted(pass_rates(rows, columns), key=lambda r: (r[2] / r[3] if r[3] else 0, r[0]))
    hidden = t("(hidden test)", lang)
    parts.append(bar_chart([(esc(test_title(info), 200) + (f" <span class=\"muted\">{hidden}</span>"
                                                          if info["visibility"] == "hidden" else ""),
                             100.0 * passed / total if total else 0.0, f"m-{colours.key(info['module'])}")
                            for key, info, passed, total in rates]))
    return "\n".join(parts)


def headcount(rows, lang):
    """How many folders, how many students, who is in the statistics and who is not."""
    shown = students(rows)
    others = [row for row in rows if row.folder_only]
    absent = sum(1 for row in rows if row.absent)
    text = [t("{folders} folder(s) and {absent} student(s) of the roster without one: {students} student(s), {counted} "
              "of them in the statistics.", lang, folders=len(rows) - absent, absent=absent, students=len(shown),
              counted=len(counted(rows))) if absent else
            t("{folders} folder(s): {students} student(s), {counted} of them in the statistics.", lang,
              folders=len(rows), students=len(shown), counted=len(counted(rows)))]
    by_status = collections.Counter(row.status for row in shown if not row.counted)
    if by_status:
        which = [t("{status}: {n}", lang, n=by_status[status], status=vocabulary.status(status, lang))
                 for status in STATUS_ORDER if by_status[status]]
        text.append(t("Left out: {which}.", lang, which=vocabulary.listed(which, lang)))
    if others:
        text.append(t("Folders without anything of a student: {names}.", lang,
                      names=vocabulary.listed([row.student for row in others], lang)))
    return vocabulary.sentences(text, lang)


def over_whom(rows, lang):
    """Whom every statistic and chart counts."""
    return t("Every statistic and chart counts the {n} student(s) graded with work of their own; the folders left "
             "out are listed under {link}.", lang, n=len(counted(rows)),
             link="<a href=\"#left-out\">" + t("Not in the statistics", lang) + "</a>")


def _left_out(rows, lang):
    """Each folder the statistics leave out, once, with its status and reason."""
    out = left_out(rows)
    parts = ["<h2 id=\"left-out\">" + t("Not in the statistics", lang) + "</h2>"]
    if not out:
        return parts[0] + "<p>" + t("Every folder was graded with work of its own.", lang) + "</p>"
    body = []
    for row in out:
        name = esc(row.student, 200)
        if not row.folder_only and not row.absent:
            name = f'<a href="#{anchor(rows.index(row))}">{name}</a>'
        body.append([name, esc(vocabulary.status(row.status, lang), 80),
                     esc(vocabulary.reason(row.reason, lang), 600) or "–"])
    parts.append(table([t("Folder", lang), t("Status", lang), t("Reason", lang)], body, attrs=' class="stack"'))
    return "\n".join(parts)


def _students(rows, partners, lang):
    """The students table: one line a student (the worst flag with how many there are; the later
    commits with the latest one's score), with the counted score beside the total under a policy."""
    modules = module_columns(rows)
    late = any(row.late_work for row in rows)
    # how each student's code was confined: a column only where one of them was not (a flag says it too)
    confinement = any(isolation_view.status_word(row.isolation) != "confined" for row in rows
                      if not row.folder_only and not row.absent)
    header = [t("Student", lang), t("Status", lang), t("Total", lang)] + ([t("Counted", lang)] if late else []) + \
        [f"<code>{html.escape(m).replace('_', '_<wbr>')}</code>" for m in modules] + \
        [t("Flags", lang), t("Similar to", lang), t("Later commits", lang)] + \
        ([t("Confinement", lang)] if confinement else [])
    first = 3 + late   # the first module's column
    numeric = tuple([2] + ([3] if late else []) + list(range(first, first + len(modules) + 1)) +
                    [first + len(modules) + 2])
    body = []
    for index, row in sorted(enumerate(rows), key=lambda item: (-item[1].total, item[1].student)):
        if row.folder_only:
            continue
        mine = partners.get(row.student, [])
        flags = row_flags(row, mine)
        severity = worst(flags)
        status = vocabulary.status(row.status, lang)
        cells = [_name(row, index, lang), _word(t("{status} · extension", lang, status=status) if row.extension else status),
                 "–" if row.absent else f"{fmt_number(row.total)}"]
        if late:
            cells.append(fmt_number(row.counted_score) if row.counted_score is not None else "–")
        cells += [fmt_number(row.modules[m][0]) if m in row.modules else "–" for m in modules]
        later, latest = commit_cells(row)[3], commit_cells(row)[5]
        badge = severity_badge(severity, vocabulary.severity(severity, lang))
        cells += [(f"{badge} {len(flags)}" if flags else "0", (4 - flags[0].rank) * 100 + len(flags) if flags else 0),
                  _similar(mine, lang), (f"{later} → {latest}" if latest else later, later or 0)]
        if confinement:
            cells.append(_word(vocabulary.confinement(isolation_view.status_word(row.isolation), lang)))
        body.append(cells)
    sortable = table(header, body, numeric=numeric, attrs=' id="students-table"', sortable=True)
    placeholder = t("filter: name, status, flag…", lang)
    label = t("filter the students", lang)
    return ("<h2 id=\"students\">" + t("Students", lang) + "</h2><p class=\"muted\">"
            + t("Click a column to sort; the name opens the student view.", lang) + "</p>"
            "<input id=\"filter\" class=\"hidden\" type=\"search\" "
            f"placeholder=\"{html.escape(placeholder)}\" aria-label=\"{html.escape(label)}\">" + sortable)


def _name(row, index, lang):
    """A student's cell: the folder (a link to their view), and with a roster their name on it."""
    name = esc(row.student, 200) if row.absent else f'<a href="#{anchor(index)}">{esc(row.student, 200)}</a>'
    if row.known_as and row.known_as != row.student:
        name += f' <span class="muted">{esc(row.known_as, 120)}</span>'
    elif row.on_roster is False:
        name += ' <span class="muted">' + t("(not on the roster)", lang) + "</span>"
    return name


def _word(text):
    """A short word of ours (a status, how the code was confined), kept on one line."""
    return f'<span class="word">{esc(text, 60)}</span>'


def _similar(partners, lang):
    """The students table's cell: everyone this student's flagged matches are with, each once
    (a group flagged in every module is one list of names), on one line."""
    names = list(dict.fromkeys(name for partner in partners for name in partner.get("names") or [partner["other"]]))
    if not names:
        return ""
    # the title (the whole list on hover, where the cell is cut) is the names as shown: escaped,
    # never the raw text of a folder's name
    shown = vocabulary.listed([esc(name, 120) for name in names], lang)
    return f'<div class="similar" title="{shown}">{shown}</div>'



def _similarity(similarity, lang):
    parts = ["<h2 id=\"similarity\">" + t('Similarity', lang) + "</h2>"]
    if not isinstance(similarity, dict):
        return parts[0] + "<p class=\"muted\">" + t('Not run for this output folder (a shard or a re-grade).', lang) + "</p>"
    if similarity.get("skipped"):
        return parts[0] + "<p>" + t('Skipped: {reason}.', lang, reason=esc(stored_text(similarity['skipped'], lang), 400)) \
            + "</p>"
    index = "<a href=\"similarity/index.html\">" + t('Every pair above the threshold and the top pairs', lang) + "</a>"
    parts.append("<p>" + vocabulary.sentences([
        t('A flagged pair is a reason to read the two files side by side, never proof.', lang),
        vocabulary.sentence(index, lang)], lang) + "</p>")
    rows = []
    modules = similarity.get("modules") if isinstance(similarity.get("modules"), dict) else {}
    for module, data in modules.items():
        if not isinstance(data, dict):
            continue
        for pair in data.get("pairs", []):
            if isinstance(pair, dict) and pair.get("flagged") is True:
                rows.append([f"<code>{esc(module, 40)}</code>", _who(pair, lang, pair.get("identical") is True),
                             shown_range(pair), similarity_link(pair.get("page"), lang)])
        honest = data.get("calibration")
        if isinstance(honest, dict) and honest.get("pairs"):
            parts.append("<p class=\"muted\">" + t(
                "{module}: threshold {threshold}; {reached} of {pairs} pairs of independent correct solutions reach "
                "it.", lang, module=f"<code>{esc(module, 40)}</code>", threshold=shown_score(data.get("threshold")),
                reached=esc(honest.get("reached", 0), 20), pairs=esc(honest["pairs"], 20)) + "</p>")
    against = [(module, match, t("the reference solution", lang))
               for module, data in _dict(similarity.get("solution_reference")).items()
               for match in _dict(data).get("matches", []) or []]
    torch = _dict(similarity.get("torch_reference"))
    against += [(torch.get("label", "framework"), match, esc(str(torch.get("reference", "")).split(" (")[0], 80))
                for match in torch.get("matches", []) or []]
    for module, match, other in against:
        if isinstance(match, dict) and match.get("flagged") is True:
            rows.append([f"<code>{esc(module, 40)}</code>", _who(match, lang, len(row_members(match)) > 1, other),
                         shown_range(match),
                         similarity_link(match.get("page"), lang)])
    parts.append(table([t("In", lang), t("Students", lang), t("Similarity score", lang), ""], rows, numeric=(2,),
                       attrs=' class="pairs"') if rows else "<p>" + t('No pair reaches its module threshold.', lang) + "</p>")
    return "\n".join(parts)


def _dict(value):
    return value if isinstance(value, dict) else {}


def _who(row, lang, as_group, other=""):
    """Everyone a flagged row is about: a pair, or a group with each of its students
    (and ``other``, the file they match, when it is no student's)."""
    who = members_text(row_members(row), lang, lambda member: esc(member, 120), as_group)
    return f'<span class="who">{who}{" / " + other if other else ""}</span>'


def render_html(rows, columns, manifest, similarity=None, lang="en", changes=None, progress=None):
    """``changes``: a :class:`~autograder.class_reports.over_time.changes.Comparison` (``--compare``);
    ``progress``: a :class:`~autograder.class_reports.over_time.progress_view.Progress` (``--history``)."""
    partners = partners_of(similarity, lang)
    views = "\n".join(student_view(index, row, rows, partners.get(row.student, []), lang,
                                   student_progress(progress, row.student, lang) if progress else "")
                      for index, row in enumerate(rows) if not row.folder_only and not row.absent)
    views_of = {row.student: anchor(index) for index, row in enumerate(rows) if not row.folder_only and not row.absent}
    body = "\n".join([_header(rows, manifest, lang), _glance(rows, columns, lang),
                      *([changes_html(changes, lang, lambda student: views_of.get(student, ""))] if changes else []),
                      *([progress_html(progress, lang, lambda student: views_of.get(student, ""))] if progress
                        else []),
                      wrong_html(rows, lang),
                      _students(rows, partners, lang), _left_out(rows, lang), _similarity(similarity, lang),
                      "<h2 id=\"views\">" + t("Every student", lang) + "</h2>", views])
    return page(t("Class report: {title}", lang, title=active_assignment.current().title), body, lang=lang,
                script=SCRIPT, style=STYLE + (PROGRESS_STYLE if progress else ""))
