"""Each student's progress before the deadline, read from the history ``grade-many --history``
writes (``DIR/<student>/history.json``, :mod:`autograder.batch.history`): their score over time,
the class's progress per module over time, and who is stuck.

**Who is stuck**: a student short of full marks whose score has not risen over their last
three commits, or for two days up to the end of the history (the deadline, else the run),
counted from their last rise (their first commit is one). The diagnosis they are stuck on is
the one of their latest commit that has stood longest (a mistake before a TODO not written
yet); how long is the time and the commits since the last rise. A student who has written
nothing yet (every diagnosis a TODO not written, never a point) is not stuck but not started.
Most stuck first: the longest time, then the most commits.
"""
import dataclasses
import datetime
import json
import pathlib

from autograder.intake import safe_files
from autograder.class_reports.over_time.results_files import number

HISTORY_JSON = "history.json"
MAX_HISTORY_BYTES = 32 * 2**20
STUCK_COMMITS = 3
STUCK_TIME = datetime.timedelta(days=2)
MAX_DAYS_SHOWN = 120   # the class's progress: one point a day, at most this many (the last ones)


@dataclasses.dataclass
class Point:
    sha: str
    when: datetime.datetime
    score: object      # None: a module of this commit could not be graded
    max_score: object
    modules: dict      # module -> {"score", "max_score", "diagnosis"} or None


@dataclasses.dataclass
class Stuck:
    student: str
    score: float
    max_score: float
    since: datetime.datetime   # the last rise
    commits: int               # commits since the last rise
    span: datetime.timedelta   # from the last rise to the end of the history
    module: str = ""
    diagnosis: dict = dataclasses.field(default_factory=dict)
    diagnosis_since: datetime.datetime = None
    points: list = dataclasses.field(default_factory=list)


def _point(raw):
    try:
        when = datetime.datetime.fromisoformat(str(raw["committed_at"]))
    except (KeyError, TypeError, ValueError):
        return None
    score, maximum = raw.get("score"), raw.get("max_score")
    modules = raw.get("modules") if isinstance(raw.get("modules"), dict) else {}
    return Point(str(raw.get("sha", "")), when, number(score) if score is not None else None,
                 number(maximum) if maximum is not None else None,
                 {str(module): grade if isinstance(grade, dict) else None for module, grade in modules.items()})


def load(output_dir, students):
    """``{student: [Point]}`` (oldest first) of the students whose history was written."""
    found = {}
    for student in students:
        try:
            data = json.loads(safe_files.read_text(str(pathlib.Path(output_dir) / student / HISTORY_JSON),
                                                   MAX_HISTORY_BYTES))
        except (OSError, ValueError, RecursionError):
            continue
        commits = data.get("commits") if isinstance(data, dict) and isinstance(data.get("commits"), list) else []
        points = [point for point in (_point(raw) for raw in commits if isinstance(raw, dict)) if point is not None]
        found[student] = sorted(points, key=lambda point: point.when)
    return found


def end_of(manifest, histories):
    """When the history ends: the deadline when there is one, else when the run finished (else
    the last commit)."""
    for text in ((manifest.get("deadline") or {}).get("deadline") if isinstance(manifest.get("deadline"), dict)
                 else None, manifest.get("finished")):
        try:
            return datetime.datetime.fromisoformat(str(text))
        except (TypeError, ValueError):
            continue
    return max((point.when for points in histories.values() for point in points),
               default=datetime.datetime.now(datetime.timezone.utc))


def _full(grade):
    return isinstance(grade, dict) and number(grade.get("max_score")) > 0 and \
        number(grade.get("score")) >= number(grade.get("max_score"))


def _standing(points, modules):
    """``(module, diagnosis, since)``: of the latest commit's diagnoses, the one that has stood
    longest (a mistake before a TODO not written yet), or ``("", {}, None)``."""
    latest = points[-1].modules
    best = ("", {}, None, (True, 0))
    for module in modules:
        diagnosis = (latest.get(module) or {}).get("diagnosis")
        if not isinstance(diagnosis, dict):
            continue
        same = [point for point in points if ((point.modules.get(module) or {}).get("diagnosis") or {}).get("todo")
                == diagnosis.get("todo")]
        run = 0
        for point in reversed(points):
            if point not in same:
                break
            run += 1
        since = points[len(points) - run].when
        rank = (diagnosis.get("unwritten") is True, -run)
        if best[2] is None or rank < best[3]:
            best = (module, diagnosis, since, rank)
    return best[:3]


def stuck(histories, end, modules):
    """``[Stuck]``: who is stuck at ``end``, most stuck first (see the module's docstring)."""
    found = []
    for student, points in histories.items():
        scored = [point for point in points if point.score is not None]
        if not scored or (scored[-1].max_score and scored[-1].score >= scored[-1].max_score):
            continue
        best, rise = -1.0, 0
        for index, point in enumerate(scored):
            if point.score > best:
                best, rise = point.score, index
        module, diagnosis, since = _standing(scored, modules)
        if best <= 0 and all(((point.modules.get(m) or {}).get("diagnosis") or {}).get("unwritten") is True
                             for point in scored for m in modules if (point.modules.get(m) or {}).get("diagnosis")):
            continue   # nothing written yet: not started, not stuck
        after, span = len(scored) - 1 - rise, end - scored[rise].when
        if after >= STUCK_COMMITS or span >= STUCK_TIME:
            found.append(Stuck(student, scored[-1].score, scored[-1].max_score or 0.0, scored[rise].when, after,
                               span, module, diagnosis, since, scored))
    return sorted(found, key=lambda item: (-item.span, -item.commits, item.student))


def progress(histories, end, modules):
    """``(days, {module: [share of students with that module full at the end of each day]})``
    over every student with a history; a student counts from their first commit on (as not
    full before it)."""
    points = [point for history in histories.values() for point in history]
    if not points:
        return [], {}
    zone = end.tzinfo
    first = min(point.when for point in points).astimezone(zone).date()
    last = max(end.astimezone(zone).date(), max(point.when for point in points).astimezone(zone).date())
    days = [first + datetime.timedelta(days=n) for n in range((last - first).days + 1)][-MAX_DAYS_SHOWN:]
    shares = {module: [] for module in modules}
    for day in days:
        close = datetime.datetime.combine(day, datetime.time.max, zone)
        states = [next((point for point in reversed(history) if point.when <= close), None)
                  for history in histories.values()]
        for module in modules:
            full = sum(1 for state in states if state is not None and _full(state.modules.get(module)))
            shares[module].append(full / len(histories))
    return days, shares
