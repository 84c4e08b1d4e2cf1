"""The assignment in other shapes: the student template repository,
a Gradescope autograder zip, an otter-grader folder.

Imports intake and the active assignment; imported by the cli.
"""
