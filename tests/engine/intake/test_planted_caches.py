"""Every grade compares the grader's compiled caches with their sources
(integrity.planted_caches): a cache Python would load instead of its source but
holding other code is flagged. Comparing compiles the source, so a cache and
source whose status is what it was when they were last compared (and settled:
not written within the last two seconds) are not compiled again -- a batch
compares each once for the class. Whatever changes after that is compared again."""
import importlib.util
import os
import py_compile
import time

import pytest

from autograder.intake import integrity
from autograder.intake.grader_guard import GraderGuard

posix_change_times = pytest.mark.skipif(os.name == "nt", reason="st_ctime is the creation time on Windows: "
                                                                "no comparison is kept there")
HONEST = "def render(report):\n    return 'honest'\n"
EVIL = "def render(report):\n    return 'full!'\n"   # the same length: a cache of the same size


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A grader package with one module and the cache Python writes for it; compiles counted."""
    root = tmp_path / "autograder"
    (root / "reports").mkdir(parents=True)
    source = root / "reports" / "terminal.py"
    source.write_text(HONEST)
    cache = importlib.util.cache_from_source(str(source))
    py_compile.compile(str(source), cfile=cache)
    compared = []
    real = integrity._differs_from_source
    monkeypatch.setattr(integrity, "_differs_from_source",
                        lambda *args: compared.append(args[1]) or real(*args))
    monkeypatch.setattr(integrity, "_COMPARED", {})
    return root, source, cache, compared


def _plant(source, cache, text):
    """Overwrite the cache in place (same inode) with code compiled from ``text``, as
    Python would load it without looking at the source (unchecked hash)."""
    evil = source.with_name("evil_source.py")
    evil.write_text(text)
    staged = cache + ".staged"
    py_compile.compile(str(evil), cfile=staged, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    evil.unlink()
    data = open(staged, "rb").read()
    os.unlink(staged)
    with open(cache, "r+b") as out:
        out.write(data)
        out.truncate()


def _compared_once_settled(root, monkeypatch):
    """Compare the package's caches once, as settled files (their times in the past),
    and leave a clock tick before whatever the test writes next."""
    monkeypatch.setattr(integrity, "_SETTLED_S", 0.0)
    time.sleep(0.05)  # past the kernel clock's tick
    assert integrity.planted_caches(root) == []
    time.sleep(0.05)


@posix_change_times
def test_a_settled_cache_is_compared_once_while_nothing_changes(package, monkeypatch):
    root, source, cache, compared = package
    _compared_once_settled(root, monkeypatch)
    for _ in range(2):
        assert integrity.planted_caches(root) == []
    assert len(compared) == 1
    guard = GraderGuard(root, keep_contents=False)  # from the guard's own listing: found as well
    assert guard.planted == [] and len(compared) == 1


@posix_change_times
def test_a_cache_rewritten_after_it_was_compared_is_compared_again(package, monkeypatch):
    root, source, cache, compared = package
    _compared_once_settled(root, monkeypatch)
    _plant(source, cache, EVIL)
    name = "reports/__pycache__/" + os.path.basename(cache)
    assert integrity.planted_caches(root) == [name]
    assert GraderGuard(root, keep_contents=False).planted == [name]
    assert len(compared) == 2  # the plant was compared once, then known


def test_a_source_edited_after_its_cache_was_compared_makes_the_cache_stale(package, monkeypatch):
    root, source, cache, compared = package
    _compared_once_settled(root, monkeypatch)
    source.write_text(HONEST.replace("honest", "edited"))
    assert integrity.planted_caches(root) == ["reports/__pycache__/" + os.path.basename(cache)]


def test_files_written_within_the_last_seconds_are_compared_every_time(package):
    """Two writes within one tick of the kernel's clock can leave the same status:
    a cache that new is never taken as known."""
    root, source, cache, compared = package
    assert integrity.planted_caches(root) == []
    assert integrity._COMPARED == {}  # too new to be taken as known
    _plant(source, cache, EVIL)  # at once: possibly the very same status
    assert integrity.planted_caches(root) == ["reports/__pycache__/" + os.path.basename(cache)]
    assert len(compared) == 2


def test_a_cache_python_writes_while_a_guard_watches_is_no_change(package):
    """Another process of the course's imports the grader during a class's grading (a TA's
    second command, a neighbouring test): the cache it writes holds its source's code and
    is no change; a cache of other code written the same way is one, and so is one whose
    source is gone."""
    root, source, cache, _compared = package
    os.unlink(cache)
    guard = GraderGuard(root)
    assert guard.changes() == []
    py_compile.compile(str(source), cfile=cache)  # what an import writes
    assert guard.changes() == [] and guard.restore() == []
    os.unlink(cache)  # gone: Python compiles the source again
    assert guard.changes() == []
    py_compile.compile(str(source), cfile=cache)
    _plant(source, cache, EVIL)
    assert guard.changes() == ["reports/__pycache__/" + os.path.basename(cache)]
    assert guard.restore() == ["reports/__pycache__/" + os.path.basename(cache)]
    assert not os.path.exists(cache)
    orphan = root / "__pycache__" / os.path.basename(cache).replace("terminal", "report")
    orphan.parent.mkdir()
    orphan.write_bytes(b"x" * 32)  # a cache of no source
    assert guard.changes() == ["__pycache__/" + orphan.name]
