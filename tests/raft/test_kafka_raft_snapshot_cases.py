"""Cases of Kafka's KafkaRaftClientSnapshotTest, run against one RaftNode.

The node is driven alone by tests/raft/kafka_context.py.

Each test names the Kafka case it follows. kraftsim's model of snapshots is
smaller than Kafka's, and the cases are adapted to it:

- a node keeps one snapshot, and taking it drops the log before its end (Kafka
  keeps several and deletes the log prefix later): the "entire log kept"
  variants of the listener cases have no counterpart;
- ``RaftNode.create_snapshot`` takes the end offset only and reads the epoch
  of the last contained record from the log, so a snapshot id whose epoch
  disagrees with the log cannot be asked for;
- FetchSnapshot carries the whole snapshot in one response (no position, size
  or chunks), and there is no cluster id nor topic partition to validate.

Where kraftsim deliberately answers differently, the test says so.
"""

from __future__ import annotations

from typing import Any

import pytest

from raft import Batch, Role, Snapshot, SnapshotId
from raft.messages import (
    Errors,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    VoteRequest,
)
from tests.raft.kafka_context import Context, RecordingListener


def _leader_with_snapshot(voters: tuple[int, ...], log: list[tuple[int, list[str]]],
                          snapshot_end: int, **config: Any) -> tuple[Context, int]:
    """A node that wins an election over ``log``, commits it, snapshots to ``snapshot_end``."""
    ctx = Context(1, voters, log=log, epoch=max(e for e, _ in log), **config)
    epoch = ctx.become_leader()
    _commit_log_end(ctx)
    ctx.node.create_snapshot(snapshot_end, (f"state@{snapshot_end}",), ctx.now)
    ctx.poll()
    ctx.drain()
    return ctx, epoch


def _commit_log_end(ctx: Context) -> None:
    """Let one other voter (enough in a quorum of 2 or 3) fetch at the leader's log end."""
    other = next(v for v in ctx.node.voters if v != ctx.local_id)
    ctx.deliver(other, ctx.fetch_request(other, ctx.log.end_offset, ctx.log.last_epoch))
    assert ctx.node.high_watermark == ctx.log.end_offset
    ctx.drain()


def _follower_told_of_snapshot(snapshot_id: SnapshotId, *, voters: tuple[int, ...] = (1, 2),
                               epoch: int = 2, leader: int = 2,
                               **config: Any) -> tuple[Context, FetchSnapshotRequest]:
    """A follower of an empty log whose first fetch is answered with ``snapshot_id``."""
    ctx = Context(1, voters, epoch=epoch, leader=leader, **config)
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (epoch, 0, 0)
    ctx.deliver(leader, ctx.fetch_response(fetch, leader, high_watermark=200,
                                           snapshot_id=snapshot_id))
    dst, request = ctx.one_sent(FetchSnapshotRequest)
    assert dst == leader and request.snapshot_id == snapshot_id and request.epoch == epoch
    return ctx, request


# ---------------------------------------------------------------------- the latest snapshot


def test_latest_snapshot_id_is_the_one_taken_or_none() -> None:
    """testLatestSnapshotId, testLatestSnapshotIdMissing."""
    ctx = Context(1, (1, 2), epoch=2, leader=2, log=[(1, ["a", "b", "c"]), (1, ["d", "e", "f"])])
    assert ctx.log.snapshot is None
    ctx = Context(1, (1, 2), log=[(1, ["a", "b", "c"]), (1, ["d", "e", "f"])])
    ctx.become_leader()
    _commit_log_end(ctx)
    ctx.node.create_snapshot(3, ("abc",), ctx.now)
    assert ctx.log.snapshot is not None and ctx.log.snapshot.snapshot_id == SnapshotId(3, 1)
    assert ctx.log.start_offset == 3


# ---------------------------------------------------------------------- listeners


def test_leader_listener_loads_the_snapshot_on_disk() -> None:
    """testLeaderListenerNotified (kraftsim has no "entire log kept" variant)."""
    snap = Snapshot(SnapshotId(3, 1), ())
    ctx = Context(1, (1, 2), snapshot=snap, log=[(1, ["d", "e", "f"])])
    epoch = ctx.become_leader()
    end = ctx.log.end_offset
    ctx.deliver(2, ctx.fetch_request(2, end, epoch))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.error is Errors.NONE and ctx.node.high_watermark == end
    assert ctx.listener.snapshots == [snap]
    assert [b.base_offset for b in ctx.listener.committed] == [3, 6]


@pytest.mark.parametrize("second", [False, True])
def test_follower_listener_loads_the_snapshot_on_disk(second: bool) -> None:
    """testFollowerListenerNotified, testSecondListenerNotified: the fetch names the log end
    and the snapshot's epoch; a listener registered later loads the snapshot too."""
    snap = Snapshot(SnapshotId(3, 1), ())
    ctx = Context(1, (1, 2), snapshot=snap, log=[(1, ["d", "e", "f"])], epoch=2, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 6, 1)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=6))
    _, again = ctx.one_sent(FetchRequest)
    assert (again.fetch_offset, again.last_fetched_epoch) == (6, 1)
    listener = ctx.listener
    if second:
        listener = RecordingListener()
        ctx.node.register_listener(listener)
    assert listener.snapshots == [snap]
    assert [b.base_offset for b in listener.committed] == [3]


def test_listener_behind_a_new_snapshot_loads_it_instead_of_the_log() -> None:
    """testListenerRenotified: a listener whose next offset falls below a snapshot taken
    meanwhile gets that snapshot, not the dropped batches. (kraftsim's listeners read at the
    end of every step, so the one left behind is a second listener, polled after the first
    took the snapshot from inside its own commit callback.)"""
    ctx = Context(1, (1, 2), log=[(1, ["a", "b", "c"]), (1, ["d", "e", "f"])], epoch=1,
                  append_linger_ms=0)
    epoch = ctx.become_leader()
    taken: list[Snapshot] = []

    class Snapshotter(RecordingListener):
        def handle_commit(self, batches: Any, high_watermark: int) -> None:
            super().handle_commit(batches, high_watermark)
            if high_watermark == 7 and not taken:
                taken.append(ctx.node.create_snapshot(7, ("state@7",), ctx.now))

    first, behind = Snapshotter(), RecordingListener()
    ctx.node.register_listener(first)
    ctx.node.register_listener(behind)
    ctx.deliver(2, ctx.fetch_request(2, 7, epoch))
    assert ctx.node.high_watermark == 7 and taken
    assert [b.base_offset for b in first.committed] == [0, 3, 6]
    assert behind.snapshots == taken and behind.committed == []
    ctx.node.append(["g"], epoch, ctx.now)
    ctx.poll()
    ctx.deliver(2, ctx.fetch_request(2, 8, epoch))
    assert [b.base_offset for b in behind.committed] == [7]


# ---------------------------------------------------------------------- leader: fetch requests


def test_leader_answers_a_fetch_below_its_log_start_at_once_with_the_snapshot_id() -> None:
    """testLeaderImmediatelySendsSnapshotId, testFetchRequestOffsetLessThanLogStart,
    testFetchRequestOffsetAtZero: a fetch that would otherwise wait (max wait 500 ms) is
    answered in the same step with the latest snapshot's id."""
    ctx, epoch = _leader_with_snapshot((1, 2), [(4, ["a", "b", "c"]), (4, ["d", "e", "f"]),
                                               (4, ["g", "h", "i"])], 9)
    assert ctx.log.snapshot is not None
    snapshot_id = ctx.log.snapshot.snapshot_id
    assert snapshot_id == SnapshotId(9, 4)
    for offset, last_epoch in ((6, 2), (7, 4), (0, 0)):
        ctx.deliver(2, ctx.fetch_request(2, offset, last_epoch, max_wait_ms=500))
        _, resp = ctx.one_sent(FetchResponse)
        assert resp.error is Errors.NONE and (resp.epoch, resp.leader_id) == (epoch, 1)
        assert resp.snapshot_id == snapshot_id and resp.batches == ()


def test_fetch_with_a_last_epoch_beyond_the_current_epoch_is_invalid() -> None:
    """testFetchRequestWithLargerLastFetchedEpoch (and Kafka's other request checks: a
    negative offset, last epoch or wait)."""
    ctx, epoch = _leader_with_snapshot((1, 2), [(2, ["a", "b", "c"]), (2, ["d", "e", "f"])], 3,
                                       append_linger_ms=1)
    ctx.node.append(["g", "h", "i"], epoch, ctx.now)
    ctx.sleep(1)
    ctx.drain()
    for request in (ctx.fetch_request(2, 4, epoch + 1), ctx.fetch_request(2, -1, 0),
                    ctx.fetch_request(2, 4, -1), ctx.fetch_request(2, 4, 2, max_wait_ms=-1)):
        ctx.deliver(2, request)
        _, resp = ctx.one_sent(FetchResponse)
        assert resp.error is Errors.INVALID_REQUEST
        assert (resp.epoch, resp.leader_id) == (epoch, 1) and resp.batches == ()
    assert ctx.node.role is Role.LEADER and ctx.node.high_watermark == 7


def test_fetch_after_the_snapshot_in_an_unknown_epoch_diverges_to_the_snapshot() -> None:
    """testFetchRequestTruncateToLogStart: the follower's last epoch (3) is newer than the
    snapshot's (2) and unknown to the leader's log (2 then 4): truncate to the snapshot end."""
    ctx, epoch = _leader_with_snapshot((1, 2, 3), [(2, ["a", "b", "c"]), (4, ["d", "e", "f"])], 3)
    assert epoch == 5
    ctx.deliver(2, ctx.fetch_request(2, 4, 3))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.error is Errors.NONE and (resp.epoch, resp.leader_id) == (epoch, 1)
    assert resp.diverging is not None and (resp.diverging.offset, resp.diverging.epoch) == (3, 2)
    assert resp.snapshot_id is None


def test_fetch_at_the_log_start_is_valid_only_with_the_snapshots_epoch() -> None:
    """testFetchRequestAtLogStartOffsetWithValidEpoch,
    testFetchRequestAtLogStartOffsetWithInvalidEpoch,
    testFetchRequestWithLastFetchedEpochLessThanOldestSnapshot."""
    log = [(2, ["a", "b", "c"]), (2, ["d", "e", "f"]), (4, ["g", "h", "i"])]
    ctx, epoch = _leader_with_snapshot((1, 2, 3), log, 3)
    assert epoch == 5
    ctx.deliver(2, ctx.fetch_request(2, 3, 2))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.error is Errors.NONE and resp.snapshot_id is None and resp.diverging is None
    assert [b.base_offset for b in resp.batches] == [3, 6, 9]
    for offset, last_epoch in ((3, 3), (ctx.log.end_offset, 1)):
        ctx.deliver(3, ctx.fetch_request(3, offset, last_epoch))
        _, resp = ctx.one_sent(FetchResponse)
        assert resp.error is Errors.NONE and (resp.epoch, resp.leader_id) == (epoch, 1)
        assert resp.snapshot_id == SnapshotId(3, 2)


# ------------------------------------------------------------------ leader: FetchSnapshot requests


def _fetch_snapshot(ctx: Context, src: int, snapshot_id: SnapshotId,
                    epoch: int | None = None) -> FetchSnapshotResponse:
    ctx.deliver(src, FetchSnapshotRequest(ctx.next_correlation(),
                                          ctx.node.epoch if epoch is None else epoch, src,
                                          snapshot_id))
    dst, resp = ctx.one_sent(FetchSnapshotResponse)
    assert dst == src
    return resp


def test_leader_without_that_snapshot_answers_snapshot_not_found() -> None:
    """testFetchSnapshotRequestMissingSnapshot, testFetchSnapshotRequestBootstrapSnapshot: a
    leader never serves the bootstrap snapshot (ending at 0), even when it holds one."""
    ctx = Context(1, (1, 2), epoch=3)
    epoch = ctx.become_leader()
    resp = _fetch_snapshot(ctx, 2, SnapshotId(0, 0))
    assert resp.error is Errors.SNAPSHOT_NOT_FOUND and (resp.epoch, resp.leader_id) == (epoch, 1)

    booted = Context(1, (1, 2), snapshot=Snapshot(SnapshotId(0, 0), ("bootstrap",)), epoch=3)
    booted.become_leader()
    resp = _fetch_snapshot(booted, 2, SnapshotId(0, 0))
    assert resp.error is Errors.SNAPSHOT_NOT_FOUND and resp.snapshot is None


def test_leader_serves_its_snapshot_whole() -> None:
    """testFetchSnapshotRequestAsLeader (kraftsim sends the snapshot in one piece, so
    testPartialFetchSnapshotRequestAsLeader and the position checks have no counterpart)."""
    ctx, epoch = _leader_with_snapshot((1, 2), [(1, ["a"])], 1)
    resp = _fetch_snapshot(ctx, 2, SnapshotId(1, 1))
    assert resp.error is Errors.NONE and (resp.epoch, resp.leader_id) == (epoch, 1)
    assert resp.snapshot is ctx.log.snapshot and resp.snapshot is not None
    assert resp.snapshot.records == ("state@1",)
    assert _fetch_snapshot(ctx, 2, SnapshotId(1, 0)).error is Errors.SNAPSHOT_NOT_FOUND


def test_fetch_snapshot_requests_from_voters_keep_the_leader_in_office() -> None:
    """testLeaderShouldResignLeadershipIfNotGetFetchSnapshotRequestFromMajorityVoters (kraftsim
    checks the quorum once per window of 1.5 x fetch_timeout_ms, so the observer's request
    is checked against a whole window without a voter)."""
    ctx, _ = _leader_with_snapshot((1, 2, 3), [(1, ["a"])], 1, election_timeout_ms=10_000)
    window = ctx.config.fetch_timeout_ms * 3 // 2
    ctx.sleep(window)  # the commit's fetch still counts for this window
    for voter in (2, 3):
        assert _fetch_snapshot(ctx, voter, SnapshotId(1, 1)).error is Errors.NONE
        ctx.sleep(window)
        assert ctx.node.role is Role.LEADER
    assert _fetch_snapshot(ctx, 9, SnapshotId(1, 1)).error is Errors.NONE  # an observer
    ctx.sleep(window)
    assert ctx.node.role is Role.RESIGNED


def test_fetch_snapshot_request_errors_follow_the_epoch_then_the_role() -> None:
    """testFetchSnapshotRequestAsFollower, testFetchSnapshotRequestWithOlderEpoch,
    testFetchSnapshotRequestWithNewerEpoch."""
    follower = Context(1, (1, 2), epoch=2, leader=2)
    resp = _fetch_snapshot(follower, 3, SnapshotId(0, 0))
    assert resp.error is Errors.NOT_LEADER_OR_FOLLOWER and (resp.epoch, resp.leader_id) == (2, 2)

    ctx = Context(1, (1, 2), epoch=1)
    epoch = ctx.become_leader()
    for asked, error in ((epoch - 1, Errors.FENCED_LEADER_EPOCH),
                         (epoch + 1, Errors.UNKNOWN_LEADER_EPOCH)):
        resp = _fetch_snapshot(ctx, 2, SnapshotId(0, 0), asked)
        assert resp.error is error and (resp.epoch, resp.leader_id) == (epoch, 1)
    assert ctx.node.role is Role.LEADER and ctx.node.epoch == epoch


# ------------------------------------------------------------------ follower: fetching a snapshot


def test_follower_with_an_invalid_snapshot_id_backs_off_and_keeps_its_fetch_timeout() -> None:
    """testFetchResponseWithInvalidSnapshotId."""
    ctx = Context(1, (1, 2), epoch=2, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    slept = 0
    for invalid in (SnapshotId(100, -1), SnapshotId(-1, 1)):
        ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=200, snapshot_id=invalid))
        assert ctx.drain() == []
        ctx.sleep(ctx.config.retry_backoff_ms)
        slept += ctx.config.retry_backoff_ms
        _, fetch = ctx.one_sent(FetchRequest)
        assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 0, 0)
    ctx.sleep(ctx.config.fetch_timeout_ms - slept)
    assert ctx.node.role is Role.CANDIDATE and ctx.node.epoch == 3 and ctx.node.voted_id == 1
    _, vote = ctx.sent(VoteRequest)[-1]
    assert (vote.epoch, vote.last_epoch, vote.end_offset) == (3, 0, 0)


def test_a_snapshot_id_of_epoch_0_is_valid_and_fetched() -> None:
    """Only a negative end offset or epoch makes a snapshot id invalid (Kafka's
    handleFetchResponse): a snapshot of epoch 0 is asked for like any other."""
    _follower_told_of_snapshot(SnapshotId(100, 0))


def test_follower_fetches_installs_and_loads_the_snapshot_then_fetches_after_it() -> None:
    """testFetchResponseWithSnapshotId."""
    snapshot_id = SnapshotId(100, 1)
    ctx, request = _follower_told_of_snapshot(snapshot_id)
    snapshot = Snapshot(snapshot_id, ("foo", "bar"))
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE, snapshot))
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 100, 1)
    assert ctx.log.snapshot is snapshot
    assert (ctx.log.start_offset, ctx.log.end_offset) == (100, 100)
    assert ctx.node.high_watermark == 100
    assert ctx.listener.snapshots == [snapshot]


def test_snapshot_gone_from_the_leader_means_fetching_again_at_once() -> None:
    """testFetchSnapshotResponseMissingSnapshot."""
    ctx, request = _follower_told_of_snapshot(SnapshotId(100, 1))
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.SNAPSHOT_NOT_FOUND))
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 0, 0)
    assert ctx.log.snapshot is None


@pytest.mark.parametrize("bad_id", [SnapshotId(-1, 1), SnapshotId(100, -1)],
                         ids=["negative-end", "negative-epoch"])
def test_snapshot_answer_with_an_invalid_id_means_fetching_again_at_once(
        bad_id: SnapshotId) -> None:
    """testFetchSnapshotResponseWithInvalidId: the leader's answer names a snapshot id with a
    negative end offset or epoch. Kafka takes that as it takes SNAPSHOT_NOT_FOUND: the
    download is dropped and the follower fetches the log again at once (the fetch timeout
    starts over), which names the leader's snapshot anew."""
    ctx, request = _follower_told_of_snapshot(SnapshotId(100, 1))
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    ctx.drain()
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE,
                                         Snapshot(bad_id, ("foo",))))
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == 2 and (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 0, 0)
    assert ctx.log.snapshot is None and ctx.listener.snapshots == []
    ctx.sleep(ctx.config.fetch_timeout_ms - 1)
    assert ctx.node.role is Role.FOLLOWER
    # Asked again, the leader names its snapshot once more: the follower fetches it.
    ctx.drain()
    ctx.deliver(2, ctx.fetch_response(fetch, 2, high_watermark=200,
                                      snapshot_id=SnapshotId(100, 1)))
    _, again = ctx.one_sent(FetchSnapshotRequest)
    assert again.snapshot_id == SnapshotId(100, 1)


@pytest.mark.parametrize("new_leader", [2, 3])
def test_fetch_snapshot_answer_from_a_newer_epoch_moves_the_follower_there(new_leader: int) -> None:
    """testFetchSnapshotResponseFromNewerEpochNotLeader,
    testFetchSnapshotResponseFromNewerEpochLeader: the follower fetches the log from the
    epoch's leader, once (no second fetch after a backoff while the first is outstanding)."""
    ctx, request = _follower_told_of_snapshot(SnapshotId(100, 1), voters=(1, 2, 3))
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 3, new_leader,
                                         Errors.FENCED_LEADER_EPOCH))
    assert ctx.node.role is Role.FOLLOWER
    assert (ctx.node.epoch, ctx.node.leader_id) == (3, new_leader)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert dst == new_leader
    assert (fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 0, 0)
    ctx.sleep(ctx.config.request_timeout_ms - 1)
    assert ctx.drain() == []


def test_stale_fetch_snapshot_answer_makes_the_follower_ask_for_the_snapshot_again() -> None:
    """testFetchSnapshotResponseFromOlderEpoch: the download stays pending, and the follower
    asks for the same snapshot again (not for the log) at once, as Kafka's does (more such
    answers in test_kafka_raft_snapshot_more_cases.py)."""
    snapshot_id = SnapshotId(100, 1)
    ctx, request = _follower_told_of_snapshot(snapshot_id)
    ctx.sleep(2)
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 1, 3, Errors.UNKNOWN_LEADER_EPOCH))
    assert ctx.node.role is Role.FOLLOWER and (ctx.node.epoch, ctx.node.leader_id) == (2, 2)
    dst, again = ctx.one_sent(FetchSnapshotRequest)
    assert dst == 2 and again.snapshot_id == snapshot_id and again.epoch == 2


def test_a_duplicated_fetch_snapshot_answer_is_handled_once() -> None:
    """An answer settles its request: a stale answer moves nothing, so the snapshot is asked
    for again at once; the same answer delivered again (a duplicating network) is not
    outstanding any more and sends nothing else."""
    snapshot_id = SnapshotId(100, 1)
    ctx, request = _follower_told_of_snapshot(snapshot_id)
    stale = FetchSnapshotResponse(request.correlation_id, 1, 3, Errors.UNKNOWN_LEADER_EPOCH)
    ctx.sleep(3)
    ctx.deliver(2, stale)
    dst, again = ctx.one_sent(FetchSnapshotRequest)
    assert dst == 2 and again.snapshot_id == snapshot_id
    ctx.sleep(1)
    ctx.deliver(2, stale)
    assert ctx.drain() == []


def test_unanswered_fetch_snapshot_is_asked_again_after_the_request_timeout() -> None:
    """Kafka's follower sends FetchSnapshot, not Fetch, while a download is pending
    (maybeSendFetchOrFetchSnapshot), so a lost request is retried as such."""
    snapshot_id = SnapshotId(100, 1)
    ctx, _ = _follower_told_of_snapshot(snapshot_id, voters=(1, 2, 3), request_timeout_ms=1000)
    ctx.sleep(ctx.config.request_timeout_ms)
    dst, again = ctx.one_sent(FetchSnapshotRequest)
    assert dst == 2 and again.snapshot_id == snapshot_id


def test_an_answer_to_a_fetch_snapshot_request_that_was_sent_again_is_ignored() -> None:
    """Only the answer to the request in flight counts (Kafka's isResponseExpected): the
    late answer to the first, timed-out request installs nothing; the retry's does."""
    snapshot_id = SnapshotId(100, 1)
    ctx, first = _follower_told_of_snapshot(snapshot_id, voters=(1, 2, 3),
                                            request_timeout_ms=1000)
    ctx.sleep(ctx.config.request_timeout_ms)
    _, again = ctx.one_sent(FetchSnapshotRequest)
    assert again.correlation_id != first.correlation_id
    snapshot = Snapshot(snapshot_id, ("foo",))
    ctx.deliver(2, FetchSnapshotResponse(first.correlation_id, 2, 2, Errors.NONE, snapshot))
    assert ctx.log.snapshot is None and ctx.drain() == []
    ctx.deliver(2, FetchSnapshotResponse(again.correlation_id, 2, 2, Errors.NONE, snapshot))
    assert ctx.log.snapshot is snapshot


def test_fetch_snapshot_answer_after_the_fetch_timeout_is_ignored() -> None:
    """testFetchSnapshotResponseToNotFollower."""
    snapshot_id = SnapshotId(100, 1)
    ctx, request = _follower_told_of_snapshot(snapshot_id)
    ctx.sleep(ctx.config.fetch_timeout_ms)
    assert ctx.node.role is Role.CANDIDATE and (ctx.node.epoch, ctx.node.voted_id) == (3, 1)
    _, vote = ctx.sent(VoteRequest)[-1]
    assert (vote.epoch, vote.last_epoch, vote.end_offset) == (3, 0, 0)
    ctx.deliver(2, FetchSnapshotResponse(request.correlation_id, 2, 2, Errors.NONE,
                                         Snapshot(snapshot_id, ("late",))))
    assert ctx.node.role is Role.CANDIDATE and (ctx.node.epoch, ctx.node.voted_id) == (3, 1)
    assert ctx.log.snapshot is None and ctx.listener.snapshots == []


# ---------------------------------------------------------------------- creating snapshots


def test_leader_creates_snapshots_only_at_or_below_its_high_watermark() -> None:
    """testCreateSnapshotAsLeaderWithInvalidSnapshotId (the epoch cases have no counterpart:
    kraftsim takes the epoch of the last contained record from the log)."""
    ctx = Context(1, (1, 2), log=[(2, ["a", "b", "c"])], epoch=2, append_linger_ms=1)
    epoch = ctx.become_leader()
    assert ctx.node.high_watermark is None
    with pytest.raises(ValueError):
        ctx.node.create_snapshot(3, (), ctx.now)
    _commit_log_end(ctx)
    hw = ctx.node.high_watermark
    assert hw == 4
    ctx.node.append(["d", "e", "f"], epoch, ctx.now)
    ctx.sleep(1)
    assert ctx.log.end_offset == hw + 3
    with pytest.raises(ValueError):
        ctx.node.create_snapshot(hw + 3, (), ctx.now)
    snap = ctx.node.create_snapshot(3, ("abc",), ctx.now)
    assert snap.snapshot_id == SnapshotId(3, 2)  # the epoch of its last record, not the leader's


def test_follower_creates_snapshots_only_at_or_below_its_high_watermark() -> None:
    """testCreateSnapshotAsFollowerWithInvalidSnapshotId."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2)
    assert ctx.node.high_watermark is None
    with pytest.raises(ValueError):
        ctx.node.create_snapshot(1, (), ctx.now)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 3, ("a", "b", "c"))],
                                      high_watermark=0))
    assert ctx.node.high_watermark == 0
    with pytest.raises(ValueError):
        ctx.node.create_snapshot(1, (), ctx.now)
    _, fetch = ctx.one_sent(FetchRequest)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 3)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(3, 4, ("d", "e", "f"))],
                                      high_watermark=6))
    assert ctx.node.high_watermark == 6
    assert ctx.node.create_snapshot(3, (), ctx.now).snapshot_id == SnapshotId(3, 3)
    assert ctx.node.create_snapshot(6, (), ctx.now).snapshot_id == SnapshotId(6, 4)
