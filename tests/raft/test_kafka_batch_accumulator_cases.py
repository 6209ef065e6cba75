"""Cases of Kafka's BatchAccumulatorTest and MemoryBatchReaderTest (raft/.../internals), on
RaftNode and RaftLog.

Kafka's leader holds its appends in a BatchAccumulator until the linger
(controller.quorum.append.linger.ms) has passed since the first of them, then drains
them to the log and flushes. kraftsim's leader appends to its log at once, unflushed,
and flushes at the first step ``append_linger_ms`` after the first unflushed append: the
appends are neither fetchable nor durable before then, and lost if leadership ends
first, as an accumulator's would be. Once committed, the leader's own batches reach its
listener from memory (Kafka's MemoryBatchReader; kraftsim's batches are shared by
reference). The cases run on a node (tests/raft/kafka_context.py)
and, for the shape of control batches, on the log.

Covered elsewhere (by the named kraftsim test): testLingerBeginsOnFirstWrite's later
appends not moving the drain (test_kafka_raft_client_cases::
test_lingering_append_waits_for_the_linger_only), testUnflushedBuffersReleasedByClose's
behaviour, lingering appends gone when leadership ends (test_kafka_raft_client_cases::
test_lingering_appends_are_dropped_when_leadership_ends), testInvalidControlRecordEpoch
(an append in an epoch the leader has not reached: test_kafka_raft_client_cases::
test_append_refused_unless_leader_of_that_epoch), testEmptyControlBatch
(test_kafka_mock_log_cases::test_an_empty_batch_is_never_appended).

Differs from Kafka (reported, not changed here): Kafka's accumulator puts the records of
several appends made within one linger into one batch while they fit its byte size
(testSingleBatchAccumulation: five appends, one batch); kraftsim's leader makes one batch
per append, each stamped with its own append time. Merging would change the batches of
every run (the controller writes one append per batch of an operation).

Not ported:

- testCompletedBatchReleaseBuffer, testCloseWhenEmpty, testDelayedDrainAreReleased: the
  memory pool's buffers (kraftsim's batches are shared objects).
- testDrainDoesNotBlockWithConcurrentAppend: threads (a node runs one step at a time).
- testDelayedDrain, testMaxNumberOfBatches: prepared appends held back until the caller
  allows the drain, and a bound on the batches so held; kraftsim's controller appends
  each batch directly, with nothing held back.
- testMultipleBatchAccumulation, BatchBuilderTest.testHasRoomForUncompressed: a batch's
  byte size limit; kraftsim's batches are bounded by the controller's record count.
- testForceDrainBeforeAppendLeaderChangeMessage: a LeaderChange appended behind pending
  records; kraftsim's leader writes its LeaderChange only as it takes office, when
  nothing is pending.
"""

from __future__ import annotations

import pytest

from raft import Batch, RaftLog, RaftLogError
from raft.batch import KRaftVersionRecord, SnapshotHeaderRecord
from raft.messages import FetchResponse
from tests.raft.kafka_context import Context

_LINGER = 50


def _leader() -> tuple[Context, int]:
    """A leader of (1, 2) whose LeaderChange is committed (2 fetched past it)."""
    ctx = Context(1, (1, 2), append_linger_ms=_LINGER)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    assert ctx.node.high_watermark == 1
    ctx.drain()
    return ctx, epoch


def test_the_leader_change_is_written_and_flushed_at_once() -> None:
    """testLeaderChangeMessageWritten: the new leader's LeaderChange needs no linger: it is
    in the log, durable and served to a follower's fetch as soon as the node leads."""
    ctx = Context(1, (1, 2), append_linger_ms=_LINGER)
    epoch = ctx.become_leader()
    assert (ctx.log.end_offset, ctx.log.flushed_end) == (1, 1)
    ctx.deliver(2, ctx.fetch_request(2, 0, 0))
    _, resp = ctx.one_sent(FetchResponse)
    [batch] = resp.batches
    assert batch.is_control and (batch.base_offset, batch.epoch) == (0, epoch)


def test_a_leader_with_nothing_appended_has_no_drain_due() -> None:
    """testLingerIgnoredIfAccumulatorEmpty: with nothing appended, nothing is due at the
    linger; the leader's next deadline is its heartbeat or quorum check."""
    ctx, _ = _leader()
    deadline = ctx.node.next_deadline()
    assert deadline is not None and deadline - ctx.now > _LINGER
    ctx.sleep(_LINGER)
    assert ctx.drain() == [] and ctx.log.flushed_end == ctx.log.end_offset == 1


def test_the_linger_begins_with_the_first_append() -> None:
    """testLingerBeginsOnFirstWrite: the linger runs from the first append, however long
    the leader was idle before it; the append is neither durable nor served until the
    linger has passed, and both at once then."""
    ctx, epoch = _leader()
    ctx.sleep(15)
    assert ctx.node.append(["a"], epoch, ctx.now) == 1
    first = ctx.now
    assert ctx.node.next_deadline() == first + _LINGER
    ctx.sleep(_LINGER // 2)
    assert ctx.log.flushed_end == 1
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    _, resp = ctx.one_sent(FetchResponse)
    assert resp.batches == ()
    ctx.sleep(_LINGER - _LINGER // 2)
    assert ctx.log.flushed_end == 2


def test_appends_return_their_last_offsets_and_drain_together() -> None:
    """testSingleBatchAccumulation: each append returns the offset of its last record,
    counting on from the previous append; everything appended within one linger becomes
    durable at once, at the linger after the first, in append order (kraftsim: one batch
    per append, each stamped with its append time; Kafka merges them, see above)."""
    ctx, epoch = _leader()
    records = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    lasts, first = [], ctx.now
    for start, end in ((0, 1), (1, 3), (3, 6), (6, 8), (8, 9)):
        lasts.append(ctx.node.append(records[start:end], epoch, ctx.now))
        ctx.sleep(1)
    assert lasts == [1, 3, 6, 8, 9]
    assert ctx.log.flushed_end == 1
    ctx.sleep(_LINGER - 5)
    assert ctx.log.flushed_end == 10
    appended = ctx.log.batches[1:]
    assert [r for b in appended for r in b.records] == records
    assert [b.append_time_ms for b in appended] == [first + n for n in range(5)]


def test_a_forced_drain_makes_pending_appends_durable_at_once() -> None:
    """testForceDrain: draining ahead of the linger (kraftsim's ``flush_all``, what a
    graceful shutdown does) makes every pending append durable and servable at once, with
    nothing left due."""
    ctx, epoch = _leader()
    for chunk in (["a"], ["b", "c"], ["d", "e", "f"]):
        ctx.node.append(chunk, epoch, ctx.now)
    ctx.node.flush_all(ctx.now)
    assert ctx.log.flushed_end == ctx.log.end_offset == 7
    ctx.deliver(2, ctx.fetch_request(2, 1, epoch))
    _, resp = ctx.one_sent(FetchResponse)
    assert [r for b in resp.batches for r in b.records] == ["a", "b", "c", "d", "e", "f"]


# ---------------------------------------------------------------------- control batches


def test_a_control_batch_of_several_records_takes_an_offset_per_record() -> None:
    """testMultipleControlRecords: a control batch with a SnapshotHeader and a KRaftVersion
    record starts at the next offset and takes two offsets."""
    log = RaftLog()
    log.append(Batch(0, 17, ("x",) * 157), flushed=True)
    batch = Batch(157, 17, control_records=(SnapshotHeaderRecord(1234),
                                            KRaftVersionRecord(0)))
    log.append(batch, flushed=True)
    assert batch.is_control and (batch.count, batch.last_offset) == (2, 158)
    assert log.end_offset == 159


def test_a_control_batch_not_at_the_next_offset_is_refused() -> None:
    """testInvalidControlRecordOffset: a control batch built one offset past the next one
    is refused, and the log is unchanged."""
    log = RaftLog()
    log.append(Batch(0, 17, ("x",) * 157), flushed=True)
    with pytest.raises(RaftLogError):
        log.append(Batch(158, 17, control_records=(SnapshotHeaderRecord(1234),)),
                   flushed=True)
    assert log.end_offset == 157 and len(log) == 1


# ---------------------------------------------------------------------- MemoryBatchReaderTest


def test_the_leaders_own_batches_reach_its_listener_from_memory_in_order() -> None:
    """MemoryBatchReaderTest.testIteration: once committed, the leader's own batches reach
    its listener as the very batch objects it appended (kraftsim shares batches by
    reference, Kafka reads them from memory), in order, from the first batch's base offset
    to the last one's last offset, each once."""
    ctx, epoch = _leader()
    for chunk in (["a", "b", "c"], ["d", "e"], ["f", "g", "h", "i"]):
        ctx.node.append(chunk, epoch, ctx.now)
    appended = list(ctx.log.batches[1:])
    ctx.sleep(_LINGER)
    ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
    assert ctx.node.high_watermark == 10
    delivered = [b for b in ctx.listener.committed if not b.is_control]
    assert len(delivered) == 3 and all(d is a for d, a in zip(delivered, appended, strict=True))
    assert (delivered[0].base_offset, delivered[-1].last_offset) == (1, 9)
