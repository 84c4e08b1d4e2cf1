"""Confining a box before the first line of student code: its typed
configuration, the mechanisms (namespaces, a minimal root, Landlock, the
seccomp filter, cgroups, rlimits, the code seal), the layers that apply them in
order (``layers/``, ``confinement.py``), and the spawned-worker fallbacks for
other platforms.

Imports nothing of the engine but the sandbox's own limits.
"""
