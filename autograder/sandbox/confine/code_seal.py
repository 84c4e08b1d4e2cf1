"""Machine code a box may not run, taken out of its reach for good.

A guard that lives in the box's own interpreter can be undone from there:
torch alone hands out raw memory (a storage over any address, no ctypes and
no audit event), so every Python object, dispatcher table or audit hook of the
process can be found and rewritten. What the kernel enforces cannot:

1. before the student's module is imported, each named function's first
   instructions become "exit the box with :data:`EXIT_SEALED`"; the page is
   replaced by an anonymous copy (``mremap`` over it), so neither dropping
   the page (``madvise``) nor the library file brings the original back;
2. the box's syscall filter then refuses every new executable mapping
   (``mmap``/``mprotect``/``pkey_mprotect`` with ``PROT_EXEC``,
   ``READ_IMPLIES_EXEC``), ``execve`` and ``execveat``; Landlock keeps
   ``/proc/<pid>/mem`` read-only and the filter refuses ``ptrace`` and
   ``process_vm_writev``. No page the box can execute ever holds that code
   again, whatever it writes elsewhere in its memory.

Functions are found by name in a library's dynamic symbol table (a few lines
of ELF reading: the zygote only needs names, read once; no new dependency for
students' installs), either directly or through exported pointers to them
(a dispatch table's entries). Linux x86-64 and aarch64 only; elsewhere
nothing is sealed and :func:`seal` says why.
"""
import ctypes
import mmap
import os
import platform
import re
import struct

EXIT_SEALED = 87  # the status a box ends with when it reaches sealed code
_EXIT_STUB = {
    # mov edi, 87; mov eax, 231 (exit_group); syscall; ud2
    "x86_64": bytes.fromhex("bf57000000b8e70000000f050f0b"),
    # movz w0, #87; movz w8, #94 (exit_group); svc #0; brk #0
    "aarch64": struct.pack("<4I", 0x52800AE0, 0x52800BC8, 0xD4000001, 0xD4200000),
}
_SHT_DYNSYM, _STT_OBJECT, _STT_FUNC = 11, 1, 2
_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_ANONYMOUS = 0x02, 0x20
_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2


def architecture():
    machine = platform.machine()
    return {"arm64": "aarch64"}.get(machine, machine)


def dynamic_symbols(path, pattern):
    """``[(name, kind, size)]`` of the defined symbols of ELF file ``path`` whose
    name matches the regular expression ``pattern`` (bytes); kind is "function" or
    "object". Only 64-bit little-endian files (x86-64, aarch64); else []."""
    with open(path, "rb") as elf:
        header = elf.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            return []
        section_offset, = struct.unpack_from("<Q", header, 0x28)
        entry_size, count = struct.unpack_from("<HH", header, 0x3A)
        elf.seek(section_offset)
        sections = [struct.unpack_from("<IIQQQQIIQQ", elf.read(entry_size)) for _ in range(count)]
        found = []
        for _name, kind, _flags, _addr, offset, size, link, _info, _align, sym_size in sections:
            if kind != _SHT_DYNSYM or not sym_size:
                continue
            names = sections[link]
            elf.seek(names[4])
            text = elf.read(names[5])
            # a name may start anywhere between the NUL before a match and the match itself
            starts = {start for match in re.finditer(pattern, text)
                      for start in range(text.rfind(b"\0", 0, match.start()) + 1, match.start() + 1)}
            if not starts:
                continue
            elf.seek(offset)
            table = elf.read(size)
            for st_name, info, _other, shndx, _value, st_size in struct.iter_unpack("<IBBHQQ", table):
                if st_name not in starts or shndx == 0 or info & 0xF not in (_STT_FUNC, _STT_OBJECT):
                    continue
                name = text[st_name:text.index(b"\0", st_name)]
                if re.search(pattern, name):
                    found.append((name.decode("ascii", "replace"), "function" if info & 0xF == _STT_FUNC else "object",
                                  st_size))
        return found


def locate(library, function_pattern, pointer_pattern=None):
    """Addresses, in this process, of the loaded ``library``'s functions whose names
    match ``function_pattern`` and of the functions that its exported pointers
    matching ``pointer_pattern`` point to (null pointers skipped)."""
    handle = ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    addresses = set()
    for pattern, wanted in ((function_pattern, "function"), (pointer_pattern, "object")):
        if pattern is None:
            continue
        for name, kind, size in dynamic_symbols(library, pattern):
            if kind != wanted:
                continue
            if kind == "function":
                addresses.add(ctypes.cast(getattr(handle, name), ctypes.c_void_p).value)
            elif size == ctypes.sizeof(ctypes.c_void_p):
                target = ctypes.c_void_p.in_dll(handle, name).value
                if target:
                    addresses.add(target)
    return sorted(addresses)


def executable_ranges():
    """``(start, end, writable_or_shared)`` of this process's executable mappings."""
    found = []
    with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 2 and fields[1][2:3] == "x":
                low, high = (int(bound, 16) for bound in fields[0].split("-"))
                found.append((low, high, fields[1][1] == "w" or fields[1][3] == "s"))
    return found


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = libc.mremap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def _fail(what):
    number = ctypes.get_errno()
    raise OSError(number, f"{what}: {os.strerror(number)}")


def _pages(addresses, stub_size, page):
    """Contiguous page ranges ``[start, end)`` that the stubs at ``addresses`` touch."""
    ranges = []
    for address in sorted(addresses):
        start, end = address // page * page, -(-(address + stub_size) // page) * page
        if ranges and start <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], end)
        else:
            ranges.append([start, end])
    return ranges


def seal(addresses):
    """Make each function at ``addresses`` exit the box with :data:`EXIT_SEALED`,
    on pages of its own that no file backs. Returns how many were sealed; raises
    OSError when that cannot be done here (each range of pages is swapped in
    one ``mremap``: never a page half written)."""
    stub = _EXIT_STUB.get(architecture())
    if stub is None:
        raise OSError(0, f"no sealing on {platform.machine()}")
    if not addresses:
        raise OSError(0, "none of the functions to seal was found")
    code = executable_ranges()
    for address in addresses:
        if not any(low <= address and address + len(stub) <= high and not open_ for low, high, open_ in code):
            raise OSError(0, f"{address:#x} is not in read-only executable memory")
    libc, page = _libc(), mmap.PAGESIZE
    for start, end in _pages(addresses, len(stub), page):
        length = end - start
        copy = bytearray(ctypes.string_at(start, length))
        for address in addresses:
            if start <= address < end:
                copy[address - start:address - start + len(stub)] = stub
        fresh = libc.mmap(None, length, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
        if fresh in (None, ctypes.c_void_p(-1).value):
            _fail("mmap")
        ctypes.memmove(fresh, bytes(copy), length)
        if libc.mprotect(fresh, length, _PROT_READ | _PROT_EXEC) != 0:
            libc.munmap(fresh, length)
            _fail("mprotect")
        if libc.mremap(fresh, length, length, _MREMAP_MAYMOVE | _MREMAP_FIXED, start) != start:
            libc.munmap(fresh, length)
            _fail("mremap")
        if ctypes.string_at(start, length) != bytes(copy):
            raise OSError(0, f"the sealed copy at {start:#x} does not read back")
    return len(addresses)


def open_code():
    """Executable mappings that are also writable or shared (through which new
    code could appear without a new mapping), as text; [] when there are none."""
    return [f"{low:#x}-{high:#x}" for low, high, open_ in executable_ranges() if open_]
