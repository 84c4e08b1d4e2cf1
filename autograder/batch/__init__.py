"""Grading a class: what each student's submission is (plan, deadline, git
snapshots), the jobs that grade them, progress, and the run manifest.

Imports judging, intake, reports and class_reports; imported by the cli.
"""
