"""Reading a student's git repository without trusting it.

A student folder's ``.git`` is hostile input: its configuration and hooks can
make git run commands (``core.fsmonitor``, filter drivers, hooks...), and a
folder that reached us as a copy (an upload, an archive) was never sanitised
by a clone. Git's own advice (gitsecurityboundary(7)) is followed: the only
git command run on the student's repository is ``git clone --no-local``, whose
reading side (``upload-pack``) is safe on an untrusted repository; everything
else runs on that fresh clone, whose configuration git wrote itself.

Every git process gets an environment built from scratch: no system or user
configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL``), no replace
refs, no prompts, only the ``file`` transport, hooks pointed at ``/dev/null``.
A repository owned by another user (the Actions runner's clone graded as root)
is allowed for that one clone by a private global configuration naming exactly
that ``.git`` folder: git 2.39 ignores ``safe.directory`` given with ``-c``.

A commit is exported with ``git archive`` into a plain folder: no git metadata
reaches the grade, the clone's ``info/attributes`` switches off every
attribute that would rewrite content (``export-subst``, filters, end-of-line
conversion), and extraction refuses links, devices, absolute or ``..`` paths
(:func:`tarfile.data_filter`) and bounds sizes.
"""
import contextlib
import os
import pathlib
import stat
import subprocess
import tarfile

GIT_TIMEOUT_S = 120
MAX_FILE_BYTES = 16 * 2**20       # a larger file is left out of the export (and said)
MAX_EXPORT_BYTES = 512 * 2**20    # a larger commit is not exported at all
MAX_MEMBERS = 50_000
# Options for every git command: nothing configured may run a program.
SAFE_OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                "-c", "core.attributesFile=/dev/null", "-c", "protocol.allow=never",
                "-c", "protocol.file.allow=always", "-c", "log.showSignature=false",
                "-c", "core.sshCommand=false", "-c", "credential.helper=")
# Byte-exact exports: the commit's own .gitattributes cannot rewrite files.
NEUTRAL_ATTRIBUTES = "* -export-subst -export-ignore -filter -text -eol -ident -working-tree-encoding\n"


class GitError(Exception):
    """A git command failed or a repository cannot be read; the message says why."""


def environment(global_config="/dev/null"):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C",
           "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(global_config),
           "GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1", "GIT_ALLOW_PROTOCOL": "file",
           "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_LAZY_FETCH": "1", "GIT_OPTIONAL_LOCKS": "0"}
    if os.environ.get("SYSTEMROOT"):  # Windows needs it to start anything
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return env


def run_git(args, git_dir=None, global_config="/dev/null", timeout=GIT_TIMEOUT_S):
    """``git [safe options] [--git-dir] args``; returns stdout as text, raises :class:`GitError`."""
    command = ["git", *SAFE_OPTIONS]
    if git_dir is not None:
        command.append(f"--git-dir={git_dir}")
    command += list(args)
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              env=environment(global_config), cwd="/" if os.name == "posix" else None)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit code {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace")


def has_repository(folder):
    """``'repo'`` when ``folder/.git`` is a real folder, ``'odd'`` when it is a
    link or a file (a worktree pointer could send git anywhere: not read),
    ``None`` when there is no ``.git``."""
    try:
        info = os.lstat(pathlib.Path(folder) / ".git")
    except FileNotFoundError:
        return None
    except OSError:
        return "odd"
    return "repo" if stat.S_ISDIR(info.st_mode) else "odd"


def sanitized_clone(folder, destination):
    """``git clone --no-local --mirror`` of the student's ``folder`` into ``destination``."""
    folder = pathlib.Path(folder).resolve()
    destination = pathlib.Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    trust = destination.parent / f".{destination.name}.gitconfig"
    trust.write_text("", encoding="utf-8")
    try:
        for path in (folder / ".git", folder):  # exactly this repository, nothing else
            run_git(["config", "--file", str(trust), "--add", "safe.directory", str(path)])
        run_git(["clone", "--quiet", "--no-local", "--mirror", "--template=", "--no-tags", "--",
                 str(folder), str(destination)], global_config=trust)
    finally:
        with contextlib.suppress(OSError):
            trust.unlink()
    info = destination / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(NEUTRAL_ATTRIBUTES, encoding="utf-8")
    return destination


def resolve(clone, name):
    """The commit sha ``name`` names in ``clone``, or None."""
    try:
        return run_git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"],
                       git_dir=clone).strip() or None
    except GitError:
        return None


def first_parent_history(clone, head):
    """``[(committer_timestamp, sha)]`` from ``head`` back along first parents."""
    lines = run_git(["rev-list", "--first-parent", "--timestamp", head, "--"], git_dir=clone).split()
    return [(int(lines[i]), lines[i + 1]) for i in range(0, len(lines) - 1, 2)]


def commit_timestamp(clone, sha):
    out = run_git(["rev-list", "--no-walk", "--timestamp", sha, "--"], git_dir=clone).split()
    return int(out[0])


def count_commits(clone, exclude, include):
    """Commits reachable from ``include`` but not from ``exclude`` (``None``: all of them)."""
    spec = [include] if exclude is None else [f"{exclude}..{include}"]
    return int(run_git(["rev-list", "--count", *spec, "--"], git_dir=clone).strip())


def files_at(clone, sha, paths):
    """``{path: blob id}`` of the regular files among ``paths`` in commit ``sha`` (links, folders
    and submodules are no module file)."""
    found = {}
    for entry in run_git(["ls-tree", "-z", "--end-of-options", sha, "--", *paths], git_dir=clone).split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[0] in ("100644", "100755") and fields[1] == "blob":
            found[path] = fields[2]
    return found


def read_blobs(clone, ids):
    """``{blob id: bytes}`` of ``ids``, read by one ``git cat-file --batch``; a blob larger
    than MAX_FILE_BYTES (or missing) is left out, as an export would leave it out."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    command = ["git", *SAFE_OPTIONS, f"--git-dir={clone}", "cat-file", "--batch"]
    try:
        done = subprocess.run(command, input="".join(f"{blob}\n" for blob in ids).encode(), capture_output=True,
                              timeout=GIT_TIMEOUT_S, env=environment(), cwd="/" if os.name == "posix" else None)
    except subprocess.TimeoutExpired:
        raise GitError(f"git cat-file took longer than {GIT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise GitError(f"git cat-file failed (exit code {done.returncode})")
    found, out, at = {}, done.stdout, 0
    for blob in ids:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue   # "<id> missing"
        size = int(header[2])
        if size <= MAX_FILE_BYTES:
            found[blob] = out[at:at + size]
        at += size + 1
    return found


def _member_filter(limits, notes):
    def keep(member, destination):
        if member.issym() or member.islnk():
            notes["links"] += 1
            return None
        if not (member.isfile() or member.isdir()):
            return None
        if member.isfile() and member.size > MAX_FILE_BYTES:
            notes["large"].append(member.name)
            return None
        limits["members"] += 1
        limits["bytes"] += member.size
        if limits["members"] > MAX_MEMBERS or limits["bytes"] > MAX_EXPORT_BYTES:
            raise GitError(f"the commit holds more than {MAX_MEMBERS} files or "
                           f"{MAX_EXPORT_BYTES // 2**20} MiB: not exported")
        try:
            return tarfile.data_filter(member, destination)
        except tarfile.FilterError:
            notes["refused"] += 1
            return None
    return keep


def export_commit(clone, sha, destination):
    """The tree of ``sha`` as plain files under ``destination``; returns notes
    (sentences) about what was left out. Raises :class:`GitError`."""
    if not hasattr(tarfile, "data_filter"):  # extraction filters: Python 3.10.12, 3.11.4, 3.12
        raise GitError("this Python has no tarfile extraction filters: use Python 3.11.4 or newer")
    destination = pathlib.Path(destination)
    destination.mkdir(parents=True, exist_ok=False)
    command = ["git", *SAFE_OPTIONS, f"--git-dir={clone}", "archive", "--format=tar", sha]
    notes = {"links": 0, "large": [], "refused": 0}
    limits = {"members": 0, "bytes": 0}
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=null,
                                   env=environment(), cwd="/" if os.name == "posix" else None)
    try:
        try:
            with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
                keep = _member_filter(limits, notes)
                for member in archive:
                    archive.extract(member, destination, filter=keep)
        except tarfile.ReadError:
            # An empty tree is a pax header and the end blocks, which tarfile
            # reads as a broken archive; anything else is broken indeed.
            process.stdout.read()
            if limits["members"] or process.wait(timeout=GIT_TIMEOUT_S) != 0:
                raise
        if process.wait(timeout=GIT_TIMEOUT_S) != 0:
            raise GitError(f"git archive failed (exit code {process.returncode})")
    except (tarfile.TarError, OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"the commit could not be exported ({exc})") from None
    finally:
        process.stdout.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    said = []
    if notes["links"]:
        said.append(f"{notes['links']} symbolic link(s) in the commit were not exported (links are never followed)")
    if notes["large"]:
        said.append(f"{len(notes['large'])} file(s) larger than {MAX_FILE_BYTES // 2**20} MiB were not exported")
    if notes["refused"]:
        said.append(f"{notes['refused']} entr(y/ies) with an unsafe path were not exported")
    return said
