"""Message catalogs: everything a student reads from the grader, in Chinese or English.

Messages are written in the code as English message ids, ``_("... {name} ...",
name=value)``, and rendered late (``Message.render(lang)``): a hint or a
failure built inside a test is turned into text only once the report knows the
run's language. The translations live in gettext ``.po`` catalogs: the
engine's under ``autograder/i18n/locale/<lang>/``, the assignment's under its own
``locale/<lang>/`` (several files per language, one per area, so that each can
be edited on its own); the grader reads them itself (:func:`translations`),
Babel's extractor finds the ids and its tools keep the files
(``tests/engine/i18n/test_catalogs.py`` checks that every id has a
translation with the same placeholders). English is the source language: an
id is its own English text.

The language comes from, in order: ``--lang``, ``$AUTOGRADER_LANG``, the
``[tool.autograder] lang`` setting of the repository's ``pyproject.toml``, and
English.
"""
import contextlib
import functools
import os
import pathlib
import re
import string

from autograder import active_assignment

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "en"
ENV_VAR = "AUTOGRADER_LANG"
LOCALE_DIR = pathlib.Path(__file__).resolve().parent / "locale"
_current = [None]
_asked = [None]  # the language of the command line being parsed (:func:`command_line_in`)


class Message:
    """A message id with its parameters, rendered in any language on demand.
    Parameters may themselves be messages (rendered in the same language)."""

    __slots__ = ("msgid", "params")

    def __init__(self, msgid, **params):
        self.msgid = msgid
        self.params = params

    def render(self, lang=None):
        lang = lang or language()
        template = catalog(lang).get(self.msgid) or self.msgid
        params = {key: render(value, lang) for key, value in self.params.items()}
        if lang != DEFAULT_LANGUAGE:
            template = _close_joints(template, params)
        try:
            return template.format(**params)
        except (KeyError, IndexError, ValueError, TypeError):  # a broken translation, or a value unlike its spec's
            pass
        for text in (template, self.msgid):  # English if the translation is broken
            try:
                return _LENIENT.vformat(text, (), params)
            except (KeyError, IndexError, ValueError, TypeError):
                continue
        return self.msgid

    def __str__(self):
        return self.render()

    def __repr__(self):
        return f"Message({self.msgid!r})"

    def __eq__(self, other):
        return isinstance(other, Message) and (self.msgid, self.params) == (other.msgid, other.params)

    def __hash__(self):
        return hash(self.msgid)


_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef“”"
_SPACE_BEFORE = re.compile(rf"(?<=[{_CJK}]) \{{(\w+)\}}")
_SPACE_AFTER = re.compile(rf"\{{(\w+)\}} (?=[{_CJK}])")


def _close_joints(template, params):
    """``template`` without the space it puts between Chinese text and a value that
    starts (or ends) in Chinese: "恰好等于 {factor}" keeps its space before "1/scale"
    but not before "裁剪系数" (Chinese puts no space between two Chinese words)."""
    def joined(side):
        def fix(match):
            value = params.get(match.group(1))
            if isinstance(value, str) and value and re.match(f"[{_CJK}]", value[side]):
                return "{" + match.group(1) + "}"
            return match.group(0)
        return fix

    if " {" not in template and "} " not in template:
        return template
    return _SPACE_AFTER.sub(joined(-1), _SPACE_BEFORE.sub(joined(0), template))


class _Lenient(string.Formatter):
    """Shows a parameter its format spec does not fit as text: a value a student's code
    returned may stand where a number was expected (``{got:.6g}``), and a report must
    still be written."""

    def format_field(self, value, format_spec):
        try:
            return format(value, format_spec)
        except (TypeError, ValueError):
            return str(value)


_LENIENT = _Lenient()


def _(msgid, **params):
    """Mark ``msgid`` for translation (Babel's default keyword) and bind its parameters."""
    return Message(msgid, **params)


def render(value, lang=None):
    """Text of a message, of a list of messages (one per line), or of anything else."""
    if isinstance(value, Message):
        return value.render(lang)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (Message, str)) for v in value):
        return "\n".join(render(item, lang) for item in value)
    return value


def text(msgid, lang=None, **params):
    """Render at once: ``text("Total", "zh")``."""
    return Message(msgid, **params).render(lang)


def as_data(value):
    """A message as plain JSON data (``{"msgid": ..., "params": {...}}``, parameters that
    are messages likewise), for a file read later in another language (a class's
    manifest); anything else as it is."""
    if isinstance(value, Message):
        return {"msgid": value.msgid, "params": {key: as_data(item) for key, item in value.params.items()}}
    return value


def render_data(value, lang=None):
    """Text of what :func:`as_data` made, in ``lang``; a plain string (an older file's
    English) as it is, anything else as ``str``."""
    if isinstance(value, dict) and isinstance(value.get("msgid"), str) and isinstance(value.get("params"), dict):
        params = {key: render_data(item, lang) if isinstance(item, dict) else item
                  for key, item in value["params"].items() if isinstance(key, str)}
        return Message(value["msgid"], **params).render(lang)
    return value if isinstance(value, str) else str(value)


def catalog_folders(lang):
    """Where ``lang``'s catalogs are: the engine's, then the active assignment's."""
    folders = [LOCALE_DIR / lang]
    try:
        folders.append(active_assignment.folder_of(active_assignment.package_name()) / "locale" / lang)
    except (active_assignment.AssignmentError, ImportError, ValueError):
        pass  # no assignment to grade: the engine's messages still translate
    return folders


def catalog(lang):
    """msgid -> translation for ``lang`` (empty for English, the source language)."""
    return _catalog_of(lang, active_assignment.package_name())


@functools.cache
def _catalog_of(lang, _package):  # a grade looks up its catalog for every message it renders
    return _catalog(lang, tuple(catalog_folders(lang)))


@functools.cache
def _catalog(lang, folders):
    if lang == "en":
        return {}
    table = {}
    for path in [path for folder in folders for path in sorted(folder.glob("*.po"))]:
        table.update(translations(path.read_text(encoding="utf-8")))
    return table


_PO_ESCAPE = re.compile(r'\\([\\abfnrtv"])')
_PO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _po_text(quoted):
    """A .po string (its quotes included) as text."""
    inner = quoted[1:-1]
    return _PO_ESCAPE.sub(lambda match: _PO_ESCAPES.get(match.group(1), match.group(1)), inner) \
        if "\\" in inner else inner


def translations(po_text):
    """msgid -> msgstr of a .po file, its translated messages only: neither the header,
    nor fuzzy, obsolete (``#~``) or plural ones -- what Babel's ``read_po`` reads there
    (tests/engine/i18n/test_catalogs.py compares the two on every catalog). Babel's
    reader (with its import) costs every process that renders in Chinese a tenth of a
    second: a grade's judge and its command line both pay it. Babel stays the catalogs'
    tool (:mod:`autograder.i18n.catalog_tools`)."""
    table = {}
    entry, field, flags = {}, None, []

    def finish():
        if "msgid" in entry and "msgid_plural" not in entry:
            msgid, msgstr = "".join(entry["msgid"]), "".join(entry.get("msgstr", ()))
            if msgid and msgstr and "fuzzy" not in flags:
                table[msgid] = msgstr
        if "msgid" in entry:
            entry.clear()
            flags.clear()

    for line in po_text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line[0] == "#":
            finish()  # a comment ends the message before it, as in Babel
            if line.startswith("#,"):
                flags.extend(flag.strip() for flag in line[2:].split(","))
            continue
        if line[0] == '"':
            if field is not None:
                entry.setdefault(field, []).append(_po_text(line))
            continue
        keyword, _, argument = line.partition(" ")
        if keyword in ("msgid", "msgctxt"):
            finish()
        field = keyword if keyword in ("msgid", "msgid_plural", "msgstr") else None
        if field is not None:
            entry[field] = [_po_text(argument.strip())]
    finish()
    return table


def placeholders(template):
    """The named fields of a ``str.format`` template, with their format specs."""
    return sorted((name, spec or "") for _text, name, spec, _conv in string.Formatter().parse(template)
                  if name is not None)


def check_language(value):
    value = (value or "").strip().lower().replace("_", "-")
    if value.startswith("zh"):
        return "zh"
    if value.startswith("en"):
        return "en"
    return None


def configured_language(root="."):
    """``[tool.autograder] lang`` from ``root/pyproject.toml`` (None if unset or unreadable)."""
    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as handle:
            content = handle.read()
    except OSError:
        return None
    # Without the word, nor an escape that could spell it in a quoted key, the file cannot hold
    # the setting: not parsed (tomllib costs every command line a hundredth of a second or two).
    if b"autograder" not in content and b"\\u" not in content and b"\\U" not in content:
        return None
    try:
        from autograder.toml_reader import tomllib
    except ModuleNotFoundError:  # Python 3.10 without the requirements (tomli): still say it in the course's language
        return _scan_pyproject(root)
    try:
        data = tomllib.loads(content.decode("utf-8"))
    except ValueError:
        return None
    setting = data.get("tool", {}).get("autograder", {})
    return check_language(setting.get("lang")) if isinstance(setting, dict) else None


def _scan_pyproject(root):
    try:
        content = pathlib.Path(root, "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    section = re.search(r"^\[tool\.autograder\]\s*$(.*?)(?=^\[|\Z)", content, re.MULTILINE | re.DOTALL)
    found = section and re.search(r"^\s*lang\s*=\s*[\"']([^\"']+)", section.group(1), re.MULTILINE)
    return check_language(found.group(1)) if found else None


def resolve_language(option=None, environ=None, root="."):
    environ = os.environ if environ is None else environ
    for candidate in (option, environ.get(ENV_VAR)):
        chosen = check_language(candidate)
        if chosen:
            return chosen
    return configured_language(root) or DEFAULT_LANGUAGE


def set_language(lang):
    _current[0] = check_language(lang) or DEFAULT_LANGUAGE


def language():
    if _current[0] is None:
        _current[0] = resolve_language()
    return _current[0]


@contextlib.contextmanager
def command_line_in(lang):
    """While a command line is parsed: ``lang`` is the language its commands' help is
    written in (:func:`help_language`)."""
    _asked[0] = lang
    try:
        yield
    finally:
        _asked[0] = None


def help_language(root):
    """The language a command's help is written in: the command line's (inside
    :func:`command_line_in`), else the one configured for the repository at ``root``."""
    return _asked[0] or resolve_language(root=root)
