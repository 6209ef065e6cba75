"""Record batches: the unit the leader appends, replicates and commits.

A batch holds either data records (opaque to raft: integers for the replicated
counter, metadata records for the controller) or control records (LeaderChange
and, in snapshot files, SnapshotHeader/Footer). Each record takes one offset.
Batches are frozen and shared by reference: the leader, every follower's log,
every disk and every listener hold the same object, never a copy.
"""

from __future__ import annotations

from typing import Any

import msgspec


class LeaderChangeMessage(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Control record a new leader appends at its epoch start (type 2)."""

    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]
    version: int = 0


class SnapshotHeaderRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Control record that opens a snapshot file (type 3)."""

    last_contained_log_timestamp: int
    version: int = 0


class SnapshotFooterRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Control record that closes a snapshot file (type 4)."""

    version: int = 0


class KRaftVersionRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Control record with the kraft.version feature (type 5)."""

    kraft_version: int
    version: int = 0


class VoterEndpoint(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """A listener of a voter in a VotersRecord."""

    name: str
    host: str
    port: int


class Voter(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One voter of a VotersRecord."""

    voter_id: int
    voter_directory_id: str
    endpoints: tuple[VoterEndpoint, ...] = ()
    min_kraft_version: int = 0
    max_kraft_version: int = 0


class VotersRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Control record with the voter set (type 6, KIP-853)."""

    voters: tuple[Voter, ...]
    version: int = 0


ControlRecord = (
    LeaderChangeMessage | SnapshotHeaderRecord | SnapshotFooterRecord | KRaftVersionRecord
    | VotersRecord
)
"""Any raft control record."""


class Batch(msgspec.Struct, frozen=True, gc=False):
    """One record batch of the replicated log.

    ``base_offset`` is the offset of the first record, ``epoch`` the leader
    epoch that appended it, ``append_time_ms`` the simulated time of the
    append. A control batch has ``control_records`` and no ``records``.
    """

    base_offset: int
    epoch: int
    records: tuple[Any, ...] = ()
    control_records: tuple[ControlRecord, ...] = ()
    append_time_ms: int = 0

    @property
    def count(self) -> int:
        """Number of offsets the batch takes."""
        return len(self.records) or len(self.control_records)

    @property
    def last_offset(self) -> int:
        """Offset of the last record."""
        return self.base_offset + (len(self.records) or len(self.control_records)) - 1

    @property
    def end_offset(self) -> int:
        """Exclusive end: the offset the next batch starts at."""
        return self.base_offset + (len(self.records) or len(self.control_records))

    @property
    def is_control(self) -> bool:
        """True for a batch of control records (no data for listeners)."""
        return not self.records
