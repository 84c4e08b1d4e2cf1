"""Pairwise similarity of the student modules: the academic-integrity check.

Each module is compared only with the same module of the other students, with
the reference solution and, where the assignment names one, with a file of an
installed framework (``SIMILARITY_FRAMEWORK``: a student's class against
the framework's own). Scores are copydetect's, on each file's canonical form
(:mod:`autograder.similarity.fingerprints`). Left out before comparing, as
boilerplate: the stub's text, what independent correct solutions write alike
(:mod:`autograder.similarity.convergence`, learned by the calibration, never
from the class itself) and a reference that is public (the assignment's
``SIMILARITY_PUBLIC_REFERENCE``), which is then not compared either.

A pair's score is the larger of the two shares of own code the files have in
common; it is flagged at or above its module's calibrated threshold
(:mod:`autograder.similarity.calibration`) with enough matching code. Flagged
pairs join students into groups (:mod:`autograder.similarity.groups`), each
listed once with everyone in it, however many copied. Severity is the same
rule for classmates and references: "high" once a score is past the middle
between the threshold and 1.

copydetect is a staff dependency (requirements-dev.txt); without it the check
is skipped and says so. Student files are read through
:mod:`autograder.intake.safe_files` and parsed, never executed.
"""
import dataclasses
import importlib.metadata
import importlib.util
import itertools
import json
import pathlib

from autograder import active_assignment, locations
from autograder.i18n import Message, _
from autograder.intake import safe_files
from autograder.similarity import convergence, fingerprints, groups as grouping
from autograder.similarity.display import OUTPUT_FOLDER, PAGE_NAME, RESULT_NAME, shown_score  # noqa: F401 (shared)

REPO_ROOT = locations.REPO_ROOT
ASSIGNMENT = active_assignment.current()
MODULES = ASSIGNMENT.modules
TEMPLATE_DIR = ASSIGNMENT.exercises_dir
REFERENCE_DIR = ASSIGNMENT.solutions_dir
CALIBRATION = ASSIGNMENT.folder / "similarity_calibration.json"
MAX_SOURCE_BYTES = 1 * 2**20      # what the grader takes of a module (submission.MAX_SOURCE_BYTES)
K = fingerprints.K
TOP_PAIRS = 10
DEFAULT_THRESHOLD, DEFAULT_MIN_OVERLAP = 0.60, 100
UNCALIBRATED = _("No calibration for this module (run tools/calibrate_similarity.py): a cautious default "
                 "threshold.")
NOT_INSTALLED = _("copydetect is not installed (pip install -r requirements-dev.txt): the similarity check was "
                  "skipped")
REFERENCE_WHY = _("Each student's file against the course's reference solution, with the same code left out as "
                  "between students and a threshold calibrated the same way: a copy of the reference, disguised or "
                  "not, ranks with a copy of a classmate.")


@dataclasses.dataclass(frozen=True)
class Policy:
    threshold: float     # flag at or above this score (the larger of the two shares)
    min_overlap: int     # ... and at least this many matching filtered characters
    why: str             # English; its translation is looked up by this text


def _english(value):
    return value.render("en") if isinstance(value, Message) else str(value or "")


def load_calibration():
    try:
        data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    modules = data.get("modules", {}) if isinstance(data, dict) else {}
    return modules if isinstance(modules, dict) else {}


def policies(calibration=None):
    """``{module: (student pairs' Policy, the reference's Policy or None when public)}``."""
    calibration = load_calibration() if calibration is None else calibration
    found = {}
    for module in MODULES:
        setting, entry = ASSIGNMENT.similarity.get(module, {}), calibration.get(module) or {}
        minimum = int(setting.get("min_overlap", DEFAULT_MIN_OVERLAP))
        why = _english(setting.get("why") if "threshold" in entry else UNCALIBRATED)
        pairs = Policy(float(entry.get("threshold", DEFAULT_THRESHOLD)), minimum, why)
        reference = None if module in ASSIGNMENT.similarity_public else Policy(
            float(entry.get("reference_threshold", DEFAULT_THRESHOLD)), minimum,
            _english(REFERENCE_WHY if "reference_threshold" in entry else UNCALIBRATED))
        found[module] = (pairs, reference)
    return found


# One module against a file of an installed package (the assignment's SIMILARITY_FRAMEWORK), or none.
FRAMEWORK = ASSIGNMENT.similarity_framework
FRAMEWORK_POLICY = Policy(FRAMEWORK["threshold"], FRAMEWORK["min_overlap"], _english(FRAMEWORK["why"])) \
    if FRAMEWORK else None


def copydetect_version():
    """The installed copydetect's version, or None."""
    if importlib.util.find_spec("copydetect") is None:
        return None
    try:
        return importlib.metadata.version("copydetect")
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


def framework_source():
    """``(path, package version)`` of the framework file the assignment compares a
    module with, or ``(None, reason)``. Found without importing the package."""
    package = FRAMEWORK.get("package", "")
    try:
        spec = importlib.util.find_spec(package) if package else None
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, f"{package or 'the framework'} is not installed here"
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / FRAMEWORK["file"]
    if not path.is_file():
        return None, f"{path} does not exist in this {package}"
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown version"
    return path, version


def read_module(folder, module):
    """A student's module text, or None when absent or not a plain bounded file."""
    try:
        raw = safe_files.read_relative(folder, f"{module}.py", MAX_SOURCE_BYTES)
    except safe_files.UnsafeFile:
        return None
    return raw.decode("utf-8", "replace")


def flagged(score, overlap, policy):
    """At or above the threshold, compared as stored (4 decimals) and as shown."""
    return round(score, 4) >= policy.threshold and overlap >= policy.min_overlap


def severity(score, policy):
    """The same rule for classmates and references: far above the threshold is high."""
    return "high" if round(score, 4) >= policy.threshold + (1 - policy.threshold) / 2 else "medium"


def module_boilerplate(module, template_text, reference_text, calibration):
    """What is left out of every comparison of ``module``."""
    learned = convergence.passage_kgrams((calibration.get(module) or {}).get("passages") or [])
    public = [reference_text] if module in ASSIGNMENT.similarity_public and reference_text else []
    return convergence.boilerplate(template_text, learned, public)


def compare_module(texts, boilerplate, policy):
    """``(groups, other pairs best first, submissions)`` of ``{student: text}``:
    submissions ({first student: students}) with the same code are compared once."""
    submissions = grouping.distinct(texts)
    prints = {first: fingerprints.fingerprint(texts[first], boilerplate) for first in submissions}
    own = {first: int(prints[first].token_coverage) for first in submissions}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        overlap, share_a, share_b, _, _ = fingerprints.compare(prints[a], prints[b])
        if overlap:
            pairs.append(grouping.Pair(a, b, share_a, share_b, overlap))
    hits = [pair for pair in pairs if flagged(pair.score, pair.overlap, policy)]
    # The closest of the rest first; a high share of a few characters is no closeness.
    others = sorted((pair for pair in pairs if not flagged(pair.score, pair.overlap, policy)),
                    key=lambda pair: (-pair.score * min(1.0, pair.overlap / max(1, policy.min_overlap)),
                                      -pair.overlap, pair.a, pair.b))
    return grouping.linked(submissions, hits, own, policy.min_overlap), others, submissions


def compare_with(texts, other_text, boilerplate):
    """Each submission of ``texts`` against one file: ``[(Pair, students)]``, best first."""
    other = fingerprints.fingerprint(other_text, boilerplate)
    found = []
    for first, members in grouping.distinct(texts).items():
        overlap, share, share_other, _, _ = fingerprints.compare(fingerprints.fingerprint(texts[first], boilerplate),
                                                                 other)
        found.append((grouping.Pair(first, "", share, share_other, overlap), members))
    found.sort(key=lambda item: (-item[0].score, -item[0].overlap, item[0].a))
    return found


def run(submissions, output_dir, template_dir=TEMPLATE_DIR, top=TOP_PAIRS, torch_source=None,
        reference_dir=REFERENCE_DIR, lang="en", calibration=None):
    """Compare the modules of ``{student: submission folder}``; write ``DIR/similarity/``
    (JSON, index and side-by-side pages in ``lang``). Returns the result dict."""
    from autograder.similarity import index_page, side_by_side

    folder = pathlib.Path(output_dir) / OUTPUT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():  # pages of an earlier run
        if PAGE_NAME.fullmatch(stale.name) or stale.name in ("index.html", RESULT_NAME):
            stale.unlink()
    version = copydetect_version()
    result = {"version": 2, "students": len(submissions), "k": K, "top": top, "lang": lang}
    if version is None:
        result["skipped"] = _english(NOT_INSTALLED)
        _write_json(folder, result)
        return result
    result["tool"] = f"copydetect {version}"
    texts = {module: {} for module in MODULES}
    for student, submission in sorted(submissions.items()):
        for module in MODULES:
            text = read_module(submission, module) if submission else None
            if text is not None:
                texts[module][student] = text
    templates = {module: read_module(template_dir, module) or "" for module in MODULES}
    references = {module: read_module(reference_dir, module) or "" for module in MODULES}
    calibration = load_calibration() if calibration is None else calibration
    rules = policies(calibration)
    pages = side_by_side.PageWriter(folder, templates, FRAMEWORK, lang)
    result["modules"], result["solution_reference"] = {}, {}
    for module in MODULES:
        policy, reference_policy = rules[module]
        boilerplate = module_boilerplate(module, templates[module], references[module], calibration)
        pages.boilerplate[module], pages.texts[module] = boilerplate, texts[module]
        found, others, submitted = compare_module(texts[module], boilerplate, policy)
        rows = [_group_row(module, rank, group, policy, texts[module], pages)
                for rank, group in enumerate(found, 1)]
        rows += [_pair_row(module, len(rows) + index, pair, policy, texts[module], pages, submitted)
                 for index, pair in enumerate(others[:top], 1)]
        result["modules"][module] = {
            "threshold": policy.threshold, "min_overlap": policy.min_overlap, "why": policy.why,
            "submissions": len(texts[module]), "distinct": len(submitted),
            "pairs_compared": len(submitted) * (len(submitted) - 1) // 2, "pairs": rows,
            "calibration": _calibration_summary(calibration.get(module))}
        result["solution_reference"][module] = dict(
            _reference(module, texts[module], references[module], boilerplate, reference_policy, pages, top),
            calibration=_calibration_summary(calibration.get(module)))
    if FRAMEWORK:  # the key keeps its name: class reports read "torch_reference"
        module = FRAMEWORK["module"]
        result["torch_reference"] = _framework_reference(texts[module], pages, top, torch_source)
    index_page.write(folder, result, lang)
    _write_json(folder, result)
    return result


def _scores(pair):
    return {"score": round(pair.score, 4), "similarity_a": round(pair.similarity_a, 4),
            "similarity_b": round(pair.similarity_b, 4), "overlap": pair.overlap}


def _group_row(module, rank, group, policy, texts, pages):
    strongest = group.strongest()
    row = {"a": group.members[0], "b": group.members[1], "members": group.members, "identical": group.identical,
           "group": len(group.members) > 2, "score": round(group.score, 4), "score_min": round(group.lowest, 4),
           "similarity_a": 1.0, "similarity_b": 1.0, "overlap": group.overlap, "flagged": True,
           "severity": severity(group.score, policy)}
    if strongest is not None:
        row.update(_scores(strongest), score=round(group.score, 4), overlap=group.overlap)
        row["page"] = pages.pair(module, rank, strongest, texts[strongest.a], texts[strongest.b], group=group)
    else:
        row["page"] = pages.identical(module, rank, group, texts[group.members[0]])
    return row


def _pair_row(module, rank, pair, policy, texts, pages, submitted):
    row = {"a": pair.a, "b": pair.b, "members": [pair.a, pair.b], "identical": False, "group": False,
           **_scores(pair), "flagged": False}
    row["also"] = [student for first in (pair.a, pair.b) for student in submitted[first][1:]]
    row["page"] = pages.pair(module, rank, pair, texts[pair.a], texts[pair.b])
    return row


def _match_rows(module, found, policy, pages, other_text, top, other):
    rows = []
    for rank, (pair, members) in enumerate(found, 1):
        hit = flagged(pair.score, pair.overlap, policy)
        if not pair.overlap or (rank > top and not hit):
            break
        row = {"student": pair.a, "members": members, **_scores(pair), "flagged": hit}
        if hit:
            row["severity"] = severity(pair.score, policy)
        row["page"] = pages.pair(module, rank, pair, pages.texts[module][pair.a], other_text, other=other)
        rows.append(row)
    return rows


def _reference(module, texts, reference_text, boilerplate, policy, pages, top):
    """Every student's module against the reference solution (unless it is public)."""
    if module in ASSIGNMENT.similarity_public:
        return {"public": _english(ASSIGNMENT.similarity_public[module]), "matches": []}
    entry = {"threshold": policy.threshold, "min_overlap": policy.min_overlap, "why": policy.why}
    if not reference_text:
        return dict(entry, skipped=f"no solutions/{module}.py in this grader")
    found = compare_with(texts, reference_text, boilerplate)
    return dict(entry, matches=_match_rows(module, found, policy, pages, reference_text, top, "reference"))


def _framework_reference(texts, pages, top, torch_source):
    path, version = (pathlib.Path(torch_source), "given") if torch_source else framework_source()
    policy, label, module = FRAMEWORK_POLICY, FRAMEWORK["label"], FRAMEWORK["module"]
    entry = {"threshold": policy.threshold, "min_overlap": policy.min_overlap, "why": policy.why,
             "module": module, "label": label}
    if path is None:
        return dict(entry, skipped=f"{version}: the comparison with {label} was skipped")
    reference = path.read_text(encoding="utf-8", errors="replace")
    entry["reference"] = f"{FRAMEWORK['package']}/{FRAMEWORK['file']} ({FRAMEWORK['package']} {version})"
    found = compare_with(texts, reference, pages.boilerplate[module])
    entry["matches"] = _match_rows(module, found, policy, pages, reference, top, "torch")
    return entry


def _calibration_summary(entry):
    """What the report quotes of a module's calibration (not its passages)."""
    if not isinstance(entry, dict):
        return {}
    return {key: value for key, value in entry.items() if key != "passages" and not isinstance(value, list)}


def _write_json(folder, result):
    path = folder / RESULT_NAME
    temporary = folder / f".{RESULT_NAME}.tmp"
    try:
        text = (json.dumps(result, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a folder name that is not UTF-8: kept exactly, as \udcff escapes
        text = (json.dumps(result, indent=2) + "\n").encode("ascii")
    temporary.write_bytes(text)
    temporary.replace(path)


def load_result(output_dir):
    """``DIR/similarity/similarity.json`` as a dict, or None (absent or unreadable)."""
    try:
        data = json.loads(safe_files.read_text(str(pathlib.Path(output_dir) / OUTPUT_FOLDER / RESULT_NAME),
                                               16 * 2**20))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
