"""Grading what was there at the deadline: which commit of a student's
repository counts, and a plain folder holding it.

Two ways to say which commit was "there" (``--deadline-source``):

- ``committed`` (default): the last commit on the default branch whose
  *committer* time is at or before the deadline, walking first parents from
  the branch head. Works offline on any clone; but the time is written by the
  student's machine (a wrong clock, or ``GIT_COMMITTER_DATE``, moves it).
- ``pushed``: the branch head after the student's last push at or before the
  deadline, from a file of push times recorded by the server (see
  :func:`autograder.batch.terms.deadlines.load_pushes`; the grade-class workflow builds it from GitHub's
  repository activity API). Needs that record, but a student cannot forge it.

A folder that is not a git repository is graded as it is, and marked so.
Nothing here changes the student's folder: see :mod:`autograder.batch.git_snapshot`.
"""
import dataclasses
import datetime
import pathlib

from autograder.batch import git_snapshot
from autograder.batch.terms.deadlines import (COMMITTED, PUSHED, SOURCES, WORKING_TREE, DeadlineSpec,  # noqa: F401
                                             load_pushes)
from autograder.batch.terms.times import EXAMPLE_ZONE, TermsError, iso, parse_deadline  # noqa: F401
from autograder.batch.jobs import CRASHED, NO_COMMIT

# What the course's terms say (the deadline, the push record, extensions, a late policy)
# is read in autograder/batch/terms/; here is which commit they make count.
DeadlineError = TermsError


def _from_timestamp(timestamp, deadline):
    return datetime.datetime.fromtimestamp(timestamp, tz=datetime.timezone.utc).astimezone(deadline.tzinfo)


def choose_committed(history, deadline):
    """The first ``(timestamp, sha)`` of a first-parent history (newest first) at or before ``deadline``."""
    limit = deadline.timestamp()
    return next(((ts, sha) for ts, sha in history if ts <= limit), None)


def choose_pushed(pushes, deadline):
    """``(sha, pushed_at)`` of the last push at or before ``deadline``, or None."""
    before = [(when, sha) for sha, when in pushes if when <= deadline]
    if not before:
        return None
    when, sha = max(before, key=lambda item: item[0])
    return sha, when


@dataclasses.dataclass
class Snapshot:
    """What to grade for one student under a deadline."""
    record: dict                  # extra_data.submission_commit
    tree: pathlib.Path = None     # exported graded commit (None: grade the folder as it is / nothing)
    latest_tree: pathlib.Path = None
    late_tree: pathlib.Path = None    # with a late policy: the last commit of the late window, exported
    status: str = ""              # '' (grade), NO_COMMIT, or CRASHED (unreadable repository)
    reason: str = ""
    notes: list = dataclasses.field(default_factory=list)


def default_branch(clone):
    """The branch a clone of the student's repository stands for: the remote's
    default (``origin/HEAD``, set by ``git clone``), else the checked-out branch."""
    for name, shown in (("refs/remotes/origin/HEAD", "origin/HEAD"), ("HEAD", "HEAD")):
        sha = git_snapshot.resolve(clone, name)
        if sha:
            return sha, shown
    return None, None


def take_snapshot(student_dir, student, spec, workdir, also_latest=False):
    """Export the commit that counts for ``student`` (and the branch head with
    ``also_latest``) under ``workdir``; never raises for a student's repository."""
    when = spec.when_for(student)
    record = {"deadline": iso(when, when), "source": spec.source}
    if student in spec.extensions:
        record.update(extension=True, class_deadline=iso(spec.when, spec.when))
    kind = git_snapshot.has_repository(student_dir)
    if kind is None:
        record.update(source=WORKING_TREE, note="not a git repository: graded as it is; no deadline could be checked")
        return Snapshot(record)
    if kind == "odd":
        return Snapshot(record, status=CRASHED,
                        reason=".git is a link or a file, not a folder: the repository was not read")
    base = pathlib.Path(workdir)
    try:
        clone = git_snapshot.sanitized_clone(student_dir, base / "clone.git")
        head, branch = default_branch(clone)
        if head is None:
            record.update(sha=None, later_commits=0)
            return Snapshot(record, status=NO_COMMIT, reason="the repository has no commit")
        record["branch"] = branch
        chosen = _choose(clone, head, student, spec, when, record)
        latest = {"sha": head, "committed_at": iso(_from_timestamp(git_snapshot.commit_timestamp(clone, head),
                                                                    when), when)}
        snapshot = Snapshot(record)
        if chosen is None:
            record.update(sha=None, later_commits=git_snapshot.count_commits(clone, None, head), latest=latest)
            snapshot.status, snapshot.reason = NO_COMMIT, _no_commit_reason(spec, student, when)
        else:
            record["later_commits"] = git_snapshot.count_commits(clone, record["sha"], head)
            snapshot.tree = base / "graded"
            snapshot.notes = git_snapshot.export_commit(clone, record["sha"], snapshot.tree)
            if head != record["sha"]:
                record["latest"] = latest
        if spec.late is not None and "latest" in record:
            snapshot.late_tree = _late_work(clone, head, student, spec, when, record, base / "late")
        if also_latest and "latest" in record:
            if snapshot.late_tree is not None and record["late"]["sha"] == head:
                record["latest"]["same_as"] = "late"    # graded once, as the late work
            else:
                snapshot.latest_tree = base / "latest"
                git_snapshot.export_commit(clone, head, snapshot.latest_tree)
        if snapshot.notes:
            record["notes"] = snapshot.notes
        return snapshot
    except git_snapshot.GitError as exc:
        return Snapshot(record, status=CRASHED, reason=f"the git repository could not be read: {exc}")


def _late_work(clone, head, student, spec, when, record, destination):
    """With a late policy: the last commit of the late window (``record["late"]``: its sha,
    times and days late), exported to ``destination``; None when there is no such commit
    after the graded one."""
    found = {}
    sha = _choose(clone, head, student, spec, spec.late.window_end(when), found)
    if sha is None or sha == record.get("sha"):
        return None
    arrived = datetime.datetime.fromisoformat(found.get("pushed_at") or found["committed_at"])
    record["late"] = dict(found, days=spec.late.days_late(arrived, when))
    git_snapshot.export_commit(clone, sha, destination)
    return destination


def _choose(clone, head, student, spec, when, record):
    """Fill ``record`` with the commit graded at ``when``; returns its sha, or None."""
    if spec.source == PUSHED:
        found = choose_pushed((spec.pushes or {}).get(student, []), when)
        if found is None:
            return None
        sha, pushed_at = found
        if git_snapshot.resolve(clone, sha) != sha:
            raise git_snapshot.GitError(f"the commit {sha[:12]} pushed at {iso(pushed_at, when)} is not "
                                        "in this clone (overwritten by a later force push? fetch it first)")
        record.update(sha=sha, pushed_at=iso(pushed_at, when),
                      committed_at=iso(_from_timestamp(git_snapshot.commit_timestamp(clone, sha), when), when))
        return sha
    found = choose_committed(git_snapshot.first_parent_history(clone, head), when)
    if found is None:
        return None
    timestamp, sha = found
    record.update(sha=sha, committed_at=iso(_from_timestamp(timestamp, when), when))
    return sha


def _no_commit_reason(spec, student, when):
    if spec.source == PUSHED and student not in (spec.pushes or {}):
        return "the push record has no entry for this folder"
    what = "push" if spec.source == PUSHED else "commit"
    return f"no {what} on the default branch at or before {iso(when, when)}"
