"""argparse's own words ("usage:", "error:", "invalid choice", "show this help message
and exit") in the student's language.

argparse marks its messages for gettext (``_()`` and ``ngettext()`` of the gettext
module, looked up when a parser is built, prints help or reports an error). Its ids
are listed here so that the catalog tools find them and the catalogs translate them
(``autograder/i18n/locale/zh/grader.po``); :func:`translated` has argparse look them
up there while the command line is parsed. These are the messages of the Python
versions the course uses (3.11, 3.12): one another version words differently stays
English, which is what it was.
"""
import argparse
import contextlib

from autograder.i18n import _, catalog

IDS = (
    _("usage: "), _("positional arguments"), _("options"), _("show this help message and exit"),
    _("%(prog)s: error: %(message)s\n"), _("argument %(argument_name)s: %(message)s"),
    _("invalid choice: %(value)r (choose from %(choices)s)"), _("invalid %(type)s value: %(value)r"),
    _("unrecognized arguments: %s"), _("the following arguments are required: %s"),
    _("one of the arguments %s is required"), _("not allowed with argument %s"),
    _("ambiguous option: %(option)s could match %(matches)s"), _("expected one argument"),
    _("expected at most one argument"), _("expected at least one argument"), _("expected %s argument"),
    _("expected %s arguments"), _("ignored explicit argument %r"),
    _("unknown parser %(parser_name)r (choices: %(choices)s)"),
)


_asked = [None]  # the language of the command line being parsed


def help_language(root):
    """The language a command's help is written in: the command line's (inside
    :func:`translated`), else the configured one."""
    from autograder.i18n import resolve_language

    return _asked[0] or resolve_language(root=root)


@contextlib.contextmanager
def translated(lang):
    """While this lasts, argparse speaks ``lang`` (English: unchanged), and so do the
    commands' help texts (:func:`help_language`)."""
    _asked[0] = lang
    try:
        with _argparse_in(lang):
            yield
    finally:
        _asked[0] = None


@contextlib.contextmanager
def _argparse_in(lang):
    table = catalog(lang)
    if not table or not hasattr(argparse, "_") or not hasattr(argparse, "ngettext"):
        yield
        return

    def gettext(message):
        return table.get(message, message)

    def ngettext(singular, plural, count):
        message = singular if count == 1 else plural
        return table.get(message, message)

    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = gettext, ngettext
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


def language_asked(argv, root):
    """The feedback language of this command line: its ``--lang``, else the configured one."""
    from autograder.i18n import resolve_language

    option = None
    for index, word in enumerate(argv):
        if word == "--lang" and index + 1 < len(argv):
            option = argv[index + 1]
        elif word.startswith("--lang="):
            option = word.split("=", 1)[1]
    return resolve_language(option, root=root)
