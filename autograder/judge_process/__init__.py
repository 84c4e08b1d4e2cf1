"""The processes around a judge: one launcher for every command's judge process
(``launcher``); ``grade`` runs its judge in a clean process, ``watch`` keeps one
alive between grades and notices saved files.

Imports judging and reports; imported by the cli.
"""
