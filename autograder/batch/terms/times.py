"""Times in the course's terms: a deadline is an ISO 8601 time with its zone, and a
time is shown in the zone of the deadline it is compared with."""
import datetime
import re

from autograder.i18n import _, render


class TermsError(ValueError):
    """A deadline, extension file, late policy or roster that cannot be used; the message
    says why (a :class:`~autograder.i18n.Message` where a TA of either language reads it)."""

    def render(self, lang=None):
        return render(self.args[0], lang) if self.args else ""

    def __str__(self):
        return str(self.render())


# A date with no time (extended or basic form), perhaps with a zone: not a deadline.
_DATE_ONLY = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(Z|z|[+-]\d{2}(?::?\d{2})?)?")
EXAMPLE_ZONE = "+08:00"


def parse_deadline(text, what="--deadline"):
    """``2026-12-15T23:59+08:00`` (ISO 8601 with a zone: ``Z`` or ``±HH:MM``) -> aware datetime.
    ``what`` names where the text came from in an error (an option, or a file and line).

    A date alone is refused: it would mean the start of that day, which is never what
    "due on the 1st" means; the error suggests the day's end in full."""
    value = str(text).strip()
    date_only = _DATE_ONLY.fullmatch(value)
    if date_only:
        year, month, day, zone = date_only.groups()
        zone = "Z" if zone in ("z", "Z") else zone or EXAMPLE_ZONE
        raise TermsError(_("{what} {value}: a date alone would mean the very start of that day (00:00). "
                           "Give the time it is due and its time zone, e.g. {example}.",
                           what=what, value=repr(text), example=f"{year}-{month}-{day}T23:59{zone}"))
    try:
        when = datetime.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        raise TermsError(_("{what} {value}: expected an ISO 8601 time with its zone, such as {example}.",
                           what=what, value=repr(text), example="2026-12-15T23:59+08:00")) from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise TermsError(_("{what} {value} has no time zone: add one, e.g. {example} or {utc}.",
                           what=what, value=repr(text), example=value + EXAMPLE_ZONE, utc=value + "Z"))
    return when


def iso(when, zone_of):
    """``when`` shown in the zone of ``zone_of`` (what the comparison means), seconds precision."""
    return when.astimezone(zone_of.tzinfo).isoformat(timespec="seconds")
