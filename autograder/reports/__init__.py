"""Renderings of a :class:`~autograder.results.GradeReport`."""
