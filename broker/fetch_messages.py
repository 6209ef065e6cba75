"""The replica Fetch RPC between brokers (Kafka's Fetch from a follower, one per leader).

A follower sends one request per leader broker with every partition it
follows there; the leader answers per partition: records and its high
watermark, a diverging epoch (the follower must truncate), or an error
(NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH: the follower's leader epoch is
older; UNKNOWN_LEADER_EPOCH: the leader has not seen that epoch yet).
"""

from __future__ import annotations

import msgspec

from broker.partition_log import LogEntry


class FetchPartition(msgspec.Struct, frozen=True, gc=False):
    """One partition of a replica fetch."""

    topic_id: str
    partition_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int


class ReplicaFetchRequest(msgspec.Struct, frozen=True, gc=False):
    """A follower's fetch; ``epoch`` is its broker epoch (trace only). The leader may hold
    it up to ``max_wait_ms`` while none of its partitions has anything new."""

    correlation_id: int
    replica_id: int
    epoch: int
    partitions: tuple[FetchPartition, ...]
    max_wait_ms: int = 0


class FetchedPartition(msgspec.Struct, frozen=True, gc=False):
    """The leader's answer for one partition."""

    topic_id: str
    partition_id: int
    error: str
    high_watermark: int = 0
    entries: tuple[LogEntry, ...] = ()
    diverging: bool = False
    diverging_epoch: int = -1
    diverging_end_offset: int = -1


class ReplicaFetchResponse(msgspec.Struct, frozen=True, gc=False):
    """The leader's answer; ``epoch`` is -1 (trace only)."""

    correlation_id: int
    epoch: int
    partitions: tuple[FetchedPartition, ...]
