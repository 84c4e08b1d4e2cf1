"""The processes around a judge: one launcher for every command's judge process
(``launcher``), ``grade``'s one-job judge, ``watch``'s kept-alive one and its
session (it notices saved files), the interrupts that end them, the running
test's line while A waits, and what a command checks before it grades.

Imports judging, sandbox and reports; imported by authoring, batch and the cli.
"""
