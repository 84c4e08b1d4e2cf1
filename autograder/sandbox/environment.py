"""The environment a sandbox process starts with: nothing of the caller's but a
few harmless variables (no tokens, no runner file-command paths)."""
import os
import sys

SAFE_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "SYSTEMDRIVE",
                    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "AUTOGRADER_ASSIGNMENT")  # a package name: which assignment's worker side

# A process that forks boxes holds ~150 MiB of torch's heap: on huge pages its
# page tables are a few hundred entries instead of ~40 000, so every fork and
# every exit of a box costs about half (benchmarks/bench_grade_many.py). glibc
# reads this once at start; where transparent huge pages are off it changes nothing.
HUGE_PAGES_MALLOC = "glibc.malloc.hugetlb=1"


def scrubbed_environment(environ=None):
    environ = os.environ if environ is None else environ
    return {key: value for key, value in environ.items() if key in SAFE_ENVIRONMENT}


def one_blas_thread(env):
    """``env`` (a dict, or ``os.environ``) with numpy's OpenBLAS kept to one thread unless
    it says otherwise. OpenBLAS would start a thread per CPU in the judge and the
    zygote (torch imports numpy) or the similarity check, threads that spin after
    each call and are torn down before every fork; their arrays are tiny."""
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def forking_environment(environ=None):
    """The scrubbed environment of a fresh interpreter that forks boxes (a zygote,
    a judge process). Workers drop the tunable with everything else."""
    env = one_blas_thread(scrubbed_environment(environ))
    if sys.platform.startswith("linux"):
        env["GLIBC_TUNABLES"] = HUGE_PAGES_MALLOC
    return env


def use_zygote():
    """Whether boxes are forked by a zygote (Linux), not spawned (``AUTOGRADER_SANDBOX=spawn``,
    the macOS/Windows path). Here, not in :mod:`autograder.sandbox.boxes`: a command line
    asks before it starts its judge, and needs nothing else of the sandbox's."""
    return sys.platform.startswith("linux") and os.environ.get("AUTOGRADER_SANDBOX", "zygote") != "spawn"


def spawn_forgoes_confinement():
    """Linux asked to spawn (``AUTOGRADER_SANDBOX=spawn``, the macOS/Windows path, for
    debugging): its workers get rlimits only, not the zygote's confinement."""
    return sys.platform.startswith("linux") and not use_zygote()
