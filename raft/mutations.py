"""Deliberate protocol bugs, switched on only by tests.

The mutation tests turn one of these on and check that the invariant checkers
catch the broken behaviour. Production code paths test membership in a
frozenset handed to the node; with the default empty set nothing changes.
"""

from __future__ import annotations

from enum import StrEnum


class Mutation(StrEnum):
    """A deliberately broken raft behaviour."""

    HW_WITHOUT_MAJORITY = "hw-without-majority"
    """The leader advances the high watermark to the largest voter offset."""
    COMMIT_OLD_EPOCH = "commit-old-epoch"
    """The leader commits entries of older epochs before one of its own epoch."""
    DOUBLE_VOTE = "double-vote"
    """A voter grants a second vote in the same epoch."""
