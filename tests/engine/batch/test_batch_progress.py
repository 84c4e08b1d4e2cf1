"""grade-many's progress lines carry student folder names, which students choose."""
import io

from autograder.batch.progress import Progress


def test_a_folder_name_cannot_start_a_line_or_a_workflow_command():
    log = io.StringIO()
    bar = Progress(1, stream=log)
    bar.update("amp-x\n::error::forged\r##[warning]also forged\x1b[2J", "ok", "3/4")
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[1/1] amp-x\\n::error::forged\\r##\\[warning]")
    assert "\x1b" not in log.getvalue() and lines[0].endswith(": 3/4")


def test_a_terminal_gets_a_bar_that_ends_complete():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    bar = Progress(3, stream=screen)
    for name, status in (("amp-qzx1", "ok"), ("amp-qzx2", "crashed"), ("amp-qzx3", "ok")):
        bar.update(name, status)
    shown = screen.getvalue()
    assert "3/3" in shown and "1 crashed" in shown
    assert "qzx" not in shown, "the bar never prints folder names"
