"""The course's terms for a class, read before anything is graded: deadlines (``times``),
per-student extensions, the late policy and the roster. Each file is checked whole: a
malformed one stops the run with the file, the line and what is wrong, in the TA's
language (:class:`~autograder.batch.terms.times.TermsError`).

Plain data and arithmetic, nothing of a grade: imports only i18n and intake (bounded
reads); imported by batch (and through it the class reports' records).
"""
