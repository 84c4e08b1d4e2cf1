"""The academic-integrity check: copydetect fingerprints of each module's canonical
form across a class, with what honest solutions write alike left out (learned from an
honest set by the calibration), groups of students who handed in the same code, the
side-by-side pages in the class's language and the section of report.md.

Imports intake, reports (safe text, page frame) and i18n.
"""
