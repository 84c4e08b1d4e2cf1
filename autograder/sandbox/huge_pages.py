"""Folding a zygote's heap into transparent huge pages.

A box is a fork of the zygote, and the zygote holds ~150 MiB of torch's and
Python's heap. A fork copies one page-table entry for every 4 KiB page of it and
the box's exit tears them down again. glibc already puts most of the heap on
2 MiB pages (:data:`autograder.sandbox.environment.HUGE_PAGES_MALLOC`); what is
left, Python's object arenas above all, is folded here with
``madvise(MADV_COLLAPSE)`` (Linux 6.1): a few hundredths of a second once, for
fewer page-table entries to copy and free in every fork and exit of a box after
it. Where the kernel lacks it, or has no huge page free, memory stays as it was:
nothing depends on it.
"""
import ctypes
import os

_MADV_COLLAPSE = 25
HUGE = 2 << 20


def pieces(maps_text):
    """``(start, length)`` of the private, writable, anonymous mappings (the heap
    included) in a ``/proc/<pid>/maps`` text, trimmed to 2 MiB boundaries."""
    found = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) < 5 or fields[1][:2] != "rw" or fields[1][3:4] != "p":
            continue
        path = fields[5] if len(fields) > 5 else ""
        if path and path != "[heap]":  # files, stacks, vdso and the like stay as they are
            continue
        low, high = (int(bound, 16) for bound in fields[0].split("-"))
        start, end = -(-low // HUGE) * HUGE, high // HUGE * HUGE
        if end > start:
            found.append((start, end - start))
    return found


def fold():
    """Fold this process's anonymous memory; returns the bytes now on huge pages
    that were asked for (0 where the kernel cannot)."""
    if not hasattr(os, "fork"):
        return 0
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            found = pieces(maps.read())
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    folded = 0
    for start, length in found:  # a kernel without MADV_COLLAPSE refuses each at once (EINVAL)
        if madvise(start, length, _MADV_COLLAPSE) == 0:
            folded += length
    return folded
