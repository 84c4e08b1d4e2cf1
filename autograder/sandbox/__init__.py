"""Everything about one box's life: the zygote it is forked from, the worker
that imports student code, the wire between worker and judge, limits, uids and
the isolation report. How a box is confined lives in :mod:`autograder.sandbox.confine`.

Imports i18n; an assignment adds its worker side (scenarios, guards) through
:mod:`autograder.active_assignment`. Never imports judging.
"""
