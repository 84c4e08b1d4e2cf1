"""The *Similarity* section of ``report.md``, from ``DIR/similarity/similarity.json``.

Student folder names go through :func:`~autograder.reports.safe_text.markdown_text`;
links point only at page names that match our own pattern. The JSON is read
defensively: a missing or odd field costs its cell, not the report.
"""
from autograder.reports.safe_text import markdown_code, markdown_text
from autograder.similarity.display import OUTPUT_FOLDER, PAGE_NAME, shown_score

SHOWN = 5   # pairs per module in report.md (every flagged pair too); the HTML index has more


def _link(page):
    if isinstance(page, str) and PAGE_NAME.fullmatch(page):
        return f"[side by side]({OUTPUT_FOLDER}/{page}#m1)"
    return "–"


def _score(value):
    return shown_score(value)


def _range(pair):
    low = pair.get("score_min")
    if isinstance(low, (int, float)) and shown_score(low) != shown_score(pair.get("score")):
        return f"{shown_score(low)}–{shown_score(pair.get('score'))}"
    return shown_score(pair.get("score"))


def _flag(row, data):
    if row.get("flagged") is True:
        return "**yes (high)**" if row.get("severity") == "high" else "**yes**"
    score, threshold, overlap = row.get("score"), data.get("threshold"), row.get("overlap")
    if all(isinstance(value, (int, float)) for value in (score, threshold)) and score >= threshold \
            and isinstance(overlap, int):
        return f"no (only {overlap} characters)"
    return "no"


def _int(value):
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _name(value):
    return markdown_text(value, 200) or "–"


def _members(pair):
    members = pair.get("members") if isinstance(pair.get("members"), list) else [pair.get("a"), pair.get("b")]
    if len(members) > 2 or pair.get("identical") is True:
        return f"{len(members)} students: " + ", ".join(_name(member) for member in members)
    return " / ".join(_name(member) for member in members)


def _honest(calibration, prefix=""):
    """How close independent correct solutions come (tools/calibrate_similarity.py)."""
    if not isinstance(calibration, dict) or not isinstance(calibration.get(f"{prefix}pairs"), int):
        return ""
    return (f" Independent correct solutions written on this template ({_int(calibration.get('authors'))} authors), "
            f"each scored without what it taught: highest {_score(calibration.get(f'{prefix}max_score'))}, "
            f"{_int(calibration.get(f'{prefix}reached'))} of {_int(calibration.get(f'{prefix}pairs'))} at or above the "
            f"threshold; held out of the calibration: highest {_score(calibration.get(f'{prefix}held_out_max_score'))}.")


def section(result):
    lines = ["## Similarity", ""]
    if not isinstance(result, dict):
        return lines + ["_Not run for this output folder (a shard or a re-grade): run "
                        "`python -m autograder similarity ROOT --output-dir DIR` on the whole class._", ""]
    if result.get("skipped"):
        return lines + [f"_Skipped: {markdown_text(result['skipped'])}._", ""]
    lines += [f"Pairwise, per module, with {markdown_text(result.get('tool', 'copydetect'))} (winnowing, the MOSS "
              "algorithm) on each file's canonical form: names, strings, comments, docstrings, layout and the order "
              "of definitions do not matter. Left out before comparing: the template's given code (the stubs in "
              "`exercises/`), what independent correct solutions on this template write alike (learned by the "
              "calibration from its honest set, never from this class) and reference code that is public. Students "
              "who handed in the same code, or whose files are linked by flagged pairs, form one group, listed once "
              "with everyone in it, however many. The score is the larger of the two shares of own code in common; "
              "a pair is flagged at or above its module's calibrated threshold with enough matching code, and high "
              "when it is past the middle between the threshold and 1 (the same rule against the reference). "
              "Scores are cut to two decimals, never rounded up onto a threshold. A score is a reason to read the "
              "files side by side, never proof. Every group and the closest other pairs: "
              "[similarity/index.html](similarity/index.html).", ""]
    modules = result.get("modules") if isinstance(result.get("modules"), dict) else {}
    for module, data in modules.items():
        if not isinstance(data, dict):
            continue
        pairs = [pair for pair in data.get("pairs", []) if isinstance(pair, dict)]
        flagged = sum(1 for pair in pairs if pair.get("flagged") is True)
        lines += [f"### {markdown_code(module)}: {flagged} flagged group(s) among {_int(data.get('distinct'))} "
                  "distinct submissions", "", f"Threshold {_score(data.get('threshold'))}, with at least "
                  f"{_int(data.get('min_overlap'))} matching characters: {markdown_text(data.get('why', ''))}"
                  + _honest(data.get("calibration")), ""]
        shown = [pair for rank, pair in enumerate(pairs) if rank < SHOWN or pair.get("flagged") is True]
        if not shown:
            lines += ["No two files share any code beyond what is left out.", ""]
            continue
        lines += ["| Rank | Students | Score | Shares | Overlap | Flagged | |",
                  "| ---: | --- | ---: | --- | ---: | --- | --- |"]
        for rank, pair in enumerate(shown, 1):
            lines.append(f"| {rank} | {_members(pair)} | {_range(pair)} "
                         f"| {_score(pair.get('similarity_a'))} / {_score(pair.get('similarity_b'))} "
                         f"| {_int(pair.get('overlap'))} | {_flag(pair, data)} | {_link(pair.get('page'))} |")
        lines.append("")
    lines += _references(result.get("solution_reference"))
    lines += _torch(result.get("torch_reference"))
    return lines


def _references(data):
    """Each module against the reference solution (unless it is public)."""
    if not isinstance(data, dict):
        return []
    lines = ["### Against the reference solution", ""]
    for module, entry in data.items():
        if not isinstance(entry, dict):
            continue
        if entry.get("public"):
            lines.append(f"- {markdown_code(module)}: not compared ({markdown_text(entry['public'])})")
            continue
        matches = [row for row in entry.get("matches", []) if isinstance(row, dict)]
        hits = [row for row in matches if row.get("flagged") is True]
        described = ", ".join(f"**{_members({'members': row.get('members') or [row.get('student')]})}** "
                              f"{_score(row.get('score'))}{' (high)' if row.get('severity') == 'high' else ''} "
                              f"{_link(row.get('page'))}" for row in hits)
        lines.append(f"- {markdown_code(module)} (threshold {_score(entry.get('threshold'))}): "
                     + (described or "no file flagged")
                     + (f"; highest {_score(matches[0].get('score'))}" if matches and not hits else "")
                     + _honest(entry.get("calibration"), "reference_"))
    return lines + [""]


def _torch(data):
    if not isinstance(data, dict):
        return []  # the assignment compares no module with a framework file
    module, label = str(data.get("module", "module")), str(data.get("label", "the framework"))
    lines = [f"### {markdown_code(module)} against {markdown_text(label)}", ""]
    lines += [f"Threshold {_score(data.get('threshold'))}: {markdown_text(data.get('why', ''))}", ""]
    if data.get("skipped"):
        return lines + [f"_Skipped: {markdown_text(data['skipped'])}._", ""]
    matches = [row for row in data.get("matches", []) if isinstance(row, dict)]
    shown = [row for rank, row in enumerate(matches) if rank < SHOWN or row.get("flagged") is True]
    if not shown:
        return lines + [f"No {markdown_text(module)}.py shares code with it beyond what is left out.", ""]
    lines += [f"Reference: {markdown_text(data.get('reference', ''))}.", "",
              f"| Student | Share found in {markdown_text(label)} | Overlap | Flagged | |",
              "| --- | ---: | ---: | --- | --- |"]
    for row in shown:
        lines.append(f"| {_members({'members': row.get('members') or [row.get('student')]})} "
                     f"| {_score(row.get('score'))} | {_int(row.get('overlap'))} | {_flag(row, data)} "
                     f"| {_link(row.get('page'))} |")
    return lines + [""]
