"""Renderings of one :class:`~autograder.judging.results.GradeReport`: the
terminal, results.json, the Classroom payload, the job summary; and what every
staff page shares (safe text, the HTML frame, module colours).

Imports the results model (judging), intake's safe reads and submitted text, and i18n; imported by
the cli, batch, class_reports and similarity.
"""
