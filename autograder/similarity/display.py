"""What every page and report of the similarity check shows alike: where the pages
are, which file names are ours, how a score is written; and the summary the
``similarity`` command prints."""
import math
import re

from autograder.reports.safe_text import terminal_line

OUTPUT_FOLDER = "similarity"
RESULT_NAME = "similarity.json"
PAGE_NAME = re.compile(r"[a-z_]+-(torch-|ref-)?[0-9]{1,4}\.html")


def shown_score(value):
    """A score with two decimals, never rounded up onto a threshold (0.8967 is 0.89), so
    that a shown score is at or above a shown threshold exactly when it is flagged."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "?"
    return f"{math.floor(round(value * 100, 6)) / 100:.2f}"


def _line(score, names, flagged, severity=""):
    mark = f"  FLAGGED ({severity})" if flagged else ""
    return terminal_line(f"  {shown_score(score)}  {names}{mark}", limit=300)


def summary_lines(result):
    """What ``similarity`` prints after a run: per module its flagged groups and closest
    pairs, then the matches with the reference and with the framework's file."""
    lines = []
    for module, data in result.get("modules", {}).items():
        groups = [row for row in data["pairs"] if row["flagged"]]
        lines.append(f"{module}: {data['submissions']} submission(s), {len(groups)} flagged group(s) "
                     f"(threshold {data['threshold']:.2f})")
        for row in groups + [row for row in data["pairs"] if not row["flagged"]][:2]:
            members = row.get("members") or [row["a"], row["b"]]
            names = (f"{len(members)} students: " if len(members) > 2 else "") + " / ".join(map(str, members))
            lines.append(_line(row["score"], names, row["flagged"], row.get("severity", "")))
    for module, data in (result.get("solution_reference") or {}).items():
        if data.get("public"):
            lines.append(f"{module} against the reference: not compared (the reference is public)")
            continue
        hits = [row for row in data.get("matches", []) if row["flagged"]]
        lines.append(f"{module} against the reference: {len(hits)} flagged "
                     f"(threshold {data.get('threshold', 0):.2f})")
        for row in hits:
            lines.append(_line(row["score"], " / ".join(map(str, row.get("members") or [row["student"]])), True,
                               row.get("severity", "")))
    torch = result.get("torch_reference")
    if not torch:
        pass
    elif torch.get("skipped"):
        lines.append(f"{torch['label']}: {torch['skipped']}")
    else:
        hits = [row for row in torch.get("matches", []) if row["flagged"]]
        lines.append(f"{torch['label']}: {len(hits)} {torch['module']}.py flagged")
        for row in hits:
            lines.append(_line(row["score"], " / ".join(map(str, row.get("members") or [row["student"]])), True,
                               row.get("severity", "")))
    return lines
