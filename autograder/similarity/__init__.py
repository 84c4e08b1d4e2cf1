"""The academic-integrity check: copydetect fingerprints of each module
across a class, the side-by-side pages, and the section of report.md.

Imports intake, reports (safe text) and class_reports (page frame).
"""
