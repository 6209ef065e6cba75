"""The error of a record that cannot apply (raised by every replay of :mod:`metadata`)."""

from __future__ import annotations


class ReplayError(Exception):
    """A record that cannot be applied to the current metadata."""
