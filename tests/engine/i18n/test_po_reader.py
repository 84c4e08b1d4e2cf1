"""The grader reads its catalogs with its own small .po reader (i18n.translations), not
Babel's: it must read exactly what Babel's ``read_po`` reads there, on every catalog of
every chapter and on the corners of the format."""
import io

import pytest
from babel.messages.pofile import read_po

from autograder import i18n
from autograder.i18n import catalog_tools
from support import chapters


def babel_table(text):
    """What the grader could look up in a catalog when it read it with Babel (a message is
    looked up by its id, text: a plural one, keyed by a tuple, never matched)."""
    return {message.id: message.string for message in read_po(io.BytesIO(text.encode("utf-8")))
            if message.id and message.string and not message.fuzzy and isinstance(message.id, str)}


@pytest.mark.parametrize("chapter", sorted(chapters.found()))
def test_every_catalog_reads_as_babel_reads_it(chapter):
    files = catalog_tools.catalog_files("zh", chapters.found()[chapter])
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert i18n.translations(text) == babel_table(text), path


CORNERS = r'''# a header, fuzzy as Babel writes it
#, fuzzy
msgid ""
msgstr ""
"Language: zh\n"

#: a.py:1
msgid "plain"
msgstr "平常"

msgid ""
"split "
"over lines"
msgstr ""
"分"
"行"

msgid "escapes \"quoted\" \\ and\ttab"
msgstr "转义 \"引号\" \\ 和\t制表\n"

#, python-format, fuzzy
msgid "fuzzy one"
msgstr "模糊"

msgid "untranslated"
msgstr ""

msgctxt "a context"
msgid "with context"
msgstr "有上下文"

msgid "one apple"
msgid_plural "{n} apples"
msgstr[0] "苹果"

#~ msgid "obsolete"
#~ msgstr "过时"
msgid "no blank line before"
msgstr "前面没有空行"
#, fuzzy
msgid "fuzzy after a message with no blank line"
msgstr "模糊二"
msgid "last"
msgstr "最后"'''


def test_the_corners_of_the_format_read_as_babel_reads_them():
    table = i18n.translations(CORNERS)
    assert table == babel_table(CORNERS)
    assert table["escapes \"quoted\" \\ and\ttab"] == "转义 \"引号\" \\ 和\t制表\n"
    assert table["split over lines"] == "分行"
    assert "fuzzy one" not in table and "untranslated" not in table and "obsolete" not in table
