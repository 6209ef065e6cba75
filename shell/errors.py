"""The one error type of shell commands: a one-line message, never a traceback."""

from __future__ import annotations


class CommandError(Exception):
    """A command failed; ``str(error)`` is the one line the user sees (after ``NAME: ``)."""
