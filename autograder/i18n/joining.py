"""Joining phrases as each language punctuates them: English lists take ", ", clauses "; ",
sentences a space; Chinese takes "，", "；" and nothing between sentences. One place for every
page and report, so a joint is translated once."""
from autograder.i18n import _

_COMMA, _SEMICOLON, _SPACE = _("{first}, {second}"), _("{first}; {second}"), _("{first} {second}")
_FULL_STOP = _("{sentence}.")


def _folded(items, joint, lang):
    items = [str(item) for item in items if item not in ("", None)]
    text = items[0] if items else ""
    for item in items[1:]:
        text = _(joint.msgid, first=text, second=item).render(lang)
    return text


def sentence(text, lang):
    """``text`` ended with the language's full stop."""
    return _(_FULL_STOP.msgid, sentence=text).render(lang)


def listed(items, lang):
    """``a, b, c`` with the language's comma."""
    return _folded(items, _COMMA, lang)


def clauses(items, lang):
    """``a; b; c`` with the language's semicolon."""
    return _folded(items, _SEMICOLON, lang)


def sentences(items, lang):
    """Sentences one after the other (a space between them in English, none in Chinese)."""
    return _folded(items, _SPACE, lang)
