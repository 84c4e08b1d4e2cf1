"""What every page and report of the similarity check shows alike: where the pages
are, which file names are ours, how a score and a row's students are written; and
the summary the ``similarity`` command prints."""
import math
import re

from autograder.i18n import catalog, joining, text as t
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


def shown_range(row):
    """A row's score; a group's as ``lowest–highest`` of its flagged pairs where they differ."""
    low = row.get("score_min")
    if isinstance(low, (int, float)) and shown_score(low) != shown_score(row.get("score")):
        return f"{shown_score(low)}–{shown_score(row.get('score'))}"
    return shown_score(row.get("score"))


def row_members(row):
    """The students of a result row: a pair's or group's ``members``, else ``a``/``b`` or ``student``."""
    if isinstance(row.get("members"), list) and row["members"]:
        return row["members"]
    return [row.get("a"), row.get("b")] if "a" in row else [row.get("student")]


def members_text(members, lang, escape, as_group=False):
    """Who a row is about, in ``lang``: ``a / b`` for a pair, ``3 students: a, b, c`` for a
    group (``as_group``: also when it has two, such as two students with one file).
    ``escape`` makes each name safe for the page (HTML or Markdown)."""
    names = [escape(member) or "–" for member in members]
    if as_group or len(names) > 2:
        return t("{count} students: {names}", lang, count=len(names), names=joining.listed(names, lang))
    return " / ".join(names)


def stored_text(value, lang):
    """A text the check stored in English in its result (a module's why, a public
    reference's note, why it was skipped), in ``lang``: looked up, never formatted, so
    that a brace in it cannot break a page."""
    value = "" if value is None else str(value)
    return catalog(lang).get(value) or value


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
