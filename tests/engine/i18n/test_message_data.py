"""A message kept in a file (a class's run.json warnings) is rendered later in the
language of whoever reads it: i18n.as_data / i18n.render_data."""
import json

from autograder.i18n import _, as_data, render_data


def test_a_kept_message_renders_in_the_readers_language_nested_ones_too():
    inner = _("shards missing: {shards}", shards="2/3")
    kept = json.loads(json.dumps({"msgid": "{source}: {warning}", "params": {"source": "s1", "warning": as_data(inner)}}))
    assert render_data(kept, "en") == "s1: shards missing: 2/3"
    assert render_data(kept, "zh") == "s1：缺少分片：2/3"
    assert render_data(as_data(_("the similarity check failed: {error}", error="OSError: x")), "zh") == \
        "相似度检查失败：OSError: x"


def test_what_an_older_file_or_anything_else_holds_is_shown_as_it_is():
    assert render_data("graded WITHOUT full confinement", "zh") == "graded WITHOUT full confinement"
    assert render_data({"msgid": 3}, "en") == "{'msgid': 3}"
    assert render_data(7, "en") == "7"
    assert as_data("plain") == "plain"
