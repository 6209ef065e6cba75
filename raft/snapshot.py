"""Snapshots of the replicated state at a committed offset.

A snapshot id is Kafka's: the exclusive end offset (last contained offset + 1)
and the epoch of the last contained record. The records are opaque to raft:
the state machine that made the snapshot also loads it.
"""

from __future__ import annotations

from typing import Any

import msgspec


class SnapshotId(msgspec.Struct, frozen=True, gc=False):
    """Where a snapshot ends: ``end_offset`` is exclusive."""

    end_offset: int
    epoch: int

    @property
    def last_contained_offset(self) -> int:
        """The offset of the last record the snapshot covers."""
        return self.end_offset - 1


class Snapshot(msgspec.Struct, frozen=True, gc=False):
    """The state up to ``snapshot_id.end_offset`` as records, shared by reference."""

    snapshot_id: SnapshotId
    records: tuple[Any, ...]
    last_contained_log_time_ms: int = 0
