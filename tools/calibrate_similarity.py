"""Re-run the similarity calibration from the honest set: the independent correct
solutions of a chapter's honest folder (one file per author, put into the current stubs
by tests/support/honest.py) and the reference solutions. The honest folder is the
chapter's solutions/honest/ (this repository's chapter: tests/data/honest_similarity/)
or the one --honest names.

Per module (autograder.similarity.calibration): the thresholds (for pairs of students
and against the reference), what honest solutions reach when they were not learned
from, a check on held-out authors (every third author by name), and the passages that
honest solutions write alike, which the check leaves out. Written to
autograder/assignment/similarity_calibration.json. Also printed, not stored: how
disguised copies (tests/support/disguise.py) of each honest author and of the reference score.

Re-run it whenever the stubs (exercises/), the reference solutions or the honest set
change; tests/engine/similarity/test_similarity.py fails while the file is stale. Exits 1 when a held-out
author reaches a threshold (the set, or the margin, needs a look).

    python tools/calibrate_similarity.py [--check] [--chapter PACKAGE|FOLDER] [--honest DIR]
"""
import argparse
import json
import sys
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder import active_assignment  # noqa: E402


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the stored calibration is stale")
    parser.add_argument("--chapter", help="the chapter's package or folder (default: the active assignment)")
    parser.add_argument("--honest", type=pathlib.Path, metavar="DIR", help="the honest set (default: the chapter's)")
    return parser.parse_args(argv)


if __name__ == "__main__" and arguments(sys.argv[1:]).chapter:  # before the modules below read the chapter
    active_assignment.use(arguments(sys.argv[1:]).chapter)

from autograder.similarity import calibration, convergence, fingerprints, pairs as similarity  # noqa: E402
from support.disguise import disguise  # noqa: E402
from support import honest  # noqa: E402



def honest_home(chapter):
    """Where the chapter's honest set is when --honest names none: beside its reference
    (solutions/honest/); this repository's chapter keeps its own with the tests' data."""
    own = chapter.solutions_dir / "honest"
    return own if own.is_dir() or chapter.package != active_assignment.DEFAULT_PACKAGE else honest.SET_DIR


HONEST = [honest_home(similarity.ASSIGNMENT)]


def shown(path):
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def held_out(names):
    """The authors kept out of the thresholds: every third one by name."""
    return sorted(names)[2::3]


def honest_texts(module):
    stub = similarity.read_module(similarity.TEMPLATE_DIR, module) or ""
    return stub, {author: honest.module_text(space, module, stub) for author, space in honest.authors(HONEST[0]).items()}


def measure():
    modules = {}
    for module in similarity.MODULES:
        stub, texts = honest_texts(module)
        reference = similarity.read_module(similarity.REFERENCE_DIR, module) or ""
        modules[module] = calibration.calibrate(texts, stub, reference, module in similarity.ASSIGNMENT.similarity_public,
                                                held_out(texts))
    return {"version": 2, "k": fingerprints.K, "modules": modules,
            "source": f"{shown(HONEST[0])} ({len(honest.authors(HONEST[0]))} authors) on the current exercises/"}


def disguised(measured):
    """``{module: (lowest score of a disguised copy of an honest author, of the reference)}``."""
    found = {}
    for module, entry in measured["modules"].items():
        stub, texts = honest_texts(module)
        reference = similarity.read_module(similarity.REFERENCE_DIR, module) or ""
        boilerplate = similarity.module_boilerplate(module, stub, reference, measured["modules"])
        copies = [calibration.score(disguise(text), text, boilerplate)[0] for text in texts.values()]
        of_reference = None if entry["reference"] != "compared" else \
            calibration.score(disguise(reference), reference, boilerplate)[0]
        found[module] = (min(copies), of_reference)
    return found


def framework(measured):
    """How close the honest set (each author not learned from) and the reference come to the
    framework's file of the installed package: printed only, it changes with the package."""
    settings = similarity.FRAMEWORK
    path, version = similarity.framework_source() if settings else (None, "")
    if path is None:
        return ""
    module = settings["module"]
    stub, texts = honest_texts(module)
    other = path.read_text(encoding="utf-8", errors="replace")
    reference = similarity.read_module(similarity.REFERENCE_DIR, module) or ""
    texts = dict(texts, **({"the reference": reference} if reference else {}))
    found = []
    for author, text in texts.items():
        rest = [value for name, value in texts.items() if name != author]
        boilerplate = convergence.boilerplate(stub, convergence.dictated_kgrams(rest, stub))
        found.append((calibration.score(text, other, boilerplate), author))
    (best, overlap), author = max(found)
    return (f"{module} against {settings['label']} ({settings['package']} {version}): threshold "
            f"{settings['threshold']:.2f}; highest {best:.4f} ({author}, {overlap} characters), each author "
            "not learned from")


def summary(measured):
    lines = [framework(measured)]
    for module, (copy, of_reference) in disguised(measured).items():
        entry = measured["modules"][module]
        lines.append(f"{module}: pairs threshold {entry['threshold']:.2f}; honest max {entry['max_score']:.4f} "
                     f"(leave two out, {entry['pairs']} pairs), held out max {entry['held_out_max_score']:.4f} "
                     f"({entry['held_out_pairs']} pairs); disguised copies of the honest authors: at least {copy:.4f}")
        if entry["reference"] == "compared":
            lines.append(f"  reference threshold {entry['reference_threshold']:.2f}; honest max "
                         f"{entry['reference_max_score']:.4f}, held out max {entry['reference_held_out_max_score']:.4f}; "
                         f"disguised copy of the reference: {of_reference:.4f}")
        else:
            lines.append(f"  reference: {entry['reference']} (not compared)")
    return "\n".join(line for line in lines if line)  # no framework: no line of its own


def failures(measured):
    problems = []
    for module, entry in measured["modules"].items():
        if entry["held_out_reached"]:
            problems.append(f"{module}: {entry['held_out_reached']} held-out pair(s) reach {entry['threshold']:.2f}")
        if entry.get("reference_held_out_reached"):
            problems.append(f"{module}: {entry['reference_held_out_reached']} held-out author(s) reach the "
                            f"reference threshold {entry['reference_threshold']:.2f}")
    return problems


def main(argv):
    args = arguments(argv)
    if args.honest:
        HONEST[0] = args.honest.resolve()
    if not honest.authors(HONEST[0]):
        print(f"no honest set in {HONEST[0]}: write one author's solutions per file there, or name a folder "
              "with --honest", file=sys.stderr)
        return 2
    measured = measure()
    text = json.dumps(measured, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.check:
        current = similarity.CALIBRATION.read_text(encoding="utf-8") if similarity.CALIBRATION.exists() else ""
        if current != text:
            print(f"{similarity.CALIBRATION.name} is stale: run python tools/calibrate_similarity.py")
            return 1
        return 0
    similarity.CALIBRATION.write_text(text, encoding="utf-8")
    print(summary(measured))
    problems = failures(measured)
    for problem in problems:
        print(f"held-out check failed: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
