"""A class's deadline as a run uses it (:class:`DeadlineSpec`: the class's time, which time
counts, the push record, each student's extension and the late policy) and the push record
it may be read against (:func:`load_pushes`)."""
import dataclasses
import datetime
import json
import re

from autograder.batch.terms.times import TermsError, iso, parse_deadline
from autograder.intake import safe_files

COMMITTED, PUSHED, WORKING_TREE = "committed", "pushed", "working tree"
SOURCES = (COMMITTED, PUSHED)
PUSHES_VERSION = 1
MAX_PUSHES_BYTES = 64 * 2**20
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _parse_time(value, where):
    if not isinstance(value, str):
        raise TermsError(f"{where}: pushed_at is not a string")
    try:
        return parse_deadline(value)
    except TermsError:
        raise TermsError(f"{where}: pushed_at {value[:40]!r} is not an ISO 8601 time with a zone") from None


def load_pushes(path):
    """The push record: ``{student folder: [(sha, pushed_at datetime), ...]}``.

    The file (JSON, strict)::

        {"version": 1,
         "pushes": {"course-alice": [{"sha": "<40 hex>", "pushed_at": "2026-12-15T15:58:03Z"}, ...],
                    ...}}

    One entry per push to the default branch: ``sha`` is the branch head after
    that push, ``pushed_at`` when the server received it (with a zone). Other
    keys (``ref``, ``activity_type``...) are allowed and ignored.
    """
    try:
        raw = safe_files.read_regular(str(path), MAX_PUSHES_BYTES)
        data = json.loads(raw.decode("utf-8"))
    except safe_files.UnsafeFile as exc:
        raise TermsError(f"--pushes {path}: {safe_files.describe(exc.kind, exc.detail)}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise TermsError(f"--pushes {path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != PUSHES_VERSION or not isinstance(data.get("pushes"), dict):
        raise TermsError(f"--pushes {path}: expected {{\"version\": {PUSHES_VERSION}, \"pushes\": {{folder: [...]}}}}")
    table = {}
    for student, pushes in data["pushes"].items():
        if not isinstance(pushes, list):
            raise TermsError(f"--pushes {path}: the pushes of {student!r} are not a list")
        rows = []
        for index, push in enumerate(pushes):
            where = f"--pushes {path}: {student!r}[{index}]"
            if not isinstance(push, dict) or not isinstance(push.get("sha"), str) \
                    or not _SHA.fullmatch(push["sha"].lower()):
                raise TermsError(f"{where}: needs a full hexadecimal 'sha'")
            rows.append((push["sha"].lower(), _parse_time(push.get("pushed_at"), where)))
        table[student] = rows
    return table


@dataclasses.dataclass
class DeadlineSpec:
    when: datetime.datetime       # the class's deadline
    source: str = COMMITTED
    pushes: dict = None           # student -> [(sha, datetime)] for PUSHED
    pushes_file: str = ""
    extensions: dict = dataclasses.field(default_factory=dict)   # student -> their own deadline
    late: object = None           # a LatePolicy (autograder.batch.terms.late_policy): its window is graded too

    def describe(self):
        """The class's deadline as run.json records it (the extensions are recorded beside)."""
        return {"deadline": iso(self.when, self.when), "source": self.source,
                **({"pushes_file": self.pushes_file} if self.source == PUSHED else {})}

    def when_for(self, student):
        """The deadline that applies to ``student``: their extension, else the class's."""
        return self.extensions.get(student, self.when)
