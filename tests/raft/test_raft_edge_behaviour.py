"""Edge behaviours of one raft node and its log that the other raft tests leave open.

Each test pins one rule of Kafka's KRaft (or kraftsim's documented take on it): when a
pre-vote is granted, how a follower caps its high watermark, when a fetched snapshot
replaces the log, which leader a voter may (not) follow, which answers count as
acknowledgements, and where an epoch ends in a log that starts with a snapshot.
"""

from __future__ import annotations

import pytest

from raft import Batch, Role, Snapshot, SnapshotId
from raft.log import RaftLog, Validation
from raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Errors,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    VoteResponse,
)
from raft.node import RaftProtocolError
from tests.raft.kafka_context import Context

# ---------------------------------------------------------------------- votes


def test_pre_vote_for_the_voters_own_epoch_is_granted() -> None:
    """A pre-vote names the epoch the prospective node would stand in: a voter already in
    that epoch (without a leader or a vote) grants it when the log is up to date (only an
    older epoch is fenced), and a pre-vote changes neither its epoch nor its vote."""
    ctx = Context(1, (1, 2, 3), epoch=3)
    assert ctx.node.role is Role.UNATTACHED
    ctx.deliver(2, ctx.vote_request(2, 3, 0, 0, pre_vote=True))
    [(dst, answer)] = ctx.sent(VoteResponse)
    assert dst == 2 and answer.pre_vote and answer.vote_granted and answer.epoch == 3
    assert (ctx.node.epoch, ctx.node.voted_id, ctx.node.role) == (3, None, Role.UNATTACHED)


def test_a_node_that_hears_it_leads_a_newer_epoch_does_not_follow_itself() -> None:
    """A node whose disk was lost can hear from the others that it led a later epoch: it
    moves to that epoch without a leader and never becomes its own follower (it sends no
    fetch to itself)."""
    ctx = Context(1, (1, 2, 3))
    ctx.deliver(2, VoteResponse(5, 1, False))
    assert ctx.node.epoch == 5
    assert ctx.node.role is Role.UNATTACHED and ctx.node.leader_id is None
    assert all(dst != 1 for dst, _ in ctx.sent(FetchRequest))


# ---------------------------------------------------------------------- epochs


def test_begin_quorum_epoch_one_epoch_behind_is_fenced() -> None:
    """A BeginQuorumEpoch of the previous epoch is answered FENCED_LEADER_EPOCH with the
    voter's epoch, and changes nothing."""
    ctx = Context(1, (1, 2, 3), epoch=5)
    ctx.deliver(2, BeginQuorumEpochRequest(4, 2))
    [(dst, answer)] = ctx.sent(BeginQuorumEpochResponse)
    assert dst == 2 and answer.error is Errors.FENCED_LEADER_EPOCH and answer.epoch == 5
    assert (ctx.node.epoch, ctx.node.role, ctx.node.leader_id) == (5, Role.UNATTACHED, None)


def test_a_voter_does_not_go_back_to_a_leader_that_resigned_in_its_epoch() -> None:
    """After EndQuorumEpoch from its leader, a follower stops following it for that epoch: a
    late BeginQuorumEpoch of the same epoch from that leader does not bring it back."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=2)
    ctx.deliver(2, EndQuorumEpochRequest(2, 2, (3, 1)))
    assert ctx.node.role is Role.UNATTACHED and ctx.node.leader_id is None
    ctx.drain()
    ctx.deliver(2, BeginQuorumEpochRequest(2, 2))
    assert ctx.node.role is Role.UNATTACHED and ctx.node.leader_id is None
    assert ctx.sent(FetchRequest) == []


def test_a_failed_pre_vote_does_not_go_back_to_a_leader_that_resigned() -> None:
    """A prospective node goes back to its leader when its pre-vote fails, unless that
    leader resigned in the meantime (EndQuorumEpoch): then it waits unattached."""
    ctx = Context(1, (1, 2, 3), epoch=2, leader=2, pre_vote=True)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert ctx.node.role is Role.PROSPECTIVE and ctx.node.leader_id == 2
    ctx.deliver(2, EndQuorumEpochRequest(2, 2, (3, 1)))
    ctx.drain()
    ctx.deliver(2, VoteResponse(2, None, False, True))
    ctx.deliver(3, VoteResponse(2, None, False, True))
    assert ctx.node.role is Role.UNATTACHED and ctx.node.leader_id is None
    assert ctx.node.epoch == 2
    assert ctx.sent(FetchRequest) == []


def test_a_begin_quorum_epoch_answered_with_an_error_does_not_acknowledge() -> None:
    """Only an error-free answer acknowledges the new leader: a voter that answered
    BeginQuorumEpoch with an error (in the leader's epoch) is not counted as acknowledging;
    both voters, whatever they answered, hear the leader's next heartbeat."""
    ctx = Context(1, (1, 2, 3))
    epoch = ctx.become_leader()
    ctx.deliver(2, BeginQuorumEpochResponse(epoch, 1, Errors.INCONSISTENT_VOTER_SET))
    ctx.deliver(3, BeginQuorumEpochResponse(epoch, 1))
    state = ctx.node.leader_state
    assert state is not None and state.acknowledged == {1, 3}
    ctx.drain()
    ctx.sleep(ctx.config.fetch_timeout_ms // 2)
    assert sorted(dst for dst, _ in ctx.sent(BeginQuorumEpochRequest)) == [2, 3]


def test_an_end_quorum_epoch_answered_with_an_error_is_sent_again() -> None:
    """Only an error-free answer acknowledges a resignation: a voter that answered
    EndQuorumEpoch with an error (in the resigned leader's epoch) is told again after the
    request timeout, one that acknowledged is not."""
    ctx = Context(1, (1, 2, 3), request_timeout_ms=500)  # resent before it stands again
    epoch = ctx.become_leader()
    ctx.node.resign(ctx.now)
    assert sorted(dst for dst, _ in ctx.sent(EndQuorumEpochRequest)) == [2, 3]
    ctx.deliver(2, EndQuorumEpochResponse(epoch, None, Errors.INCONSISTENT_VOTER_SET))
    ctx.deliver(3, EndQuorumEpochResponse(epoch, None))
    assert ctx.node.role is Role.RESIGNED
    ctx.drain()
    ctx.sleep(ctx.config.request_timeout_ms)
    assert [dst for dst, _ in ctx.sent(EndQuorumEpochRequest)] == [2]


# ---------------------------------------------------------------------- fetch


def test_follower_high_watermark_never_passes_its_log_end() -> None:
    """A follower that fetched only part of what the leader committed takes the leader's
    high watermark capped at its own log end (Kafka's log HW is at most the log end), and
    its state machine is told no more than that."""
    ctx = Context(1, (1, 2), epoch=2, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 2, ("a", "b"))],
                                      high_watermark=10))
    assert ctx.log.end_offset == 2
    assert ctx.node.high_watermark == 2
    assert ctx.listener.high_watermarks == [2]


def test_follower_with_a_longer_diverging_log_installs_the_leaders_snapshot() -> None:
    """A follower whose log runs past the leader's snapshot in an older epoch is sent to the
    snapshot; once fetched, the snapshot replaces its whole log (the diverging tail too)
    and it fetches on from the snapshot's end in the snapshot's epoch."""
    ctx = Context(1, (1, 2), epoch=3, leader=2, log=[(1, ["x"] * 25)])
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (25, 1)
    snapshot_id = SnapshotId(20, 3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=20, snapshot_id=snapshot_id))
    _, request = ctx.one_sent(FetchSnapshotRequest)
    snapshot = Snapshot(snapshot_id, ("state",))
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 3, 2, Errors.NONE, snapshot))
    assert ctx.log.snapshot is snapshot
    assert (ctx.log.start_offset, ctx.log.end_offset) == (20, 20)
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (20, 3)


def test_a_resent_fetch_replaces_the_one_the_replica_left_parked() -> None:
    """A replica's fetch parked on the leader (nothing new) is dropped when the replica
    sends another: when the wait ends the leader answers only the newest one."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
    assert ctx.node.high_watermark == ctx.log.end_offset
    ctx.drain()
    first = ctx.fetch_request(2, ctx.log.end_offset, epoch, max_wait_ms=500)
    ctx.deliver(2, first)
    assert ctx.sent(FetchResponse) == []  # parked: nothing new to send
    second = ctx.fetch_request(2, ctx.log.end_offset, epoch, max_wait_ms=500)
    ctx.deliver(2, second)
    ctx.sleep(500)
    answers = ctx.sent(FetchResponse)
    assert [answer.correlation_id for _, answer in answers] == [second.correlation_id]


# ---------------------------------------------------------------------- the log


def test_epoch_of_the_snapshot_that_goes_on_in_the_log_ends_in_the_log() -> None:
    """When the log after a snapshot continues in the snapshot's epoch, that epoch ends
    where the log's next epoch starts (not at the snapshot's end): a follower fetching
    inside it with that epoch is valid, not diverging."""
    log = RaftLog()
    for epoch, count in ((2, 10), (2, 10), (3, 10)):
        log.append(Batch(log.end_offset, epoch, ("r",) * count), flushed=True)
    log.set_snapshot(Snapshot(SnapshotId(10, 2), ("state",)))
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(20, 2)
    assert log.validate_offset_and_epoch(15, 2) == (Validation.VALID, OffsetAndEpoch(15, 2))


def test_a_fetch_after_an_older_epoch_past_its_end_diverges() -> None:
    """Epoch 1 holds [0, 5) and epoch 6 starts at 5: a fetch at 8 after epoch 5 (not in the
    log, so epoch 1's end answers) diverges at 5, even though 5 is where the newest epoch
    starts; a fetch after epoch 6 anywhere up to the end is valid."""
    log = RaftLog()
    log.append(Batch(0, 1, ("r",) * 5), flushed=True)
    log.append(Batch(5, 6, ("r",) * 5), flushed=True)
    assert log.validate_offset_and_epoch(8, 5) == (Validation.DIVERGING, OffsetAndEpoch(5, 1))
    assert log.validate_offset_and_epoch(10, 6) == (Validation.VALID, OffsetAndEpoch(10, 6))
    assert log.validate_offset_and_epoch(11, 6) == (Validation.DIVERGING,
                                                    OffsetAndEpoch(10, 6))


def test_an_observers_vote_never_counts_towards_an_election() -> None:
    """An observer answers a vote as a voter would (as Kafka's does), but only voters make
    a majority: a candidate of three voters granted by two observers (and refused by
    nobody) is still a candidate; one voter's vote then elects it."""
    ctx = Context(1, (1, 2, 3), epoch=2)
    ctx.sleep(ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.CANDIDATE and ctx.node.epoch == 3
    for observer in (7, 8):
        ctx.deliver(observer, VoteResponse(3, None, True))
    assert ctx.node.role is Role.CANDIDATE
    ctx.deliver(2, VoteResponse(3, None, True))
    assert ctx.node.role is Role.LEADER


def test_a_single_voter_with_pre_vote_leads_again_after_resigning() -> None:
    """A quorum of one needs no pre-vote: after resigning, the only voter stands at its
    election timeout and leads again, in a new epoch."""
    ctx = Context(1, (1,), pre_vote=True)
    assert ctx.node.role is Role.LEADER
    epoch = ctx.node.epoch
    ctx.node.resign(ctx.now)
    assert ctx.node.role is Role.RESIGNED
    ctx.sleep(ctx.config.election_timeout_ms)
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == epoch + 1


def test_a_follower_caught_up_from_a_newer_snapshot_is_told_the_new_high_watermark() -> None:
    """A listener whose node installs a newer snapshot at the log end has nothing new to
    read, but hears the high watermark move (a commit with no batches), each time."""
    ctx = Context(1, (1, 2), epoch=2, leader=2)
    for snapshot_id in (SnapshotId(100, 1), SnapshotId(200, 2)):
        _, fetch = ctx.one_sent(FetchRequest)
        ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=snapshot_id.end_offset,
                                          snapshot_id=snapshot_id))
        _, request = ctx.one_sent(FetchSnapshotRequest)
        ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE,
                                             Snapshot(snapshot_id, ("state",))))
    assert [s.snapshot_id for s in ctx.listener.snapshots] == [SnapshotId(100, 1),
                                                               SnapshotId(200, 2)]
    assert ctx.listener.high_watermarks == [100, 200]
    assert ctx.listener.committed == []


def test_an_observer_follows_the_leader_its_discovery_fetch_found() -> None:
    """An observer without a leader fetches from a voter drawn at random; when the one it
    asked answers as the leader of the observer's epoch, the observer follows it and
    fetches from it."""
    ctx = Context(4, (1, 2, 3), epoch=3)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst in (1, 2, 3) and ctx.node.role is Role.UNATTACHED
    ctx.deliver(dst, ctx.fetch_response(fetch, dst, high_watermark=0))
    assert ctx.node.role is Role.FOLLOWER and ctx.node.leader_id == dst
    assert [to for to, _ in ctx.sent(FetchRequest)] == [dst]


def test_a_leader_serves_only_flushed_appends() -> None:
    """An append lingers before it is flushed (Kafka's accumulator): until then the leader
    does not hand it to a fetching follower; after the flush it does."""
    ctx = Context(1, (1, 2))
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
    ctx.drain()
    end = ctx.log.end_offset
    ctx.node.append(["x"], epoch, ctx.now)
    ctx.deliver(2, ctx.fetch_request(2, end, epoch))
    [(_, early)] = ctx.sent(FetchResponse)
    assert early.batches == ()
    ctx.sleep(ctx.config.append_linger_ms)
    ctx.deliver(2, ctx.fetch_request(2, end, epoch))
    [(_, later)] = ctx.sent(FetchResponse)
    assert [b.records for b in later.batches] == [("x",)]


def test_a_snapshot_other_than_the_one_asked_for_is_a_protocol_error() -> None:
    """A follower asks the leader for one snapshot: an answer carrying another one breaks
    the protocol and is reported as such (RaftProtocolError), never installed."""
    ctx = Context(1, (1, 2), epoch=2, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=100,
                                      snapshot_id=SnapshotId(100, 1)))
    _, request = ctx.one_sent(FetchSnapshotRequest)
    other = Snapshot(SnapshotId(90, 1), ("state",))
    with pytest.raises(RaftProtocolError, match="asked for snapshot"):
        ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE, other))
    assert ctx.log.snapshot is None
