"""What the class got wrong: the students grouped by their diagnosis.

Each graded student's results carry, per module, the first thing to fix
(``extra_data.diagnosis``: the TODO, the test that shows it and the feedback
the student read; :mod:`autograder.judging.feedback`). Students with the same
module, TODO and test made the same kind of mistake in one mechanism: one group,
with how many students, the feedback each read (the same words for most), and
who they are. A module that failed as a whole (it does not import, it is missing)
groups by that reason instead: a syntax error is no mistake in the mechanism whose
test happened to meet it first. The largest group first; only the students in the statistics
(a student who never started would fill every group with "not written yet"). A diagnosis whose
TODO is not written yet (its stub still raises; ``unwritten`` in the diagnosis, recorded by
:mod:`autograder.batch.jobs`) says where a student is, not what they got wrong: those groups
are listed apart, after the mistakes.
"""
import collections
import dataclasses

from autograder.i18n import _, render
from autograder.i18n import text as t
from autograder.class_reports.class_report import module_columns, title_of
from autograder.class_reports.over_time.results_files import todo_name
from autograder.class_reports.vocabulary import listed
from autograder.reports.html_page import esc, esc_block, table
from autograder.reports.safe_text import markdown_code, markdown_text


# Why a whole module failed (autograder.judging.feedback's MODULE_ERRORS), as the groups say it.
PROBLEMS = {"import": _("the file does not import, so every test of it fails"),
            "missing": _("the file is missing or could not be read"),
            "sandbox": _("no sandbox could be started for it (not the student's mistake)"),
            "budget": _("it used up its time budget, so later tests were not run")}


@dataclasses.dataclass
class Group:
    module: str
    todo: object        # the TODO number (None: code the stub gives)
    test: str           # the title of the test that shows the mistake (the mechanism); "" for a problem
    problem: str = ""   # a key of PROBLEMS: the whole module failed for that reason
    unwritten: bool = False   # the TODO is not written yet: no mistake
    feedback: dict = dataclasses.field(default_factory=dict)   # message -> [(row index, student)]

    @property
    def students(self):
        return [who for members in self.feedback.values() for who in members]

    def most_read_first(self):
        return sorted(self.feedback.items(), key=lambda item: (-len(item[1]), item[0]))


def _todo(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def group(rows):
    """``[Group]`` of the counted students, most students first."""
    groups = {}
    for index, row in enumerate(rows):
        if not row.counted:
            continue
        extra = row.data.get("extra_data") if isinstance(row.data.get("extra_data"), dict) else {}
        diagnosis = extra.get("diagnosis") if isinstance(extra.get("diagnosis"), dict) else {}
        for module, entry in diagnosis.items():
            if not isinstance(entry, dict):
                continue
            problem = entry.get("problem") if entry.get("problem") in PROBLEMS else ""
            key = (str(module), _todo(entry.get("todo")), "" if problem else title_of(entry.get("test"), module),
                   problem, not problem and entry.get("unwritten") is True)
            found = groups.setdefault(key, Group(*key))
            found.feedback.setdefault(str(entry.get("message") or ""), []).append((index, row.student))
    order = {module: place for place, module in enumerate(module_columns(rows))}
    return sorted(groups.values(), key=lambda g: (-len(g.students), order.get(g.module, len(order)),
                                                  g.todo or 0, g.problem, g.test))


def shown_by(found, lang, shown):
    """The line under a group's heading: the test that shows the mistake, or why the whole
    module failed. ``shown`` escapes a test's title for the page."""
    if found.problem:
        return t("The whole module failed: {problem}.", lang, problem=render(PROBLEMS[found.problem], lang))
    return t("Shown by: {test}", lang, test=shown(found.test))


NOT_WRITTEN_NOTE = _("Where students have not written a TODO yet (its stub still raises NotImplementedError): "
                     "where they are, not a mistake.")


def _split(rows):
    groups = group(rows)
    return [g for g in groups if not g.unwritten], [g for g in groups if g.unwritten]


def wrong_html(rows, lang, anchor=lambda index: f"student-{index}"):
    """The section of report.html."""
    groups, unwritten = _split(rows)
    parts = ["<h2 id=\"wrong\">" + t("What the class got wrong", lang) + "</h2>"]
    if not groups and not unwritten:
        return parts[0] + "<p>" + t("No diagnosis: every counted student passed every test.", lang) + "</p>"
    parts.append("<p class=\"muted\">" + t(
        "The first thing to fix of each student, per module, grouped by the TODO and the test that shows it; the "
        "largest group first. Students left out of the statistics are not in it.", lang) + "</p>")
    if not groups:
        parts.append("<p>" + t("No mistake in what the counted students have written so far.", lang) + "</p>")
    for found in groups:
        count = len(found.students)
        parts.append("<section class=\"wrong\"><h3>" + t("{n} student(s)", lang, n=count)
                     + f" &middot; <code>{esc(found.module, 60)}</code> &middot; {esc(todo_name(found.module, found.todo, lang), 300)}</h3>"
                     + "<p>" + shown_by(found, lang, lambda test: f"<i>{esc(test, 300)}</i>") + "</p>")
        for message, members in found.most_read_first():
            links = listed([f'<a href="#{anchor(index)}">{esc(student, 200)}</a>' for index, student in members], lang)
            parts.append("<div class=\"feedback\"><p>" + t("Read by {n}: {students}", lang, n=len(members),
                                                            students=links)
                         + f"</p><pre>{esc_block(message, 3000, 30)}</pre></div>")
        parts.append("</section>")
    if unwritten:
        parts.append("<h3 id=\"not-written\">" + t("Not written yet", lang) + "</h3><p class=\"muted\">"
                     + NOT_WRITTEN_NOTE.render(lang) + "</p>")
        body = [[f"<code>{esc(found.module, 60)}</code>", esc(todo_name(found.module, found.todo, lang), 300),
                 str(len(found.students)),
                 listed([f'<a href="#{anchor(index)}">{esc(student, 200)}</a>' for index, student in found.students],
                        lang)] for found in unwritten]
        parts.append(table([t("Exercise module", lang), t("TODO", lang), t("Students", lang), t("Who", lang)], body,
                           numeric=(2,), attrs=' class="stack"'))
    return "\n".join(parts)


def wrong_markdown(rows, lang):
    """The section of report.md."""
    groups, unwritten = _split(rows)
    lines = ["## " + t("What the class got wrong", lang), ""]
    if not groups and not unwritten:
        return lines + [t("No diagnosis: every counted student passed every test.", lang), ""]
    lines += [t("The first thing to fix of each student, per module, grouped by the TODO and the test that shows "
                "it; the largest group first. Students left out of the statistics are not in it.", lang), ""]
    if not groups:
        lines += [t("No mistake in what the counted students have written so far.", lang), ""]
    for found in groups:
        how_many = t("{n} student(s)", lang, n=len(found.students))
        lines += [f"### {how_many} · {markdown_code(found.module)} · "
                  f"{markdown_text(todo_name(found.module, found.todo, lang), 300)}", "",
                  shown_by(found, lang, lambda test: markdown_text(test, 300)), ""]
        for message, members in found.most_read_first():
            names = listed([markdown_text(student, 200) for _, student in members], lang)
            read = t("Read by {n}: {students}", lang, n=len(members), students=names)
            quoted = [("  > " + markdown_text(line, 600)).rstrip() for line in message.splitlines()[:30]]
            lines += [f"- {read}", ""] + quoted + [""]
    if unwritten:
        lines += ["### " + t("Not written yet", lang), "", NOT_WRITTEN_NOTE.render(lang), ""]
        for found in unwritten:
            names = listed([markdown_text(student, 200) for _, student in found.students], lang)
            lines.append(f"- {markdown_code(found.module)} · {markdown_text(todo_name(found.module, found.todo, lang), 300)}"
                         f" · {t('{n} student(s)', lang, n=len(found.students))}: {names}")
        lines.append("")
    return lines


def counts(rows):
    """``{(module, todo, test or problem): students}``: the groups' sizes (tests and tools)."""
    return collections.OrderedDict(((g.module, g.todo, g.test or g.problem), len(g.students)) for g in group(rows)
                                   if not g.unwritten)

