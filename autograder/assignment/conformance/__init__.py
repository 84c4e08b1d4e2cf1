"""The chapter's optional framework conformance check (end of Step 4)
and its ``conformance`` subcommand."""
