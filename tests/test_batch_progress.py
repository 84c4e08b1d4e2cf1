"""grade-many's progress lines carry student folder names, which students choose."""
import io

from autograder.batch_progress import Progress


def test_a_folder_name_cannot_start_a_line_or_a_workflow_command():
    log = io.StringIO()
    bar = Progress(1, stream=log)
    bar.update("amp-x\n::error::forged\r##[warning]also forged\x1b[2J", "ok", "3/4")
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[1/1] amp-x\\n::error::forged\\r##\\[warning]")
    assert "\x1b" not in log.getvalue() and lines[0].endswith(": 3/4")
