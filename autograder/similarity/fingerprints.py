"""copydetect's fingerprints of a module, taken of its canonical form.

copydetect (winnowing, the MOSS algorithm, on Pygments tokens) turns every name
into ``V``/``F``/``O``, every string into ``S`` and drops comments and blank
lines; documents are compared by the k-grams of what is left. Before that, a
module is put into one canonical form here, so that what a disguise changes
without changing the code counts for nothing:

* parsed and written back by :func:`ast.unparse`: one layout, one quoting, no
  line continuations or trailing commas of its own;
* docstrings dropped (a copy that deletes them is still a copy);
* every top-level statement and every method of a top-level class framed by
  :data:`SEPARATOR`, longer than a k-gram, so that no k-gram spans two of
  them: reordering functions or methods changes no k-gram.

A file that does not parse is fingerprinted as it is. Only fingerprints are
compared here; the pages highlight the student's own text
(:func:`page_fingerprint`). Student files are parsed, never run.
"""
import ast
import bisect
import copy
import functools
import io
import textwrap

# k: the shortest match that counts, in characters of filtered code (copydetect's
# default noise threshold). Window 1 keeps every k-gram: scores are deterministic.
K = 25
# Filtered, "pass" stays as it is: seven of them outlast any k-gram.
SEPARATOR = "\n" + "pass\n" * 7


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


@functools.lru_cache(maxsize=4096)
def canonical_parts(text):
    """The statements and methods of ``text``'s canonical form, or None when it does not parse."""
    try:
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.body and _is_docstring(node.body[0]):
                node.body = node.body[1:]
        parts = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                head = copy.copy(node)
                head.body = []
                parts.append(ast.unparse(head))
                parts += [textwrap.indent(ast.unparse(item), "    ") for item in node.body]  # layout: not fingerprinted
            else:
                parts.append(ast.unparse(node))
        return tuple(parts)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or too deep to rewrite
        return None


def canonical(text):
    """``text`` in the canonical form above (``text`` itself when it does not parse)."""
    parts = canonical_parts(text)
    return text if parts is None else SEPARATOR + SEPARATOR.join(parts) + SEPARATOR  # each part framed alike


def readable(text):
    """The canonical form as a page shows it: the parts apart by a blank line."""
    parts = canonical_parts(text)
    return text if parts is None else "\n\n".join(parts)


def to_readable(text, slices):
    """copydetect's slices of ``canonical(text)`` as slices of ``readable(text)`` (a slice
    reaching into a separator ends with its part)."""
    parts = canonical_parts(text)
    if parts is None or slices is None or len(slices) < 2:
        return slices
    if not parts:
        return [[], []]
    starts, shown, position, place = [], [], len(SEPARATOR), 0
    for part in parts:
        starts.append(position)
        shown.append(place)
        position += len(part) + len(SEPARATOR)
        place += len(part) + 2

    def moved(value):
        index = max(0, bisect.bisect_right(starts, value) - 1)
        return shown[index] + max(0, min(value - starts[index], len(parts[index])))

    return [[moved(int(value)) for value in row] for row in slices[:2]]


@functools.lru_cache(maxsize=4096)
def filtered(text):
    """copydetect's tokenised form of ``text`` and its offsets into ``text``."""
    from copydetect.utils import filter_code

    return filter_code(text, "module.py", "python")


def same_code_key(text):
    """What two files with the same code have in common however they are laid out and
    ordered: the filtered code of their canonical parts, sorted."""
    code = filtered(canonical(text))[0]
    return "\n".join(sorted(code.split(filtered(SEPARATOR)[0])))


def kgrams(text, canonical_form=True):
    """The k-grams of ``text``'s filtered (canonical) form, as strings: what is hashed."""
    code = filtered(canonical(text) if canonical_form else text)[0]
    return {code[i:i + K] for i in range(len(code) - K + 1)}


def passage_kgrams(passage):
    """The k-grams of a passage of filtered code (stored by the calibration)."""
    return {passage[i:i + K] for i in range(len(passage) - K + 1)}


def hashes(grams):
    """copydetect's hashes of k-gram strings (Python's string hash, as copydetect takes it:
    the same within one process, so boilerplate is built where it is used)."""
    import numpy as np

    return np.unique(np.array([hash(gram) for gram in grams], dtype=np.int64)) if grams else []


def _fingerprint(text, boilerplate, canonical_form):
    from copydetect import CodeFingerprint

    source = canonical(text) if canonical_form else text
    code, offsets = filtered(source)
    # What CodeFingerprint(..., filter=True) builds, from the filtered text read once.
    fingerprint = CodeFingerprint("module.py", K, 1, boilerplate, False, "python", fp=io.StringIO(code))
    fingerprint.raw_code, fingerprint.offsets = source, offsets
    return fingerprint


def fingerprint(text, boilerplate):
    """The fingerprint a score is taken from: ``text``'s canonical form, ``boilerplate``
    (hashes) left out."""
    return _fingerprint(text, boilerplate, True)


def page_fingerprint(text, boilerplate):
    """The fingerprint of ``text`` as written, for highlighting it on a page."""
    return _fingerprint(text, boilerplate, False)


def compare(first, second):
    """``(overlap, share of first, share of second, slices of first, slices of second)``."""
    from copydetect import compare_files

    overlap, (share_1, share_2), (slices_1, slices_2) = compare_files(first, second)
    return int(overlap), float(share_1), float(share_2), slices_1, slices_2


def own_size(text, boilerplate):
    """How much filtered code ``text`` has beyond ``boilerplate`` (copydetect's coverage)."""
    return int(fingerprint(text, boilerplate).token_coverage)


def text_hashes(text):
    """The k-gram hashes of a piece of code as written (to pair matched regions of two files)."""
    return [int(value) for value in page_fingerprint(text, None).hashes]
