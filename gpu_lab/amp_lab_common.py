"""What every part of the lab shares: the exit codes, the one error a user can fix, and torch."""
from __future__ import annotations

from amp_lab_text import text

EXIT_OK = 0
EXIT_GATE_REJECTED = 1
EXIT_ENVIRONMENT = 2
EXIT_OUT_OF_MEMORY = 3


class LabError(Exception):
    """A problem the user can fix; reported as one line on stderr, without a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_ENVIRONMENT):
        super().__init__(message)
        self.exit_code = exit_code


def require_torch():
    try:
        import torch
    except ImportError:
        raise LabError(text("torch_missing")) from None
    return torch
