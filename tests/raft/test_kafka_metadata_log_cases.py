"""Cases of Kafka's KafkaMetadataLogTest (core/src/test/scala/kafka/raft), on RaftLog and RaftNode.

Kafka's KafkaMetadataLog keeps the high watermark and creates snapshots; in
kraftsim the log holds batches and its one snapshot, and the node keeps the
high watermark and checks snapshot requests (``RaftNode.create_snapshot``). A
committed log is therefore built here as a follower that fetched it (see
tests/raft/kafka_context.py). kraftsim's snapshots end at a batch boundary and
take the epoch of their last record from the log, so a snapshot id whose epoch
disagrees with the log cannot be asked for. Cases about segments, files,
retention and several snapshots at once have no counterpart.
"""

from __future__ import annotations

import pytest

from raft import Batch, OffsetAndEpoch, RaftLog, RaftLogError, Snapshot, SnapshotId, Validation
from raft.messages import FetchRequest
from tests.raft.kafka_context import Context


def _log(*runs: tuple[int, int], snapshot: SnapshotId | None = None) -> RaftLog:
    """A log of single-record batches: ``(epoch, count)`` runs, after ``snapshot`` if given."""
    log = RaftLog()
    if snapshot is not None:
        log.install_snapshot(Snapshot(snapshot, ()))
    for epoch, count in runs:
        for _ in range(count):
            log.append(Batch(log.end_offset, epoch, ("r",)), flushed=True)
    return log


def _committed_follower(*runs: tuple[int, int], high_watermark: int) -> Context:
    """A follower (epoch 5, leader 2) that fetched single-record batches, committed to
    ``high_watermark``."""
    ctx = Context(1, (1, 2, 3), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    log = _log(*runs)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=log.batches,
                                      high_watermark=high_watermark))
    assert ctx.node.high_watermark == high_watermark
    return ctx


# ---------------------------------------------------------------------- creating snapshots


def test_snapshot_at_the_high_watermark_takes_its_last_records_epoch() -> None:
    """testCreateSnapshot, testCreateSnapshotFromEndOffset: snapshots up to and at the end of
    each epoch carry the epoch of their last record."""
    ctx = _committed_follower((1, 10), (3, 10), high_watermark=20)
    for end, epoch in ((1, 1), (9, 1), (10, 1), (11, 3), (19, 3), (20, 3)):
        snap = ctx.node.create_snapshot(end, (), ctx.now)
        assert snap.snapshot_id == SnapshotId(end, epoch)
        assert ctx.log.start_offset == end and ctx.log.snapshot is snap
    assert ctx.log.end_offset == 20 and len(ctx.log) == 0


def test_snapshot_past_the_high_watermark_is_refused() -> None:
    """testCreateSnapshotLaterThanHighWatermark."""
    ctx = _committed_follower((1, 10), high_watermark=10)
    with pytest.raises(ValueError, match="high watermark"):
        ctx.node.create_snapshot(11, (), ctx.now)
    assert ctx.log.snapshot is None and ctx.log.start_offset == 0


def test_snapshot_epoch_never_names_an_epoch_missing_from_the_log() -> None:
    """testCreateSnapshotWithMissingEpoch, testCreateSnapshotDivergingEpoch,
    testCreateSnapshotOlderEpoch, testCreateSnapshotMuchLaterEpoch: Kafka refuses ids whose
    epoch the log contradicts; kraftsim reads the epoch from the log, so epoch 2 (never
    written) cannot appear."""
    ctx = _committed_follower((1, 5), (3, 5), high_watermark=10)
    assert ctx.node.create_snapshot(5, (), ctx.now).snapshot_id == SnapshotId(5, 1)
    assert ctx.node.create_snapshot(6, (), ctx.now).snapshot_id == SnapshotId(6, 3)


def test_snapshot_at_or_below_the_log_start_is_refused_and_changes_nothing() -> None:
    """testCreateSnapshotBeforeLogStartOffset, testCreateExistingSnapshot (Kafka hands back no
    writer; kraftsim's create_snapshot raises ValueError, and its callers check the log
    start first)."""
    ctx = _committed_follower((1, 10), high_watermark=10)
    snap = ctx.node.create_snapshot(9, ("state@9",), ctx.now)
    for end in (9, 7):
        with pytest.raises(ValueError, match="log start"):
            ctx.node.create_snapshot(end, (), ctx.now)
        assert ctx.log.snapshot is snap and ctx.log.start_offset == 9


def test_snapshot_ends_at_a_batch_boundary() -> None:
    """Kafka may snapshot at any committed offset; kraftsim's log drops whole batches, so a
    snapshot inside a batch is refused (RaftLogError) and changes nothing."""
    ctx = Context(1, (1, 2), epoch=5, leader=2)
    _, fetch = ctx.one_sent(FetchRequest)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, batches=[Batch(0, 1, ("a", "b", "c"))],
                                      high_watermark=3))
    with pytest.raises(RaftLogError):
        ctx.node.create_snapshot(2, (), ctx.now)
    assert ctx.log.snapshot is None and ctx.log.start_offset == 0 and len(ctx.log) == 1


# ---------------------------------------------------------------------- truncating to a snapshot


def test_installing_a_snapshot_past_the_log_end_replaces_the_whole_log() -> None:
    """testTruncateFullyToLatestSnapshot: in the same epoch and in a later one."""
    log = _log((0, 10))
    for snapshot_id in (SnapshotId(20, 0), SnapshotId(30, 1)):
        log.install_snapshot(Snapshot(snapshot_id, ()))
        assert log.start_offset == log.end_offset == log.flushed_end == snapshot_id.end_offset
        assert log.last_epoch == snapshot_id.epoch and len(log) == 0
        assert log.end_offset_and_epoch() == OffsetAndEpoch(snapshot_id.end_offset,
                                                            snapshot_id.epoch)
        for _ in range(10):
            log.append(Batch(log.end_offset, snapshot_id.epoch, ("r",)), flushed=True)


def test_truncation_never_reaches_below_the_snapshot() -> None:
    """The log start bounds truncation (Kafka's log keeps its start offset): a diverging
    answer naming an offset below the snapshot cuts to the snapshot's end."""
    log = _log((1, 5), snapshot=SnapshotId(10, 1))
    assert log.truncate_to_end_offset(OffsetAndEpoch(4, 1)) == 10
    assert (log.start_offset, log.end_offset, log.last_epoch) == (10, 10, 1)
    with pytest.raises(RaftLogError):
        log.truncate_to(9)


# ---------------------------------------------------------------------- validating fetch positions


def test_validate_an_epoch_past_the_last_known_one_diverges_to_the_log_end() -> None:
    """testValidateEpochGreaterThanLastKnownEpoch."""
    log = _log((1, 1))
    assert log.validate_offset_and_epoch(1, 2) == (Validation.DIVERGING, OffsetAndEpoch(1, 1))


def test_validate_an_epoch_before_the_snapshots_answers_the_snapshot() -> None:
    """testValidateEpochLessThanOldestSnapshotEpoch."""
    log = _log((1, 10))
    log.set_snapshot(Snapshot(SnapshotId(10, 1), ()))
    assert log.validate_offset_and_epoch(10, 0) == (Validation.SNAPSHOT, OffsetAndEpoch(10, 1))


def test_validate_at_the_snapshot_end_with_its_epoch_is_valid() -> None:
    """testValidateOffsetEqualToOldestSnapshotOffset,
    testValidateOffsetLessThanOldestSnapshotOffset."""
    log = _log((1, 2))
    log.set_snapshot(Snapshot(SnapshotId(2, 1), ()))
    assert log.validate_offset_and_epoch(2, 1) == (Validation.VALID, OffsetAndEpoch(2, 1))
    assert log.validate_offset_and_epoch(1, 1) == (Validation.SNAPSHOT, OffsetAndEpoch(2, 1))


def test_validate_an_unknown_epoch_after_the_snapshot_diverges_to_the_epoch_before() -> None:
    """testValidateUnknownEpochLessThanLastKnownGreaterThanOldestSnapshot."""
    log = _log((1, 5), (2, 5), (4, 5), snapshot=SnapshotId(10, 1))
    assert log.validate_offset_and_epoch(100, 3) == (Validation.DIVERGING, OffsetAndEpoch(20, 2))


def test_validate_an_epoch_between_the_snapshot_and_the_log_diverges_to_the_snapshot() -> None:
    """testValidateEpochLessThanFirstEpochInLog."""
    log = _log((3, 5), snapshot=SnapshotId(10, 1))
    assert log.validate_offset_and_epoch(100, 2) == (Validation.DIVERGING, OffsetAndEpoch(10, 1))


def test_validate_an_offset_past_its_epochs_end_diverges_to_that_end() -> None:
    """testValidateOffsetLessThanLEO, testValidateOffsetGreatThanEndOffset,
    testValidateValidEpochAndOffset."""
    log = _log((1, 10), (2, 10))
    assert log.validate_offset_and_epoch(11, 1) == (Validation.DIVERGING, OffsetAndEpoch(10, 1))
    assert log.validate_offset_and_epoch(21, 2) == (Validation.DIVERGING, OffsetAndEpoch(20, 2))
    assert log.validate_offset_and_epoch(4, 1) == (Validation.VALID, OffsetAndEpoch(4, 1))
