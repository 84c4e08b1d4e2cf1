"""What confined a submission: the boxes' reports, combined into one, and
what a box would get on this machine (a probe box that runs no student code).

Each box reports what held for it (:func:`autograder.sandbox.confine.confinement.confine`);
a grade shows the weakest: it is ``confined`` only when every box was. A box can
be ``confined`` with a layer missing (a minimal root stands in for the syscall
filter's refusal of pathname sockets, Landlock's TCP rule for a network
namespace): the combined report then names it in ``missing_layers``, and every
summary of it says so, never a bare "confined".
"""
from autograder import active_assignment

KEYS = ("root", "fs", "syscalls", "network", "signals", "process_namespace", "uid", "scratch", "memory", "cpu")
MAX_PROBLEMS = 12
# (layer, the report's key, whether its value shows the layer held); a key a
# report lacks (another platform, an older grader) is not judged.
LAYERS = (
    ("minimal root", "root", lambda value: str(value).startswith("minimal")),
    ("Landlock", "fs", lambda value: str(value).startswith("Landlock")),
    ("syscall filter", "syscalls", lambda value: str(value).startswith("seccomp")),
    ("network namespace", "network", lambda value: str(value).startswith("none")),
    ("process namespace", "process_namespace", lambda value: value is True),
    ("cgroup", "memory", lambda value: str(value).startswith("cgroup")),
)


def missing_layers(report):
    """The layers ``report`` (one box's) shows as absent, in ``LAYERS``' order."""
    return [layer for layer, key, held in LAYERS if key in report and not held(report[key])]


def combine(reports):
    """One report from many (``{}`` when no student code ran)."""
    reports = [report for report in reports if isinstance(report, dict) and report]
    if not reports:
        return {}
    combined = {"confined": all(report.get("confined") is True for report in reports),
                "clean_process": all(report.get("clean_process") is True for report in reports)}
    for key in KEYS:
        values = []
        for report in reports:
            value = report.get(key)
            if value not in values:
                values.append(value)
        if all(isinstance(value, bool) for value in values):
            combined[key] = all(values)
        else:
            combined[key] = " / ".join(str(value) for value in values)
    problems = []
    for report in reports:
        for problem in report.get("problems") or []:
            if problem not in problems:
                problems.append(str(problem)[:300])
    combined["problems"] = problems[:MAX_PROBLEMS]
    missing = {layer for report in reports for layer in missing_layers(report)}
    combined["missing_layers"] = [layer for layer, _key, _held in LAYERS if layer in missing]
    return combined


def summary(report):
    """One line for people: what held, or why the code ran unconfined."""
    if not report:
        return "no student code ran"
    parts = [f"{key}: {report.get(key)}" for key in KEYS if key in report]
    missing = report.get("missing_layers")
    if missing is None:  # one box's report, or one from before the list existed
        missing = missing_layers(report)
    head = "NOT CONFINED" if not report.get("confined") else \
        f"confined, but without: {', '.join(missing)}" if missing else "confined"
    return f"{head} ({'; '.join(parts)})"


def probe_isolation(boxes, limits):
    """What a box would get on this machine, found by starting one that runs no
    student code (grade-many asks before grading a class)."""
    return start_probe(boxes, limits).result()


class _Probe:
    """A probe box asked for: it confines itself while the caller goes on."""

    def __init__(self, boxes, limits):
        import tempfile

        from autograder.intake import submission
        from autograder.sandbox import boxes as box_factories, uids
        from autograder.sandbox.confine import platforms
        # Here, not at the top: the reports read this module's layer names and
        # the client imports torch, which a class report must not load.
        from autograder.sandbox.client import box_config

        self._area = self._box = self._report = self._error = None
        self._boxes = boxes
        try:
            self._area = tempfile.TemporaryDirectory(prefix="autograder-probe-")
            uid = uids.allocate(1)[0]
            area = self._area.name
            specs, _ = submission.take(area, area, uid, uid)  # an empty submission: nothing to read
            first = active_assignment.current().modules[0]
            config = box_config(specs[first], first, limits, probe=True)
            if isinstance(boxes, box_factories.SpawnBoxes):
                self._report = platforms.wrap_command([], config)[1]
            else:
                self._box = boxes.request_box(config)
        except Exception as exc:  # noqa: BLE001 - given back by result()
            self._error = exc

    def result(self):
        """The probe box's isolation report (raises what starting it raised)."""
        try:
            if self._error is not None:
                raise self._error
            if self._box is not None:
                box, self._box = self._box, None
                box = self._boxes.finish_box(box, 60.0)
                box.close()
                self._report = box.isolation
            return self._report
        finally:
            self.close()

    def close(self):
        if self._box is not None:
            self._box.close()
            self._box = None
        if self._area is not None:
            self._area.cleanup()


def start_probe(boxes, limits):
    """Ask for a probe box now; :meth:`_Probe.result` waits for its report."""
    return _Probe(boxes, limits)
