"""Taking a submission in: the contract files only (never through a link),
bounded reads of student files, tamper hashes of the grader and template, and
reading student source without running it.

Imports i18n and the active assignment's description only.
"""
