"""A command whose module this copy of the grader lacks: a staff command in a student's repository
(export-template leaves the staff's side out, autograder/staff_side.py). The command line says so in
one line in the run's language, exits 2 and leaves the command out of ``--help``. The exported
template itself is checked in tests/end_to_end/test_template_export.py."""
import re

import pytest

from autograder import __main__ as command_line
from autograder import i18n

GONE = "autograder.cli.not_in_this_copy"


@pytest.fixture
def left_out(monkeypatch):
    monkeypatch.setitem(command_line.COMMANDS, "similarity", GONE)
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_left_out_command_says_so_in_one_line(left_out, capsys, lang):
    assert command_line.main(["similarity", "students/", "--lang", lang]) == 2
    out, err = capsys.readouterr()
    said = i18n.text("{command} is a course staff command, not part of the student repository.", lang,
                     command="similarity")
    assert (out, err) == ("", said + "\n")
    if lang == "zh":
        assert said != i18n.text("{command} is a course staff command, not part of the student repository.",
                                 "en", command="similarity")


def test_help_lists_only_the_commands_there(left_out, capsys):
    with pytest.raises(SystemExit):
        command_line.main(["--help", "--lang", "en"])
    listed = re.findall(r"^    (\S+)", capsys.readouterr().out, re.M)
    assert "similarity" not in listed and {"grade", "grade-many"} <= set(listed)
