"""The catalog tool keeps each chapter's catalogs apart, whichever chapter is active: what is the
engine's comes from the engine's own folders; a run for another chapter writes only that chapter's
``locale/``; an id two chapters use keeps each one's translation."""
import hashlib
import subprocess
import sys

import pytest

from autograder import active_assignment
from autograder.i18n import catalog_tools
from support import toy
from support.helpers import ROOT

DEFAULT = active_assignment.load(active_assignment.DEFAULT_PACKAGE)
SHARED = "unscale_gradients: restore the real gradient scale"   # an id of this repository's chapter
ENGINE = "Some grader tests could not be loaded; tell the course staff."  # an id of the engine's
OWN = "widget: one more TODO"


def catalogs_bytes():
    """sha256 of every catalog file of the repository: the engine's and every chapter's."""
    return {path.relative_to(ROOT).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in (ROOT / "autograder", ROOT / "tests") for path in sorted(folder.rglob("*.po"))}


def other_chapter(tmp_path):
    """A chapter outside the repository that shares an id with this repository's chapter (its own
    translation of it) and holds a copy of an engine's id in its catalog."""
    folder = tmp_path / "widgets"
    (folder / "visible").mkdir(parents=True)
    (folder / "__init__.py").write_text('"""Widgets."""\n', encoding="utf-8")
    (folder / "description.py").write_text(
        "from autograder.authoring import _\n\n"
        f"TITLE = _({SHARED!r})\nMODULES = ('widget',)\nTODOS = {{'widget': {{1: _({OWN!r})}}}}\n"
        f"PROBLEM = _({ENGINE!r})\n", encoding="utf-8")
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale="zh")
    catalog.add(SHARED, "小部件自己的译文")
    catalog.add(ENGINE, "旧的副本")
    catalog_tools.write_catalog(folder / "locale" / "zh" / "assignment.po", catalog)
    return active_assignment.Assignment(package="widgets", folder=folder, title=SHARED, modules=("widget",),
                                        todos={"widget": {1: OWN}}, builds_on={}, hidden_points={})


def test_a_run_for_another_chapter_writes_only_its_catalogs(tmp_path):
    chapter = other_chapter(tmp_path)
    before = catalogs_bytes()
    untranslated = catalog_tools.sync("zh", prune=True, chapter=chapter)
    assert catalogs_bytes() == before, "a run for another chapter changed the engine's or a chapter's catalogs"
    table = {message.id: message.string for path in (chapter.locale_dir / "zh").glob("*.po")
             for message in catalog_tools.read_catalog(path) if message.id}
    assert table[SHARED] == "小部件自己的译文", "an id two chapters use keeps each chapter's translation"
    assert ENGINE not in table, "the engine's id, translated by the engine, stays the engine's"
    assert table[OWN] == "" and untranslated == [("assignment.po", OWN)]
    shared = {message.id: message.string for message in catalog_tools.read_catalog(
        DEFAULT.locale_dir / "zh" / "assignment.po")}
    assert shared[SHARED] and shared[SHARED] != "小部件自己的译文"


def test_the_engine_is_the_engines_own_folders_whichever_chapter():
    engine = {msgid for msgid, ((folder, _area), _where) in catalog_tools.extract(DEFAULT).items()
              if folder == catalog_tools.LOCALE_DIR}
    with toy.active():
        toy_engine = {msgid for msgid, ((folder, _area), _where) in
                      catalog_tools.extract(active_assignment.current()).items() if folder == catalog_tools.LOCALE_DIR}
    assert engine == toy_engine and ENGINE in engine and SHARED not in engine


@pytest.mark.slow
def test_the_tool_with_the_toy_active_leaves_the_other_catalogs_as_they_are():
    before = catalogs_bytes()
    done = subprocess.run([sys.executable, "-m", "autograder.i18n.catalog_tools"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=toy.env())
    assert done.returncode == 0 and "0 untranslated" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    assert catalogs_bytes() == before
