"""The test model of the runner (tests/support/runner_files.py) against the behaviour it
documents: each rule with an input that obeys it and one that breaks it."""
import pytest

from support.runner_files import output_values, read_output_file, workflow_commands


# --------------------------------------------------------------------------- $GITHUB_OUTPUT

def test_name_value_lines_and_heredoc_blocks_are_read_pair_by_pair():
    text = "a=1\n\nb<<EOF\nline 1\nline 2\nEOF\nc=x=y\n"
    assert read_output_file(text) == ([("a", "1"), ("b", "line 1\nline 2"), ("c", "x=y")], None)


def test_whichever_of_equals_and_heredoc_comes_first_decides():
    assert read_output_file("a=b<<c\n") == ([("a", "b<<c")], None)
    assert read_output_file("a<<c=d\nv\nc=d\n") == ([("a", "v")], None)


def test_a_later_value_replaces_an_earlier_one():
    assert output_values("result=forged\nresult=ours\n") == ({"result": "ours"}, None)
    assert output_values("result=ours\nresult=forged\n") == ({"result": "forged"}, None)


@pytest.mark.parametrize("bad", ["garbage", "=value", "<<EOF", "name<<", "x<<EOF\nvalue\n"])
def test_a_value_set_before_a_malformed_pair_stays_set_and_later_ones_are_lost(bad):
    pairs, error = read_output_file(f"kept=1\n{bad}\nlost=2\n")
    assert error is not None
    assert pairs == [("kept", "1")]


def test_an_unterminated_block_swallows_the_lines_after_it():
    pairs, error = read_output_file("x<<EOF\nresult=ours\n")
    assert pairs == [] and "delimiter" in error


def test_lines_end_at_lf_only():
    # A CR is part of the value on Linux: 'EOF\r' is not the delimiter 'EOF'.
    assert read_output_file("a=1\r\n") == ([("a", "1\r")], None)
    assert read_output_file("a<<EOF\nv\nEOF\r\n")[1] is not None


# --------------------------------------------------------------------------- workflow commands

def test_commands_after_leading_whitespace_and_legacy_form_anywhere():
    text = "plain\n  \t::notice title=x::Points 1/1\nsays ##[error]oops here\n\\::notice::escaped\n"
    assert [c[0] for c in workflow_commands(text)] == ["notice", "error"]
    assert workflow_commands("::add-mask::secret")[0] == ("add-mask", "add-mask", "secret")


@pytest.mark.parametrize("text", ["a::notice::mid-line", "::notice", "##[error without bracket",
                                  ": :notice::x", "#\\#[error]x"])
def test_text_that_is_not_a_command(text):
    assert workflow_commands(text) == []


def test_carriage_return_and_crlf_end_a_line():
    assert [c[0] for c in workflow_commands("progress 50%\r::notice::x")] == ["notice"]
    assert [c[0] for c in workflow_commands("a\r\n::warning::x\r\n")] == ["warning"]


def test_stop_commands_suspends_until_the_token_line():
    text = "::stop-commands::tok\n::notice::hidden\n::error::hidden\n::tok::\n::notice::seen\n"
    names = [c[0] for c in workflow_commands(text)]
    assert names == ["stop-commands", "tok", "notice"]
    # Without the resume line everything after stays suspended.
    assert [c[0] for c in workflow_commands("::stop-commands::tok\n::notice::x\n")] == ["stop-commands"]
    # A different token does not resume.
    assert [c[0] for c in workflow_commands("::stop-commands::tok\n::other::\n::notice::x")] == ["stop-commands"]
