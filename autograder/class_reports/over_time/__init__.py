"""A class over time, read from grade-many's output folders: what a grader change did to every
student (``--compare``: changes.csv) and each student's progress before the deadline
(``--history``: history.csv, who is stuck), with their sections of report.html and report.md.

Below the class's pages, which show these sections; reads results files and writes nothing
but its own CSV files. Imports i18n, intake (bounded reads) and reports (the pages' frame).
"""
