"""The seam between the student's side of the engine and the staff's side.

The student's side is what a student's repository runs: ``grade``, ``watch``, ``classroom-report``
(its workflow's last step), the assignment's own commands, the judge, the sandbox and the visible
suites. The staff's side grades a class, writes the class reports, checks similarity and exports
the assignment (the student template, Gradescope, otter), with message catalogs of its own.

``export-template`` leaves every file named here out of the student's repository and out of the
private tests bundle, and no module of the student's side imports one of these
(tests/repository/test_architecture.py), so the template runs without them. The staff's packages
stay in their rooms (docs/architecture.md): the seam is this list, not a folder. A piece both sides
use belongs to the student's side (it travels, and the staff import it from there); a piece only
the staff's side uses is the staff's, whatever its room.
"""
import fnmatch

# Paths relative to the repository's root, as fnmatch patterns (``*`` crosses folders).
STAFF_SIDE = (
    "autograder/batch/*",            # grade-many: a class
    "autograder/class_reports/*",    # scores.csv, report.md, report.html
    "autograder/similarity/*",       # how copies are found, and what honest students share
    "autograder/exports/*",          # the template, the Gradescope zip, the otter folder
    "autograder/cli/grade_many.py",  # grade-many and merge-scores
    "autograder/cli/similarity.py",
    "autograder/cli/export_*.py",
    "autograder/cli/gradescope_run.py",  # run_autograder's half: ships in the Gradescope zip only
    "autograder/reports/html_page.py",   # the staff pages' frame
    "autograder/reports/colours.py",     # module colours of the staff pages and charts
    "autograder/i18n/joining.py",        # lists and clauses of the staff pages
    "autograder/i18n/catalog_tools.py",  # keeping the catalogs in step with the code
    "autograder/i18n/locale/*/class_report.po",
    "autograder/i18n/locale/*/similarity.po",
    "autograder/staff_side.py",          # this list
)


def is_staff(relative):
    """Is ``relative`` (a path from the repository's root, ``/``-separated) on the staff's side?"""
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in STAFF_SIDE)
