"""``DIR/similarity/index.html``: every flagged group and the closest other pairs per
module, each module against the reference solution and the framework's file, in
the class's language.

Read from the result dict the check writes (``similarity.json``). Scores are
shown with two decimals, never rounded up onto a threshold; a score above a
threshold that is not flagged says why (too little matching code). Tables
scroll inside their own box; student names are escaped.
"""
from autograder.i18n import text as t
from autograder.reports.html_page import esc, table
from autograder.similarity import side_by_side
from autograder.similarity.display import members_text, row_members, shown_range, shown_score, stored_text
from autograder.similarity.side_by_side import sentences


def write(folder, result, lang="en"):
    (folder / "index.html").write_text(render(result, lang), encoding="utf-8")


def render(result, lang="en"):
    parts = ["<h1>" + t("Similarity of the student modules", lang) + "</h1>",
             "<p>" + t("Compared with {tool} (winnowing, the MOSS algorithm), k = {k}, each module only with the same "
                       "module. Left out before comparing: the template's given code, what independent correct "
                       "solutions on this template write alike, and reference code that is public. Students who "
                       "handed in the same code, or whose files are linked by flagged pairs, form one group, listed "
                       "once with everyone in it. Listed per module: every flagged group, then the closest other "
                       "pairs. A flagged group is worth reading side by side; a score is never proof.", lang,
                       tool=esc(result.get("tool", "copydetect")), k=esc(result.get("k"))) + "</p>"]
    for module, data in (result.get("modules") or {}).items():
        parts += _module(module, data, lang)
    for module, data in (result.get("solution_reference") or {}).items():
        parts += _reference(module, data, lang)
    if result.get("torch_reference"):
        parts += _framework(result["torch_reference"], lang)
    return side_by_side.page(t("Similarity", lang), "\n".join(parts), lang)


def _threshold(data, lang):
    return t("Threshold {threshold}, with at least {min_overlap} matching characters of filtered code.", lang,
             threshold=shown_score(data.get("threshold")), min_overlap=esc(data.get("min_overlap")))


def _module(module, data, lang):
    calibration = data.get("calibration") or {}
    honest = ""
    if calibration.get("pairs"):
        honest = t("Calibrated on {authors} independently written correct solutions: scored without their own "
                         "authors, honest pairs reach at most {honest}; the {held_out_pairs} pairs with solutions "
                         "held out of the calibration reach at most {held_out}.", lang,
                         authors=esc(calibration.get("authors")), honest=shown_score(calibration.get("max_score")),
                         held_out_pairs=esc(calibration.get("held_out_pairs")),
                         held_out=shown_score(calibration.get("held_out_max_score")))
    rows = [[str(rank), _students(row, lang), shown_range(row), esc(row.get("overlap")), _flag(row, data, lang),
             side_by_side.link(row.get("page"), lang)] for rank, row in enumerate(data.get("pairs") or [], 1)]
    return [f"<h2>{esc(module)}.py</h2>",
            "<p>" + sentences(lang, _threshold(data, lang), honest, esc(stored_text(data.get("why"), lang), 1000)) + "</p>",
            _table(rows, lang) if rows else "<p>" + t("No two files share any code beyond what is left out.", lang)
            + "</p>"]


def _table(rows, lang, ranked=True):
    header = ([t("Rank", lang)] if ranked else []) + [t("Students", lang), t("Score", lang), t("Overlap", lang),
                                                      t("Flagged", lang), ""]
    return table(header, rows, numeric=(0, 2, 3) if ranked else (1, 2))


def _students(row, lang, as_group=None):
    """A pair, or a group with everyone in it (students with one file count as a group)."""
    group = row.get("identical") is True if as_group is None else as_group
    return '<span class="who">' + members_text(row_members(row), lang, lambda member: esc(member, 200), group) \
        + "</span>"


def _flag(row, data, lang):
    if row.get("flagged") is True:
        word = t("yes (high)", lang) if row.get("severity") == "high" else t("yes", lang)
        return f'<span class="flag">{word}</span>'
    score, overlap = row.get("score"), row.get("overlap")
    if isinstance(score, (int, float)) and isinstance(data.get("threshold"), (int, float)) \
            and score >= data["threshold"] and isinstance(overlap, int):
        return t("no: only {overlap} matching characters (fewer than {min_overlap})", lang, overlap=overlap,
                 min_overlap=esc(data.get("min_overlap")))
    return t("no", lang)


def _matches(data, lang):
    rows = [[_students(row, lang, as_group=len(row_members(row)) > 1), shown_range(row),
             esc(row.get("overlap")), _flag(row, data, lang), side_by_side.link(row.get("page"), lang)]
            for row in data.get("matches") or []]
    return _table(rows, lang, ranked=False) if rows else "<p>" + t("No file shares any code with it beyond what is left "
                                                            "out.", lang) + "</p>"


def _reference(module, data, lang):
    parts = ["<h2>" + t("{module}.py against the reference solution", lang, module=esc(module)) + "</h2>"]
    if data.get("public"):
        return parts + ["<p>" + sentences(lang, esc(stored_text(data["public"], lang), 1000),
                                          t("Not compared: a public reference is no evidence.", lang)) + "</p>"]
    if data.get("skipped"):
        return parts + ["<p>" + t("This grader has no reference solution of this module: not compared.", lang)
                        + "</p>"]
    calibration = data.get("calibration") or {}
    honest = ""
    if calibration.get("reference_pairs"):
        honest = t("Independent correct solutions, each scored without itself: at most {honest}; held out of "
                         "the calibration: at most {held_out}.", lang,
                         honest=shown_score(calibration.get("reference_max_score")),
                         held_out=shown_score(calibration.get("reference_held_out_max_score")))
    return parts + ["<p>" + sentences(lang, _threshold(data, lang), honest, esc(stored_text(data.get("why"), lang), 1000))
                    + "</p>", _matches(data, lang)]


def _framework(data, lang):
    label = data.get("label", "framework")
    parts = ["<h2>" + t("{module}.py against {label}", lang, module=esc(data.get("module", "module")),
                        label=esc(label)) + "</h2>"]
    if data.get("skipped"):
        return parts + ["<p>" + t("Not compared: {label}'s file is not installed here.", lang, label=esc(label))
                        + "</p>"]
    return parts + ["<p>" + sentences(lang, _threshold(data, lang), esc(stored_text(data.get("why"), lang), 1000))
                    + "</p>", _matches(data, lang)]
