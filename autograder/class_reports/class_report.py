"""The class view of a ``grade-many`` output folder: its rows (one per folder, and one per
roster student without a repository) and the statistics every report shows.

Everything here is rebuilt from ``DIR/run.json`` and each ``DIR/<student>/results.json``
(the files a single ``grade`` writes), so a full run, a re-grade of one student
and a merge of shards all produce their report the same way. Every field of a
results file is read defensively (it may come from an older grader), and text
cells that a student controls cannot hold a spreadsheet formula. The CSV files are
:mod:`autograder.class_reports.csv_files`, the Markdown :mod:`autograder.class_reports.markdown`.
"""
import math
import pathlib
import statistics

from autograder import active_assignment
from autograder.judging.results import CLASS_STATUSES, CRASHED, NO_COMMIT, NO_SUBMISSION, NO_WORK, NO_WORK_REASON, OK
from autograder.reports.safe_text import as_text
from autograder.class_reports.over_time.results_files import load, module_of, test_key, title_of  # noqa: F401
from autograder.reports.tidy import number, text_list

CSV_NAME = "scores.csv"
REPORT_NAME = "report.md"
HTML_NAME = "report.html"
CHARTS = {
    "distribution": "score_distribution.png",
    "pass_rates": "test_pass_rates.png",
    "modules": "module_scores.png",
}
def optional_module():
    return active_assignment.current().optional_module
# A student on the roster (--roster) with no folder in ROOT: no grade, listed with the reason.
NO_REPOSITORY = "no repository"
NO_REPOSITORY_REASON = "on the roster, but no repository in ROOT (the assignment not accepted, or not cloned)"
STATUS_ORDER = CLASS_STATUSES + (NO_REPOSITORY,)
def _number(value):
    value = float(value)
    return int(value) if value.is_integer() else round(value, 4)


def fmt_number(value):
    return f"{_number(value):g}" if isinstance(value, (int, float)) else str(value)


def _dict(value):
    return value if isinstance(value, dict) else {}


def _visibility(test):
    return test.get("visibility") if test.get("visibility") in ("visible", "hidden") else "hidden"


class Row:
    """One student: the manifest entry and the parsed results.json (or None)."""

    def __init__(self, student, entry, data):
        self.student = student
        self.entry = entry
        self.status = entry.get("status", OK)
        if self.status == OK and entry.get("unchanged_stubs") is True:  # run.json of an older grader
            self.status = NO_WORK
        self.reason = entry.get("reason", "") or (NO_WORK_REASON if self.status == NO_WORK else "")
        self.data = _dict(data)
        tests = self.data.get("tests")
        self.tests = [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []
        self.total = number(self.data.get("score"))
        self.max_score = number(self.data.get("max_score"))
        extra = _dict(self.data.get("extra_data"))
        self.flags = text_list(extra.get("flags"))
        # tests the grader's own code failed to check (not graded): "type at where" each
        self.grader_faults = [f"{fault.get('type', '?')} at {fault.get('where') or '?'}" for fault in
                              (_dict(_dict(test.get("extra_data")).get("grader_fault")) for test in self.tests) if fault]
        self.lang = extra.get("lang") if isinstance(extra.get("lang"), str) else "en"
        self.seed = extra.get("seed", entry.get("seed"))
        self.isolation = _dict(extra.get("isolation"))
        self.lab = _dict(extra.get("lab"))
        # The graded commit: the results file's record, else run.json's (a zero
        # report of an older grader may lack it).
        self.commit = _dict(extra.get("submission_commit")) or _dict(entry.get("submission_commit"))
        self.deadline = as_text(self.commit.get("deadline"))   # the one that applied to this student
        self.extension = self.commit.get("extension") is True   # their own deadline, not the class's
        # With a late policy: the late work, its days and penalty, and the score that counts.
        self.late_work = _dict(extra.get("late_work")) or _dict(entry.get("late_work"))
        counted = extra.get("counted_score", entry.get("counted_score"))
        self.counted_score = number(counted) if isinstance(counted, (int, float)) and not isinstance(counted, bool) \
            else None
        modules = {}
        for test in self.tests:
            module = module_of(test)
            score, maximum = modules.get(module, (0.0, 0.0))
            modules[module] = (score + number(test.get("score")), maximum + number(test.get("max_score")))
        self.modules = modules
        self.out_of = self.max_score   # the assignment's full marks, once every row is read (load_rows)
        self.roster = None             # with a roster: its record of this student (load_rows)
        self.on_roster = None          # with a roster: whether this folder is a roster student's
        self.roster_order = 0          # with a roster: the student's place on it

    @property
    def no_work(self):
        """Graded, but the modules are the template's stubs: 0, and kept out of every statistic."""
        return self.status == NO_WORK

    @property
    def graded(self):
        """The grading completed: the results hold the tests (the template's stubs' too)."""
        return self.status in (OK, NO_WORK)

    @property
    def counted(self):
        """In the class's statistics: graded, with work of the student's own."""
        return self.status == OK

    @property
    def folder_only(self):
        """A folder of ROOT with nothing of a student in it: no submission files, or a
        repository without a single commit (a late student's repository has commits)."""
        later = self.commit.get("later_commits")
        return self.status == NO_SUBMISSION or (self.status == NO_COMMIT and not later)

    @property
    def shown_status(self):
        return self.status

    @property
    def absent(self):
        """A student on the roster without a repository: no folder, no grade."""
        return self.status == NO_REPOSITORY

    @property
    def known_as(self):
        """The student's name on the roster (else its identifier), '' without a roster."""
        return as_text((self.roster or {}).get("name") or (self.roster or {}).get("identifier"))


def load_rows(output_dir, manifest):
    rows = []
    for student in sorted(manifest.get("students", {})):
        entry = manifest["students"][student]
        data = load(pathlib.Path(output_dir) / student / "results.json")
        if data is None:
            if entry.get("status", OK) in (OK, NO_WORK):
                entry = dict(entry, status=CRASHED, reason=f"{student}/results.json is missing or unreadable")
        rows.append(Row(student, entry, data))
    rows += _roster(rows, manifest.get("roster"))
    full = assignment_max(rows)
    for row in rows:   # every output shows a score out of the assignment's full marks ("0 / 100", never "0 / 0")
        row.out_of = full if full is not None else row.max_score
    return rows


def _roster(rows, recorded):
    """Map each row to its roster student (``--roster``); returns a row for each roster
    student without a repository."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("students"), list):
        return []
    students = [student for student in recorded["students"] if isinstance(student, dict)]
    order = {id(student): place for place, student in enumerate(students)}
    by_folder = {student.get("folder"): student for student in students if student.get("folder")}
    for row in rows:
        row.roster, row.on_roster = by_folder.get(row.student), row.student in by_folder
        row.roster_order = order[id(row.roster)] if row.roster else len(students)
    absent = []
    for student in students:
        if not student.get("folder"):
            row = Row(as_text(student.get("identifier")), {"status": NO_REPOSITORY, "reason": NO_REPOSITORY_REASON},
                      None)
            row.roster, row.on_roster, row.roster_order = student, True, order[id(student)]
            absent.append(row)
    return absent


def test_columns(rows, lang="en"):
    """``[(key, info)]`` for every graded test, in the grader's order; info has
    ``name`` (a title in ``lang`` where a student was graded in it), ``module``,
    ``visibility``, ``max_score``. Grader pseudo-tests (module ``grader``) are
    statuses, not tests, and get no column."""
    columns, seen = [], {}
    for row in rows:
        if not row.graded:
            continue
        for test in row.tests:
            module = module_of(test)
            if module == "grader":
                continue
            key = test_key(test)
            visibility = _visibility(test)
            existing = seen.get(key)
            if existing is not None and existing["visibility"] != visibility:
                key = f"{key}@{visibility}"
                existing = seen.get(key)
            if existing is None:
                info = {"name": as_text(test.get("name", key)), "module": module, "visibility": visibility,
                        "max_score": number(test.get("max_score")), "lang": row.lang}
                seen[key] = info
                columns.append((key, info))
            elif existing["lang"] != lang and row.lang == lang:  # titles in the reader's language
                existing.update(name=as_text(test.get("name", key)), lang=lang)
    order = list(active_assignment.current().modules) + [optional_module()]
    columns.sort(key=lambda item: order.index(item[1]["module"]) if item[1]["module"] in order else len(order))
    return columns


def row_tests(row, columns):
    """key -> test dict for one student (same keying as :func:`test_columns`)."""
    keys = {key for key, _ in columns}
    found = {}
    for test in row.tests:
        key = test_key(test)
        if key in found or (key not in keys and f"{key}@{_visibility(test)}" in keys):
            key = f"{key}@{_visibility(test)}"
        found[key] = test
    return found


def module_columns(rows):
    modules = list(active_assignment.current().modules)
    if any(optional_module() in row.modules for row in rows):
        modules.append(optional_module())
    return modules


# -- statistics --------------------------------------------------------------------------------
def counted(rows):
    """The students every statistic counts (pass rates, distribution, means, charts):
    graded, with work of their own. The rest is listed once with its reason."""
    return [row for row in rows if row.counted]


def left_out(rows):
    """Every folder the statistics leave out, in the order of the statuses."""
    return sorted((row for row in rows if not row.counted),
                  key=lambda row: (STATUS_ORDER.index(row.status) if row.status in STATUS_ORDER else len(STATUS_ORDER),
                                   row.student))


def students(rows):
    """The rows that are students (the folders without anything of a student are not; a roster
    student without a repository is)."""
    return [row for row in rows if not row.folder_only]


def repositories(rows):
    """The students with a folder of their own in ROOT."""
    return [row for row in students(rows) if not row.absent]


def assignment_max(rows):
    """The assignment's full marks in this run: what a completed grade says (every
    graded student has the same), None where nobody was graded."""
    found = [row.max_score for row in rows if row.graded and row.max_score]
    return max(found) if found else None


def pass_rates(rows, columns):
    """``[(key, info, passed, graded)]`` over the students whose grading completed
    and who changed the stubs (no work since the template says nothing about a test)."""
    graded = [row_tests(row, columns) for row in counted(rows)]  # once per student, not per column
    table = []
    for key, info in columns:
        passed = sum(1 for tests in graded if tests.get(key, {}).get("status") == "passed")
        table.append((key, info, passed, len(graded)))
    return table


BIN_WIDTH = 10


def distribution(rows):
    """``(edges, counts)`` over 0..100 in 10-point bins, of the counted students: bin i holds
    edges[i] <= total < edges[i + 1], the top bin is closed (90..100 holds 100;
    the optional lab credit may lift a total above 100: it lands there too)."""
    top = max([row.max_score for row in rows if row.graded] + [100.0])
    top = BIN_WIDTH * math.ceil(top / BIN_WIDTH)
    edges = list(range(0, int(top) + 1, BIN_WIDTH))
    counts = [0] * (len(edges) - 1)
    for row in counted(rows):
        counts[min(len(counts) - 1, max(0, int(row.total // BIN_WIDTH)))] += 1
    return edges, counts


def bin_label(low, high, last=False):
    return f"{low:g}–{high:g}" if last else f"{low:g}–<{high:g}"


def bin_labels(edges):
    return [bin_label(low, high, index == len(edges) - 2) for index, (low, high) in enumerate(zip(edges, edges[1:]))]


def test_title(info):
    """A test as the reports name it: its title without the module prefix."""
    return title_of(info["name"], info["module"])


def summary_stats(rows):
    """Mean, median... over the counted students ({} when there is none)."""
    rows = counted(rows)
    totals = [row.total for row in rows]
    if not totals:
        return {}
    core_max = max([sum(x for m, (_, x) in row.modules.items() if m != optional_module())
                    for row in rows] or [0.0])
    return {"students": len(totals), "mean": statistics.fmean(totals), "median": statistics.median(totals),
            "stdev": statistics.pstdev(totals) if len(totals) > 1 else 0.0,
            "min": min(totals), "max": max(totals), "core_max": core_max,
            "full": sum(1 for row in rows if core_max and row.total >= core_max),
            "zero": sum(1 for total in totals if total == 0)}


def module_means(rows):
    """``{module: mean % of the module}`` over the counted students who have it."""
    means = {}
    for module in module_columns(rows):
        fractions = [row.modules[module][0] / row.modules[module][1] for row in counted(rows)
                     if module in row.modules and row.modules[module][1]]
        means[module] = 100.0 * statistics.fmean(fractions) if fractions else 0.0
    return means
