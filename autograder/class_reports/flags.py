"""What a TA should make of each thing the class report flags: a severity and an action.

A flag is only useful if it says how much it matters and what to do next. The
tamper flags come from :mod:`autograder.intake.integrity` as English sentences; they
are recognised here by what they say (an unknown flag is ``medium``: read it).
The other facts (no confinement, no work since the template, commits after the
deadline, a self-reported lab credit, a similarity match) are turned into flags
of the same shape, so the class page lists them in one place, worst first.
"""
import dataclasses
import re

from autograder import active_assignment
from autograder.i18n import _, render
from autograder.reports import isolation_view
from autograder.class_reports.vocabulary import recognised
from autograder.similarity.display import shown_score

HIGH, MEDIUM, LOW, INFO = "high", "medium", "low", "info"
SEVERITIES = (HIGH, MEDIUM, LOW, INFO)


@dataclasses.dataclass(frozen=True)
class Flag:
    severity: str
    what: object   # a short name of the kind of flag (an i18n message)
    action: object  # what it means for the grade and what to check next (an i18n message)
    detail: object = ""   # the flag's own text (may name student files: escape it), or a message

    @property
    def rank(self):
        return SEVERITIES.index(self.severity)


# (pattern on the flag text, severity, what, action): first match wins.
_TAMPER_RULES = (
    (r"shadows a module or hooks into Python/pytest start-up", HIGH, _("start-up hook planted"),
     _("A file that Python or pytest runs on start-up was added. The grader ignores it (its own test copy, "
       "sandboxed imports), so the grade stands; but it is a deliberate attempt: read the file and talk to the student.")),
    (r"compiled file that does not match its source", HIGH, _("mismatching compiled file"),
     _("A .pyc that differs from its source can make tests pass that would fail. The grader does not load it; "
       "read the pair and ask the student why it is there.")),
    (r"^protected file exercises/tests/.* differs", LOW, _("edited public test"),
     _("The grade is unaffected: the grader uses its own copy of the tests. Look at the diff if the student asks "
       "why their local run disagreed.")),
    (r"^protected file \.github/workflows/.* differs", MEDIUM, _("edited workflow"),
     _("The score GitHub Classroom shows may come from the edited workflow; this grade does not. Compare the two "
       "and read the workflow's diff.")),
    (r"^protected file autograder/.* differs", MEDIUM, _("edited grader copy"),
     _("The student's copy of the grader was changed. This grade used the course's grader, so it stands; the "
       "Classroom score may not. Read the diff.")),
    (r"^protected file .* (differs|is missing)", LOW, _("template file changed"),
     _("A file the template protects was changed or removed. The grade uses the course's own copies; check the "
       "diff only if the student's local results disagree.")),
    (r"not part of the template", LOW, _("new file in a protected folder"),
     _("Ignored by the grader. Check it if it looks like an attempt to change how tests run.")),
    (r"classroom-manifest\.json", MEDIUM, _("integrity manifest missing or changed"),
     _("The repository's own integrity check cannot be trusted; this grade compared against the course's copy. "
       "Look at the repository's history of .github/.")),
)


# The tamper flags' own sentences (autograder.intake.integrity), for a reader of another language.
_DETAILS = (
    (r"(?P<path>.+?) shadows a module or hooks into Python/pytest start-up; remove it \(the grader must import the "
     r"real packages\)", _("{path} shadows a module or hooks into Python/pytest start-up; remove it (the grader must "
                           "import the real packages)")),
    (r"protected file (?P<path>.+) differs from the template", _("protected file {path} differs from the template")),
    (r"protected file (?P<path>.+) is missing", _("protected file {path} is missing")),
    (r"(?P<path>.+) is not part of the template \(new file in a protected folder\)",
     _("{path} is not part of the template (new file in a protected folder)")),
    (r"(?P<path>.+): a compiled file that does not match its source \(Python would run it instead of the source\)",
     _("{path}: a compiled file that does not match its source (Python would run it instead of the source)")),
    (r"(?P<path>.+) is missing: the repository's integrity cannot be checked",
     _("{path} is missing: the repository's integrity cannot be checked")),
    (r"(?P<path>.+) is missing or unreadable", _("{path} is missing or unreadable")),
    (r"(?P<path>.+) differs from the course's manifest", _("{path} differs from the course's manifest")),
)


def detail_text(flag, lang):
    """A flag's own text in ``lang`` where its shape is known, else as it is."""
    if not isinstance(flag.detail, str):
        return render(flag.detail, lang)
    return recognised(flag.detail, _DETAILS, lang) if flag.detail and lang != "en" else flag.detail


def tamper_flag(text):
    """A tamper flag's text as a :class:`Flag`."""
    for pattern, severity, what, action in _TAMPER_RULES:
        if re.search(pattern, text):
            return Flag(severity, what, action, text)
    return Flag(MEDIUM, _("integrity flag"), _("Not a kind this report knows: read the flag and the file it names."),
                text)


def row_flags(row, partners=()):
    """Every flag of one class-report row, worst first. ``partners``: the
    similarity matches of this student (dicts with ``module``, ``other``, ``score``)."""
    flags = [tamper_flag(text) for text in row.flags]
    if isolation_view.unconfined(row.isolation):
        problems = "; ".join(isolation_view.problems(row.isolation))
        flags.append(Flag(HIGH, _("code ran NOT CONFINED"),
                          _("The student's code ran without full OS isolation, so it could have changed its own "
                            "results. Re-grade this student on a machine that confines (as root, with Landlock)."),
                          problems))
    if row.no_work:
        flags.append(Flag(INFO, _("no work since the template"),
                          _("The modules are the template's stubs: nothing to grade, left out of every statistic and "
                            "chart. Check that the student pushed to the right repository."), ""))
    faults = getattr(row, "grader_faults", [])
    if faults:
        flags.append(Flag(HIGH, _("the grader failed"),
                          _("The grader's own code failed in {count} test(s) of this student: they are not graded "
                            "(left out of the score and of its maximum). Fix the grader where it failed, then grade "
                            "this student again.", count=len(faults)), "; ".join(dict.fromkeys(faults))[:600]))
    later = row.commit.get("later_commits")
    if isinstance(later, int) and not isinstance(later, bool) and later > 0:
        latest = row.commit.get("latest") if isinstance(row.commit.get("latest"), dict) else {}
        score = latest.get("score")
        scored = isinstance(score, (int, float)) and not isinstance(score, bool)
        flags.append(Flag(INFO, _("work after the deadline"),
                          _("{later} commit(s) after the graded one; the late policy counted the late work: see "
                            "Late work.", later=later) if row.late_work else
                          _("{later} commit(s) after the graded one were not counted; the latest one would score "
                            "{score} (graded beside, never counted).", later=later, score=f"{score:g}")
                          if scored else
                          _("{later} commit(s) after the graded one were not counted. Apply your late policy; "
                            "the latest commit's score is beside the graded one when graded with --also-latest.",
                            later=later), ""))
    earns = row.lab.get("earns_credit")
    if earns is True:
        flags.append(Flag(LOW, _("optional credit self-reported"),
                          _("The {module} record is consistent and plausible, not proven. Ask for a re-run if the "
                            "numbers look copied.", module=active_assignment.current().optional_module), ""))
    for partner in partners:
        # The check's own severity (one rule for classmates and references); older results: by kind.
        strong = partner.get("severity") == HIGH if partner.get("severity") in (HIGH, MEDIUM) else \
            bool(partner.get("framework")) or str(partner.get("other", "")).startswith("solutions/")
        flags.append(Flag(HIGH if strong else MEDIUM, _("similar code"),
                          _("Read the side-by-side page before acting: a score above the threshold is a reason "
                            "to look, never proof."),
                          _("{module}: {other} ({score})", module=str(partner.get("module")),
                            other=str(partner.get("other")), score=shown_score(partner.get("score", 0)))))
    return sorted(flags, key=lambda flag: flag.rank)


def worst(flags):
    return flags[0].severity if flags else ""
