"""Generate the student stubs (``exercises/``) from the reference solutions (``solutions/``)
of the active assignment (:mod:`autograder.active_assignment`).

In a solution, each student block is fenced like this::

    # >>> TODO 1: build `total`, the sum of the inputs
    total = ...
    # <<< TODO 1

The stub keeps everything outside the fences and replaces each fenced block
with ``raise NotImplementedError("TODO 1: build `total`, ...")`` at the same
indentation (split into string literals that fit 80 columns), so stubs never
drift from the solutions.

    python tools/make_stubs.py          # rewrite exercises/*.py
    python tools/make_stubs.py --check  # exit 1 if exercises/ is out of date
    python tools/make_stubs.py --chapter chapters/vector_clip   # another chapter (a folder or a package)
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
_OPEN = re.compile(r"^(?P<indent>\s*)# >>> (?P<todo>TODO \d+): (?P<text>.+?)\s*$")
_CLOSE = re.compile(r"^\s*# <<< (?P<todo>TODO \d+)\s*$")
WIDTH = 80  # the columns of a stub's line (tests/assignment/test_student_files_fit.py)


def raise_lines(indent, message, width=WIDTH):
    """``raise NotImplementedError(message)`` at ``indent``, the message split
    between words into adjacent string literals where one line would pass
    ``width`` columns (the stubs are read in an 80-column terminal)."""
    opening = f"{indent}raise NotImplementedError("
    if len(opening) + len(repr(message)) + 1 <= width:
        return [f"{opening}{message!r})\n"]
    pieces, current = [], ""
    for word in message.split(" "):
        candidate = f"{current} {word}" if current else word
        # the piece's line: its quotes and a space kept at its end (the last piece: a ")")
        if current and len(opening) + len(repr(candidate + " ")) > width:
            pieces.append(current + " ")
            current = word
        else:
            current = candidate
    pieces.append(current)
    hang = " " * len(opening)
    lines = [f"{opening if index == 0 else hang}{piece!r}" for index, piece in enumerate(pieces)]
    return [line + "\n" for line in lines[:-1]] + [lines[-1] + ")\n"]


def make_stub(source: str, todos=None) -> str:
    """``source`` with each fenced block replaced by its ``raise``; with ``todos`` (TODO
    numbers) only those blocks, the others keep their code without the fence lines
    (a half-written submission, as the project's tests build them)."""
    out, fence, keep = [], None, False
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        opening, closing = _OPEN.match(line), _CLOSE.match(line)
        if fence is None and opening:
            fence = opening
            keep = todos is not None and int(opening["todo"].split()[1]) not in todos
            if not keep:
                message = f"{opening['todo']}: {opening['text']}"
                out += raise_lines(opening["indent"], message)
        elif fence is not None and closing:
            if closing["todo"] != fence["todo"]:
                raise ValueError(f"line {number}: {closing['todo']} closes {fence['todo']}")
            fence = None
        elif opening or closing:
            raise ValueError(f"line {number}: unbalanced solution fence")
        elif fence is None or keep:
            out.append(line)
    if fence is not None:
        raise ValueError(f"{fence['todo']} is never closed")
    return "".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report drift")
    parser.add_argument("--chapter", help="the chapter's package or folder (default: the active assignment)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from autograder import active_assignment

    assignment = active_assignment.use(args.chapter) if args.chapter else active_assignment.current()
    stale = []
    for module in assignment.modules:
        stub = make_stub((assignment.solutions_dir / f"{module}.py").read_text(encoding="utf-8"))
        target = assignment.exercises_dir / f"{module}.py"
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != stub:
            stale.append(target.relative_to(ROOT) if target.is_relative_to(ROOT) else target)
            if not args.check:
                target.write_text(stub, encoding="utf-8")
    if args.check and stale:
        print("out of date (run python tools/make_stubs.py):", *stale, file=sys.stderr)
        return 1
    for path in stale:
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
