"""A late policy, declared once: ``[tool.autograder.late]`` in the course repository's
``pyproject.toml``, or ``--late-policy``::

    [tool.autograder.late]
    penalty_per_day = 0.1   # the share of the late score taken off per day late (0 to 1)
    max_days = 3            # how many days after a student's deadline still count

Days are whole started days after the student's deadline (their extension, else the
class's): a commit one second late is one day late, 24 hours and one second late two.
The late score is that of the student's last commit at or before the deadline plus
``max_days`` days; its penalty is ``min(1, days x penalty_per_day)`` of it, and the
counted score is the better of the on-time score and the late score after its penalty.
An unknown key, a missing one, a negative or non-numeric value stops the run before
grading, naming the key.
"""
import dataclasses
import datetime
import math

from autograder.batch.terms.times import TermsError
from autograder.i18n import _

TABLE = "[tool.autograder.late]"
KEYS = ("penalty_per_day", "max_days")
DAY_S = 86400
MAX_PYPROJECT_BYTES = 256 * 1024


@dataclasses.dataclass(frozen=True)
class LatePolicy:
    penalty_per_day: float
    max_days: int
    source: str = ""   # where it was declared: the pyproject.toml, or --late-policy

    def describe(self):
        """The policy as run.json and every results.json record it."""
        return {"penalty_per_day": self.penalty_per_day, "max_days": self.max_days, "source": self.source}

    def window_end(self, deadline):
        """The last moment a commit still counts as late work, for a student due at ``deadline``."""
        return deadline + datetime.timedelta(days=self.max_days)

    def days_late(self, when, deadline):
        """Whole started days from ``deadline`` to ``when`` (0 when on time)."""
        seconds = (when - deadline).total_seconds()
        return 0 if seconds <= 0 else math.ceil(seconds / DAY_S)

    def penalty(self, days):
        """The share of the late score taken off after ``days`` days late."""
        return round(min(1.0, days * self.penalty_per_day), 6)


def counted_score(on_time, late, penalty):
    """``(late after its penalty, counted score)``: the counted score is the better of the
    on-time score and the late score after its penalty (``late`` None: none to count)."""
    if late is None:
        return None, on_time
    after = round(late * (1.0 - penalty), 4)
    return after, max(on_time, after)


def from_table(table, where):
    """A :class:`LatePolicy` from a mapping of its keys; ``where`` names the declaration."""
    if not isinstance(table, dict):
        raise TermsError(_("{where}: the late policy must be a table of {keys}", where=where, keys=", ".join(KEYS)))
    for key in table:
        if key not in KEYS:
            raise TermsError(_("{where}: unknown key {key} (a late policy has {keys})", where=where, key=repr(key),
                               keys=", ".join(KEYS)))
    values = {}
    for key in KEYS:
        if key not in table:
            raise TermsError(_("{where}: the key {key} is missing (a late policy has {keys})", where=where,
                               key=repr(key), keys=", ".join(KEYS)))
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TermsError(_("{where}: {key} must be a number, not {value}", where=where, key=repr(key),
                               value=repr(value)))
        if value < 0:
            raise TermsError(_("{where}: {key} must not be negative ({value})", where=where, key=repr(key),
                               value=repr(value)))
        values[key] = value
    if values["penalty_per_day"] > 1:
        raise TermsError(_("{where}: 'penalty_per_day' is the share of the score taken off per day, at most 1 "
                           "(found {value})", where=where, value=repr(values["penalty_per_day"])))
    if float(values["max_days"]) != int(values["max_days"]):
        raise TermsError(_("{where}: 'max_days' counts whole days ({value} is not a whole number)", where=where,
                           value=repr(values["max_days"])))
    return LatePolicy(float(values["penalty_per_day"]), int(values["max_days"]), where)


def from_option(text):
    """``--late-policy penalty_per_day=0.1,max_days=3`` (or ``none``: no policy this run)."""
    if str(text).strip().lower() == "none":
        return None
    table = {}
    for part in str(text).replace(";", ",").split(","):
        if not part.strip():
            continue
        key, equals, value = part.partition("=")
        if not equals:
            raise TermsError(_("--late-policy {text}: expected KEY=VALUE pairs such as {example}", text=repr(text),
                               example="penalty_per_day=0.1,max_days=3"))
        try:
            number = float(value)
            table[key.strip()] = int(number) if number.is_integer() and "." not in value else number
        except ValueError:
            table[key.strip()] = value.strip()
    return from_table(table, "--late-policy")


def from_pyproject(path):
    """The policy the course repository's ``pyproject.toml`` declares, or None."""
    from autograder.toml_reader import tomllib

    from autograder.intake import safe_files

    try:
        raw = safe_files.read_regular(str(path), MAX_PYPROJECT_BYTES)
    except safe_files.UnsafeFile:
        return None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TermsError(_("{file}: not valid TOML ({error})", file=str(path), error=str(exc))) from None
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    settings = tool.get("autograder") if isinstance(tool.get("autograder"), dict) else {}
    if "late" not in settings:
        return None
    return from_table(settings["late"], f"{path} {TABLE}")
