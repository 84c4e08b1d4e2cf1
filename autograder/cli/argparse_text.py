"""argparse's own words ("usage:", "error:", "invalid choice", "show this help message
and exit") in the student's language.

argparse marks its messages for gettext (``_()`` and ``ngettext()`` of the gettext
module, looked up when a parser is built, prints help or reports an error). Its ids
are listed here so that the catalog tools find them and the catalogs translate them
(``autograder/i18n/locale/zh/grader.po``); :func:`translated` has argparse look them
up there while the command line is parsed. These are the messages of the Python
versions the course supports (3.10 to 3.14; 3.10 is asked for one of them by
:meth:`Parser.error`): one another version words differently stays English, which is
what it was.

:class:`Parser` prints what argparse prints (usage, help, errors) wrapped at the
terminal's width between words: argparse counts characters, not the two cells of
a Chinese one, and never wraps its error messages.
"""
import argparse
import contextlib
import re
import shutil
import sys

from autograder import active_assignment, locations
from autograder.i18n import _, catalog, command_line_in, help_language
from autograder.i18n import text as t

IDS = (
    _("usage: "), _("positional arguments"), _("options"), _("show this help message and exit"),
    _("%(prog)s: error: %(message)s\n"), _("argument %(argument_name)s: %(message)s"),
    _("invalid choice: %(value)r (choose from %(choices)s)"), _("invalid %(type)s value: %(value)r"),
    _("unrecognized arguments: %s"), _("the following arguments are required: %s"),
    _("one of the arguments %s is required"), _("not allowed with argument %s"),
    _("ambiguous option: %(option)s could match %(matches)s"), _("expected one argument"),
    _("expected at most one argument"), _("expected at least one argument"), _("expected %s argument"),
    _("expected %s arguments"), _("ignored explicit argument %r"),
    _("unknown parser %(parser_name)r (choices: %(choices)s)"), _("%(heading)s:"),
    _("optional arguments"),  # Python 3.10's heading for what 3.11 calls "options"
)
_HEADING = re.compile(r"^(\S[^\n]*[\u4e00-\u9fff]):$", re.MULTILINE)  # "位置参数:" before Python 3.13


class _Formatter(argparse.HelpFormatter):
    """argparse's layout, but a description or an option's help stays one line:
    :func:`_write` breaks it by cells (argparse counts characters, so a Chinese line
    came out twice as wide, and breaking it again left short lines behind)."""

    def _fill_text(self, text, width, indent):
        return indent + " ".join(text.split())

    def _split_lines(self, text, width):
        return [" ".join(text.split())]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage, help and errors wrap at the terminal's width."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def format_help(self):
        return _HEADING.sub(r"\1：", super().format_help())

    def print_usage(self, file=None):
        _write(self.format_usage(), file or sys.stdout)

    def print_help(self, file=None):
        _write(self.format_help(), file or sys.stdout)

    def error(self, message):
        # Python 3.10's argparse words "argument X: ..." without asking gettext (3.11 asks)
        found = re.fullmatch(r"argument (\S+): (.*)", message, re.S) if sys.version_info < (3, 11) else None
        if found:
            message = argparse._("argument %(argument_name)s: %(message)s") % {
                "argument_name": found.group(1), "message": found.group(2)}
        super().error(message)

    def exit(self, status=0, message=None):
        if message:
            _write(message, sys.stderr)
        sys.exit(status)


def _write(text, file):
    try:
        from rich.cells import cell_len

        from autograder.reports import wrap
    except ImportError:  # a laptop without the requirements: the help as argparse laid it out
        wrap = cell_len = None
    if wrap is None or not wrap.wrapping(file):
        try:
            file.write(text)
        except (AttributeError, OSError):
            pass
        return
    width = max(shutil.get_terminal_size((80, 24)).columns, 40)
    source, lines = text.split("\n"), []
    while source:
        line = source.pop(0)
        # an option's help continues under its help column: argparse broke it at spaces,
        # counting characters, so it is joined again and wrapped by cells
        column = re.match(r"( +)(\S(?:\S| (?! ))*  +)\S", line) if line.startswith("  ") else None
        if column and cell_len(column.group(1) + column.group(2)) < width // 2:
            indent = " " * cell_len(column.group(1) + column.group(2))
            while source and source[0].startswith(indent) and source[0][len(indent):][:1] not in ("", " "):
                line += " " + source.pop(0).strip()
            lines += wrap.wrap(line, width, hang=" " * cell_len(column.group(2)))
        else:
            lines += wrap.wrap(line, width) if line else [""]
    try:
        file.write("\n".join(lines))
    except (AttributeError, OSError):
        pass


def description():
    """What ``python -m autograder --help`` says first, in the help's language."""
    return t("Grade the {title} exercises.", help_language(str(locations.REPO_ROOT)),
             title=active_assignment.current().title)


@contextlib.contextmanager
def translated(lang):
    """While this lasts, argparse speaks ``lang`` (English: unchanged), and so do the
    commands' help texts (:func:`autograder.i18n.help_language`)."""
    with command_line_in(lang), _argparse_in(lang):
        yield


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


def left_out(command, lang):
    """What a student's repository answers to a staff command: the export left its module out."""
    return t("{command} is a course staff command, not part of the student repository.", lang, command=command)
