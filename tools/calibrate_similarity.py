"""Re-run the similarity calibration: score the independent correct solutions of
tests/data/honest_fills.py (put into the current stubs) against each other and
write autograder/similarity_calibration.json, which the class report quotes
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

from autograder import similarity  # noqa: E402
import honest  # noqa: E402


def measure():
    with tempfile.TemporaryDirectory(prefix="amp-calibration-") as scratch:
        return {"version": 1, "source": "tests/data/honest_fills.py on the current exercises/",
                "modules": similarity.calibrate(honest.write_class(scratch))}


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
