"""The class's roster: GitHub Classroom's roster export (``--roster classroom_roster.csv``).

GitHub Classroom's Students tab downloads it with the header
``identifier,github_username,github_id,name``: ``identifier`` is what the course knows a
student by (an e-mail, a student number, a name: whatever the roster was made of),
``github_username`` and ``github_id`` are empty for a student who has not joined, ``name``
may be empty. A student folder of ROOT (``gh classroom clone`` names them
``<assignment>-<github_username>``) belongs to the row whose GitHub username it is or
ends with after a hyphen (the longest such name: ``hw-li`` and ``hw-wang-li`` are told
apart); case does not matter, as on GitHub.

A file without those columns, a row with another number of cells, an empty or repeated
identifier or a GitHub username on two rows stops the run before grading (file and line).
"""
import dataclasses

from autograder.batch.terms.extensions import at, read_text, rows
from autograder.batch.terms.times import TermsError
from autograder.i18n import _

COLUMNS = ("identifier", "github_username", "github_id", "name")


@dataclasses.dataclass(frozen=True)
class RosterStudent:
    identifier: str
    github_username: str
    github_id: str
    name: str
    line: int

    def record(self, folder=None):
        """The student as run.json records them (``folder``: theirs in ROOT, None: no repository)."""
        return {"identifier": self.identifier, "github_username": self.github_username,
                "github_id": self.github_id, "name": self.name, "folder": folder}


def load_roster(path):
    """``[RosterStudent]`` in the file's order. Raises :class:`TermsError`."""
    text = read_text(path, "--roster")
    try:
        table = rows(text)
    except TermsError as exc:
        raise TermsError(_("{file}: {problem}", file=str(path), problem=exc.args[0])) from None
    header = [cell.lower() for cell in table[0][1]] if table else []
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        raise at(path, table[0][0] if table else 1, _("the header must name {columns} (GitHub Classroom's roster "
                                                      "export); missing: {missing}", columns=",".join(COLUMNS),
                                                      missing=", ".join(missing)))
    place = {column: header.index(column) for column in COLUMNS}
    students, identifiers, usernames = [], {}, {}
    for line, cells in table[1:]:
        if len(cells) != len(header):
            raise at(path, line, _("expected {n} cells like the header, found {found}", n=len(header),
                                   found=len(cells)))
        student = RosterStudent(*(cells[place[column]] for column in COLUMNS), line=line)
        if not student.identifier:
            raise at(path, line, _("the identifier is empty"))
        if student.identifier in identifiers:
            raise at(path, line, _("the identifier {identifier} is on line {first} already",
                                   identifier=repr(student.identifier), first=identifiers[student.identifier]))
        login = student.github_username.lower()
        if login and login in usernames:
            raise at(path, line, _("the GitHub username {login} is on line {first} already",
                                   login=repr(student.github_username), first=usernames[login]))
        identifiers[student.identifier] = line
        if login:
            usernames[login] = line
        students.append(student)
    return students


def owner(folder, roster):
    """The roster student whose repository ``folder`` is, or None."""
    name = folder.lower()
    found = [student for student in roster if student.github_username
             and (name == student.github_username.lower() or name.endswith("-" + student.github_username.lower()))]
    return max(found, key=lambda student: len(student.github_username), default=None)


def match(path, roster, folders):
    """``{folder: RosterStudent}`` for the folders of ROOT that are a roster student's; a
    student whose username two folders end with stops the run (which one is theirs?)."""
    found, seen = {}, {}
    for folder in folders:
        student = owner(folder, roster)
        if student is None:
            continue
        if student.identifier in seen:
            raise at(path, student.line, _("{login} owns two folders of ROOT: {first} and {second}",
                                           login=repr(student.github_username), first=seen[student.identifier],
                                           second=folder))
        seen[student.identifier] = folder
        found[folder] = student
    return found


def recorded(path, roster, folders):
    """What run.json records: ``{"file", "students": [each row with its folder or None]}``."""
    owned = {student.identifier: folder for folder, student in match(path, roster, folders).items()}
    return {"file": str(path), "students": [student.record(owned.get(student.identifier)) for student in roster]}
