"""Deliberate controller bugs, switched on only by the mutation tests."""

from __future__ import annotations

from enum import StrEnum


class ControllerMutation(StrEnum):
    """A deliberately broken controller behaviour."""

    FORGET_FAILOVER_ABORT = "forget-failover-abort"
    """A new leader does not abort the transaction it finds open."""
    REVERT_TO_LSO = "revert-to-lso"
    """On losing leadership, revert to the LSO (as Kafka does) instead of the last
    committed offset, so records of an open transaction that later commits are missed."""
    FENCE_KEEPS_LEADER = "fence-keeps-leader"
    """Fencing a broker whose session expired takes it out of the ISRs but leaves it the
    leader of its partitions."""
