"""This chapter's assignment, Mixed Precision Backward: the only place that
names its modules, TODOs and terms.

:mod:`~autograder.assignment.description` declares it (modules, TODO graph,
points the hidden suites hold, where its suites, scenarios and hooks are); the
engine reads that through :mod:`autograder.active_assignment`. Everything here
may import the engine; the engine never imports this package directly.
"""
