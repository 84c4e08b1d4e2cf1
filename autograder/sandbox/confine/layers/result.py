"""What one layer reports: applied, not available (why), failed (why), or
refused (the box must not run student code).

A result carries the words the isolation report shows for it, the problems to
list (in the words the report has always used), and the facts later layers and
the verdict read (:func:`autograder.sandbox.isolation.box_report`); no layer
writes the report itself.
"""
import dataclasses
import enum
import types


class Status(enum.Enum):
    APPLIED = "applied"              # the mechanism holds (perhaps with problems on the way)
    NOT_AVAILABLE = "not available"  # not here (platform, kernel, a test switched it off) or not needed
    FAILED = "failed"                # tried and refused by the kernel; the box goes on without it
    REFUSED = "refused"              # without it no student code may run: confinement stops here


@dataclasses.dataclass(frozen=True)
class LayerResult:
    layer: str
    status: Status
    words: str = ""                 # applied: what holds; otherwise why not
    problems: tuple[str, ...] = ()  # for the report's "problems", in order
    facts: types.MappingProxyType = dataclasses.field(  # what later layers and the verdict read
        default_factory=lambda: types.MappingProxyType({}))

    @property
    def held(self):
        return self.status is Status.APPLIED

    def fact(self, name, default=None):
        return self.facts.get(name, default)


def _result(layer, status, words, problems, facts):
    return LayerResult(layer, status, words, tuple(problems), types.MappingProxyType(dict(facts)))


def applied(layer, words="", problems=(), **facts):
    return _result(layer, Status.APPLIED, words, problems, facts)


def not_available(layer, why, problems=(), **facts):
    return _result(layer, Status.NOT_AVAILABLE, why, problems, facts)


def failed(layer, why, problems=(), **facts):
    return _result(layer, Status.FAILED, why, problems, facts)


def refused(layer, why, problems=(), **facts):
    return _result(layer, Status.REFUSED, why, problems, facts)
