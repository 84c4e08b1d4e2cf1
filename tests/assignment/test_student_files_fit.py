"""The files a student reads fit an 80-column terminal: the stubs (as tools/make_stubs.py
writes them), the public tests and the template's own files. Widths are display
columns as a terminal shows them (rich's cell_len: a Chinese character takes two)."""
import sys

import pytest
from rich.cells import cell_len

from support.helpers import ASSIGNMENT, ROOT

WIDTH = 80
# what a student reads in their repository besides exercises/, as export-template writes it
# (the README is .github/template/README.md; requirements.txt and pyproject.toml get a
# student's header)
EXPORTED = ["README.md", "requirements.txt", "pyproject.toml", ".gitignore"]


def _too_wide(text):
    return [f"{number}: {cell_len(line)} columns: {line}" for number, line in enumerate(text.splitlines(), start=1)
            if cell_len(line) > WIDTH]


def test_a_chinese_character_counts_two_columns():
    assert cell_len("梯度") == 4 and cell_len("（）") == 4 and cell_len("a—b") == 3


@pytest.mark.parametrize("path", sorted(str(path.relative_to(ROOT)) for path in
                                        ASSIGNMENT.exercises_dir.rglob("*.py") if "__pycache__" not in path.parts))
def test_every_exercise_file_fits(path):
    too_wide = _too_wide((ROOT / path).read_text(encoding="utf-8"))
    assert not too_wide, f"{path}:\n" + "\n".join(too_wide)


def test_the_generated_stubs_fit():
    sys.path.insert(0, str(ROOT / "tools"))
    import make_stubs

    for module in ASSIGNMENT.modules:
        stub = make_stubs.make_stub((ASSIGNMENT.solutions_dir / f"{module}.py").read_text(encoding="utf-8"))
        assert not _too_wide(stub), module
    # a long TODO's raise is split into adjacent literals, the message unchanged
    lines = make_stubs.raise_lines("        ", "TODO 8: " + "word " * 30 + "end")
    assert len(lines) > 1 and all(cell_len(line.rstrip("\n")) <= WIDTH for line in lines)
    assert lines[0].startswith("        raise NotImplementedError('TODO 8: ")
    message = eval("".join(line.strip() for line in lines).removeprefix("raise NotImplementedError"))  # noqa: S307
    assert message == "TODO 8: " + "word " * 30 + "end"


def test_the_template_readme_fits():
    too_wide = _too_wide((ROOT / ".github" / "template" / "README.md").read_text(encoding="utf-8"))
    assert not too_wide, "\n".join(too_wide)


@pytest.mark.slow
def test_an_exported_template_fits(tmp_path):
    from autograder.exports.template import build_template

    build_template(tmp_path / "template")
    for path in EXPORTED + sorted(str(path.relative_to(tmp_path / "template")) for path in
                                  (tmp_path / "template" / "exercises").rglob("*.py")):
        too_wide = _too_wide((tmp_path / "template" / path).read_text(encoding="utf-8"))
        assert not too_wide, f"{path}:\n" + "\n".join(too_wide)
