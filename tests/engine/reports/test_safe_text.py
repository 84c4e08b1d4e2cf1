"""autograder.reports.safe_text and the small helpers of the reports (isolation
view, tidy reports, the runner's output file): each check with a harmless and a
hostile input."""
import csv
import io
import json
import re

import pytest

from autograder.intake import submitted_text
from autograder.reports import github_files, isolation_view, safe_text
from autograder.reports.tidy import tidy
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from support.runner_files import output_values, read_output_file, workflow_commands

HOSTILE_LINES = [
    "  ::notice title=Autograding complete::Points 100/100",
    "::add-mask::x",
    "\t::stop-commands::abc",
    "before ##[error]x after",
    "###[[error]x",
    "\u3000::error::ideographic space",
    "\xa0::warning::no-break space",
]


# --------------------------------------------------------------------------- terminal

@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_terminal_line_starts_no_workflow_command(line):
    assert workflow_commands(line), "the model must see a command in the raw line"
    safe = safe_text.terminal_line(line)
    assert workflow_commands(safe) == []
    assert "##[" not in safe and not safe.lstrip().startswith("::")


def test_terminal_line_leaves_ordinary_text_alone():
    for text in ("toy_sum: total [fp16] -> 1/n", "C:\\Users\\me\\a.py", "ratio 3::4 inside", "🙂 ok"):
        assert safe_text.terminal_line(text) == text


@pytest.mark.parametrize("char, shown", [("\n", "\\n"), ("\r", "\\r"), ("\x1b", "\\x1b"), ("\x00", "\\x00"),
                                         ("\x7f", "\\x7f"), ("\x85", "\\x85"), ("\u2028", "\\u2028"),
                                         ("\u2029", "\\u2029"), ("\u202e", "\\u202e"), ("\u2066", "\\u2066"),
                                         ("\u200b", "\\u200b"), ("\t", "\\t")])
def test_control_characters_are_shown_not_obeyed(char, shown):
    safe = safe_text.terminal_line(f"a{char}b")
    assert safe == f"a{shown}b"
    assert all(c.isprintable() for c in safe)


def test_carriage_return_cannot_start_a_command_line():
    text = "progress\r::notice title=Autograding complete::Points 100/100"
    assert workflow_commands(text)  # the runner splits at CR
    assert workflow_commands(safe_text.terminal_line(text)) == []


def test_multi_line_feedback_keeps_its_lines_and_each_is_neutralised():
    text = "assert 1 == 2\n::notice::x\r\nplain\n  ##[group]y"
    lines = safe_text.terminal_lines(text)
    assert len(lines) == 4 and lines[0] == "assert 1 == 2" and lines[2] == "plain"
    assert workflow_commands("\n".join(lines)) == []
    assert safe_text.terminal_lines("a\nb\nc", max_lines=2) == ["a", "b", "… (1 more lines)"]


def test_terminal_block_is_idempotent_on_safe_text():
    safe = "\n".join(safe_text.terminal_lines("\n".join(HOSTILE_LINES) + "\x1b[2J"))
    assert safe_text.terminal_block(safe) == safe


def test_fence_for_actions_suspends_every_line_in_between():
    inner = "table\n::notice title=Autograding complete::Points 100/100"  # as if escaping had failed
    fenced = safe_text.fence_for_actions(inner)
    commands = workflow_commands(fenced)
    token = commands[0][2]
    assert [c[0] for c in commands] == ["stop-commands", token]
    assert re.fullmatch(r"[0-9a-f]{32}", token) and token not in inner
    assert fenced.endswith(f"\n::{token}::")


def test_stop_token_is_fresh_and_never_inside_the_text():
    assert safe_text.stop_token() != safe_text.stop_token()
    with pytest.raises(ValueError):
        safe_text.fence_for_actions("contains abc", token="abc")


# --------------------------------------------------------------------------- Markdown and HTML

@pytest.mark.parametrize("text, forbidden", [
    ("# Points 100", r"^#"), ("<!-- hide the rest", r"(?<!\\)<"), ("[link](http://x.y)", r"(?<!\\)\["),
    ("![img](x.png)", r"(?<!\\)\["), ("| fake | row |", r"(?<!\\)\|"), ("```python", r"(?<!\\)`"),
    ("a\nb", "\n"), ("- item", r"^-"), ("1. item", r"^1\."), ("> quote", r"^>"),
    ("https://evil.example/x", r"https?://"), ("see www.evil.example", r"www\."),
    ("mail me@evil.example", r"\w@\w"), ("cc @octocat", r"@\w"), ("$\\color{red}{x}$", r"(?<!\\)\$"), ("a\\|b", r"(?<!\\)\\\|"),
])
def test_markdown_text_neutralises_each_construct(text, forbidden):
    assert re.search(forbidden, text, re.M), "the raw text must show the construct"
    safe = safe_text.markdown_text(text)
    assert not re.search(forbidden, safe, re.M), safe


def test_markdown_text_keeps_ordinary_names_readable():
    for text in ("amp-alice", "exercises/tests/test_a.py was modified", "toy_sum: total 1/n"):
        assert safe_text.markdown_text(text) == text
    assert safe_text.markdown_text("we|ird") == "we\\|ird"


def test_markdown_code_only_for_plain_identifiers():
    assert safe_text.markdown_code("toy_sum") == "`toy_sum`"
    assert safe_text.markdown_code(7) == "`7`"
    assert safe_text.markdown_code("a`b|c") == "a\\`b\\|c"  # falls back to escaped text
    assert safe_text.markdown_code("") == "–"


def test_html_text_escapes_markup():
    assert safe_text.html_text('<script>alert("x")</script>\n') == \
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\n"
    assert safe_text.html_text("plain") == "plain"


def test_csv_cell_stops_formulas_only():
    assert safe_text.csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert safe_text.csv_cell("@SUM(A1)").startswith("'")
    assert safe_text.csv_cell("amp-alice") == "amp-alice"
    out = io.StringIO()
    csv.writer(out).writerow([safe_text.csv_cell("+1+1")])
    assert out.getvalue().strip() == "'+1+1"


@pytest.mark.parametrize("text, shown", [("a\x00b", "a\\x00b"), ("\u202e\x1b[2J", "\\u202e\\x1b[2J"),
                                         ("\ud800", "\\ud800"), ("=\udcff", "'=\\xff"), ("a\nb", "a\\nb")])
def test_csv_cells_are_one_line_with_controls_and_bidi_shown(text, shown):
    assert safe_text.csv_cell(text) == shown
    out = io.StringIO()
    csv.writer(out).writerow([safe_text.csv_cell(text)])
    out.getvalue().encode("utf-8")


def test_odd_values_become_text():
    class Hostile:
        def __str__(self):
            raise RuntimeError("no")
    assert safe_text.as_text(None) == "" and safe_text.as_text(3) == "3"
    assert safe_text.terminal_line(Hostile()) == "<Hostile>"


# --------------------------------------------------------------------------- isolation view

def test_isolation_unconfined_only_when_said_so():
    assert isolation_view.unconfined({"confined": False})
    for data in ({}, {"confined": True}, {"confined": None}, None, ["confined"], {"confined": 0}):
        assert not isolation_view.unconfined(data)


def test_isolation_facts_are_generic_and_robust():
    data = {"confined": True, "uid": 1234, "fs": "read-only", "network": False, "zeta": [1, "x"],
            "problems": [], "scratch": None, 5: {"a": True}}
    assert isolation_view.facts(data) == [("fs", "read-only"), ("network", "no"), ("uid", "1234"),
                                          ("scratch", "?"), ("5", "a=yes"), ("zeta", "1, x")]
    assert isolation_view.one_line({}) is None and isolation_view.one_line("odd") is None
    assert isolation_view.problems({"problems": "one"}) == ["one"]
    assert isolation_view.problems({"problems": [None, 2]}) == ["?", "2"]
    assert isolation_view.status_word({"confined": False}) == "NOT CONFINED"
    assert isolation_view.status_word({}) == "–"


# --------------------------------------------------------------------------- tidy reports

def test_tidy_turns_odd_tests_into_renderable_ones():
    odd = Result(name=None, module=None, max_score=None, score="x", passed=None, output=None,
                     visibility="secret")
    report = tidy(GradeReport(tests=[odd], seed=None, flags="one flag", notes=None, isolation=[], lab=None))
    test = report.tests[0]
    assert (test.module, test.score, test.max_score, test.passed, test.output, test.visibility) == \
        ("?", 0.0, 0.0, False, "", "hidden")
    assert report.flags == ["one flag"] and report.notes == [] and report.isolation == {} and report.lab == {}
    assert report.by_module() == {"?": (0.0, 0.0)}


def test_tidy_keeps_good_values():
    good = Result(name="n", module="toy_sum", max_score=2, score=1.5, passed=True, output="o",
                      visibility="visible", test_id="t")
    assert tidy(GradeReport(tests=[good], seed=4)).tests[0] == good


# --------------------------------------------------------------------------- $GITHUB_OUTPUT writer

@pytest.mark.parametrize("before", [
    "", "other=1\n", "other=1", "result=forged\n", "x<<EOF\nresult=forged\n", "garbage\nresult=forged\n",
    "result=forged\nx<<EOF\nv", "a<<EOF\nv\nEOF", "=empty\n", "\n\n",
])
def test_our_result_line_is_read_whatever_came_before(tmp_path, before):
    path = tmp_path / "out"
    path.write_text(before, encoding="utf-8")
    github_files.append_output(path, "result", "OURS")
    values, error = output_values(path.read_text(encoding="utf-8"))
    assert error is None and values["result"] == "OURS"


def test_a_naive_append_after_a_planted_block_would_lose_our_result(tmp_path):
    # Why append_output trims: appended blindly, our line sits inside the block.
    planted = "result=forged\nx<<EOF\n"
    values, error = output_values(planted + "result=OURS\n")
    assert values["result"] == "forged" and error is not None


def test_well_formed_pairs_before_ours_are_kept(tmp_path):
    path = tmp_path / "out"
    path.write_text("a=1\nb<<EOF\nx\nEOF\n", encoding="utf-8")
    github_files.append_output(path, "result", "OURS")
    assert read_output_file(path.read_text(encoding="utf-8")) == \
        ([("a", "1"), ("b", "x"), ("result", "OURS")], None)


@pytest.mark.parametrize("name, value", [("result", "a\nb"), ("result", "a\rb"), ("bad name", "v"), ("", "v")])
def test_output_writer_refuses_what_could_break_the_file(tmp_path, name, value):
    with pytest.raises(ValueError):
        github_files.append_output(tmp_path / "out", name, value)


def test_readable_prefix_matches_the_model():
    for text in ("a=1\nb<<E\nv\nE\n", "a=1\nbad\nc=2\n", "a<<E\nv\n", "a=1\n=2\n", "a=1\nb<<\nc=3\n"):
        keep = github_files.readable_prefix(text.encode())
        pairs, _ = read_output_file(text)
        assert read_output_file(text[:keep]) == (pairs, None), text


# --------------------------------------------------------------------------- where student text enters

@pytest.mark.parametrize("text, kept", [
    ("plain ✓ 中文 \u202e \x1b", "plain ✓ 中文 \u202e \x1b"),  # writable as it is: shown per output
    ("lone \ud800 and \udfff", "lone \\ud800 and \\udfff"),   # a JSON escape a box sent
    ("\udcff\udcfe.pth", "\\xff\\xfe.pth"),                     # os.fsdecode of a name that is not UTF-8
    ("mixed \ud800 \udcff", "mixed \\ud800 \\udcff"),
    ("nul\x00end", "nul\\x00end"), ("", ""),
])
def test_submitted_text_is_writable_by_every_output(text, kept):
    cleaned = submitted_text.clean(text)
    assert cleaned == kept
    cleaned.encode("utf-8")
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")


def test_submitted_text_is_bounded_and_never_raises():
    class Hostile:
        def __str__(self):
            raise RuntimeError("\ud800")

    megabytes = "\ud800" * 2**20
    assert submitted_text.clean(megabytes, 100) == "\\ud800" * 100 + "…"
    assert submitted_text.clean(Hostile()) == "<Hostile>" and submitted_text.clean(None) == ""
    assert submitted_text.clean_list(["\x00"] * 5, count=2) == ["\\x00", "\\x00", "… (3 more)"]
    assert submitted_text.clean_list("one") == ["one"] and submitted_text.clean_list(None) == []
    tree = {"\ud800": [float("nan"), 10**5000, 2**62, True, None, ("\x00",), {1: Hostile()}]}
    cleaned = submitted_text.clean_tree(tree)
    assert cleaned == {"\\ud800": ["nan", cleaned["\\ud800"][1], 2**62, True, None, ["\\x00"], {"1": "<Hostile>"}]}
    json.dumps(cleaned, ensure_ascii=False, allow_nan=False).encode("utf-8")
