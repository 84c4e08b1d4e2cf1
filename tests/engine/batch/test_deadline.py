"""Which commit counts at a deadline, and how it is read out of a student's
repository (no grading here: tests/engine/batch/test_deadline_class.py grades a class).

Repositories are built with fixed committer dates; the deadline is given in
+08:00 so that a commit on "the 15th" in UTC can still be after it."""
import json
import os
import re
import shutil

import pytest

from support.cli import autograder_command  # noqa: E402
from support.git_class import commit, git, init, state  # noqa: E402

from autograder.batch import deadline, git_snapshot  # noqa: E402
from autograder.batch.jobs import CRASHED, NO_COMMIT  # noqa: E402

DEADLINE = "2026-12-15T23:59+08:00"
BEFORE = "2026-12-15T10:00:00+08:00"
JUST_BEFORE = "2026-12-15T23:58:59+08:00"
AT = "2026-12-15T23:59:00+08:00"
AFTER_UTC_SAME_DAY = "2026-12-15T16:30:00+00:00"   # 00:30 on the 16th in +08:00
LATER = "2026-12-17T09:00:00+08:00"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def spec(text=DEADLINE, **kwargs):
    return deadline.DeadlineSpec(deadline.parse_deadline(text), **kwargs)


def snapshot(repo, tmp_path, name="work", **kwargs):
    return deadline.take_snapshot(repo, repo.name, kwargs.pop("deadline_spec", spec()), tmp_path / name, **kwargs)


def test_parse_deadline_needs_a_zone():
    when = deadline.parse_deadline(DEADLINE)
    assert when.utcoffset().total_seconds() == 8 * 3600 and (when.hour, when.minute, when.second) == (23, 59, 0)
    assert deadline.parse_deadline("2026-12-15T15:59Z") == when
    for bad in ("2026-12-15T23:59", "next friday", "2026-13-01T00:00Z"):
        with pytest.raises(deadline.DeadlineError):
            deadline.parse_deadline(bad)


@pytest.mark.parametrize("bare, suggested", [("2026-12-01", "2026-12-01T23:59+08:00"),
                                             ("2026-12-01+08:00", "2026-12-01T23:59+08:00"),
                                             ("2026-12-01-05:00", "2026-12-01T23:59-05:00"),
                                             ("2026-12-01Z", "2026-12-01T23:59Z"),
                                             ("20261201", "2026-12-01T23:59+08:00")])
def test_a_bare_date_is_refused_with_a_full_time_suggested(bare, suggested):
    """A date alone would mean 00:00 of the due day; the error's example must itself be
    a deadline that parses (it used to suggest '2026-12-01+08:00', refused in turn)."""
    with pytest.raises(deadline.DeadlineError) as refused:
        deadline.parse_deadline(bare)
    for lang, words in (("en", "a date alone"), ("zh", "只写日期")):
        message = refused.value.render(lang)
        assert words in message and message.rstrip("。.").endswith(suggested), message
    example = deadline.parse_deadline(suggested)
    assert (example.year, example.month, example.day, example.hour, example.minute) == (2026, 12, 1, 23, 59)
    # Every suggestion the parser makes parses.
    with pytest.raises(deadline.DeadlineError) as no_zone:
        deadline.parse_deadline("2026-12-01T23:59")
    for lang in ("en", "zh"):
        examples = re.findall(r"2026-12-01T23:59[^\s'。，,]+", no_zone.value.render(lang))
        assert len(examples) == 2 and all(deadline.parse_deadline(example.rstrip(".")) for example in examples)


def test_last_commit_at_or_before_the_deadline_in_its_zone(tmp_path):
    repo = init(tmp_path / "amp-ana")
    commit(repo, {"exercises/toy_sum.py": "one = 1\n"}, BEFORE)
    graded = commit(repo, {"exercises/toy_sum.py": "two = 2\n"}, JUST_BEFORE)
    commit(repo, {"exercises/toy_sum.py": "three = 3\n"}, AFTER_UTC_SAME_DAY)
    head = commit(repo, {"exercises/toy_sum.py": "four = 4\n", "notes.txt": "late\n"}, LATER)
    before = state(repo)
    shot = snapshot(repo, tmp_path, also_latest=True)
    assert shot.status == "" and shot.record["sha"] == graded
    assert shot.record["committed_at"] == "2026-12-15T23:58:59+08:00"
    assert shot.record["later_commits"] == 2 and shot.record["source"] == "committed"
    assert shot.record["deadline"] == "2026-12-15T23:59:00+08:00"
    assert shot.record["latest"] == {"sha": head, "committed_at": "2026-12-17T09:00:00+08:00"}
    assert (shot.tree / "exercises" / "toy_sum.py").read_text() == "two = 2\n"
    assert not (shot.tree / "notes.txt").exists() and not (shot.tree / ".git").exists()
    assert (shot.latest_tree / "exercises" / "toy_sum.py").read_text() == "four = 4\n"
    assert state(repo) == before  # the student's working tree, HEAD and refs are untouched


def test_a_commit_exactly_at_the_deadline_counts(tmp_path):
    repo = init(tmp_path / "amp-ben")
    commit(repo, {"a.py": "1\n"}, BEFORE)
    at = commit(repo, {"a.py": "2\n"}, AT)
    shot = snapshot(repo, tmp_path)
    assert shot.record["sha"] == at and shot.record["later_commits"] == 0 and "latest" not in shot.record
    assert shot.latest_tree is None  # nothing later: no second grade


def test_first_parent_history_decides(tmp_path):
    """A side branch merged after the deadline does not count, even if its own
    commit is dated before it: the default branch did not hold it then."""
    repo = init(tmp_path / "amp-cy")
    base = commit(repo, {"a.py": "base\n"}, BEFORE)
    git(repo, "checkout", "--quiet", "-b", "side")
    commit(repo, {"b.py": "side\n"}, JUST_BEFORE)
    git(repo, "checkout", "--quiet", "main")
    git(repo, "merge", "--quiet", "--no-ff", "-m", "merge", "side", when=LATER)
    shot = snapshot(repo, tmp_path)
    assert shot.record["sha"] == base
    assert shot.record["later_commits"] == 2  # the side commit and the merge
    assert not (shot.tree / "b.py").exists()


def test_no_commit_before_the_deadline(tmp_path):
    repo = init(tmp_path / "amp-dee")
    commit(repo, {"exercises/toy_sum.py": "x = 1\n"}, AFTER_UTC_SAME_DAY)
    head = commit(repo, {"exercises/toy_sum.py": "x = 2\n"}, LATER)
    shot = snapshot(repo, tmp_path, also_latest=True)
    assert shot.status == NO_COMMIT and shot.tree is None
    assert "no commit on the default branch at or before 2026-12-15T23:59:00+08:00" in shot.reason
    assert shot.record["sha"] is None and shot.record["later_commits"] == 2
    assert shot.record["latest"]["sha"] == head and shot.latest_tree is not None
    empty = init(tmp_path / "amp-empty")
    assert snapshot(empty, tmp_path, "work-empty").status == NO_COMMIT


def test_a_folder_that_is_not_a_repository_is_graded_as_it_is(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "toy_sum.py").write_text("x = 1\n")
    shot = snapshot(folder, tmp_path)
    assert shot.status == "" and shot.tree is None
    assert shot.record["source"] == deadline.WORKING_TREE and "not a git repository" in shot.record["note"]


def test_a_git_file_pointing_elsewhere_is_not_followed(tmp_path):
    other = init(tmp_path / "someone-else")
    commit(other, {"secret.py": "s = 1\n"}, BEFORE)
    folder = tmp_path / "pointer"
    folder.mkdir()
    (folder / ".git").write_text(f"gitdir: {other / '.git'}\n")
    shot = snapshot(folder, tmp_path)
    assert shot.status == CRASHED and "not read" in shot.reason and shot.tree is None


def test_hostile_repository_config_runs_nothing_and_the_export_is_byte_exact(tmp_path):
    """A repository that arrived as a copy (a zip) can carry config and hooks
    that make git run commands; none may run, and the commit's own
    .gitattributes may not rewrite what is exported."""
    marker = tmp_path / "PWNED"
    repo = init(tmp_path / "amp-eve")
    attributes = "* text eol=crlf filter=evil\n*.py export-subst\nsecret.py export-ignore\n"
    sha = commit(repo, {".gitattributes": attributes, "exercises/toy_sum.py": "x = 1  # $Format:%H$\n",
                        "secret.py": "kept = True\n"}, BEFORE)
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "pre-auto-gc", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}-{hook}\n")
        (hooks / hook).chmod(0o755)
    with open(repo / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}-fsmonitor; false"\n'
                     f'\tsshCommand = "touch {marker}-ssh"\n\tpager = "touch {marker}-pager"\n'
                     f'[filter "evil"]\n\tsmudge = "touch {marker}-smudge; cat"\n\tclean = "touch {marker}-clean; cat"\n'
                     f'\tprocess = "touch {marker}-process"\n[uploadpack]\n\tpackObjectsHook = "touch {marker}-pack;"\n'
                     f'[alias]\n\tclone = "!touch {marker}-alias"\n')
    shot = snapshot(repo, tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("PWNED")) == []
    assert shot.status == "" and shot.record["sha"] == sha
    assert (shot.tree / "exercises" / "toy_sum.py").read_bytes() == b"x = 1  # $Format:%H$\n"
    assert (shot.tree / "secret.py").read_bytes() == b"kept = True\n"


def test_links_in_the_commit_are_not_exported(tmp_path):
    repo = init(tmp_path / "amp-fay")
    (repo / "exercises").mkdir()
    os.symlink("/etc/passwd", repo / "exercises" / "toy_sum.py")
    os.symlink("../README.md", repo / "exercises" / "helper.py")
    commit(repo, {"README.md": "hello\n", "exercises/kept.py": "x = 1\n"}, BEFORE)
    shot = snapshot(repo, tmp_path)
    assert shot.status == ""
    exported = sorted(path.name for path in (shot.tree / "exercises").iterdir())
    assert exported == ["kept.py"]
    assert any("2 symbolic link(s)" in note for note in shot.record["notes"])


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_repository_owned_by_another_user_is_read(tmp_path):
    """The Actions runner's clones are graded as root: git's ownership check
    ('dubious ownership') must be passed for that repository only."""
    repo = init(tmp_path / "amp-gus")
    sha = commit(repo, {"a.py": "1\n"}, BEFORE)
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 65534, 65534)
    shot = snapshot(repo, tmp_path)
    assert shot.status == "" and shot.record["sha"] == sha


# -- push times -------------------------------------------------------------------------------------
def _pushes(tmp_path, table):
    path = tmp_path / "pushes.json"
    path.write_text(json.dumps({"version": 1, "pushes": table}))
    return path


def test_pushed_source_ignores_forged_commit_dates(tmp_path):
    """A commit dated before the deadline but pushed after it does not count."""
    repo = init(tmp_path / "amp-hal")
    first = commit(repo, {"a.py": "first\n"}, BEFORE)
    backdated = commit(repo, {"a.py": "backdated\n"}, JUST_BEFORE)
    path = _pushes(tmp_path, {"amp-hal": [{"sha": first, "pushed_at": "2026-12-15T03:00:00Z", "ref": "refs/heads/main"},
                                          {"sha": backdated, "pushed_at": "2026-12-16T08:00:00+08:00"}]})
    pushed = spec(source=deadline.PUSHED, pushes=deadline.load_pushes(path), pushes_file=str(path))
    shot = snapshot(repo, tmp_path, deadline_spec=pushed)
    assert shot.record["sha"] == first and shot.record["source"] == "pushed"
    assert shot.record["pushed_at"] == "2026-12-15T11:00:00+08:00" and shot.record["later_commits"] == 1
    assert (shot.tree / "a.py").read_text() == "first\n"
    by_commit_time = snapshot(repo, tmp_path, "work-committed")
    assert by_commit_time.record["sha"] == backdated  # what the committer time alone would grade


def test_pushed_source_without_a_push_or_a_record(tmp_path):
    repo = init(tmp_path / "amp-ivy")
    sha = commit(repo, {"a.py": "1\n"}, BEFORE)
    late = _pushes(tmp_path, {"amp-ivy": [{"sha": sha, "pushed_at": "2026-12-16T00:00:01+08:00"}]})
    pushed = spec(source=deadline.PUSHED, pushes=deadline.load_pushes(late))
    shot = snapshot(repo, tmp_path, deadline_spec=pushed)
    assert shot.status == NO_COMMIT and "no push" in shot.reason
    none = spec(source=deadline.PUSHED, pushes={})
    shot = snapshot(repo, tmp_path, "work-2", deadline_spec=none)
    assert shot.status == NO_COMMIT and "no entry for this folder" in shot.reason
    missing = spec(source=deadline.PUSHED, pushes={"amp-ivy": [("f" * 40, deadline.parse_deadline(BEFORE))]})
    shot = snapshot(repo, tmp_path, "work-3", deadline_spec=missing)
    assert shot.status == CRASHED and "not in this clone" in shot.reason


@pytest.mark.parametrize("content, message", [
    ({"pushes": {}}, "version"),
    ({"version": 1, "pushes": {"a": {"sha": "x"}}}, "not a list"),
    ({"version": 1, "pushes": {"a": [{"sha": "abc", "pushed_at": "2026-12-15T00:00Z"}]}}, "full hexadecimal"),
    ({"version": 1, "pushes": {"a": [{"sha": "a" * 40, "pushed_at": "2026-12-15T00:00"}]}}, "with a zone"),
])
def test_push_file_is_validated(tmp_path, content, message):
    path = tmp_path / "pushes.json"
    path.write_text(json.dumps(content))
    with pytest.raises(deadline.DeadlineError, match=message):
        deadline.load_pushes(path)


@pytest.mark.slow
def test_deadline_options_on_the_command_line(tmp_path):
    """Bad deadline input is bad usage (exit 2), before anything is graded."""
    def cli(*args):
        return autograder_command("grade-many", tmp_path, "-o", tmp_path / "out", *args, timeout=120)

    for args, message in ((["--deadline", "2026-12-15T23:59"], "no time zone"),
                          (["--deadline", "2026-12-01"], "e.g. 2026-12-01T23:59+08:00."),
                          (["--deadline", "2026-12-01", "--report-lang", "zh"], "例如 2026-12-01T23:59+08:00。"),
                          (["--deadline", "2026-12-01", "--lang", "zh"], "只写日期"),
                          (["--deadline", DEADLINE, "--deadline-source", "pushed"], "needs --pushes"),
                          (["--also-latest"], "need --deadline"),
                          (["--deadline", DEADLINE, "--deadline-source", "pushed", "--pushes",
                            str(tmp_path / "none.json")], "no such file")):
        done = cli(*args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
    assert not (tmp_path / "out" / "run.json").exists()


def test_git_runs_with_no_user_or_system_configuration():
    env = git_snapshot.environment()
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_NO_REPLACE_OBJECTS"] == "1" and "GIT_DIR" not in env
    assert "core.hooksPath=/dev/null" in git_snapshot.SAFE_OPTIONS
