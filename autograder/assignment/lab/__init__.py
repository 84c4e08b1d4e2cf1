"""The optional GPU lab (the chapter's Step 5): the record's layout, its
consistency and physical plausibility, the credit it earns, and ``check-lab``."""
