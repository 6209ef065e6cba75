"""The replica Fetch RPC between brokers (Kafka's Fetch from a follower, one per leader).

A follower sends one request per leader broker with every partition it
follows there; the leader answers per partition: records and its high
watermark, a diverging epoch (the follower must truncate), or an error
(NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH: the follower's leader epoch is
older; UNKNOWN_LEADER_EPOCH: the leader has not seen that epoch yet).

Incremental fetch sessions (Kafka's KIP-227): a full fetch (``session_epoch``
0) names every partition the follower fetches from that leader and opens a
session (the answer carries its id); each later fetch of the session
(``session_epoch`` 1, 2, ...) names only the partitions whose fetch position
changed, or that the follower no longer fetches there (``forgotten``). The
leader remembers the positions and answers the partitions with something new
(records, a high watermark change, a divergence, an error) plus those the
request named, so idle partitions cost nothing per fetch. An unknown session
is FETCH_SESSION_ID_NOT_FOUND, an unexpected epoch INVALID_FETCH_SESSION_EPOCH:
the follower starts over with a full fetch.
"""

from __future__ import annotations

import msgspec

from broker.partition_log import LogEntry

NO_LEADER_EPOCH = -1
"""A fetch's current leader epoch when it names none (Kafka's NO_PARTITION_LEADER_EPOCH,
read as an absent epoch): the leader epoch is then not checked."""


def not_a_replica(current_leader_epoch: int) -> str:
    """The error for a fetch from a broker that is not a replica of the partition, its
    leader epoch being the leader's or none (Kafka's Partition.followerReplicaOrThrow):
    UNKNOWN_LEADER_EPOCH when the fetch names the epoch (the leader may not know the new
    replica yet: the follower retries), NOT_LEADER_OR_FOLLOWER when it names none."""
    return "NOT_LEADER_OR_FOLLOWER" if current_leader_epoch == NO_LEADER_EPOCH \
        else "UNKNOWN_LEADER_EPOCH"


class FetchPartition(msgspec.Struct, frozen=True, gc=False):
    """One partition of a replica fetch; ``current_leader_epoch`` is
    :data:`NO_LEADER_EPOCH` when the fetch names none."""

    topic_id: str
    partition_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int


class ReplicaFetchRequest(msgspec.Struct, frozen=True, gc=False):
    """A follower's fetch; ``epoch`` is its broker epoch (-1: none, before Fetch v15), which
    the leader checks (KIP-903): a fetch older than the follower's registration in its
    image (unfenced) is refused, and the follower joins an ISR only on its registered
    epoch. The leader may hold it up to ``max_wait_ms`` while none of its partitions has
    anything new."""

    correlation_id: int
    replica_id: int
    epoch: int
    partitions: tuple[FetchPartition, ...]
    max_wait_ms: int = 0
    session_id: int = 0
    session_epoch: int = 0
    forgotten: tuple[tuple[str, int], ...] = ()


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
    """The leader's answer; ``epoch`` is -1 (trace only). ``error`` is the session's."""

    correlation_id: int
    epoch: int
    partitions: tuple[FetchedPartition, ...]
    error: str = "NONE"
    session_id: int = 0
