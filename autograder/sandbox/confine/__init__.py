"""Confining a box before the first line of student code: namespaces, a
minimal root, Landlock, the seccomp filter, cgroups, and the spawned-worker
fallbacks for other platforms.

Imports nothing of the engine but the sandbox's own limits.
"""
