"""Thresholds from what honest solutions reach when they were not learned from.

Given independently written correct solutions of one module (``{author: text}``),
its stub and its reference solution:

* every pair of authors is scored with what the *other* authors (and the
  reference) write alike left out, as a class's honest students are scored
  with the set learned without them (leave two out); every author against the
  reference likewise (leave one out);
* the threshold is :data:`MARGIN` above the highest of those scores (never
  below :data:`FLOOR`), rounded up to two decimals;
* authors held out from all of that are then scored as a class would be (the
  others learned, the held-out ones new) and must stay below the thresholds:
  the check that the thresholds are not fitted to the very solutions they
  were picked on.

A pair's score is the larger of the two shares of own code the files have in
common (as in :mod:`autograder.similarity.pairs`).
"""
import itertools
import math

from autograder.similarity import convergence, fingerprints

MARGIN = 0.25
FLOOR = 0.5


def score(text_a, text_b, boilerplate):
    """``(score, overlap)`` of two files with ``boilerplate`` left out."""
    overlap, share_a, share_b, _, _ = fingerprints.compare(fingerprints.fingerprint(text_a, boilerplate),
                                                           fingerprints.fingerprint(text_b, boilerplate))
    return max(share_a, share_b), overlap


def threshold_above(highest):
    return min(0.95, math.ceil(round(max(FLOOR, highest + MARGIN) * 100, 6)) / 100)


def _summary(found, threshold):
    scores = [value for value, _ in found]
    return {"pairs": len(found), "max_score": round(max(scores, default=0.0), 4),
            "max_overlap": max((overlap for _, overlap in found), default=0),
            "reached": sum(1 for value in scores if value >= threshold)}


def calibrate(texts, stub, reference="", public=False, held_out=()):
    """The calibration of one module (a dict, as stored), ``held_out``: authors kept out
    of the threshold and checked against it."""
    names = sorted(texts)
    chosen = [name for name in names if name not in held_out]
    others = [name for name in names if name in held_out]
    stub_grams = convergence.stub_kgrams(stub)
    own = {name: fingerprints.kgrams(texts[name]) - stub_grams for name in names}
    authors = {name: own[name] for name in names}
    if reference:  # the reference is one more independent author
        authors["\0reference"] = fingerprints.kgrams(reference) - stub_grams
    public_texts = [reference] if public and reference else []

    def boilerplate(pool):
        return convergence.boilerplate(stub, convergence.shared([authors[name] for name in pool]), public_texts)

    with_reference = ["\0reference"] if reference else []
    honest = [score(texts[a], texts[b], boilerplate([n for n in chosen if n not in (a, b)] + with_reference))
              for a, b in itertools.combinations(chosen, 2)]
    entry = {"authors": len(names), "calibration_authors": chosen, "held_out_authors": others,
             "threshold": threshold_above(max((value for value, _ in honest), default=0.0))}
    entry.update(_summary(honest, entry["threshold"]))
    learned = boilerplate(chosen + with_reference)
    new_pairs = [(a, b) for a, b in itertools.combinations(names, 2) if a in held_out or b in held_out]
    held = _summary([score(texts[a], texts[b], learned) for a, b in new_pairs], entry["threshold"])
    entry.update({f"held_out_{key}": value for key, value in held.items()})
    if reference and not public:
        against = [score(texts[a], reference, boilerplate([n for n in chosen if n != a] + with_reference))
                   for a in chosen]
        threshold = threshold_above(max((value for value, _ in against), default=0.0))
        entry.update({f"reference_{key}": value for key, value in _summary(against, threshold).items()})
        entry["reference_threshold"] = threshold
        held = _summary([score(texts[a], reference, learned) for a in others], threshold)
        entry.update({f"reference_held_out_{key}": value for key, value in held.items()})
    entry["reference"] = "public" if public_texts else "compared" if reference else "none"
    entry["passages"] = convergence.passages([texts[name] for name in names] + ([reference] if reference else []),
                                             stub)
    return entry
