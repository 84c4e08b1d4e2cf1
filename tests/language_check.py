"""Does a Chinese text still hold untranslated English sentences?

A run of four or more English words counts as untranslated. Code is not
words: backtick spans, identifiers (snake_case, dotted names, calls,
CamelCase, ALLCAPS such as TODO/NaN/FP16), paths, numbers; lines quoting the
student's own source (``第 N 行：...``) are skipped. Chinese characters and
Chinese punctuation end a run.
"""
import re

_CODE_SPAN = re.compile(r"`[^`]*`")
_CODE_LINE = re.compile(r"^\s*(第\s*\d+\s*行：|line \d+: |\^)")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef“”‘’…]+")
_WORD = re.compile(r"[A-Za-z][a-z'’-]*")
_EDGE = ",.;:!?\"'()[]{}"


def english_runs(text, min_words=4):
    """The runs of ``min_words`` or more English words in ``text``."""
    found = []
    for line in (text or "").splitlines():
        if _CODE_LINE.match(line):
            continue
        for segment in _CJK.split(_CODE_SPAN.sub(" | ", line)):
            run = []
            for chunk in segment.split():
                bare = chunk.strip(_EDGE)
                if bare and _WORD.fullmatch(bare):
                    run.append(bare)
                    continue
                if len(run) >= min_words:
                    found.append(" ".join(run))
                run = []
            if len(run) >= min_words:
                found.append(" ".join(run))
    return found
