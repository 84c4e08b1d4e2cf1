"""The TA's view of a graded class: scores.csv, report.md, report.html,
charts and what each flag means.

Imports reports (safe text, tidy) and judging's results model; imported by
batch and the cli.
"""
