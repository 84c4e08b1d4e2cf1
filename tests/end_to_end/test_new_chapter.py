"""A chapter the engine has never seen, added as docs/architecture.md ("Adding a chapter") says:
written into a temporary folder (tests/support/new_chapter.py: two TODOs, suites that share a module
of their own, a test built on TODO 1), then the page's own commands, each as it is written with the
chapter's path put in: stubs from the reference, its public tests, its catalogs, a grade of the
reference and of the stubs, its mistakes measured, the similarity check calibrated, its template
exported and graded, the repository's checks on it. Nothing of the repository may change on the way."""
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from support import new_chapter
from support.helpers import ROOT

pytestmark = pytest.mark.slow
TOTAL = new_chapter.VISIBLE_POINTS + new_chapter.HIDDEN_POINTS


def repository_state():
    """sha256 of every file of the repository's tree: the tracked ones and those git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return {name: hashlib.sha256((ROOT / name).read_bytes()).hexdigest() for name in listed
            if name and (ROOT / name).is_file()}


def shell(command, cwd=ROOT, timeout=600):
    """``command`` run by bash as a maintainer's terminal runs it: this Python first on the path, no
    setting of the grader's or of a CI runner inherited."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("AUTOGRADER_", "GITHUB_", "PYTEST_")) and key != "CLASSROOM_MANIFEST"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def said(done):
    return f"$ {done.args[-1]}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@dataclasses.dataclass
class Walk:
    chapter: object
    output: object
    runs: dict
    untranslated: list
    before: dict
    after: dict


def peeking_submission(folder, chapter):
    """A clip_norm.py whose l2_norm returns what it could read of the chapter's hidden suite and
    reference: their sizes, or the error that stopped it."""
    secrets = [str(chapter / "hidden" / "test_hidden_clip_norm.py"), str(chapter / "solutions" / "clip_norm.py")]
    folder.mkdir()
    (folder / "clip_norm.py").write_text(
        f"SECRETS = {secrets!r}\n\n\ndef read(path):\n    try:\n        with open(path) as handle:\n"
        "            return len(handle.read())\n    except OSError as exc:\n        return type(exc).__name__\n\n\n"
        "def l2_norm(values):\n    return str([read(path) for path in SECRETS])\n\n\n"
        "def clip_(values, max_norm):\n    return 1.0\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    """Every step of the page, in its order, and the repository as it was before and after."""
    base = tmp_path_factory.mktemp("course")
    output = base / "out"
    output.mkdir()
    before = repository_state()
    chapter = new_chapter.write(base / "chapters")
    runs = {}
    for name in ("stubs", "public-tests", "catalogs"):
        runs[name] = shell(new_chapter.command(name, chapter, output))
    untranslated = new_chapter.translate(chapter)   # what its translator does
    for name in ("catalogs-again", "grade-reference", "grade-stubs", "mutants", "calibration", "template",
                 "template-grade", "checks"):
        runs[name] = shell(new_chapter.command(name.removesuffix("-again"), chapter, output))
    runs["template-public-tests"] = shell("python -m pytest -q", cwd=output / "vector_clip-template")
    peek = peeking_submission(output / "peek", chapter)
    runs["peek"] = shell(f"AUTOGRADER_ASSIGNMENT={chapter} python -m autograder grade --submission {peek} "
                         f"--results {output / 'peek.json'} --lang en")
    return Walk(chapter, output, runs, untranslated, before, repository_state())


def results(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_stubs_come_from_the_reference(walk):
    assert walk.runs["stubs"].returncode == 0, said(walk.runs["stubs"])
    stub = (walk.chapter / "exercises" / "clip_norm.py").read_text(encoding="utf-8")
    assert "raise NotImplementedError('TODO 1: the square root of the sum of squares')" in stub
    assert "raise NotImplementedError('TODO 2:" in stub and "math.sqrt" not in stub


def test_the_public_tests_fail_on_the_stubs_here_and_in_the_template(walk):
    for name in ("public-tests", "template-public-tests"):
        done = walk.runs[name]
        assert done.returncode == 1 and "NotImplementedError" in done.stdout and "2 failed" in done.stdout, said(done)


def test_the_catalog_tool_writes_the_chapters_catalogs_and_checks_them(walk):
    first, again = walk.runs["catalogs"], walk.runs["catalogs-again"]
    assert first.returncode == 1 and f"{len(new_chapter.CHINESE)} untranslated" in first.stdout, said(first)
    assert walk.untranslated == [], "the chapter's translator found ids the page's chapter does not have"
    assert again.returncode == 0 and "0 untranslated" in again.stdout, said(again)
    assert sorted(path.name for path in (walk.chapter / "locale" / "zh").glob("*.po")) == \
        ["assignment.po", "clip_norm.po"]


def test_the_reference_earns_every_point_and_the_stubs_none(walk):
    for name in ("grade-reference", "grade-stubs"):
        assert walk.runs[name].returncode == 0, said(walk.runs[name])
    reference = results(walk.output / "vector_clip-reference.json")
    stubs = results(walk.output / "vector_clip-stubs.json")
    assert (reference["score"], reference["max_score"]) == (TOTAL, TOTAL)
    assert (stubs["score"], stubs["max_score"]) == (0, TOTAL)
    assert "TODO 1 is not written yet" in walk.runs["grade-stubs"].stdout


def test_each_mistake_is_measured_and_its_todo_named(walk):
    done = walk.runs["mutants"]
    assert done.returncode == 0, said(done)
    for line in ("mutants: 2", "full local marks: 0", "score depends on the seed: 0",
                 "local diagnosis names another TODO: 0", "full diagnosis names another TODO: 0"):
        assert line in done.stdout, said(done)
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("norm_", "clip_"))}
    assert "T1" in rows["norm_without_sqrt"] and "public FAIL" in rows["norm_without_sqrt"]
    assert rows["norm_without_sqrt"].endswith("-> T1") and rows["clip_returns_a_copy"].endswith("-> T2")


def test_the_similarity_check_is_calibrated_on_the_chapters_honest_set(walk):
    assert walk.runs["calibration"].returncode == 0, said(walk.runs["calibration"])
    calibration = results(walk.chapter / "similarity_calibration.json")
    assert set(calibration["modules"]) == {new_chapter.MODULE} and "(4 authors)" in calibration["source"]
    assert not list((walk.output / "vector_clip-template").rglob("similarity_calibration.json"))


def test_the_template_grades_the_chapter_without_its_hidden_tests(walk):
    assert walk.runs["template"].returncode == 0, said(walk.runs["template"])
    assert walk.runs["template"].stderr == "", "export-template printed more than its result"
    template = walk.output / "vector_clip-template"
    package = template / "autograder" / "assignment"
    assert (package / "checks.py").is_file() and (template / "exercises" / "tests" / "conftest.py").is_file()
    assert not list(package.rglob("test_hidden*")) and not (package / "solutions").exists()
    assert not (package / "exercises").exists() and not (template / "solutions").exists()
    done = walk.runs["template-grade"]
    assert done.returncode == 0, said(done)
    graded = results(template / "results.json")
    assert (graded["score"], graded["max_score"]) == (0, new_chapter.VISIBLE_POINTS)
    assert graded["extra_data"]["hidden_not_run"] == {"clip_norm": new_chapter.HIDDEN_POINTS}
    assert "l2_norm([3, 4]) 等于 5" in done.stdout, "the template grades in Chinese, with the chapter's catalog"
    shipped = "".join(path.read_text(encoding="utf-8") for path in package.rglob("*.po"))
    assert "l2_norm of random values" not in shipped, "a hidden test's title reached the template"


def test_the_repository_checks_pass_on_it(walk):
    assert walk.runs["checks"].returncode == 0, said(walk.runs["checks"])


def test_a_box_reads_neither_the_chapters_hidden_suite_nor_its_reference(walk):
    assert walk.runs["peek"].returncode == 0, said(walk.runs["peek"])
    outputs = " ".join(test["output"] for test in results(walk.output / "peek.json")["tests"])
    seen = re.findall(r"got \"\[('\w+'), ('\w+')\]\"", outputs)   # what each read gave: its size, or its error
    assert seen and all(read.endswith("Error'") for pair in seen for read in pair), outputs[:2000]


def test_no_file_of_the_repository_changed(walk):
    changed = sorted(name for name in walk.before.keys() | walk.after.keys()
                     if walk.before.get(name) != walk.after.get(name))
    assert not changed, f"files of the repository changed while adding a chapter outside it: {changed}"
