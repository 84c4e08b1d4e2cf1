"""The layers of a box, one mechanism each: what it applies and what it
reports (:mod:`.result`). Their order, and the loop that applies them, is
:mod:`autograder.sandbox.confine.confinement`; the verdict drawn from their
results is :mod:`autograder.sandbox.isolation`'s. Each layer module imports the
mechanism it applies from :mod:`autograder.sandbox.confine` and nothing above it.
"""
