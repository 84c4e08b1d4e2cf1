"""Student repositories for the deadline tests: real git repositories whose
commits carry fixed author and committer dates."""
import os
import pathlib
import subprocess

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Student",
           "GIT_AUTHOR_EMAIL": "student@example.invalid", "GIT_COMMITTER_NAME": "Student",
           "GIT_COMMITTER_EMAIL": "student@example.invalid", "LC_ALL": "C"}


def git(repo, *args, when=None):
    env = dict(os.environ, **GIT_ENV)
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def init(repo):
    repo = pathlib.Path(repo)
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    return repo


def commit(repo, files, when, message="work", remove=()):
    """Write ``files`` ({relative path: text}), remove ``remove``, commit at ``when``; returns the sha."""
    repo = pathlib.Path(repo)
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for relative in remove:
        git(repo, "rm", "--quiet", relative)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


def state(repo):
    """What must not change when a repository is graded: HEAD, refs, status, files."""
    repo = pathlib.Path(repo)
    files = {path.relative_to(repo).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
             for path in sorted(repo.rglob("*")) if path.is_file() and ".git" not in path.relative_to(repo).parts}
    return (git(repo, "rev-parse", "HEAD"), git(repo, "for-each-ref"), git(repo, "status", "--porcelain"), files)
