"""Judging one submission: the engine, the pytest plugin, the judge's helpers,
feedback and the results model.

Imports the sandbox, intake and i18n; knows the assignment only through
:mod:`autograder.active_assignment`. Never imports student code.
"""
