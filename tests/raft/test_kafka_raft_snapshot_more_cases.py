"""More of Kafka's KafkaRaftClientSnapshotTest, run against one RaftNode: a follower's download.

The node is driven alone by tests/raft/kafka_context.py, as in
test_kafka_raft_snapshot_cases.py, whose helpers these tests reuse. Every case of
KafkaRaftClientSnapshotTest and KafkaRaftClientPreVoteTest that kraftsim models is now
ported: the snapshot cases there and here, the pre-vote cases in
test_kafka_raft_prevote_cases.py (whose docstring lists the pre-vote cases set aside).
The cases here pin what a follower does while it downloads a snapshot: what an answer
that moves nothing leads to, what the high watermark is, and when the download ends.

As Kafka's follower, kraftsim's asks again at once after a FetchSnapshot (or Fetch)
answer from an older epoch or carrying an epoch error that moves nothing (Kafka's
maybeHandleCommonResponse counts such an answer as handled, so the connection is ready at
once; testFetchSnapshotResponseFromOlderEpoch). Until this stop it waited
``retry_backoff_ms`` first. One kept difference (docs/architecture.md): an answer that came
back in the same simulated millisecond as its request (a link without latency) is asked
again 1 ms later, so that a node stuck in an older epoch (a leader whose disk was wiped)
cannot hold the clock still.

Set aside, with the reason:

- testFetchSnapshotRequestUnknownPartition: kraftsim's RPCs name no topic partition.
- testFetchSnapshotRequestClusterIdValidation: kraftsim's RPCs carry no cluster id.
- testPartialFetchSnapshotRequestAsLeader, testFetchSnapshotRequestWithInvalidPosition,
  testFetchSnapshotResponsePartialData: a snapshot goes whole in one FetchSnapshot
  answer (no position, size or chunks), so there is no partial answer or position to check.
- The withKip853Rpc parameter of every case: kraftsim's RPCs have no versions.
"""

from __future__ import annotations

import pytest

from raft import Role, Snapshot, SnapshotId
from raft.messages import (
    BeginQuorumEpochRequest,
    Errors,
    FetchRequest,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    VoteRequest,
)
from tests.raft.test_kafka_raft_snapshot_cases import _follower_told_of_snapshot

_SNAPSHOT_ID = SnapshotId(100, 1)


@pytest.mark.parametrize(("epoch", "leader", "error"), [
    (1, None, Errors.NONE),
    (1, 3, Errors.UNKNOWN_LEADER_EPOCH),
    (2, None, Errors.NOT_LEADER_OR_FOLLOWER),
    (2, 2, Errors.FENCED_LEADER_EPOCH),
], ids=["older-epoch", "unknown-leader-epoch", "not-leader", "fenced-same-epoch"])
def test_an_answer_that_moves_nothing_is_asked_again_at_once(
        epoch: int, leader: int | None, error: Errors) -> None:
    """testFetchSnapshotResponseFromOlderEpoch, widened: an answer of an older epoch, or an
    epoch error that names no newer epoch or other leader, leaves the follower where it
    was with its download pending; it asks for the same snapshot again, from the same
    leader, at once (no retry backoff: Kafka counts the answer as handled)."""
    ctx, request = _follower_told_of_snapshot(_SNAPSHOT_ID)
    ctx.sleep(3)
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, epoch, leader, error))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 2, 2)
    assert ctx.log.snapshot is None and ctx.listener.snapshots == []
    [(dst, again)] = [(e.dst, e.message) for e in ctx.drain()
                      if isinstance(e.message, (FetchRequest, FetchSnapshotRequest))]
    assert dst == 2 and isinstance(again, FetchSnapshotRequest)
    assert again.snapshot_id == _SNAPSHOT_ID and again.epoch == 2
    assert again.correlation_id != request.correlation_id


def test_an_answer_in_the_same_millisecond_is_asked_again_a_millisecond_later() -> None:
    """The kept difference: an answer that moves nothing and took no simulated time (a link
    without latency) is asked again 1 ms later, not in the same instant."""
    ctx, request = _follower_told_of_snapshot(_SNAPSHOT_ID)
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 1, None, Errors.NONE))
    assert ctx.sent(FetchSnapshotRequest) == []
    ctx.sleep(1)
    dst, again = ctx.one_sent(FetchSnapshotRequest)
    assert dst == 2 and again.snapshot_id == _SNAPSHOT_ID


def test_a_follower_answered_only_from_an_older_epoch_stands_at_its_fetch_timeout() -> None:
    """A leader whose disk was wiped answers every FetchSnapshot from epoch 0. The follower
    asks again after each answer (1 ms after one that took no time), and its fetch
    timeout, which stale answers do not reset, still ends the download: it stands for
    election with its empty log."""
    ctx, request = _follower_told_of_snapshot(_SNAPSHOT_ID)
    asked = 1
    while ctx.node.role is Role.FOLLOWER:
        ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 0, None,
                                             Errors.UNKNOWN_LEADER_EPOCH))
        ctx.sleep(1)
        sent = ctx.sent(FetchSnapshotRequest)
        if ctx.node.role is Role.FOLLOWER:
            [(_, request)] = sent
            asked += 1
    assert asked == ctx.config.fetch_timeout_ms
    assert (ctx.node.role, ctx.node.epoch, ctx.node.voted_id) == (Role.CANDIDATE, 3, 1)
    assert ctx.log.snapshot is None


def test_a_fetch_answer_naming_a_snapshot_leaves_the_high_watermark_alone() -> None:
    """testFetchResponseWithSnapshotId's high watermark: Kafka's follower takes the leader's
    high watermark only from an answer that carries records, not from one that names a
    snapshot; once the snapshot is installed the high watermark is its end offset (the
    leader's, 200, is past the follower's log)."""
    ctx, request = _follower_told_of_snapshot(_SNAPSHOT_ID)
    assert ctx.node.high_watermark is None
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE,
                                         Snapshot(_SNAPSHOT_ID, ("foo",))))
    assert ctx.node.high_watermark == 100
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (100, 1)


def test_a_newer_leader_ends_the_download() -> None:
    """testFetchSnapshotResponseFromNewerEpochLeader, the leader announcing itself instead:
    a BeginQuorumEpoch of a newer epoch makes the follower fetch the log from the new
    leader (a new FollowerState has no download), and the old leader's late answer to the
    download installs nothing and sends nothing."""
    ctx, request = _follower_told_of_snapshot(_SNAPSHOT_ID, voters=(1, 2, 3))
    ctx.deliver(3, BeginQuorumEpochRequest(3, 3))
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 3, 3)
    [(dst, fetch)] = [(e.dst, e.message) for e in ctx.drain()
                      if isinstance(e.message, (FetchRequest, FetchSnapshotRequest))]
    assert dst == 3 and isinstance(fetch, FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 0, 0)
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE,
                                         Snapshot(_SNAPSHOT_ID, ("late",))))
    assert ctx.log.snapshot is None and ctx.listener.snapshots == []
    assert ctx.drain() == []
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 3, 3)


def test_back_from_a_lost_pre_vote_the_follower_fetches_the_log_again() -> None:
    """testProspectiveWithLeaderTransitionsToFollower during a download: the fetch timeout
    ends the download; when the pre-vote times out the node follows its leader again and
    fetches the log (where the leader will name its snapshot anew), not the snapshot."""
    ctx, _ = _follower_told_of_snapshot(_SNAPSHOT_ID, voters=(1, 2, 3), pre_vote=True)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.PROSPECTIVE, 2, 2)
    assert all(r.pre_vote for _, r in ctx.sent(VoteRequest))
    ctx.sleep(ctx.config.election_timeout_ms)
    assert (ctx.node.role, ctx.node.epoch, ctx.node.leader_id) == (Role.FOLLOWER, 2, 2)
    [(dst, fetch)] = [(e.dst, e.message) for e in ctx.drain()
                      if isinstance(e.message, (FetchRequest, FetchSnapshotRequest))]
    assert dst == 2 and isinstance(fetch, FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 0, 0)
