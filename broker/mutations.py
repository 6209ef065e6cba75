"""Deliberate loader bugs, switched on only by the mutation tests."""

from __future__ import annotations

from enum import StrEnum


class BrokerMutation(StrEnum):
    """A deliberately broken broker behaviour (loader, replicas, producer state)."""

    PUBLISH_EVERY_COMMIT = "publish-every-commit"
    """Publish an image after every commit, open transaction or not."""
    ABORT_KEEPS_DELTA = "abort-keeps-delta"
    """Apply an aborted transaction's buffered delta instead of discarding it."""
    LEAK_AFTER_ABORT = "leak-after-abort"
    """Kafka's loader: the delta is not reset at the Abort, so records that follow it in the
    same commit carry the aborted records into the next image."""
    HW_IGNORES_ISR = "hw-ignores-isr"
    """A partition leader's high watermark is its own log end offset, whatever the ISR holds,
    so acks=all is acknowledged before the followers have the records."""
    SEQUENCE_CHECK_OFF = "sequence-check-off"
    """A partition leader appends idempotent batches without looking at their producer state
    (no duplicate or sequence check), so a retried batch is written twice."""
