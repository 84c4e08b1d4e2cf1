"""Gradescope-style ``results.json`` (the contract's results file)."""
import json
import os
import pathlib
import tempfile


def write_results(report, path):
    """Write atomically: a half-written file is never left behind."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report.to_gradescope(), indent=2, ensure_ascii=False, allow_nan=False)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    os.chmod(temporary, 0o644)  # mkstemp makes it private; results are for students and TAs to read
    os.replace(temporary, path)
    return path
