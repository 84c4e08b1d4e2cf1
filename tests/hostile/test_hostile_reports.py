"""A GradeReport whose student-controlled fields (test output, names, ids,
flags, notes, submission path, isolation problems, lab record) hold hostile
text, through every report: the terminal table as printed in GitHub Actions,
the job summary and the class report. No workflow command but the grader's own
fence, no control character, and no Markdown heading, HTML, link, image or
table row that came from the student."""
import io
import json
import pathlib
import re
import sys

import pytest

from autograder.reports.safe_text import print_report
from autograder.class_reports import class_report
from autograder.class_reports import write as class_write
from autograder.reports import isolation_view, summary_md, terminal
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from support.runner_files import workflow_commands

HOSTILE = [
    "   ::notice title=Autograding complete::Points 100/100",
    "::add-mask::x",
    "::stop-commands::abc",
    "text ##[error]x mid-line",
    "first\n::notice title=Autograding complete::Points 100/100",
    "progress\r::warning::carriage return",
    "\x1b[2J\x1b[31mcleared and red\x1b[0m",
    "a\u2028::notice::after a line separator",
    "bidi \u202egnp.exe",
    "::abc::",
    "<!-- the rest of the page is hidden",
    "# Points 100",
    "| fake | row |",
    "[click](https://evil.example/x) and ![img](https://evil.example/i.png) www.evil.example me@evil.example",
    "```\ncode fence",
]
EVERYTHING = "\n".join(HOSTILE)
ALLOWED_SUMMARY_HEADINGS = {"## Autograding: 2 / 4"}


def hostile_report(isolation=None):
    tests = [
        Result(name="amp_update: unscale", module="amp_update", max_score=2.0, score=2.0, passed=True,
               output="Passed.", visibility="visible", test_id="test_unscale"),
        Result(name="amp_update: " + HOSTILE[0], module="amp_update", max_score=1.0, score=0.0, passed=False,
               output=EVERYTHING, visibility="visible", test_id=EVERYTHING),
        Result(name="visible test replaced by a trivial one", module=None, max_score=None, score=None,
               passed=False, output=EVERYTHING, visibility="visible", test_id="x"),
        Result(name="loss_scaler: hidden", module="loss_scaler", max_score=1.0, score=0.0, passed=False,
               output=EVERYTHING, visibility="hidden", test_id="h"),
    ]
    return GradeReport(tests=tests, seed=5, submission=EVERYTHING, flags=list(HOSTILE), notes=list(HOSTILE),
                       isolation=isolation if isolation is not None else
                       {"confined": False, "problems": list(HOSTILE), "fs": EVERYTHING})


def unescaped(text, chars):
    """Characters of ``chars`` in ``text`` not preceded by an odd run of backslashes."""
    found = []
    for match in re.finditer(f"[{re.escape(chars)}]", text):
        run = len(text[:match.start()]) - len(text[:match.start()].rstrip("\\"))
        if run % 2 == 0:
            found.append((match.group(), text[max(0, match.start() - 20):match.end() + 20]))
    return found


# --------------------------------------------------------------------------- terminal

def test_terminal_table_holds_no_workflow_command_or_control_character():
    text = terminal.render(hostile_report())
    assert workflow_commands(text) == []
    for line in text.split("\n"):
        assert all(char.isprintable() for char in line), repr(line)
    # The model finds commands in the raw lines (one at a time: the third
    # would suspend the rest): the test can fail.
    assert sum(bool(workflow_commands(line)) for line in HOSTILE) == 7


def test_terminal_keeps_the_line_structure_of_feedback():
    # Wide enough that no line wraps: the count is of the feedback's own lines.
    text = terminal.render(hostile_report(), mode="verbose", width=400)
    shown = [line for line in text.split("\n") if line.startswith("      ")]
    # Three failed tests, each with every line of EVERYTHING.
    assert len(shown) == 3 * len(EVERYTHING.split("\n"))
    assert "      \\::add-mask::x" in shown
    assert any("\\x1b[2J" in line for line in shown)
    compact = [line for line in terminal.render(hostile_report(), width=400).split("\n") if line.startswith("      ")]
    # By default: cut at OUTPUT_LINES, keeping the last line.
    assert len(compact) == 3 * terminal.OUTPUT_LINES and compact[-1] == "      code fence" and compact[-2] == "      …"


def test_terminal_warns_loudly_when_student_code_was_not_confined():
    text = terminal.render(hostile_report())
    assert "!!! WARNING: Student code ran WITHOUT OS confinement" in text
    assert text.count("!!!   - ") == len(HOSTILE)
    confined = terminal.render(hostile_report({"confined": True, "fs": "read-only", "network": False,
                                               "uid": 60001, "novel_key": EVERYTHING}))
    assert "WITHOUT" not in confined
    # The student reads one line; the facts are in results.json (and the class report).
    assert "Sandbox: your code ran confined" in confined
    assert "Sandbox:" not in terminal.render(hostile_report({}))


@pytest.mark.parametrize("lang, words", [("en", "without these layers on this machine: syscall filter"),
                                         ("zh", "系统调用过滤")])
def test_a_confined_run_lacking_a_layer_says_which(lang, words):
    unfiltered = {"confined": True, "fs": "Landlock ABI 6: file system", "syscalls": "not filtered",
                  "missing_layers": ["syscall filter"], "problems": []}
    lines = terminal.isolation_lines(unfiltered, lang)
    assert len(lines) == 1 and words in lines[0]
    assert words in "\n".join(summary_md.isolation_lines(unfiltered, lang))
    assert "missing layers=syscall filter" in isolation_view.one_line(unfiltered)
    # From a grader before the list existed: worked out from the facts.
    assert words in terminal.isolation_lines({k: v for k, v in unfiltered.items() if k != "missing_layers"}, lang)[0]
    # Whatever a results.json holds there, the line is text.
    for odd in (["syscall filter", ["x"], {"a": 1}, None, "y" * 1000], "one", 7):
        assert terminal.isolation_lines(dict(unfiltered, missing_layers=odd), lang)[0].startswith(
            "Sandbox" if lang == "en" else "沙箱")


def test_test_without_module_or_points_renders_under_a_placeholder():
    text = terminal.render(hostile_report())
    assert re.search(r"^\?\s+0 / 0$", text, re.M)
    assert re.search(r"^TOTAL\s+2 / 4$", text, re.M)


@pytest.mark.parametrize("actions", [True, False])
def test_printed_report_is_fenced_only_inside_actions(actions):
    stream = io.StringIO()
    print_report(terminal.render(hostile_report()), stream=stream,
                 environ={"GITHUB_ACTIONS": "true"} if actions else {})
    commands = workflow_commands(stream.getvalue())
    if actions:
        token = commands[0][2]
        assert [c[0] for c in commands] == ["stop-commands", token]
        assert stream.getvalue().rstrip("\n").endswith(f"::{token}::")
    else:
        assert commands == []


def test_fence_protects_even_text_that_escaped_nothing():
    stream = io.StringIO()
    print_report("::notice title=Autograding complete::Points 100/100", stream=stream,
                 environ={"GITHUB_ACTIONS": "true"})
    assert [c[0] for c in workflow_commands(stream.getvalue())][0] == "stop-commands"
    assert "notice" not in [c[0] for c in workflow_commands(stream.getvalue())]


# --------------------------------------------------------------------------- job summary

def test_job_summary_has_no_student_markdown():
    text = summary_md.render(hostile_report())
    headings = {line for line in text.split("\n") if line.lstrip().startswith("#")}
    assert headings == ALLOWED_SUMMARY_HEADINGS
    assert unescaped(text, "<[]") == []
    assert not re.search(r"https?://|www\.|\w@\w", text)
    # Tables: three modules ('?' included) and three visible tests, each with a
    # header and a separator; every row as many cells as its header.
    tables = [[line for line in block.split("\n") if line.startswith("|")] for block in text.split("\n\n")]
    tables = [table for table in tables if table]
    assert [len(table) for table in tables] == [2 + 3, 2 + 3]
    for table in tables:
        assert len({len(unescaped_pipes(row)) for row in table}) == 1, table


def unescaped_pipes(row):
    return [char for char, _ in unescaped(row, "|")]


def test_job_summary_warns_when_not_confined_and_summarises_otherwise():
    assert "Student code ran WITHOUT OS confinement" in summary_md.render(hostile_report())
    confined = summary_md.render(hostile_report({"confined": True, "fs": "read-only", "uid": 60001}))
    assert "WITHOUT" not in confined and "Isolation: fs: read-only; uid: 60001" in confined


def markdown_tokens(text):
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py parses the Markdown structurally")
    parser = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = parser.parse(text)
    flat = []
    for token in tokens:
        flat.append(token)
        flat += token.children or []
    return flat


def test_job_summary_structure_parsed():
    tokens = markdown_tokens(summary_md.render(hostile_report()))
    types = [token.type for token in tokens]
    assert types.count("heading_open") == 1
    assert not {"html_block", "html_inline", "link_open", "image", "fence", "code_block"} & set(types)
    assert types.count("tr_open") == 3 + 1 + 3 + 1  # header rows included


# --------------------------------------------------------------------------- class report

STUDENT = "we|ird" if sys.platform == "win32" else "evil\n# Points 100 <!--|x"


def _write_class(tmp_path):
    report = hostile_report()
    good = GradeReport(tests=report.tests[:2], seed=5, submission="s", flags=list(HOSTILE),
                       isolation=report.isolation).to_gradescope()
    good["tests"][1]["tags"] = ["<!--|" + HOSTILE[0]]
    good["extra_data"]["lab"] = {"file": HOSTILE[11], "self_reported": True, "earns_credit": True,
                                 "hardware": {"name": HOSTILE[13], "device": HOSTILE[0], "total_memory_mb": 81920},
                                 "plausibility": list(HOSTILE), "summary": EVERYTHING}
    odd = {"score": "abc", "max_score": None, "tests": {"not": "a list"},
           "extra_data": {"flags": 3, "isolation": ["x"], "lab": "weird"}}
    odd_tests = {"score": 1, "max_score": 2, "tests": [
        {"name": None, "score": "x", "max_score": float("inf"), "tags": [None], "status": "passed"},
        {"name": "t$x$", "test_id": "$\\frac{$", "score": 1, "max_score": 1, "tags": "amp_update"}, 7],
        "extra_data": {"isolation": {"confined": True, "fs": {"nested": [1]}}, "lab": {"hardware": "a string"}}}
    older = {"score": 0, "max_score": 1, "tests": [{"name": "old", "score": 0, "max_score": 1,
                                                     "status": "failed", "tags": ["amp_update"]}]}
    students = {STUDENT: good, "odd": odd, "oddtests": odd_tests, "older": older}
    for name, content in students.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(content), encoding="utf-8")
    manifest = {"seed": 5, "students": {name: {"status": "ok", "reason": "", "seed": 5} for name in students}}
    manifest["students"]["crashed"] = {"status": "crashed", "reason": EVERYTHING}
    written = class_write.write_all(tmp_path, manifest)
    return (tmp_path / "report.md").read_text(encoding="utf-8"), written


@pytest.mark.slow
def test_class_report_survives_odd_results_and_escapes_student_text(tmp_path):
    text, written = _write_class(tmp_path)
    headings = [line for line in text.split("\n") if line.startswith("#")]
    assert headings == ["# Class report: Mixed Precision Backward", "## Score distribution", "## Modules",
                        "## What the class got wrong", "## Per-test pass rates (lowest first)",
                        "## Integrity flags", "## Similarity", "## Isolation of the students' code",
                        "## How each grade was protected", "## Optional credit: `gpu_lab` (self-reported)",
                        "## Not in the statistics", "## Students", "## Re-grading"]
    assert unescaped(text.replace("![Score distribution](", "").replace("![Mean score per module](", "")
                     .replace("![Per-test pass rates](", ""), "<[") == []
    assert not re.search(r"https?://|www\.|\w@\w", text)
    assert "\x1b" not in text and "\r" not in text and "\u2028" not in text
    assert len(written) >= 2


@pytest.mark.slow
def test_class_report_lists_lab_credits_as_self_reported_and_isolation_per_student(tmp_path):
    text, _ = _write_class(tmp_path)
    lab = text.split("## Optional credit: `gpu_lab` (self-reported)")[1].split("\n## ")[0]
    rows = [line for line in lab.split("\n") if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| Student | Record | Credit |")
    assert len(rows) == 1 + 2  # header, the hostile record, the record with odd hardware
    assert "yes (self-reported)" in rows[1] and "81920 MB" in rows[1]
    assert "not that the run took place" in lab
    isolation = text.split("## Isolation")[1].split("\n## ")[0]
    assert "WITHOUT OS confinement" in isolation
    students = text.split("## Students")[1].split("\n## ")[0]
    assert students.count("**NOT CONFINED**") == 1 and "| confined |" in students


@pytest.mark.slow
def test_class_report_structure_parsed(tmp_path):
    text, _ = _write_class(tmp_path)
    tokens = markdown_tokens(text)
    types = [token.type for token in tokens]
    assert not {"html_block", "html_inline", "link_open"} & set(types)
    images = [token.attrs.get("src") for token in tokens if token.type == "image"]
    assert set(images) <= set(class_report.CHARTS.values())
    assert types.count("heading_open") == 13


@pytest.mark.slow
def test_students_table_has_one_row_per_student(tmp_path):
    text, _ = _write_class(tmp_path)
    students = text.split("## Students")[1].split("\n## ")[0]
    rows = [line for line in students.split("\n") if line.startswith("|")]
    assert len(rows) == 2 + 5  # header, separator, five students
    widths = {len(unescaped_pipes(row)) for row in rows}
    assert len(widths) == 1  # no cell was split by a student's '|'


# --------------------------------------------------------------------------- text no writer can take as it is

# Raised by the student's own code: a lone surrogate, NUL, controls, bidi, a
# workflow command and a heading, and a megabyte.
UNWRITABLE_RAISER = '''

def update_scale(*args, **kwargs):
    raise ValueError("lone \\\\ud800 nul \\\\x00 esc \\\\x1b[2J bidi \\\\u202e ::error::forged\\\\n# heading "
                     + "m" * 2**20)
'''
# File names in the repository that are not UTF-8 (with a newline, ESC and bidi too):
# one reaches the tamper flags (it shadows start-up), one the intake's notes.
ODD_NAMES = (b"evil\n\x1b[2J\xff\xe2\x80\xae::error::x.pth", b"helper\xfe\xe2\x80\xae.py")


def unwritable_repository(exercises):
    """A student repository (exercises/tests marks one) holding all of it."""
    import os

    from support.helpers import make_submission, solution_source

    make_submission(exercises, {"loss_scaler": solution_source("loss_scaler") + UNWRITABLE_RAISER})
    (exercises / "tests").mkdir()
    for name in ODD_NAMES:
        with open(os.path.join(os.fsencode(exercises), name), "wb"):
            pass


def strings_of(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def assert_shown_not_obeyed(name, text):
    """Text of an output: valid UTF-8 already (read strictly); no NUL, ESC, bidi
    override or lone surrogate made it through raw."""
    text.encode("utf-8")
    for char in ("\x00", "\x1b", "\u202e"):
        assert char not in text, (name, char)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file names that are not UTF-8")
def test_text_no_writer_takes_as_it_is_reaches_every_output_of_a_grade(tmp_path):
    import base64
    import os
    import subprocess

    from autograder.reports import results_file
    from support.helpers import ROOT

    unwritable_repository(tmp_path / "repo" / "exercises")
    output, summary, results = tmp_path / "github_output", tmp_path / "summary.md", tmp_path / "results.json"
    output.write_text("")
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission",
                           str(tmp_path / "repo" / "exercises"), "--results", str(results), "--classroom",
                           "--seed", "8", "--verbose"], cwd=ROOT, capture_output=True, timeout=600,
                          env=dict(os.environ, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary),
                                   GITHUB_ACTIONS="true", AUTOGRADER_CALL_TIMEOUT="10"))
    stdout = done.stdout.decode("utf-8")
    assert done.returncode == 0, stdout[-2000:] + done.stderr.decode("utf-8", "replace")[-2000:]
    assert not list(tmp_path.glob(".results-*")), "a half-written results file was left"
    data = results_file.load(results)  # the strict reader: UTF-8, JSON, the contract's shape
    assert all(text.encode("utf-8") and "\x00" not in text for text in strings_of(data))
    scaler = [test for test in data["tests"] if "loss_scaler" in test["tags"]]
    said = [test["output"] for test in scaler if "lone" in test["output"]]
    assert said and all("lone \\ud800 nul \\x00 esc" in text and len(text) <= 2500 for text in said), said[:1]
    flags = "\n".join(data["extra_data"]["flags"])
    assert "evil\\n\\x1b[2J\\xff\\u202e::error::x.pth shadows" in flags, flags
    assert "helper\\udcfe\\u202e.py" in data["output"] + "\n".join(data["extra_data"]["notes"])
    modules = data["extra_data"]["modules"]
    assert modules["amp_update"]["score"] == modules["amp_update"]["max_score"]  # only the raiser's tests lost
    (line,) = [line for line in output.read_text(encoding="utf-8").splitlines() if line.startswith("result=")]
    payload = base64.b64decode(line[len("result="):]).decode("utf-8")
    assert sum(test["score"] for test in json.loads(payload)["tests"]) == data["score"]
    for name, text in (("terminal", stdout), ("payload", payload), ("summary", summary.read_text(encoding="utf-8"))):
        assert_shown_not_obeyed(name, text)
    assert "\\xff" in stdout and "\\ud800" in stdout  # shown, escaped, where the student reads it
    commands = [command[0] for command in workflow_commands(stdout)]
    assert commands[:1] == ["stop-commands"] and "error" not in commands


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file names that are not UTF-8")
def test_text_no_writer_takes_as_it_is_reaches_the_class_pages(tmp_path):
    """grade-many over a student folder whose name is not UTF-8 and whose code and
    files hold the same text: every page and the CSV are written, readable, escaped."""
    import csv
    import os
    import subprocess

    from support.helpers import ROOT, make_submission

    root, out = tmp_path / "class", tmp_path / "out"
    odd_student = b"st\xffudent\xe2\x80\xae"
    unwritable_repository(pathlib.Path(os.fsdecode(os.path.join(os.fsencode(root), odd_student))) / "exercises")
    make_submission(root / "alice" / "exercises")
    done = subprocess.run([sys.executable, "-m", "autograder", "grade-many", str(root), "-o", str(out),
                           "--jobs", "1", "--seed", "9", "--no-progress", "--visible-only"], cwd=ROOT,
                          capture_output=True, timeout=900, env=dict(os.environ, AUTOGRADER_CALL_TIMEOUT="10"))
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 0 and "failed" not in stderr, stderr[-3000:]
    pages = {name: (out / name).read_bytes().decode("utf-8")
             for name in ("scores.csv", "report.md", "report.html", "run.json")}
    for name, text in pages.items():
        assert_shown_not_obeyed(name, text)
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO(pages["scores.csv"]))}
    assert set(rows) == {"alice", "st\\xffudent\\u202e"}
    assert "evil\\n\\x1b[2J\\xff\\u202e::error::x.pth" in rows["st\\xffudent\\u202e"]["flags"]
    assert float(rows["alice"]["total"]) == float(rows["alice"]["max_score"])
    assert "st\\xffudent\\u202e" in pages["report.html"] and "## Similarity" in pages["report.md"]
    assert json.loads(pages["run.json"])["students"][os.fsdecode(odd_student)]["status"] == "ok"


# --------------------------------------------------------------------------- the results writer's last resort

def test_the_results_writer_writes_what_slipped_past_the_entry(tmp_path):
    from autograder.reports import gradescope, results_file

    test = Result(name="amp_update: t", module="amp_update", max_score=1.0, score=0.0, passed=False,
                  output="raised \ud800\x00" + "\udcff" * 10, visibility="visible", test_id="t")
    report = GradeReport(tests=[test], seed=5, submission="\udcff", flags=["\ud800"])
    path = gradescope.write_results(report, tmp_path / "results.json")
    data = results_file.load(path)
    assert data["tests"][0]["output"] == "raised \\ud800\\x00" + "\\udcff" * 10
    assert data["extra_data"]["flags"] == ["\\ud800"] and data["extra_data"]["submission"] == "\\xff"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_a_report_that_cannot_be_written_leaves_a_zero_report_and_no_temporary_file(tmp_path, monkeypatch):
    from autograder.reports import gradescope, results_file

    report = hostile_report()  # a test with no points value: to_gradescope() fails
    report.lang = "zh"
    data = results_file.load(gradescope.write_results(report, tmp_path / "results.json"))
    assert data["score"] == 0 and data["tests"][0]["status"] == "failed"
    assert "无法写出" in data["tests"][0]["output"] and "TypeError" in data["tests"][0]["output"]
    assert data["extra_data"]["seed"] == 5 and data["extra_data"]["lang"] == "zh"

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gradescope.os, "replace", full_disk)
    with pytest.raises(OSError):
        gradescope.write_results(hostile_report(), tmp_path / "again.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no .results-* left
