"""Checks shared by the visible and the hidden suites (nothing secret: the
hidden inputs and expected values are drawn or computed in the hidden tests)."""
