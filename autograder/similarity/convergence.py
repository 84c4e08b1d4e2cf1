"""What honest students write alike: learned from independent correct solutions.

A stub's comments all but dictate some lines (a one-line multiplication, a loop
the comment spells out): students who never saw each other's work write
them the same way. Closeness there is no evidence. What counts as dictated is
learned from a set of independently written correct solutions on the current
stubs and the reference solution (one more independent author): a k-gram of
filtered code that at least :data:`MIN_AUTHORS` of them share, beyond the
stub's own text. Never from the class being checked: a passage that many
students of one class share may be the solution that went round the class.

The calibration (tools/calibrate_similarity.py) stores the dictated k-grams
as passages of filtered code (names already ``V``/``F``, strings ``S``) in the
assignment's calibration file; :func:`boilerplate` turns them back into
copydetect's hashes where a check runs.
"""
import collections

from autograder.similarity import fingerprints

MIN_AUTHORS = 2


def stub_kgrams(stub_text):
    return fingerprints.kgrams(stub_text) | fingerprints.kgrams(stub_text, canonical_form=False)


def author_kgrams(texts, stub_text):
    """Each author's k-grams beyond the stub's, in the order of ``texts``."""
    stub = stub_kgrams(stub_text)
    return [fingerprints.kgrams(text) - stub for text in texts]


def shared(sets):
    """The k-grams found in at least :data:`MIN_AUTHORS` of ``sets`` (one per author)."""
    counts = collections.Counter()
    for grams in sets:
        counts.update(grams)
    return {gram for gram, count in counts.items() if count >= MIN_AUTHORS}


def dictated_kgrams(texts, stub_text):
    """The k-grams that at least :data:`MIN_AUTHORS` of ``texts`` (one per author) share,
    the stub's own left out."""
    return shared(author_kgrams(texts, stub_text))


def passages(texts, stub_text):
    """:func:`dictated_kgrams` as the shortest list of passages of filtered code that
    holds exactly those k-grams: runs of consecutive dictated k-grams, sorted."""
    dictated = dictated_kgrams(texts, stub_text)
    K = fingerprints.K
    found = set()
    for text in texts:
        code = fingerprints.filtered(fingerprints.canonical(text))[0]
        start = None
        for index in range(len(code) - K + 2):
            inside = index <= len(code) - K and code[index:index + K] in dictated
            if inside and start is None:
                start = index
            elif not inside and start is not None:
                found.add(code[start:index - 1 + K])
                start = None
    return sorted(found)


def passage_kgrams(stored):
    """The k-grams of stored passages (the calibration file's)."""
    grams = set()
    for passage in stored:
        grams |= fingerprints.passage_kgrams(passage)
    return grams


def boilerplate(stub_text, dictated=frozenset(), public=()):
    """copydetect's boilerplate hashes for one module: the stub's text (as written and
    in canonical form), the ``dictated`` k-grams and every k-gram of the ``public``
    texts (a reference printed for everyone to read)."""
    grams = stub_kgrams(stub_text) | set(dictated)
    for text in public:
        grams |= fingerprints.kgrams(text)
    return fingerprints.hashes(grams)
