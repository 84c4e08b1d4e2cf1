"""Grading a class: the run the command line asked for (which students, seed and
commit; the outputs), what each student's submission is (plan, deadline, git
snapshots; the course's terms in ``terms/``), each student's history of commits,
the jobs that grade them, progress, and the run manifest.

Imports judging, intake, reports, similarity, class_reports and judge_process
(the launcher); imported by the cli.
"""
