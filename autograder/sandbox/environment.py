"""The environment a sandbox process starts with: nothing of the caller's but a
few harmless variables (no tokens, no runner file-command paths)."""
import os

SAFE_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "SYSTEMDRIVE",
                    "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "AUTOGRADER_ASSIGNMENT")  # a package name: which assignment's worker side


def scrubbed_environment(environ=None):
    environ = os.environ if environ is None else environ
    return {key: value for key, value in environ.items() if key in SAFE_ENVIRONMENT}
