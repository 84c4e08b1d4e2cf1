"""What a grader change did: this run's grades beside an earlier run's (``grade-many ...
--compare OLD_DIR``), student by student and test by test.

``changes.csv`` has one row per student graded in both runs (``student, old_total, new_total,
delta, tests_changed``: the titles of the tests whose outcome flipped, ``; `` between them);
the pages' section says how many students changed, by how much, and which tests flipped
for how many. Both runs are read from their folders (run.json and each results.json), so a
re-grade or a merge shows the same comparison. ``grade-many`` grades with the old run's seed
unless told otherwise: a change of inputs is not mistaken for a change of the grader.
"""
import collections
import csv
import dataclasses
import io
import pathlib

from autograder.class_reports.over_time.results_files import load, number, shown, tests, title_of
from autograder.i18n import text as t
from autograder.reports.html_page import esc, table
from autograder.reports.safe_text import csv_cell, markdown_code, markdown_text

CHANGES_NAME = "changes.csv"
COLUMNS = ("student", "old_total", "new_total", "delta", "tests_changed")
SHOWN_STUDENTS = 40   # the section lists the largest changes; changes.csv has them all


@dataclasses.dataclass
class Change:
    student: str
    old: float
    new: float
    flipped: list   # [(title, passed before, passed now)]

    @property
    def delta(self):
        return round(self.new - self.old, 4)


@dataclasses.dataclass
class Comparison:
    old_dir: str
    old_grader: dict
    new_grader: dict
    old_seed: object
    new_seed: object
    changes: list   # [Change], by student

    @property
    def changed(self):
        return [change for change in self.changes if change.delta or change.flipped]

    def flips(self):
        """``[(title, to passed, to failed)]``: how many students each test flipped for, most first."""
        count = collections.Counter((title, now) for change in self.changes for title, _, now in change.flipped)
        titles = dict.fromkeys(title for title, _ in count)
        return sorted(((title, count[(title, True)], count[(title, False)]) for title in titles),
                      key=lambda item: (-(item[1] + item[2]), item[0]))


def compare(old_dir, old_manifest, new_dir, new_manifest):
    """The :class:`Comparison` of the students both runs graded (results files as they are now)."""
    changes = []
    for student in sorted(set(old_manifest.get("students") or {}) & set(new_manifest.get("students") or {})):
        old, new = load(pathlib.Path(old_dir) / student / "results.json"), load(pathlib.Path(new_dir) / student /
                                                                               "results.json")
        if old is None or new is None:
            continue
        before, now = tests(old), tests(new)
        flipped = [(title_of(now[key].get("name"), key.split("/")[0]), before[key].get("status") == "passed",
                    now[key].get("status") == "passed") for key in now
                   if key in before and (before[key].get("status") == "passed") != (now[key].get("status") == "passed")]
        changes.append(Change(student, number(old.get("score")), number(new.get("score")), flipped))
    return Comparison(str(old_dir), old_manifest.get("grader") or {}, new_manifest.get("grader") or {},
                      old_manifest.get("seed"), new_manifest.get("seed"), changes)


def render_csv(comparison):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for change in comparison.changes:
        writer.writerow([csv_cell(change.student), shown(change.old), shown(change.new), shown(change.delta),
                         csv_cell("; ".join(title for title, _, _ in change.flipped))])
    return out.getvalue()


def _grader(grader):
    commit = str(grader.get("commit") or "?")[:12]
    return f"{commit} / {str(grader.get('suites') or '?')[:12]}"


def summary(comparison, lang):
    """The section's first sentences: against what, graded by which graders, how many changed."""
    changed = comparison.changed
    up = sum(1 for change in changed if change.delta > 0)
    down = sum(1 for change in changed if change.delta < 0)
    text = [t("Compared with {folder}: graded by {old} (course commit / suites), now by {new}.", lang,
              folder=comparison.old_dir, old=_grader(comparison.old_grader), new=_grader(comparison.new_grader)),
            t("{changed} of {n} student(s) changed: {up} up, {down} down, {same} with the same total but another "
              "test outcome.", lang, changed=len(changed), n=len(comparison.changes), up=up, down=down,
              same=len(changed) - up - down)]
    if comparison.old_seed != comparison.new_seed:
        text.append(t("The seeds differ ({old} then {new}): a change may come from the inputs, not the grader.",
                      lang, old=comparison.old_seed, new=comparison.new_seed))
    return text


def _largest(comparison):
    return sorted(comparison.changed, key=lambda change: (-abs(change.delta), change.student))[:SHOWN_STUDENTS]


def section_html(comparison, lang, anchor_of=lambda student: ""):
    """The section of report.html (``anchor_of``: a student's view, or '' for none)."""
    parts = ["<h2 id=\"changes\">" + t("What the grader change did", lang) + "</h2>"]
    parts += [f"<p>{esc(sentence, 1000)}</p>" for sentence in summary(comparison, lang)]
    rows = []
    for change in _largest(comparison):
        name = esc(change.student, 200)
        link = anchor_of(change.student)
        rows.append([f'<a href="#{link}">{name}</a>' if link else name, shown(change.old), shown(change.new),
                     f"{change.delta:+g}", esc("; ".join(title for title, _, _ in change.flipped), 600) or "–"])
    if rows:
        parts.append(table([t("Student", lang), t("Before", lang), t("Now", lang), t("Change", lang),
                            t("Tests that flipped", lang)], rows, numeric=(1, 2, 3), attrs=' class="stack"'))
    flips = [[esc(title, 300), str(fixed), str(broken)] for title, fixed, broken in comparison.flips()]
    if flips:
        parts.append("<h3>" + t("Tests whose outcome flipped", lang) + "</h3>")
        parts.append(table([t("Test", lang), t("Now passed", lang), t("Now failed", lang)], flips, numeric=(1, 2)))
    parts.append("<p class=\"muted\">" + t("Every student is in {file}.", lang, file=f"<code>{CHANGES_NAME}</code>")
                 + "</p>")
    return "\n".join(parts)


def section_markdown(comparison, lang):
    """The section of report.md."""
    lines = ["## " + t("What the grader change did", lang), ""]
    lines += [line for sentence in summary(comparison, lang) for line in (markdown_text(sentence, 1000), "")]
    largest = _largest(comparison)
    if largest:
        lines += ["| " + " | ".join([t("Student", lang), t("Before", lang), t("Now", lang), t("Change", lang),
                                     t("Tests that flipped", lang)]) + " |", "| --- | ---: | ---: | ---: | --- |"]
        lines += [f"| {markdown_text(change.student, 200)} | {shown(change.old)} | {shown(change.new)} "
                  f"| {change.delta:+g} | {markdown_text('; '.join(title for title, _, _ in change.flipped), 600)} |"
                  for change in largest]
        lines.append("")
    flips = comparison.flips()
    if flips:
        lines += ["| " + " | ".join([t("Test", lang), t("Now passed", lang), t("Now failed", lang)]) + " |",
                  "| --- | ---: | ---: |"]
        lines += [f"| {markdown_text(title, 300)} | {fixed} | {broken} |" for title, fixed, broken in flips]
        lines.append("")
    return lines + [t("Every student is in {file}.", lang, file=markdown_code(CHANGES_NAME)), ""]
