"""The chapter's rule that Module 2 is built by hand: a guard in the
worker, a static check of the source, and the verdicts that turn what they saw
into scores and TA flags."""
