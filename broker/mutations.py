"""Deliberate loader bugs, switched on only by the mutation tests."""

from __future__ import annotations

from enum import StrEnum


class BrokerMutation(StrEnum):
    """A deliberately broken loader behaviour."""

    PUBLISH_EVERY_COMMIT = "publish-every-commit"
    """Publish an image after every commit, open transaction or not."""
    ABORT_KEEPS_DELTA = "abort-keeps-delta"
    """Apply an aborted transaction's buffered delta instead of discarding it."""
    LEAK_AFTER_ABORT = "leak-after-abort"
    """Kafka's loader: the delta is not reset at the Abort, so records that follow it in the
    same commit carry the aborted records into the next image."""
