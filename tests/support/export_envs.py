"""Fresh environments built from an export's own files, for the export tests.

Nothing of the development venv goes in: each venv is made by the machine's own
``python3`` (found on a PATH without this venv's folders) with ``python3 -m venv``
and filled only from the files an export ships. Building one takes a minute or
more (torch), so a finished environment is kept under a key made of exactly the
files it was built from (and the Python that built it) and reused by later
sessions: ``$AUTOGRADER_EXPORT_ENVS``, default ``<tmp>/autograder-export-envs-<uid>``. A world-
traversable place on purpose: the grader's boxes run student code under a uid
of their own, which must be able to read the interpreter (as on Gradescope,
where setup.sh opens /autograder to everyone). Delete the folder to rebuild;
an environment of the same kind unused for three days goes when a new one is built.
"""
import contextlib
import functools
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import fcntl
except ImportError:  # Windows: no export environment is built there (see LINUX)
    fcntl = None

DONE = ".complete"
STALE_DAYS = 3


# Gradescope's images and otter's are Linux: the exports' environments are built and graded there.
LINUX = sys.platform.startswith("linux")
NOT_LINUX = "the exports' environments are Linux ones (Gradescope's and otter's images)"


def clean_environ(**extra):
    """os.environ without this venv: no VIRTUAL_ENV, PYTHONPATH or PYTHONHOME, and no
    PATH entry inside it. pip gives up on an unreachable index at once (PIP_RETRIES=0:
    the export names PyTorch's CPU index, which some build machines cannot reach)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    venv = pathlib.Path(sys.prefix).resolve()
    kept = [entry for entry in env.get("PATH", "").split(os.pathsep)
            if entry and venv not in pathlib.Path(entry).resolve().parents and pathlib.Path(entry).resolve() != venv]
    env["PATH"] = os.pathsep.join(kept or ["/usr/local/bin", "/usr/bin", "/bin"])
    env.setdefault("PIP_RETRIES", "0")
    env.update(extra)
    return env


def base_python():
    """The machine's python3 (this venv's base where PATH has none), or None. Any
    interpreter will do: ``python3 -m venv`` makes a venv without its packages."""
    return shutil.which("python3", path=clean_environ()["PATH"]) or getattr(sys, "_base_executable", None)


@functools.lru_cache(maxsize=None)  # one answer per interpreter and session (a pyenv shim takes 0.25 s)
def python_identity(python):
    return subprocess.run([python, "-c", "import sys, platform; print(sys.version, platform.machine())"],
                          capture_output=True, text=True, env=clean_environ(), check=True).stdout.strip()


def cache_root():
    root = pathlib.Path(os.environ.get("AUTOGRADER_EXPORT_ENVS")
                        or pathlib.Path(tempfile.gettempdir()) / f"autograder-export-envs-{os.getuid()}")
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    info = os.lstat(root)
    if root.is_symlink() or info.st_uid != os.getuid():
        raise RuntimeError(f"{root} is not a folder of this user's: set AUTOGRADER_EXPORT_ENVS elsewhere")
    root.chmod(0o755)
    return root


def key_of(kind, files, python):
    """``kind-<sha256 of the files' names and bytes and the Python's identity>``."""
    digest = hashlib.sha256(python_identity(python).encode())
    for name in sorted(files):
        digest.update(b"\0" + name.encode() + b"\0" + files[name])
    return f"{kind}-{digest.hexdigest()[:16]}"


def cached(kind, files, build, python):
    """The folder of an environment built by ``build(folder)`` from ``files`` (name -> bytes,
    written into the folder first), built once per key; a half-built one is rebuilt."""
    root = cache_root()
    folder = root / key_of(kind, files, python)
    with open(root / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session building the same environment
        if (folder / DONE).is_file():
            os.utime(folder / DONE)  # in use: not stale
        else:
            prune(root, kind, keep=folder.name)
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(folder)
            folder.mkdir(mode=0o755)
            for name, data in files.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(data)
            build(folder)
            (folder / DONE).write_text("built\n", encoding="utf-8")
    return folder


def prune(root, kind, keep, days=STALE_DAYS):
    """Remove environments of ``kind`` unused for ``days`` (built from files since changed)."""
    for other in root.glob(f"{kind}-*"):
        if other.name == keep or not other.is_dir():
            continue
        with contextlib.suppress(OSError), open(root / f"{other.name}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # being built or used now
            used = (other / DONE).stat().st_mtime if (other / DONE).is_file() else other.stat().st_mtime
            if time.time() - used > days * 86400:
                shutil.rmtree(other, ignore_errors=True)


def run_logged(command, log, **kwargs):
    """Run ``command``; on failure raise with the tail of its output (kept in ``log``)."""
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        tail = pathlib.Path(log).read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"{' '.join(map(str, command))} exited {proc.returncode}:\n{tail}")
