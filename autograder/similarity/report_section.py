"""The *Similarity* section of ``report.md``, from ``DIR/similarity/similarity.json``.

Student folder names go through :func:`~autograder.reports.safe_text.markdown_text`;
links point only at page names that match our own pattern. The JSON is read
defensively: a missing or odd field costs its cell, not the report.
"""
from autograder.reports.safe_text import markdown_code, markdown_text

SHOWN = 5   # pairs per module in report.md (every flagged pair too); the HTML index has more


def _link(page):
    from autograder.similarity.pairs import OUTPUT_FOLDER, PAGE_NAME

    if isinstance(page, str) and PAGE_NAME.fullmatch(page):
        return f"[side by side]({OUTPUT_FOLDER}/{page}#m1)"
    return "–"


def _score(value):
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"


def _int(value):
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _name(value):
    return markdown_text(value, 200) or "–"


def _members(pair):
    members = pair.get("members") if isinstance(pair.get("members"), list) else [pair.get("a"), pair.get("b")]
    names = " / ".join(_name(member) for member in members)
    return f"identical: {names}" if pair.get("identical") is True else names


def _honest(calibration):
    """How often independent correct solutions reach the threshold (tools/calibrate_similarity.py)."""
    if not isinstance(calibration, dict) or not isinstance(calibration.get("pairs"), int):
        return ""
    return (f" Independent correct solutions written on this template: {_int(calibration.get('reached'))} of "
            f"{_int(calibration.get('pairs'))} pairs reach it (highest {_score(calibration.get('max_score'))}).")


def section(result):
    lines = ["## Similarity", ""]
    if not isinstance(result, dict):
        return lines + ["_Not run for this output folder (a shard or a re-grade): run "
                        "`python -m autograder similarity ROOT --output-dir DIR` on the whole class._", ""]
    if result.get("skipped"):
        return lines + [f"_Skipped: {markdown_text(result['skipped'])}._", ""]
    lines += [f"Pairwise, per module, with {markdown_text(result.get('tool', 'copydetect'))} (winnowing, the MOSS "
              "algorithm): names, strings and comments are normalised; the template's given code "
              "(the stubs in `exercises/`), the reference answers and passages shared by more than a few "
              "submissions (MOSS's rule) are excluded before comparing; identical files are one group. The score is the larger of the two "
              "shares of matching code; a pair is flagged at or above its module's threshold with enough "
              "matching code. A score is a reason to read the pair side by side, never proof. Every pair at or "
              "above a threshold and the top pairs: [similarity/index.html](similarity/index.html).", ""]
    modules = result.get("modules") if isinstance(result.get("modules"), dict) else {}
    for module, data in modules.items():
        if not isinstance(data, dict):
            continue
        pairs = [pair for pair in data.get("pairs", []) if isinstance(pair, dict)]
        flagged = sum(1 for pair in pairs if pair.get("flagged") is True)
        lines += [f"### {markdown_code(module)}: {flagged} flagged pair(s) of {_int(data.get('pairs_compared'))}",
                  "", f"Threshold {_score(data.get('threshold'))}: {markdown_text(data.get('why', ''))}"
                  + _honest(data.get("calibration")), ""]
        shown = [pair for rank, pair in enumerate(pairs) if rank < SHOWN or pair.get("flagged") is True]
        if not shown:
            lines += ["No pair shares any code beyond the template.", ""]
            continue
        lines += ["| Rank | Students | Score | Shares | Overlap | Flagged | |",
                  "| ---: | --- | ---: | --- | ---: | --- | --- |"]
        for rank, pair in enumerate(shown, 1):
            flag = "**yes**" if pair.get("flagged") is True else "no"
            lines.append(f"| {rank} | {_members(pair)} | {_score(pair.get('score'))} "
                         f"| {_score(pair.get('similarity_a'))} / {_score(pair.get('similarity_b'))} "
                         f"| {_int(pair.get('overlap'))} | {flag} | {_link(pair.get('page'))} |")
        lines.append("")
    lines += _references(result.get("solution_reference"))
    lines += _torch(result.get("torch_reference"))
    return lines


def _references(data):
    """Each module against the reference solution (left out of the student pairs)."""
    if not isinstance(data, dict):
        return []
    lines = ["### Against the reference solution", ""]
    for module, entry in data.items():
        if not isinstance(entry, dict):
            continue
        matches = [row for row in entry.get("matches", []) if isinstance(row, dict)]
        hits = [row for row in matches if row.get("flagged") is True]
        lines.append(f"- {markdown_code(module)} (threshold {_score(entry.get('threshold'))}): "
                     + (", ".join(f"**{_name(row.get('student'))}** {_score(row.get('score'))} {_link(row.get('page'))}"
                                  for row in hits) if hits else "no file flagged")
                     + (f"; highest {_score(matches[0].get('score'))}" if matches and not hits else ""))
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
        return lines + [f"No {markdown_text(module)}.py shares code with it beyond the template.", ""]
    lines += [f"Reference: {markdown_text(data.get('reference', ''))}.", "",
              f"| Student | Share found in {markdown_text(label)} | Overlap | Flagged | |",
              "| --- | ---: | ---: | --- | --- |"]
    for row in shown:
        flag = "**yes**" if row.get("flagged") is True else "no"
        lines.append(f"| {_name(row.get('student'))} | {_score(row.get('score'))} | {_int(row.get('overlap'))} "
                     f"| {flag} | {_link(row.get('page'))} |")
    return lines + [""]
