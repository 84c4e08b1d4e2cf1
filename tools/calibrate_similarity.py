"""Re-run the similarity calibration: score the independent correct solutions of
tests/data/honest_fills.py (put into the current stubs) against each other and
write autograder/assignment/similarity_calibration.json, which the class report quotes
("k of n honest pairs reach the threshold"). Run it after the stubs or the
thresholds change; tests/test_similarity.py fails while the file is stale.

    python tools/calibrate_similarity.py [--check]
"""
import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder.similarity import pairs as similarity  # noqa: E402
import honest  # noqa: E402


def calibrate(solutions):
    """How independent correct solutions (``{author: folder}``) score against each
    other and against the reference solution, per module."""
    found = {}
    for module in similarity.MODULES:
        texts = {author: similarity.read_module(folder, module) for author, folder in solutions.items()}
        texts = {author: text for author, text in texts.items() if text is not None}
        stub = similarity.read_module(similarity.TEMPLATE_DIR, module) or ""
        reference = similarity.read_module(similarity.REFERENCE_DIR, module) or ""
        pairs = similarity.compare_module(texts, stub, reference)
        against = similarity.compare_with_reference(texts, reference, stub) if reference else []
        policy, to_reference = similarity.POLICIES[module], similarity.REFERENCE_POLICIES[module]
        found[module] = {
            "solutions": len(texts), "pairs": len(pairs), "threshold": policy.threshold,
            "reached": sum(1 for pair in pairs if similarity.flagged(pair, policy)),
            "max_score": round(max((pair.score for pair in pairs), default=0.0), 4),
            "reference_threshold": to_reference.threshold,
            "reference_max_score": round(max((pair.similarity_a for pair in against), default=0.0), 4),
            "reference_reached": sum(1 for pair in against
                                     if similarity.flagged(pair, to_reference, pair.similarity_a))}
    return found


def measure():
    with tempfile.TemporaryDirectory(prefix="amp-calibration-") as scratch:
        return {"version": 1, "source": "tests/data/honest_fills.py on the current exercises/",
                "modules": calibrate(honest.write_class(scratch))}


def main(argv):
    text = json.dumps(measure(), indent=2, sort_keys=True) + "\n"
    if "--check" in argv:
        current = similarity.CALIBRATION.read_text(encoding="utf-8") if similarity.CALIBRATION.exists() else ""
        if current != text:
            print(f"{similarity.CALIBRATION.name} is stale: run python tools/calibrate_similarity.py")
            return 1
        return 0
    similarity.CALIBRATION.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
