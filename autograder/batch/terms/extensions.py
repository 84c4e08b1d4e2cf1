"""Per-student deadlines: ``--extensions FILE.csv``.

The file (UTF-8, comma-separated, a header row)::

    student,deadline
    course-alice,2026-12-18T23:59+08:00

One row per student folder of ROOT (its name as ``grade-many`` lists it), the deadline as
``--deadline`` takes it (ISO 8601 with a zone). Blank lines are skipped. A row naming no
folder, a time that does not parse or a student listed twice stops the run before
anything is graded, naming the file, the line and what is wrong.
"""
import csv
import io

from autograder.batch.terms.times import TermsError, iso, parse_deadline
from autograder.i18n import _
from autograder.intake import safe_files

HEADER = ("student", "deadline")
MAX_BYTES = 4 * 2**20


def read_text(path, option):
    """The text of a terms file given as ``option`` (bounded, UTF-8; a BOM as spreadsheets write it is fine)."""
    try:
        raw = safe_files.read_regular(str(path), MAX_BYTES)
    except safe_files.UnsafeFile as exc:
        raise TermsError(_("{option} {file}: {problem}", option=option, file=str(path),
                           problem=safe_files.describe(exc.kind, exc.detail))) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TermsError(_("{option} {file}: not UTF-8 text (byte {offset}); save it as CSV UTF-8.", option=option,
                           file=str(path), offset=exc.start)) from None


def rows(text):
    """``[(line number, [cells])]`` of a CSV text, blank lines left out."""
    found = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                found.append((reader.line_num, [cell.strip() for cell in cells]))
    except csv.Error as exc:
        raise TermsError(_("line {line}: not CSV ({error})", line=reader.line_num, error=str(exc))) from None
    return found


def at(path, line, problem):
    """The error for ``line`` of the file at ``path``."""
    return TermsError(_("{file}, line {line}: {problem}", file=str(path), line=line, problem=problem))


def load_extensions(path, students):
    """``{student: (aware datetime, "FILE:LINE")}`` from the file at ``path``; ``students``:
    the folder names of ROOT. Raises :class:`TermsError`."""
    text = read_text(path, "--extensions")
    try:
        table = rows(text)
    except TermsError as exc:
        raise TermsError(_("{file}: {problem}", file=str(path), problem=exc.args[0])) from None
    if not table or tuple(cell.lower() for cell in table[0][1]) != HEADER:
        raise at(path, table[0][0] if table else 1, _("the first row must be the header {header} (found {found})",
                                                      header=",".join(HEADER),
                                                      found=",".join(table[0][1]) if table else ""))
    known, found, where = set(students), {}, {}
    for line, cells in table[1:]:
        if len(cells) != len(HEADER):
            raise at(path, line, _("expected {n} cells (student,deadline), found {found}", n=len(HEADER),
                                   found=len(cells)))
        student, deadline = cells
        if student not in known:
            raise at(path, line, _("{student} names no student folder of ROOT", student=repr(student)))
        if student in found:
            raise at(path, line, _("{student} is listed twice (first on line {first})", student=repr(student),
                                   first=where[student]))
        try:
            found[student] = parse_deadline(deadline, what="deadline")
        except TermsError as exc:
            raise at(path, line, exc.args[0]) from None
        where[student] = line
    return {student: (when, f"{path}:{where[student]}") for student, when in found.items()}


def recorded(extensions):
    """``{student: {"deadline", "source"}}`` as run.json records :func:`load_extensions`' result."""
    return {student: {"deadline": iso(when, when), "source": source} for student, (when, source) in extensions.items()}
