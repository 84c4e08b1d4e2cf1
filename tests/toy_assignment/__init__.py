"""A second, tiny assignment, graded by the same engine as the chapter: the
proof that the engine knows assignments only through their description.

One module (``toy_sum``), two TODOs (TODO 2 builds on TODO 1), one visible
and one hidden test, a catalog with a Chinese message. Everything inside it is
found relative to this folder, so ``export-template`` can copy it into a
student template as that template's ``autograder/assignment``.
"""
