"""Pairwise similarity of the student modules: the academic-integrity check.

The fingerprinting is copydetect's (a maintained implementation of winnowing,
the MOSS algorithm, on Pygments tokens): every name becomes ``V``/``F``/``O``,
every string ``S``, comments and blank lines vanish, and documents are
compared by the k-grams of what is left. Renaming, reordering functions and
rewriting comments therefore change little. What this module adds: per-module
comparison (each module only against the same module...), the
template's given code (the stubs in ``exercises/``) as boilerplate, thresholds
per module, each student's files against the reference solution and, where
the assignment names one, a module against a file of an installed framework
(``SIMILARITY_FRAMEWORK`` in its description), and the outputs (``similarity.json``, our own
side-by-side HTML: :mod:`autograder.similarity.side_by_side`).

copydetect is a staff dependency (requirements-dev.txt); without it the check
is skipped and says so. Student files are read through
:mod:`autograder.intake.safe_files`, never executed.
"""
import collections
import dataclasses
import functools
import importlib.metadata
import importlib.util
import io
import itertools
import json
import math
import pathlib
import re

from autograder import active_assignment, locations
from autograder.intake import safe_files

REPO_ROOT = locations.REPO_ROOT
ASSIGNMENT = active_assignment.current()
MODULES = ASSIGNMENT.modules
TEMPLATE_DIR = ASSIGNMENT.exercises_dir
REFERENCE_DIR = ASSIGNMENT.solutions_dir
CALIBRATION = ASSIGNMENT.folder / "similarity_calibration.json"
OUTPUT_FOLDER = "similarity"
RESULT_NAME = "similarity.json"
MAX_SOURCE_BYTES = 1 * 2**20      # what the grader takes of a module (submission.MAX_SOURCE_BYTES)
# k: the shortest match that counts, in characters of filtered code (copydetect's
# default noise threshold). Window 1 keeps every k-gram: scores are deterministic.
K = 25
TOP_PAIRS = 10
# MOSS's rule (its -m option): a passage found in more than a few of the class's
# distinct submissions is what the assignment makes everyone write, not evidence.
FEW_MIN, FEW_SHARE = 3, 0.1
PAGE_NAME = re.compile(r"[a-z_]+-(torch-|ref-)?[0-9]{1,4}\.html")


@dataclasses.dataclass(frozen=True)
class Policy:
    threshold: float     # flag at or above this score (the larger of the two shares)
    min_overlap: int     # ... and at least this many matching filtered characters
    why: str


# Thresholds per module: the assignment's (its tools/calibrate_similarity.py run
# on independent correct solutions), a cautious default for a module it does not list.
DEFAULT_POLICY = Policy(0.60, 100, "No calibration for this module: a cautious default threshold.")
POLICIES = {module: Policy(*ASSIGNMENT.similarity[module]) if module in ASSIGNMENT.similarity else DEFAULT_POLICY
            for module in MODULES}
# Each student's file against the course's reference solution (only the given code
# excluded). Student pairs leave the reference answers out, so a verbatim copy of the
# reference is caught here. Honest solutions come close to it (up to 0.56 here, and
# 0.94 was seen for a module written from the stub's comments), so only a
# near-verbatim copy is flagged: a disguised copy of the reference cannot be told from
# honest convergence and is not claimed.
_REFERENCE_WHY = ("Share of the student's {module}.py found in solutions/{module}.py, the given code left out. "
                  "Honest solutions written from the stub's comments come close to the reference, so only a "
                  "near-verbatim copy is flagged; a disguised copy of it is not told apart from honest work.")
REFERENCE_POLICIES = {module: Policy(0.90, 100, _REFERENCE_WHY.format(module=module)) for module in MODULES}
# One module against a file of an installed package (the assignment's SIMILARITY_FRAMEWORK), or none.
FRAMEWORK = ASSIGNMENT.similarity_framework
FRAMEWORK_POLICY = Policy(FRAMEWORK["threshold"], FRAMEWORK["min_overlap"], FRAMEWORK["why"]) if FRAMEWORK else None


@dataclasses.dataclass
class Pair:
    a: str
    b: str
    similarity_a: float
    similarity_b: float
    overlap: int
    slices_a: object = None
    slices_b: object = None
    members: list = None        # a group of identical submissions (one row)
    groups: tuple = None        # the identical groups a and b stand for

    @property
    def identical(self):
        return bool(self.members)

    @property
    def score(self):
        return max(self.similarity_a, self.similarity_b)


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


@functools.lru_cache(maxsize=2048)
def _filtered(text):
    """copydetect's tokenised form of ``text`` and its offsets: the lexing is most
    of a fingerprint's cost and depends on the text alone, while each text is
    fingerprinted against several boilerplates (and its passages again for the pages)."""
    from copydetect.utils import filter_code

    return filter_code(text, "module.py", "python")


def _fingerprint(text, boilerplate):
    from copydetect import CodeFingerprint

    filtered, offsets = _filtered(text)
    # What CodeFingerprint(..., filter=True) builds, from the filtered text read once.
    fingerprint = CodeFingerprint("module.py", K, 1, boilerplate, False, "python", fp=io.StringIO(filtered))
    fingerprint.raw_code, fingerprint.offsets = text, offsets
    return fingerprint


def fingerprint_hashes(text):
    """The k-gram hashes of a piece of code (to pair matched regions of two files)."""
    return [int(value) for value in _fingerprint(text, None).hashes]


def _boilerplate(template_text):
    import numpy as np

    if not template_text:
        return []
    return np.unique(np.array(list(_fingerprint(template_text, None).hashes)))


def _compare(first, second):
    from copydetect import compare_files

    overlap, (share_1, share_2), (slices_1, slices_2) = compare_files(first, second)
    return int(overlap), float(share_1), float(share_2), slices_1, slices_2


def _normalised(text):
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


def identical_groups(texts):
    """``{representative: [members]}``: students whose files are the same (line
    endings and trailing blanks aside) form one group, shown once."""
    groups = {}
    for student in sorted(texts):
        groups.setdefault(_normalised(texts[student]), []).append(student)
    return {members[0]: members for members in groups.values()}


def few(distinct):
    """More than this many distinct submissions sharing a passage: not evidence."""
    return max(FEW_MIN, math.ceil(FEW_SHARE * distinct))


def given_code(template_text, reference_text=""):
    """Fingerprints of what the assignment dictates: the stub's given code and
    comments, and the reference solution of its TODOs."""
    import numpy as np

    parts = [_boilerplate(text) for text in (template_text, reference_text) if text]
    return np.unique(np.concatenate(parts)) if parts else []


def common_passages(texts, boilerplate, limit):
    """Fingerprints found in more than ``limit`` of ``texts`` (distinct submissions)."""
    import numpy as np

    counts = collections.Counter()
    for text in texts:
        counts.update(set(int(h) for h in _fingerprint(text, boilerplate).hashes))
    return np.array(sorted(h for h, count in counts.items() if count > limit), dtype=np.int64)


def compare_module(texts, template_text, reference_text=""):
    """Every pair of distinct submissions of ``{student: text}``, best first, as
    :class:`Pair` (``a``, ``b``: the groups' first members; ``members``: each
    group of identical files, compared once). What the template and the reference
    dictate, and what more than a few submissions share, is left out."""
    import numpy as np

    groups = identical_groups(texts)
    stub = given_code(template_text)
    boilerplate = given_code(template_text, reference_text)
    common = common_passages([texts[r] for r in groups], boilerplate, few(len(groups)))
    if len(common):
        boilerplate = np.unique(np.concatenate([np.asarray(boilerplate, dtype=np.int64), common]))
    prints = {student: _fingerprint(texts[student], boilerplate) for student in groups}
    pairs = []
    for members in groups.values():
        if len(members) > 1:  # identical files: one row, scored by all they wrote beyond the stub
            own = _fingerprint(texts[members[0]], stub)  # a copied reference counts here
            overlap, _, _, slices, _ = _compare(own, own)
            pairs.append(Pair(members[0], members[1], 1.0, 1.0, overlap, slices, slices, members=members))
    for a, b in itertools.combinations(sorted(prints), 2):
        overlap, share_a, share_b, slices_a, slices_b = _compare(prints[a], prints[b])
        pairs.append(Pair(a, b, share_a, share_b, overlap, slices_a, slices_b,
                          groups=(groups[a], groups[b])))
    pairs.sort(key=lambda pair: (-pair.score, -pair.overlap, pair.a, pair.b))
    return pairs


def compare_with_reference(texts, reference_text, template_text):
    """Each student against one reference file; the score is the student's share."""
    boilerplate = _boilerplate(template_text)
    reference = _fingerprint(reference_text, boilerplate)
    found = []
    for student in sorted(texts):
        overlap, share, share_ref, slices, slices_ref = _compare(_fingerprint(texts[student], boilerplate),
                                                                 reference)
        found.append(Pair(student, "torch", share, share_ref, overlap, slices, slices_ref))
    found.sort(key=lambda pair: (-pair.similarity_a, -pair.overlap, pair.a))
    return found


def flagged(pair, policy, score=None):
    return (pair.score if score is None else score) >= policy.threshold and pair.overlap >= policy.min_overlap


def run(submissions, output_dir, template_dir=TEMPLATE_DIR, top=TOP_PAIRS, torch_source=None,
        reference_dir=REFERENCE_DIR):
    """Compare the modules of ``{student: submission folder}``; write
    ``DIR/similarity/`` (JSON, index and side-by-side pages). Returns the result dict."""
    from autograder.similarity import side_by_side as similarity_html

    folder = pathlib.Path(output_dir) / OUTPUT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():  # pages of an earlier run
        if PAGE_NAME.fullmatch(stale.name) or stale.name in ("index.html", RESULT_NAME):
            stale.unlink()
    version = copydetect_version()
    result = {"version": 1, "students": len(submissions), "k": K, "top": top}
    if version is None:
        result["skipped"] = ("copydetect is not installed (pip install -r requirements-dev.txt): "
                             "the similarity check was skipped")
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
    calibration = load_calibration()
    pages = similarity_html.PageWriter(folder, templates, fingerprint_hashes, FRAMEWORK)
    result["modules"] = {}
    for module in MODULES:
        policy = POLICIES[module]
        pairs = compare_module(texts[module], templates[module], references[module])
        shown = [pair for index, pair in enumerate(pairs)
                 if pair.overlap and (index < top or flagged(pair, policy))]
        rows = []
        for rank, pair in enumerate(shown, 1):
            page = pages.pair(module, rank, pair, texts[module][pair.a], texts[module][pair.b])
            rows.append({"a": pair.a, "b": pair.b, "members": pair.members or [pair.a, pair.b],
                         "identical": pair.identical, "score": round(pair.score, 4),
                         "similarity_a": round(pair.similarity_a, 4), "similarity_b": round(pair.similarity_b, 4),
                         "overlap": pair.overlap, "flagged": flagged(pair, policy), "page": page})
        result["modules"][module] = {"threshold": policy.threshold, "min_overlap": policy.min_overlap,
                                     "why": policy.why, "submissions": len(texts[module]),
                                     "pairs_compared": len(pairs), "pairs": rows,
                                     "common_passages": f"passages in more than {few(len(identical_groups(texts[module])))} "
                                                        "distinct submissions are ignored",
                                     "calibration": calibration.get(module, {})}
    result["solution_reference"] = _solution_reference(texts, templates, references, pages, top)
    if FRAMEWORK:  # the key keeps its name: class reports read "torch_reference"
        module = FRAMEWORK["module"]
        result["torch_reference"] = _framework_reference(texts[module], templates[module], pages, top, torch_source)
    pages.index(result)
    _write_json(folder, result)
    return result


def _solution_reference(texts, templates, references, pages, top):
    """Every student's modules against the reference solution, per module."""
    found = {}
    for module in MODULES:
        policy = REFERENCE_POLICIES[module]
        entry = {"threshold": policy.threshold, "min_overlap": policy.min_overlap, "why": policy.why}
        if not references[module]:
            found[module] = dict(entry, skipped=f"no solutions/{module}.py in this grader")
            continue
        rows = []
        for rank, pair in enumerate(compare_with_reference(texts[module], references[module], templates[module]), 1):
            hit = flagged(pair, policy, pair.similarity_a)
            if not pair.overlap or (rank > top and not hit):
                break
            page = pages.pair(module, rank, pair, texts[module][pair.a], references[module], other="reference")
            rows.append({"student": pair.a, "score": round(pair.similarity_a, 4), "overlap": pair.overlap,
                         "flagged": hit, "page": page})
        found[module] = dict(entry, matches=rows)
    return found


def _framework_reference(texts, template_text, pages, top, torch_source):
    path, version = (pathlib.Path(torch_source), "given") if torch_source else framework_source()
    policy, label = FRAMEWORK_POLICY, FRAMEWORK["label"]
    entry = {"threshold": policy.threshold, "min_overlap": policy.min_overlap, "why": policy.why,
             "module": FRAMEWORK["module"], "label": label}
    if path is None:
        return dict(entry, skipped=f"{version}: the comparison with {label} was skipped")
    reference = path.read_text(encoding="utf-8", errors="replace")
    entry["reference"] = f"{FRAMEWORK['package']}/{FRAMEWORK['file']} ({FRAMEWORK['package']} {version})"
    rows = []
    for rank, pair in enumerate(compare_with_reference(texts, reference, template_text), 1):
        hit = flagged(pair, policy, pair.similarity_a)
        if not pair.overlap or (rank > top and not hit):
            break
        page = pages.pair(FRAMEWORK["module"], rank, pair, texts[pair.a], reference, other="torch")
        rows.append({"student": pair.a, "score": round(pair.similarity_a, 4), "overlap": pair.overlap,
                     "flagged": hit, "page": page})
    entry["matches"] = rows
    return entry


def load_calibration():
    try:
        data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data.get("modules", {}) if isinstance(data, dict) else {}


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
