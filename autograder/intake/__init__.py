"""Taking a submission in: the contract files only (never through a link),
bounded reads of student files, tamper hashes of the grader and template,
reading student source without running it, and student text made writable
where it enters the judge (``submitted_text``), the shapes a box's answers
are held to before a check reads them (``answer_shapes``), and the stack a box
dumps when its call is stopped (``stack_dump``).

Imports i18n and the active assignment's description only.
"""
