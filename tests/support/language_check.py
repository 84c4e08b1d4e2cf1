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


# -- a whole page ---------------------------------------------------------------------------------
_DROPPED = re.compile(r"<(script|style|code|pre|title)\b.*?</\1>", re.DOTALL)
_ATTRIBUTES = re.compile(r'\b(?:placeholder|aria-label|alt)="([^"]*)"')
_TOKEN = re.compile(r"[^\s\u3000-\u303f\uff00-\uffef“”‘’…（），。；：、]+")
NAMES = frozenset(("Python", "pytest", "GitHub", "Classroom", "Landlock", "git", "matplotlib", "GradScaler",
                   "TODO", "PyTorch", "copydetect", "MOSS", "root"))


def _is_code(token):
    """A token that is code, a number, a path or a name in capitals (FP16, NaN), not an English word."""
    bare = token.strip(_EDGE + "*_–-—·&;")
    return (token.startswith("--") or not bare or not re.search(r"[A-Za-z]", bare) or re.search(r"[\d_./@=<>|\\]", bare)
            or re.fullmatch(r"[A-Z][A-Z0-9]+s?|[A-Za-z]+[A-Z][A-Za-z]*", bare) is not None)


def english_words(text, allowed=(), code=()):
    """The English words of a Chinese ``text`` outside code, numbers, the ``allowed``
    strings (student names, data the page shows as it is), product names and ``code``
    (identifiers the assignment's own Chinese text names bare, such as ``scale``)."""
    for value in sorted(allowed, key=len, reverse=True):
        text = text.replace(value, " ")
    found = []
    for token in _TOKEN.findall(text):
        if _is_code(token):
            continue
        for word in re.findall(r"[A-Za-z][A-Za-z'’-]*", token):
            if word not in NAMES and word not in code:
                found.append(word)
    return found


def identifiers(*files):
    """The names a piece of Python code uses (its functions, parameters, variables)."""
    return {name for path in files for name in re.findall(r"[A-Za-z_]\w*", open(path, encoding="utf-8").read())}


def page_text(page):
    """What a reader of an HTML page sees as words: text outside code and preformatted
    blocks, and the placeholder and label of a field."""
    import html as html_module

    shown = _DROPPED.sub(" ", page.split("<body>", 1)[-1])
    fields = " ".join(_ATTRIBUTES.findall(shown))
    return html_module.unescape(re.sub(r"<[^>]+>", " ", shown) + " " + fields)


def markdown_text(report):
    """What a reader of a Markdown report sees as words: code spans, code blocks and link targets left out."""
    report = re.sub(r"```.*?```", " ", report, flags=re.DOTALL)
    report = re.sub(r"\]\([^)]*\)", "] ", report)
    return _CODE_SPAN.sub(" ", report.replace("\\", ""))
