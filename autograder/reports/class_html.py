"""``report.html``: the TA's class page, one self-contained file.

Sections: the class at a glance (distribution, module means, pass rate per
test by title), a table of every student (sortable by any column and
filterable by a small inline script allowed by its hash; without script it is
sorted by total), and a view per student (:mod:`autograder.reports.class_html_student`).
Built from the same rows as ``report.md`` (:mod:`autograder.reports.class_report`).
"""
import html
import statistics

from autograder.reports import isolation_view
from autograder.reports.class_flags import NO_WORK, row_flags, worst
from autograder.reports.class_html_student import anchor, partners_of, similarity_link, student_view
from autograder.reports.class_report import (OPTIONAL_MODULE, STATUS_ORDER, bin_labels, counted, distribution,
                                             fmt_number, module_columns, pass_rates, summary_stats, test_title)
from autograder.reports.html_page import bar_chart, esc, page, severity_badge, table

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
      var down = cell.getAttribute('data-down') !== '1';
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


def _header(rows, manifest):
    counts = {status: sum(1 for row in rows if row.status == status) for status in STATUS_ORDER}
    idle = sum(1 for row in rows if row.no_work)
    context = [f"{len(rows)} student(s)"] + [f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s]]
    if idle:
        context.append(f"{idle} {NO_WORK}")
    parts = ["<h1>Class report: Mixed Precision Backward</h1>",
             "<nav><a href=\"#glance\">At a glance</a><a href=\"#students\">Students</a>"
             "<a href=\"#similarity\">Similarity</a><a href=\"similarity/index.html\">All similarity pairs</a></nav>",
             f"<p>{html.escape(', '.join(context))}.</p>"]
    seed = manifest.get("seed")
    if seed is not None:
        parts.append(f"<p>Seed <code>{esc(seed, 40)}</code> (every student).</p>")
    if manifest.get("shard"):
        parts.append(f"<p class=\"note\">Shard {esc(manifest['shard'], 20)} of the class only.</p>")
    if manifest.get("visible_only"):
        parts.append("<p class=\"note\"><b>Visible tests only</b>: hidden tests were not run.</p>")
    deadline = manifest.get("deadline")
    if isinstance(deadline, dict) and deadline.get("deadline"):
        parts.append(f"<p>Deadline <code>{esc(deadline['deadline'], 60)}</code> "
                     f"({esc(deadline.get('source', 'committed'), 20)} time).</p>")
    for warning in manifest.get("warnings", []) or []:
        parts.append(f"<p class=\"note\">Warning: {esc(warning, 1000)}</p>")
    return "\n".join(parts)


def _glance(rows, columns):
    stats = summary_stats(rows)
    parts = ["<h2 id=\"glance\">The class at a glance</h2>"]
    if stats:
        parts.append(table(["Students", "Mean", "Median", "Std dev", "Min", "Max", "Full marks", "Zero"],
                           [[str(stats["students"]), f"{stats['mean']:.1f}", f"{stats['median']:g}",
                             f"{stats['stdev']:.1f}", f"{stats['min']:g}", f"{stats['max']:g}", str(stats["full"]),
                             str(stats["zero"])]], numeric=tuple(range(8))))
    edges, counts = distribution(rows)
    parts.append("<h3>Score distribution (students per 10 points)</h3>")
    peak = max(counts + [1])
    parts.append(bar_chart([(html.escape(label), count, "") for label, count in zip(bin_labels(edges), counts)],
                           maximum=peak, unit=""))
    parts.append("<h3>Mean score per module (% of the module)</h3>")
    graded = counted(rows)
    items = []
    for module in module_columns(rows):
        fractions = [row.modules[module][0] / row.modules[module][1] for row in graded
                     if module in row.modules and row.modules[module][1]]
        mean = 100.0 * statistics.fmean(fractions) if fractions else 0.0
        note = " (optional)" if module == OPTIONAL_MODULE else ""
        items.append((f"<code>{html.escape(module)}</code>{note}", mean, f"m-{module}"))
    parts.append(bar_chart(items))
    idle = sum(1 for row in rows if row.no_work)
    parts.append(f"<h3>Pass rate per test, lowest first</h3><p class=\"muted\">Over the {len(graded)} student(s) "
                 "whose grading completed"
                 + (f"; {idle} student(s) with no work since the template are left out" if idle else "")
                 + ". Colour: the module.</p>")
    rates = sorted(pass_rates(rows, columns), key=lambda r: (r[2] / r[3] if r[3] else 0, r[0]))
    parts.append(bar_chart([(esc(test_title(info), 200) + (" <span class=\"muted\">(hidden)</span>"
                                                          if info["visibility"] == "hidden" else ""),
                             100.0 * passed / total if total else 0.0, f"m-{info['module']}")
                            for key, info, passed, total in rates]))
    return "\n".join(parts)


def _students(rows, partners):
    modules = module_columns(rows)
    header = ["Student", "Status", "Total"] + [f"<code>{html.escape(m)}</code>" for m in modules] + \
        ["Worst flag", "Flags", "Similar to", "Later commits", "Isolation"]
    numeric = tuple([2] + list(range(3, 3 + len(modules))) + [3 + len(modules), 4 + len(modules),
                                                               6 + len(modules)])
    body = []
    for index, row in sorted(enumerate(rows), key=lambda item: (-item[1].total, item[1].student)):
        mine = partners.get(row.student, [])
        flags = row_flags(row, mine)
        severity = worst(flags)
        cells = [f'<a href="#{anchor(index)}">{esc(row.student, 200)}</a>', esc(row.shown_status, 60),
                 f"{fmt_number(row.total)}"]
        cells += [fmt_number(row.modules[m][0]) if m in row.modules else "–" for m in modules]
        later = row.commit.get("later_commits")
        cells += [(severity_badge(severity), 4 - flags[0].rank if flags else 0),
                  str(len(flags)), "; ".join(esc(other, 120) for other in dict.fromkeys(p["other"] for p in mine)),
                  str(later) if isinstance(later, int) and not isinstance(later, bool) else "",
                  esc(isolation_view.status_word(row.isolation), 30)]
        body.append(cells)
    sortable = table(header, body, numeric=numeric, attrs=' id="students-table"', sortable=True)
    return ("<h2 id=\"students\">Students</h2><p class=\"muted\">Click a column to sort; the name opens the "
            "student's view.</p><input id=\"filter\" class=\"hidden\" type=\"search\" "
            "placeholder=\"filter: name, status, flag…\" aria-label=\"filter the students\">" + sortable)


def _similarity(similarity):
    parts = ["<h2 id=\"similarity\">Similarity</h2>"]
    if not isinstance(similarity, dict):
        return parts[0] + "<p class=\"muted\">Not run for this output folder (a shard or a re-grade).</p>"
    if similarity.get("skipped"):
        return parts[0] + f"<p>Skipped: {esc(similarity['skipped'], 400)}.</p>"
    parts.append("<p>A flagged pair is a reason to read the two files side by side, never proof. "
                 "<a href=\"similarity/index.html\">Every pair above the threshold and the top pairs</a>.</p>")
    rows = []
    modules = similarity.get("modules") if isinstance(similarity.get("modules"), dict) else {}
    for module, data in modules.items():
        if not isinstance(data, dict):
            continue
        for pair in data.get("pairs", []):
            if isinstance(pair, dict) and pair.get("flagged") is True:
                members = pair.get("members") or [pair.get("a"), pair.get("b")]
                rows.append([f"<code>{esc(module, 40)}</code>", " / ".join(esc(m, 120) for m in members),
                             f"{pair.get('score', 0):.2f}", similarity_link(pair.get("page"))])
        honest = data.get("calibration")
        if isinstance(honest, dict) and honest.get("pairs"):
            parts.append(f"<p class=\"muted\"><code>{esc(module, 40)}</code>: threshold "
                         f"{data.get('threshold', 0):.2f}; {honest.get('reached', 0)} of {honest['pairs']} pairs "
                         "of independent correct solutions reach it.</p>")
    torch = similarity.get("torch_reference") if isinstance(similarity.get("torch_reference"), dict) else {}
    for match in torch.get("matches", []) or []:
        if isinstance(match, dict) and match.get("flagged") is True:
            rows.append(["GradScaler", esc(match.get("student"), 120) + " / torch", f"{match.get('score', 0):.2f}",
                         similarity_link(match.get("page"))])
    parts.append(table(["Module", "Students", "Score", ""], rows, numeric=(2,)) if rows
                 else "<p>No pair reaches its module's threshold.</p>")
    return "\n".join(parts)


def render_html(rows, columns, manifest, similarity=None, lang="en"):
    partners = partners_of(similarity)
    views = "\n".join(student_view(index, row, rows, partners.get(row.student, [])) for index, row in enumerate(rows))
    body = "\n".join([_header(rows, manifest), _glance(rows, columns), _students(rows, partners),
                      _similarity(similarity), "<h2 id=\"views\">Every student</h2>", views])
    return page("Class report: Mixed Precision Backward", body, lang=lang, script=SCRIPT)
