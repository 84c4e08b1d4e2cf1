"""The class report's fixed words in the reader's language: statuses, the
severity of a flag, a test's visibility, how the code was confined, and the
reasons the batch gives for a folder it could not grade.

run.json and scores.csv keep the English words (data a script reads); report.md
and report.html show the same words translated, so all four name a student's
status from one vocabulary. The batch writes its reasons as English sentences
(and the sandbox its uid fact); the known ones are recognised here by their shape
and translated (an unknown one is shown as it is, like an unknown flag).
"""
import re

from autograder.i18n import _
from autograder.i18n.joining import clauses, listed, sentence, sentences  # noqa: F401  (the pages call vocabulary.*)
from autograder.class_reports.class_report import NO_REPOSITORY, STATUS_ORDER
from autograder.judging.results import CRASHED, NO_COMMIT, NO_SUBMISSION, NO_WORK, OK, TIMED_OUT

# The translations of the statuses (an English report shows the words themselves).
STATUS_WORDS = {
    OK: _("graded"),
    NO_WORK: _("no work since the template"),
    CRASHED: _("grading crashed"),
    TIMED_OUT: _("grading timed out"),
    NO_SUBMISSION: _("no submission"),
    NO_COMMIT: _("no commit before the deadline"),
    NO_REPOSITORY: _("no repository"),
}
assert set(STATUS_WORDS) == set(STATUS_ORDER)

# The badge of a flag: the English word itself, else the translation of these ids.
SEVERITY_WORDS = {"high": _("high severity"), "medium": _("medium severity"), "low": _("low severity"),
                  "info": _("for information")}
CONFINEMENT_WORDS = {"confined": _("code confined"), "NOT CONFINED": _("code NOT CONFINED"),
                     "unknown": _("confinement not recorded")}


def status(word, lang):
    """A status of run.json / scores.csv in ``lang``: the word itself in English, so
    every output names a status alike (an unknown word as it is)."""
    found = STATUS_WORDS.get(word)
    return found.render(lang) if found is not None and lang != "en" else str(word)


def severity(word, lang):
    found = SEVERITY_WORDS.get(word)
    return found.render(lang) if found is not None and lang != "en" else str(word)


def confinement(word, lang):
    """``isolation_view.status_word`` in ``lang`` (the word itself in English)."""
    found = CONFINEMENT_WORDS.get(word)
    return found.render(lang) if found is not None and lang != "en" else str(word)


def visibility(test, score, maximum, lang):
    """``(visible, 0/2)``: a failed test's visibility and points."""
    if test.get("visibility") == "visible":
        return _("(visible test, {score}/{maximum})", score=score, maximum=maximum).render(lang)
    return _("(hidden test, {score}/{maximum})", score=score, maximum=maximum).render(lang)


# (pattern on the batch's English reason, message): first match wins; named groups are the parameters.
_REASONS = (
    (r"no submission found: (?P<folder>.+?)/ at commit (?P<commit>\w+) has no exercises/ folder and none of "
     r"(?P<files>.+)", _("no submission found: {folder}/ at commit {commit} has no exercises/ folder and none of "
                         "{files}")),
    (r"no submission found: (?P<folder>.+?)/ has no exercises/ folder and none of (?P<files>.+)",
     _("no submission found: {folder}/ has no exercises/ folder and none of {files}")),
    (r"the repository has no commit", _("the repository has no commit")),
    (r"no commit on the default branch at or before (?P<when>\S+)",
     _("no commit on the default branch at or before {when}")),
    (r"no push on the default branch at or before (?P<when>\S+)",
     _("no push on the default branch at or before {when}")),
    (r"the push record has no entry for this folder", _("the push record has no entry for this folder")),
    (r"grading did not finish within (?P<seconds>\S+) s and was stopped",
     _("grading did not finish within {seconds} s and was stopped")),
    (r"grading was interrupted", _("grading was interrupted")),
    (r"not graded: the batch was interrupted", _("not graded: the batch was interrupted")),
    (r"\.git is a link or a file, not a folder: the repository was not read",
     _(".git is a link or a file, not a folder: the repository was not read")),
    (r"the git repository could not be read: (?P<error>.+)", _("the git repository could not be read: {error}")),
    (r"(?P<path>.+)/results\.json is missing or unreadable", _("{path}/results.json is missing or unreadable")),
    (r"the modules are the template's stubs", _("the modules are the template's stubs")),
    (r"not a git repository: graded as it is; no deadline could be checked",
     _("not a git repository: graded as it is; no deadline could be checked")),
    (r"on the roster, but no repository in ROOT \(the assignment not accepted, or not cloned\)",
     _("on the roster, but no repository in ROOT (the assignment not accepted, or not cloned)")),
)


# The sandbox's words for the uid student code ran as (autograder/sandbox/confine/confinement.py).
_UIDS = ((r"uid (?P<uid>\d+) of its own", _("a uid of its own ({uid})")),
         (r"the grading user's uid (?P<uid>\d+)", _("the grading user's uid {uid}")))


def uid(text, lang):
    """The uid fact of an isolation record in ``lang`` (as it is in English, or when unknown)."""
    return str(text) if lang == "en" or not text else recognised(str(text), _UIDS, lang)


def recognised(text, table, lang):
    """``text`` in ``lang`` where it has the shape of a pattern of ``table`` ((pattern, message)
    pairs; the pattern's named groups are the message's parameters), else as it is."""
    for pattern, message in table:
        found = re.fullmatch(pattern, text)
        if found:
            params = found.groupdict()
            if "files" in params:  # a list of file names: the language's commas
                params["files"] = listed(params["files"].split(", "), lang)
            return _(message.msgid, **params).render(lang)
    return text


def reason(text, lang):
    """One of the batch's reasons in ``lang``; parts joined by ``; `` are translated one by one."""
    if lang == "en" or not text:
        return text or ""
    whole = recognised(str(text), _REASONS, lang)
    if whole != text:
        return whole
    return clauses([recognised(part, _REASONS, lang) for part in str(text).split("; ")], lang)
