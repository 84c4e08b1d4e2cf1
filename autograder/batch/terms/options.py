"""The terms of one run, from its command line and, for a re-grade (``--only``), from the run
it re-grades: the class's deadline and each student's extension, the late policy, the roster.

A re-grade keeps its word: it uses the deadline, extensions, policy and roster that
``run.json`` recorded, never changes the class's deadline, and changes the terms of the
students it grades only (a ``--deadline`` given with ``--only`` is their extension). The
options arrive as ``grade-many`` parsed them (an ``argparse.Namespace``); a problem is a
:class:`~autograder.batch.terms.times.TermsError` (the caller says it and exits 2).
"""
import dataclasses
import pathlib

from autograder import locations
from autograder.batch.terms import extensions as extension_file
from autograder.batch.terms import late_policy, roster as roster_file
from autograder.batch.terms.deadlines import PUSHED, DeadlineSpec, load_pushes
from autograder.batch.terms.times import TermsError, iso, parse_deadline

ONLY_EXTENSION = "--only --deadline"   # where an extension came from: a re-grade that gave one


@dataclasses.dataclass
class RunTerms:
    spec: object = None          # the DeadlineSpec (extensions and late policy inside), or None
    extensions: dict = dataclasses.field(default_factory=dict)   # as run.json records them
    policy: object = None        # the LatePolicy, or None
    roster: dict = None          # as run.json records it, or None


def resolve(args, recorded, chosen, students):
    """The :class:`RunTerms` of a run of ``chosen`` (of ``students``, ROOT's folders);
    ``recorded``: the run.json a re-grade keeps, else None."""
    spec, extensions = _deadline(args, recorded, chosen, students)
    policy = _late_policy(args, recorded, spec)
    if spec is not None:
        spec.late = policy
    return RunTerms(spec, extensions, policy, _roster(args, recorded, students))


def deadline_spec(args, recorded=None):
    """The :class:`DeadlineSpec` the options ask for (or the one ``recorded`` in run.json when
    re-grading without them), or None."""
    if args.deadline is None:
        if recorded and getattr(args, "only", None):
            args.deadline = recorded.get("deadline")
            args.deadline_source = recorded.get("source", "committed")
            args.pushes = args.pushes or recorded.get("pushes_file")
            args.also_latest = args.also_latest or bool(recorded.get("also_latest"))
        if args.deadline is None:
            if args.deadline_source != "committed" or args.pushes or getattr(args, "also_latest", False):
                raise TermsError("--deadline-source, --pushes and --also-latest need --deadline")
            return None
    when = parse_deadline(args.deadline)
    if args.deadline_source == "pushed":
        if not args.pushes:
            raise TermsError("--deadline-source pushed needs --pushes FILE (see docs/ta-guide.md)")
        return DeadlineSpec(when, PUSHED, load_pushes(args.pushes), str(pathlib.Path(args.pushes).resolve()))
    if args.pushes:
        raise TermsError("--pushes is only read with --deadline-source pushed")
    return DeadlineSpec(when)


def _deadline(args, keep, chosen, students):
    """``(spec, extensions)``: the run's deadline and the extensions run.json records
    (``{student: {"deadline", "source"}}``); ``--extensions FILE`` gives those of the
    students graded (checked whole against ``students``)."""
    recorded = (keep or {}).get("deadline") if keep else None
    extensions = dict((keep or {}).get("extensions") or {}) if keep else {}
    if getattr(args, "extensions", None):
        if args.deadline is None and not recorded:
            raise TermsError("--extensions needs --deadline: the class's deadline, which the extensions move for "
                             "the students they list")
        listed = extension_file.recorded(extension_file.load_extensions(args.extensions, students))
        for student in chosen:   # a re-grade changes the extensions of those it grades, no one else's
            extensions.pop(student, None)
            if student in listed:
                extensions[student] = listed[student]
    own = None
    if keep and args.deadline is not None:
        if not recorded:
            raise TermsError("--deadline with --only: this class was graded without a deadline; grade the whole "
                             "class with --deadline first (a re-grade never changes the class's deadline)")
        own = parse_deadline(args.deadline)
        args.deadline = None
    spec = deadline_spec(args, recorded)
    if own is not None:
        for student in chosen:
            if own == spec.when:
                extensions.pop(student, None)   # graded at the class's deadline again
            else:
                extensions[student] = {"deadline": iso(own, own), "source": ONLY_EXTENSION}
    if spec is None:
        return None, {}
    try:
        spec.extensions = {student: parse_deadline(entry["deadline"]) for student, entry in extensions.items()}
    except (TermsError, KeyError, TypeError):
        raise TermsError(f"run.json: an extension it records is not readable: {extensions!r:.200}") from None
    return spec, extensions


def _late_policy(args, keep, spec):
    """``--late-policy``, else what a re-grade's run.json recorded, else the course repository's
    ``[tool.autograder.late]``; None without one or without a deadline to be late for."""
    if getattr(args, "late_policy", None):
        policy = late_policy.from_option(args.late_policy)
        if policy is not None and spec is None:
            raise TermsError("--late-policy needs --deadline: late is after a deadline")
    elif keep:
        recorded = keep.get("late_policy")
        policy = late_policy.from_table({key: recorded[key] for key in late_policy.KEYS if key in recorded},
                                        recorded.get("source", "run.json")) if recorded else None
    else:
        policy = late_policy.from_pyproject(locations.REPO_ROOT / "pyproject.toml")
    return policy if spec is not None else None


def _roster(args, keep, students):
    """What run.json records of the roster (``--roster``, else a re-grade's recorded one), or None."""
    if not getattr(args, "roster", None):
        return (keep or {}).get("roster")
    return roster_file.recorded(args.roster, roster_file.load_roster(args.roster), students)
