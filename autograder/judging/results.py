"""One results model; every report (terminal, results.json, classroom, job
summary, class CSV) is a view of a :class:`GradeReport`, so they cannot disagree."""
from dataclasses import asdict, dataclass, field

from autograder import active_assignment
from autograder.i18n import text as t

# What became of one student's grade in a class (grade-many's run.json, the class report).
OK, CRASHED, TIMED_OUT, NO_SUBMISSION = "ok", "crashed", "timed out", "no submission"
NO_COMMIT = "no commit before deadline"   # --deadline: nothing of the student's counts yet
STATUSES = (OK, CRASHED, TIMED_OUT, NO_SUBMISSION, NO_COMMIT)   # of a grade (a zero report's too)
# Graded, but every module is the template's stub as given: a grade of 0 that says nothing about a test.
NO_WORK = "no work since the template"
NO_WORK_REASON = "the modules are the template's stubs"
CLASS_STATUSES = (OK, NO_WORK) + STATUSES[1:]   # run.json, scores.csv and the class report, in this order
# A test's tag, and its extra_data key, where the grader's own code failed and it was not graded.
GRADER_FAULT = "grader_fault"


@dataclass
class TestResult:
    name: str
    module: str
    max_score: float
    score: float
    passed: bool
    output: str
    visibility: str = "hidden"   # 'visible' or 'hidden'
    test_id: str = ""
    duration: float = 0.0
    # What the diagnosis needs (autograder.judging.feedback); none of it leaves the judge
    # except through ``output`` and ``extra_data.diagnosis``.
    todo: int = 0          # the TODO this test exercises (0: none)
    blamed: int = 0        # the TODO its failure points at (0: none)
    hint: object = field(default=None, repr=False, compare=False)
    detail: object = field(default=None, repr=False, compare=False)
    error: object = field(default=None, repr=False, compare=False)   # sandbox StudentError
    # Not graded: the grader's own code failed during the test (autograder.judging.plugin).
    # {"type", "where", "message", "points"}: what it raised, where in our code, what the
    # test was worth; score and max_score are then 0, so no total counts it either way.
    fault: dict = None

    def to_gradescope(self):
        entry = {"name": self.name, "score": _number(self.score), "max_score": _number(self.max_score),
                 "status": "passed" if self.passed else "failed", "output": self.output,
                 "visibility": self.visibility, "tags": [self.module], "test_id": self.test_id}
        if self.fault:
            entry["tags"].append(GRADER_FAULT)
            entry["extra_data"] = {GRADER_FAULT: dict(self.fault, points=_number(self.fault.get("points", 0)))}
        return entry


def _fault(item):
    """A test's ``extra_data.grader_fault`` read back (None: graded)."""
    fault = (item.get("extra_data") or {}).get(GRADER_FAULT) if isinstance(item.get("extra_data"), dict) else None
    if not isinstance(fault, dict):
        return None
    return {"type": str(fault.get("type", ""))[:100], "where": str(fault.get("where", ""))[:300],
            "message": str(fault.get("message", ""))[:300], "points": _float(fault.get("points"))}


def _number(value):
    return int(value) if float(value).is_integer() else round(float(value), 4)


def _diagnosis(value):
    """extra_data.diagnosis read back: only well-formed entries."""
    if not isinstance(value, dict):
        return {}
    found = {}
    for module, entry in value.items():
        if isinstance(entry, dict) and isinstance(entry.get("todo"), int):
            found[str(module)] = {"todo": entry["todo"], "test": str(entry.get("test", "")),
                                  "message": str(entry.get("message", ""))}
            if isinstance(entry.get("problem"), str):
                found[str(module)]["problem"] = entry["problem"][:20]
    return found


def _not_run(value):
    """extra_data.hidden_not_run read back: module -> positive points, nothing else."""
    if not isinstance(value, dict):
        return {}
    return {str(module): _float(points) for module, points in value.items() if _float(points) > 0}


def _printed(value):
    """extra_data.printed read back: module -> {"bytes": int, "head": str, "more": bool}."""
    if not isinstance(value, dict):
        return {}
    return {str(module): {"bytes": int(_float(entry.get("bytes"))), "head": str(entry.get("head", ""))[:8192],
                          "more": entry.get("more") is True}
            for module, entry in value.items() if isinstance(entry, dict)}


def _float(value):
    """A score read back from a results file that may be old or hand-edited."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if number == number and abs(number) != float("inf") else 0.0


@dataclass
class GradeReport:
    tests: list
    seed: int
    submission: str = ""
    duration: float = 0.0
    flags: list = field(default_factory=list)      # tamper and integrity warnings
    notes: list = field(default_factory=list)      # e.g. "hidden tests not available"
    # What confined the student's code while it ran (autograder.sandbox.isolation):
    # {"confined": bool, "fs": ..., "network": ..., "signals": ..., "process_namespace": ...,
    #  "uid": ..., "scratch": ..., "clean_process": ..., "problems": [...]}; {} when no code ran.
    isolation: dict = field(default_factory=dict)
    # What the assignment's optional credit was judged on (e.g. a lab record), or {}.
    lab: dict = field(default_factory=dict)
    # module -> {"todo": int, "test": str, "message": str}: the first thing to fix
    # in each module that lost points (autograder.judging.feedback); absent at full marks.
    diagnosis: dict = field(default_factory=dict)
    lang: str = "en"
    # module -> points of its hidden tests that this grade did not run (a student
    # template has none; --visible-only skips them): the assignment description's HIDDEN_POINTS.
    # Empty when the hidden suites ran.
    hidden_not_run: dict = field(default_factory=dict)
    # module -> {"bytes": n, "head": its first lines, "more": bool}: what the student's code
    # printed (autograder.sandbox.printed); only modules that printed something.
    printed: dict = field(default_factory=dict)

    @property
    def score(self):
        return sum(test.score for test in self.tests)

    @property
    def max_score(self):
        return sum(test.max_score for test in self.tests)

    def by_module(self):
        """module -> (score, max_score), contract modules first."""
        table = {}
        for test in self.tests:
            score, maximum = table.get(test.module, (0.0, 0.0))
            table[test.module] = (score + test.score, maximum + test.max_score)
        assignment = active_assignment.current()
        order = [m for m in (*assignment.modules, assignment.optional_module) if m in table]
        return {module: table[module] for module in order + sorted(set(table) - set(order))}

    def grader_faults(self):
        """The tests the grader failed to check (not graded), in order."""
        return [test for test in self.tests if test.fault]

    def not_graded(self):
        """module -> the points of its tests the grader failed to check."""
        table = {}
        for test in self.grader_faults():
            table[test.module] = table.get(test.module, 0.0) + _float(test.fault.get("points"))
        return table

    def count(self, visibility):
        chosen = [test for test in self.tests if test.visibility == visibility]
        return sum(test.passed for test in chosen), len(chosen)

    def to_gradescope(self):
        visible_passed, visible_total = self.count("visible")
        hidden_passed, hidden_total = self.count("hidden")
        if hidden_total:
            summary = t("Visible tests passed: {visible_passed}/{visible_total}. Hidden tests passed: "
                        "{hidden_passed}/{hidden_total}.", self.lang, visible_passed=visible_passed,
                        visible_total=visible_total, hidden_passed=hidden_passed, hidden_total=hidden_total)
        else:  # not "0/0": the notes say why no hidden test ran
            summary = t("Visible tests passed: {visible_passed}/{visible_total}.", self.lang,
                        visible_passed=visible_passed, visible_total=visible_total)
        return {
            "score": _number(self.score), "max_score": _number(self.max_score),
            "output": "\n".join([summary] + self.notes
                                + [t("Warning: {flag}", self.lang, flag=flag) for flag in self.flags]),
            "execution_time": round(self.duration, 2),
            "tests": [test.to_gradescope() for test in self.tests],
            "extra_data": {"seed": self.seed, "submission": self.submission, "flags": self.flags,
                           "modules": {m: {"score": _number(s), "max_score": _number(x)}
                                       for m, (s, x) in self.by_module().items()},
                           "isolation": self.isolation, "lab": self.lab, "notes": self.notes,
                           "diagnosis": self.diagnosis, "lang": self.lang,
                           "hidden_not_run": {m: _number(x) for m, x in self.hidden_not_run.items()},
                           "printed": self.printed, "grader_faults": len(self.grader_faults()),
                           "not_graded": {m: _number(x) for m, x in self.not_graded().items()}},
        }

    @classmethod
    def from_gradescope(cls, data):
        tests = [TestResult(name=str(item.get("name", "?")), module=str((item.get("tags") or ["?"])[0]),
                            max_score=_float(item.get("max_score")), score=_float(item.get("score")),
                            passed=item.get("status") == "passed", output=str(item.get("output", "")),
                            visibility=item.get("visibility", "hidden"), test_id=str(item.get("test_id", "")),
                            fault=_fault(item))
                 for item in data.get("tests", []) if isinstance(item, dict)]
        extra = data.get("extra_data", {})
        return cls(tests=tests, seed=extra.get("seed", 0), submission=extra.get("submission", ""),
                   notes=[str(note) for note in extra.get("notes") or []],
                   duration=data.get("execution_time", 0.0), flags=list(extra.get("flags", [])),
                   isolation=dict(extra.get("isolation") or {}), lab=dict(extra.get("lab") or {}),
                   diagnosis=_diagnosis(extra.get("diagnosis")), lang=str(extra.get("lang") or "en"),
                   hidden_not_run=_not_run(extra.get("hidden_not_run")), printed=_printed(extra.get("printed")))

    def as_dict(self):
        return asdict(self)
