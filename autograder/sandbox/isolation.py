"""What confined a submission: the boxes' reports, combined into one.

Each box reports what held for it (:func:`autograder.sandbox.confine.confinement.confine`);
a grade shows the weakest: it is ``confined`` only when every box was.
"""
KEYS = ("root", "fs", "syscalls", "network", "signals", "process_namespace", "uid", "scratch", "memory", "cpu")
MAX_PROBLEMS = 12


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
    return combined


def summary(report):
    """One line for people: what held, or why the code ran unconfined."""
    if not report:
        return "no student code ran"
    parts = [f"{key}: {report.get(key)}" for key in KEYS if key in report]
    head = "confined" if report.get("confined") else "NOT CONFINED"
    return f"{head} ({'; '.join(parts)})"
