"""DescribeQuorum: what a leader knows of every replica of the metadata log.

Kafka's DescribeQuorum answer for ``__cluster_metadata-0``, as its leader builds it
(``KafkaRaftClient.handleDescribeQuorumRequest``, ``RaftUtil.singletonDescribeQuorumResponse``):
the leader's id and epoch, the high watermark (-1 while unknown), and for each voter and
each observer the end offset of its last fetch (-1 before any), when it last fetched and
when it was last caught up (-1 when never; the leader itself counts as both, now). An
observer that has not fetched for :data:`OBSERVER_SESSION_TIMEOUT_MS` is left out. A node
that does not lead answers NOT_LEADER_OR_FOLLOWER and nothing else.
"""

from __future__ import annotations

import msgspec

from raft.leader_state import LeaderState
from raft.messages import Errors

METADATA_TOPIC = "__cluster_metadata"
"""The metadata log's topic name (Kafka's KafkaRaftServer.MetadataTopic)."""
METADATA_PARTITION = 0
"""The metadata log's partition index."""
OBSERVER_SESSION_TIMEOUT_MS = 300_000
"""Kafka's LeaderState.OBSERVER_SESSION_TIMEOUT_MS: an observer silent this long is dropped."""


class ReplicaDescription(msgspec.Struct, frozen=True, gc=False):
    """One replica as the leader knows it (Kafka's DescribeQuorumResponse ReplicaState)."""

    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


class QuorumDescription(msgspec.Struct, frozen=True, gc=False):
    """The metadata partition's quorum (Kafka's DescribeQuorumResponse PartitionData)."""

    error: Errors
    leader_id: int = -1
    leader_epoch: int = -1
    high_watermark: int = -1
    current_voters: tuple[ReplicaDescription, ...] = ()
    observers: tuple[ReplicaDescription, ...] = ()
    topic_name: str = METADATA_TOPIC
    partition_index: int = METADATA_PARTITION


def _replica(state: LeaderState, replica_id: int, end_offset: int,
             now: int) -> ReplicaDescription:
    if replica_id == state.local_id:
        return ReplicaDescription(replica_id, end_offset, now, now)
    return ReplicaDescription(replica_id, end_offset, state.last_fetch_ms(replica_id),
                              state.last_caught_up_ms(replica_id))


def describe_quorum(state: LeaderState | None, now: int) -> QuorumDescription:
    """The answer of a node whose leader state is ``state`` (None: it does not lead) at
    ``now``; voters and observers in id order."""
    if state is None:
        return QuorumDescription(Errors.NOT_LEADER_OR_FOLLOWER)
    voters = tuple(_replica(state, v, end, now)
                   for v, end in sorted(state.voter_end_offsets.items()))
    observers = tuple(
        _replica(state, o, end, now) for o, end in sorted(state.observer_end_offsets.items())
        if now - state.last_fetch_ms(o) < OBSERVER_SESSION_TIMEOUT_MS)
    hw = state.high_watermark
    return QuorumDescription(Errors.NONE, state.local_id, state.epoch,
                             -1 if hw is None else hw, voters, observers)
