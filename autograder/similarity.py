"""Pairwise similarity of the student modules: the academic-integrity check.

The fingerprinting is copydetect's (a maintained implementation of winnowing,
the MOSS algorithm, on Pygments tokens): every name becomes ``V``/``F``/``O``,
every string ``S``, comments and blank lines vanish, and documents are
compared by the k-grams of what is left. Renaming, reordering functions and
rewriting comments therefore change little. What this module adds: per-module
comparison (``amp_update.py`` only against ``amp_update.py``...), the
template's given code (the stubs in ``exercises/``) as boilerplate, thresholds
per module, every ``loss_scaler.py`` against the installed torch's own
``torch/amp/grad_scaler.py``, and the outputs (``similarity.json``, our own
side-by-side HTML: :mod:`autograder.similarity_html`).

copydetect is a staff dependency (requirements-dev.txt); without it the check
is skipped and says so. Student files are read through
:mod:`autograder.safe_files`, never executed.
"""
import dataclasses
import importlib.metadata
import importlib.util
import io
import itertools
import json
import pathlib
import re

from autograder import MODULES, safe_files

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
TEMPLATE_DIR = REPO_ROOT / "exercises"
OUTPUT_FOLDER = "similarity"
RESULT_NAME = "similarity.json"
MAX_SOURCE_BYTES = 1 * 2**20      # what the grader takes of a module (submission.MAX_SOURCE_BYTES)
# k: the shortest match that counts, in characters of filtered code (copydetect's
# default noise threshold). Window 1 keeps every k-gram: scores are deterministic.
K = 25
TOP_PAIRS = 10
PAGE_NAME = re.compile(r"[a-z_]+-(torch-)?[0-9]{1,4}\.html")


@dataclasses.dataclass(frozen=True)
class Policy:
    threshold: float     # flag at or above this score (the larger of the two shares)
    min_overlap: int     # ... and at least this many matching filtered characters
    why: str


POLICIES = {
    "amp_update": Policy(0.90, 100, (
        "The three TODOs are a few lines each and have one idiomatic answer (unscale in a list "
        "comprehension, an FP32 sum of squares, an all-finite check): independent correct solutions "
        "look alike once the given code is removed. Only a near-identical file is flagged, and even "
        "that is weak evidence on its own; read the pair against its other modules.")),
    "loss_scaler": Policy(0.50, 150, (
        "Six TODOs and a class to write: independent solutions share well under half of what they "
        "wrote (the reference and an independent tensor-based variant: about 0.26). Half or more "
        "in common is worth reading side by side.")),
    "amp_training_step": Policy(0.50, 150, (
        "Four TODOs wiring autocast, backward, unscale, clip and step: the calls are fixed by the "
        "assignment but their arrangement is not (independent solutions: about 0.18).")),
}
TORCH_POLICY = Policy(0.40, 150, (
    "Share of the student's loss_scaler.py found in torch/amp/grad_scaler.py of the installed "
    "torch (names do not matter). Hand-written scalers follow the same contract but share little "
    "code with it (the reference and an independent variant: about 0.1)."))


@dataclasses.dataclass
class Pair:
    a: str
    b: str
    similarity_a: float
    similarity_b: float
    overlap: int
    slices_a: object = None
    slices_b: object = None

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


def torch_grad_scaler():
    """``(path, torch version)`` of the installed torch's GradScaler source, or
    ``(None, reason)``. Found without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, "torch is not installed here"
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "amp" / "grad_scaler.py"
    if not path.is_file():
        return None, f"{path} does not exist in this torch"
    try:
        version = importlib.metadata.version("torch")
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


def _fingerprint(text, boilerplate):
    from copydetect import CodeFingerprint

    # ``fp`` hands copydetect the text we read; the name only picks the Python lexer.
    return CodeFingerprint("module.py", K, 1, boilerplate, True, "python", fp=io.StringIO(text))


def _boilerplate(template_text):
    import numpy as np

    if not template_text:
        return []
    return np.unique(np.array(list(_fingerprint(template_text, None).hashes)))


def _compare(first, second):
    from copydetect import compare_files

    overlap, (share_1, share_2), (slices_1, slices_2) = compare_files(first, second)
    return int(overlap), float(share_1), float(share_2), slices_1, slices_2


def compare_module(texts, template_text):
    """Every pair of ``{student: text}``, best first, as :class:`Pair`."""
    boilerplate = _boilerplate(template_text)
    prints = {student: _fingerprint(text, boilerplate) for student, text in texts.items()}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        overlap, share_a, share_b, slices_a, slices_b = _compare(prints[a], prints[b])
        pairs.append(Pair(a, b, share_a, share_b, overlap, slices_a, slices_b))
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


def run(submissions, output_dir, template_dir=TEMPLATE_DIR, top=TOP_PAIRS, torch_source=None):
    """Compare the modules of ``{student: submission folder}``; write
    ``DIR/similarity/`` (JSON, index and side-by-side pages). Returns the result dict."""
    from autograder import similarity_html

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
    pages = similarity_html.PageWriter(folder)
    result["modules"] = {}
    for module in MODULES:
        policy = POLICIES[module]
        pairs = compare_module(texts[module], templates[module])
        shown = [pair for index, pair in enumerate(pairs)
                 if pair.overlap and (index < top or flagged(pair, policy))]
        rows = []
        for rank, pair in enumerate(shown, 1):
            page = pages.pair(module, rank, pair, texts[module][pair.a], texts[module][pair.b])
            rows.append({"a": pair.a, "b": pair.b, "score": round(pair.score, 4),
                         "similarity_a": round(pair.similarity_a, 4), "similarity_b": round(pair.similarity_b, 4),
                         "overlap": pair.overlap, "flagged": flagged(pair, policy), "page": page})
        result["modules"][module] = {"threshold": policy.threshold, "min_overlap": policy.min_overlap,
                                     "why": policy.why, "submissions": len(texts[module]),
                                     "pairs_compared": len(pairs), "pairs": rows}
    result["torch_reference"] = _torch_reference(texts["loss_scaler"], templates["loss_scaler"], pages, top,
                                                 torch_source)
    pages.index(result)
    _write_json(folder, result)
    return result


def _torch_reference(texts, template_text, pages, top, torch_source):
    path, version = (pathlib.Path(torch_source), "given") if torch_source else torch_grad_scaler()
    entry = {"threshold": TORCH_POLICY.threshold, "min_overlap": TORCH_POLICY.min_overlap, "why": TORCH_POLICY.why}
    if path is None:
        return dict(entry, skipped=f"{version}: the comparison with GradScaler was skipped")
    reference = path.read_text(encoding="utf-8", errors="replace")
    entry["reference"] = f"torch/amp/grad_scaler.py (torch {version})"
    rows = []
    for rank, pair in enumerate(compare_with_reference(texts, reference, template_text), 1):
        hit = flagged(pair, TORCH_POLICY, pair.similarity_a)
        if not pair.overlap or (rank > top and not hit):
            break
        page = pages.pair("loss_scaler", rank, pair, texts[pair.a], reference, torch=True)
        rows.append({"student": pair.a, "score": round(pair.similarity_a, 4), "overlap": pair.overlap,
                     "flagged": hit, "page": page})
    entry["matches"] = rows
    return entry


def _write_json(folder, result):
    path = folder / RESULT_NAME
    temporary = folder / f".{RESULT_NAME}.tmp"
    temporary.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)


def load_result(output_dir):
    """``DIR/similarity/similarity.json`` as a dict, or None (absent or unreadable)."""
    try:
        data = json.loads(safe_files.read_text(str(pathlib.Path(output_dir) / OUTPUT_FOLDER / RESULT_NAME),
                                               16 * 2**20))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
