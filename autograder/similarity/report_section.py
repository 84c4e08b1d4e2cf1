"""The *Similarity* section of ``report.md``, from ``DIR/similarity/similarity.json``,
in the class page's language (catalog ``similarity.po``).

Student folder names go through :func:`~autograder.reports.safe_text.markdown_text`;
links point only at page names that match our own pattern. The JSON is read
defensively: a missing or odd field costs its cell, not the report.
"""
from autograder.i18n import joining, text as t
from autograder.reports.safe_text import markdown_code, markdown_text
from autograder.similarity.display import (OUTPUT_FOLDER, PAGE_NAME, members_text, row_members, shown_range,
                                           shown_score, stored_text)

SHOWN = 5   # pairs per module in report.md (every flagged pair too); the HTML index has more


def _link(page, lang):
    if isinstance(page, str) and PAGE_NAME.fullmatch(page):
        return f"[{t('side by side', lang)}]({OUTPUT_FOLDER}/{page}#m1)"
    return "–"


def _flag(row, data, lang):
    if row.get("flagged") is True:
        return "**" + (t("yes (high)", lang) if row.get("severity") == "high" else t("yes", lang)) + "**"
    score, threshold, overlap = row.get("score"), data.get("threshold"), row.get("overlap")
    if all(isinstance(value, (int, float)) for value in (score, threshold)) and score >= threshold \
            and isinstance(overlap, int):
        return t("no (only {overlap} characters)", lang, overlap=overlap)
    return t("no", lang)


def _int(value):
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _name(value):
    return markdown_text(value, 200) or "–"


def _members(row, lang, as_group=None):
    group = row.get("identical") is True if as_group is None else as_group
    return members_text(row_members(row), lang, _name, group)


def _translated(value, lang):
    """A text the check stored in English (a module's why, a public reference's note), in ``lang``."""
    return markdown_text(stored_text(value, lang), 1000)


def _honest(calibration, lang, prefix=""):
    """How close independent correct solutions come (tools/calibrate_similarity.py)."""
    if not isinstance(calibration, dict) or not isinstance(calibration.get(f"{prefix}pairs"), int):
        return ""
    return t("Independent correct solutions written on this template ({authors} authors), each scored without what "
             "it taught: highest {highest}, {reached} of {pairs} at or above the threshold; held out of the "
             "calibration: highest {held_out}.", lang, authors=_int(calibration.get("authors")),
             highest=shown_score(calibration.get(f"{prefix}max_score")),
             reached=_int(calibration.get(f"{prefix}reached")), pairs=_int(calibration.get(f"{prefix}pairs")),
             held_out=shown_score(calibration.get(f"{prefix}held_out_max_score")))


def section(result, lang="en"):
    lines = ["## " + t("Similarity", lang), ""]
    if not isinstance(result, dict):
        return lines + ["_" + t("Not run for this output folder (a shard or a re-grade): run {command} on the whole "
                                "class.", lang, command="`python -m autograder similarity ROOT --output-dir DIR`")
                        + "_", ""]
    if result.get("skipped"):
        return lines + ["_" + t("Skipped: {reason}.", lang, reason=_translated(result["skipped"], lang)) + "_", ""]
    lines += [t("Pairwise, per module, with {tool} (winnowing, the MOSS algorithm) on each file's canonical form: "
                "names, strings, comments, docstrings, layout and the order of definitions do not matter. Left out "
                "before comparing: the template's given code (the stubs in {stubs}), what independent correct "
                "solutions on this template write alike (learned by the calibration from its honest set, never "
                "from this class) and reference code that is public. Students who handed in the same code, or "
                "whose files are linked by flagged pairs, form one group, listed once with everyone in it, however "
                "many. The score is the larger of the two shares of own code in common; a pair is flagged at or "
                "above its module's calibrated threshold with enough matching code, and high when it is past the "
                "middle between the threshold and 1 (the same rule against the reference). Scores are cut to two "
                "decimals, never rounded up onto a threshold. A score is a reason to read the files side by side, "
                "never proof. Every group and the closest other pairs: {index}.", lang,
                tool=markdown_text(result.get("tool", "copydetect")), stubs="`exercises/`",
                index=f"[{OUTPUT_FOLDER}/index.html]({OUTPUT_FOLDER}/index.html)"), ""]
    modules = result.get("modules") if isinstance(result.get("modules"), dict) else {}
    for module, data in modules.items():
        if isinstance(data, dict):
            lines += _module(module, data, lang)
    lines += _references(result.get("solution_reference"), lang)
    lines += _framework(result.get("torch_reference"), lang)
    return lines


def _module(module, data, lang):
    pairs = [pair for pair in data.get("pairs", []) if isinstance(pair, dict)]
    flagged = sum(1 for pair in pairs if pair.get("flagged") is True)
    lines = ["### " + t("{module}: {flagged} flagged group(s) among {distinct} distinct submissions", lang,
                        module=markdown_code(module), flagged=flagged, distinct=_int(data.get("distinct"))), "",
             joining.sentences([t("Threshold {threshold}, with at least {min_overlap} matching characters: {why}",
                                  lang, threshold=shown_score(data.get("threshold")),
                                  min_overlap=_int(data.get("min_overlap")), why=_translated(data.get("why"), lang)),
                                _honest(data.get("calibration"), lang)], lang), ""]
    shown = [pair for rank, pair in enumerate(pairs) if rank < SHOWN or pair.get("flagged") is True]
    if not shown:
        return lines + [t("No two files share any code beyond what is left out.", lang), ""]
    lines += ["| " + " | ".join([t("Rank", lang), t("Students", lang), t("Score", lang), t("Shares", lang),
                                 t("Overlap", lang), t("Flagged", lang), ""]) + " |",
              "| ---: | --- | ---: | --- | ---: | --- | --- |"]
    for rank, pair in enumerate(shown, 1):
        lines.append(f"| {rank} | {_members(pair, lang)} | {shown_range(pair)} "
                     f"| {shown_score(pair.get('similarity_a'))} / {shown_score(pair.get('similarity_b'))} "
                     f"| {_int(pair.get('overlap'))} | {_flag(pair, data, lang)} | {_link(pair.get('page'), lang)} |")
    return lines + [""]


def _references(data, lang):
    """Each module against the reference solution (unless it is public)."""
    if not isinstance(data, dict):
        return []
    lines = ["### " + t("Against the reference solution", lang), ""]
    for module, entry in data.items():
        if not isinstance(entry, dict):
            continue
        if entry.get("public"):
            lines.append("- " + t("{module}: not compared ({why})", lang, module=markdown_code(module),
                                  why=_translated(entry["public"], lang)))
            continue
        matches = [row for row in entry.get("matches", []) if isinstance(row, dict)]
        hits = [row for row in matches if row.get("flagged") is True]
        described = [_hit(row, lang) + " " + _link(row.get("page"), lang) for row in hits]
        found = joining.listed(described, lang) or t("no file flagged", lang)
        if matches and not hits:
            found = joining.clauses([found, t("highest {score}", lang, score=shown_score(matches[0].get("score")))],
                                    lang)
        lines.append("- " + joining.sentences([
            joining.sentence(t("{module} (threshold {threshold}): {found}", lang, module=markdown_code(module),
                               threshold=shown_score(entry.get("threshold")), found=found), lang),
            _honest(entry.get("calibration"), lang, "reference_")], lang))
    return lines + [""]


def _hit(row, lang):
    students = "**" + _members(row, lang, len(row_members(row)) > 1) + "**"
    score = shown_score(row.get("score"))
    if row.get("severity") == "high":
        return t("{students} {score} (high)", lang, students=students, score=score)
    return f"{students} {score}"


def _framework(data, lang):
    if not isinstance(data, dict):
        return []  # the assignment compares no module with a framework file
    module, label = str(data.get("module", "module")), markdown_text(data.get("label", "the framework"), 80)
    lines = ["### " + t("{module} against {label}", lang, module=markdown_code(module), label=label), "",
             t("Threshold {threshold}: {why}", lang, threshold=shown_score(data.get("threshold")),
               why=_translated(data.get("why"), lang)), ""]
    if data.get("skipped"):
        return lines + ["_" + t("Not compared: {label}'s file is not installed here.", lang, label=label) + "_", ""]
    matches = [row for row in data.get("matches", []) if isinstance(row, dict)]
    shown = [row for rank, row in enumerate(matches) if rank < SHOWN or row.get("flagged") is True]
    if not shown:
        return lines + [t("No {module}.py shares code with it beyond what is left out.", lang,
                          module=markdown_text(module)), ""]
    lines += [t("Reference: {reference}.", lang, reference=markdown_text(data.get("reference", ""))), "",
              "| " + " | ".join([t("Student", lang), t("Share found in {label}", lang, label=label), t("Overlap", lang),
                                 t("Flagged", lang), ""]) + " |",
              "| --- | ---: | ---: | --- | --- |"]
    for row in shown:
        lines.append(f"| {_members(row, lang, len(row_members(row)) > 1)} | {shown_score(row.get('score'))} "
                     f"| {_int(row.get('overlap'))} | {_flag(row, data, lang)} | {_link(row.get('page'), lang)} |")
    return lines + [""]
