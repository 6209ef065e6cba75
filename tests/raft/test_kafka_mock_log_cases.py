"""Cases of Kafka's MockLogTest (raft/src/test/java/org/apache/kafka/raft), on RaftLog.

Kafka's MockLog is the in-memory log its raft tests run on; kraftsim's RaftLog plays
the same part. What the cases pin: the log works in whole batches (a truncation
inside a batch drops that batch, a read from inside a batch returns it whole, an
empty batch is never appended), the epoch cache answers "where does epoch E end"
with the largest epoch at or below E, and a log that starts with a snapshot goes on
at the snapshot's end.

Covered elsewhere (by the named kraftsim test): testUnexpectedAppendOffset and
testMonotonicEpochStartOffset (test_log::test_append_must_continue_at_the_log_end),
testUnflushedRecordsLostAfterReopen (test_log::test_lose_unflushed), the
testValidate* cases (test_kafka_metadata_log_cases), testCreateSnapshot* and
testFailToIncreaseLogStartPastHighWatermark (test_kafka_metadata_log_cases and
test_kafka_raft_snapshot_cases), testTruncateFullyToLatestSnapshot and testDoesntTruncateFully
(KafkaMetadataLogTest's cases of the same names: test_kafka_metadata_log_cases::
test_installing_a_snapshot_past_the_log_end_replaces_the_whole_log and
test_kafka_metadata_log_more_cases::test_a_snapshot_not_ahead_of_the_log_leaves_the_log_whole).

Where kraftsim differs on purpose:

- The log keeps no high watermark (the node does), so testTruncateBelowHighWatermark,
  testUpdateHighWatermark and testDecrementHighWatermark are node cases:
  test_raft_edge_behaviour::test_follower_high_watermark_never_passes_its_log_end and
  test_kafka_quorum_state_cases::test_follower_high_watermark_never_moves_back.
- A read at or past the log end answers nothing (Kafka throws OffsetOutOfRange past the
  end): a leader validates a fetch offset against its log before it reads.

Ported later (at the end): testAppendAsLeader with testReadRecords, testAppendControlRecord.

Set aside: testAssignEpochStartOffset (a leader's epoch enters the log with its LeaderChange
record, not before it: the log has no separate epoch start); testMetadataValidation (offset
metadata of segment positions: kraftsim's raft log is read by offset only);
testTopicPartition and testTopicId (one log, no partition), testReadMissingSnapshot,
testCreateExistingSnapshot, testTruncateWillRemoveOlderSnapshot and the other
several-snapshot cases (kraftsim keeps one snapshot), testUpdateLogStartOffset* (the log
start moves only with a snapshot).
"""

from __future__ import annotations

import pytest

from raft import Batch, OffsetAndEpoch, RaftLog, RaftLogError, Snapshot, SnapshotId
from raft.batch import LeaderChangeMessage


def _log(*runs: tuple[int, int]) -> RaftLog:
    """A log of one batch per ``(records, epoch)`` run."""
    log = RaftLog()
    for count, epoch in runs:
        log.append(Batch(log.end_offset, epoch, tuple(f"r{n}" for n in range(count))),
                   flushed=True)
    return log


def _read_range(log: RaftLog, start: int, upto: int) -> tuple[int, int] | None:
    """First and last offset of everything read from ``start`` below ``upto``, if any."""
    batches = log.read(start, upto, 1 << 30)
    if not batches:
        return None
    return batches[0].base_offset, batches[-1].last_offset


def test_truncating_inside_a_batch_drops_the_whole_batch() -> None:
    """testTruncateTo: batches [0, 2) and [2, 3); a cut at 2 keeps the first, a cut at 1
    (inside it) drops it too, and the log is empty again (its epoch forgotten)."""
    log = RaftLog()
    log.append(Batch(0, 2, ("one", "two")), flushed=True)
    log.append(Batch(2, 2, ("three",)), flushed=True)
    assert (log.start_offset, log.end_offset) == (0, 3)
    log.truncate_to(2)
    assert (log.start_offset, log.end_offset, len(log)) == (0, 2, 1)
    log.truncate_to(1)
    assert (log.start_offset, log.end_offset, log.flushed_end, len(log)) == (0, 0, 0, 0)
    assert log.last_epoch == 0
    log.append(Batch(0, 3, ("again",)), flushed=True)  # the end is a batch boundary again
    assert (log.end_offset, log.last_epoch) == (1, 3)


def test_truncating_to_the_end_of_a_divergent_epoch_inside_a_batch_drops_the_batch() -> None:
    """testTruncateTo through the divergence path: a leader's epoch end that falls inside one
    of this log's batches cuts that batch whole, never half of it."""
    log = _log((3, 1), (4, 2))  # epoch 1: [0, 3), epoch 2: [3, 7)
    assert log.truncate_to_end_offset(OffsetAndEpoch(5, 2)) == 3
    assert (log.end_offset, log.last_epoch) == (3, 1)


def test_an_empty_batch_is_never_appended() -> None:
    """testEmptyAppendNotAllowed: a batch of no records, data or control, is refused and the
    log is left as it was."""
    log = _log((2, 1))
    with pytest.raises(RaftLogError, match="holds no records"):
        log.append(Batch(2, 1, ()), flushed=True)
    with pytest.raises(RaftLogError, match="holds no records"):
        log.append(Batch(2, 2, (), ()), flushed=False)
    assert (log.end_offset, log.flushed_end, len(log), log.last_epoch) == (2, 2, 1, 1)
    log.append(Batch(2, 1, ("x",)), flushed=True)
    assert log.end_offset == 3


def test_end_offset_for_epoch_is_that_of_the_largest_epoch_at_or_below() -> None:
    """testEndOffsetForEpoch: batches of 5 and 10 records in epoch 1, 5 in epoch 3, 10 in
    epoch 4. An epoch below the first ends where the log starts; a missing epoch answers for
    the one before it; an epoch past the last answers the log end."""
    log = _log((5, 1), (10, 1), (5, 3), (10, 4))
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(15, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(15, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(20, 3)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(30, 4)
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(30, 4)


def test_a_log_after_a_snapshot_goes_on_at_its_end() -> None:
    """testAppendAsFollower: over a snapshot ending at 5 in epoch 0, a follower's batch of
    epoch 3 goes at 5; the log starts at 5, its last epoch is 3, the snapshot's epoch ends
    at the snapshot's end and epoch 3 at the log end."""
    log = RaftLog()
    log.install_snapshot(Snapshot(SnapshotId(5, 0), ()))
    with pytest.raises(RaftLogError):
        log.append(Batch(0, 3, ("foo",)), flushed=True)
    log.append(Batch(5, 3, ("foo",)), flushed=True)
    assert (log.start_offset, log.end_offset, log.last_epoch) == (5, 6, 3)
    [batch] = log.read(5, log.end_offset, 100)
    assert batch.records == ("foo",)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(5, 0)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(6, 3)


def test_read_from_inside_a_batch_returns_that_batch_up_to_the_log_end() -> None:
    """testReadUpToLogEnd: batches [0, 20), [20, 30), [30, 60). A read from any offset gets the
    whole batch holding it and everything after; from the end, nothing. Once the log is cut
    back to 20, a read from 21 gets nothing either."""
    log = _log((20, 1), (10, 1), (30, 1))
    end = log.end_offset
    assert _read_range(log, 0, end) == (0, 59)
    assert _read_range(log, 10, end) == (0, 59)
    assert _read_range(log, 20, end) == (20, 59)
    assert _read_range(log, 25, end) == (20, 59)
    assert _read_range(log, 30, end) == (30, 59)
    assert _read_range(log, 33, end) == (30, 59)
    assert _read_range(log, 60, end) is None
    assert _read_range(log, 61, end) is None
    log.truncate_to(20)
    assert _read_range(log, 21, log.end_offset) is None


@pytest.mark.parametrize(("high_watermark", "expected"), [
    (0, {0: None, 10: None}),
    (20, {0: (0, 19), 10: (0, 19), 20: None, 30: None}),
    (30, {0: (0, 29), 10: (0, 29), 20: (20, 29), 25: (20, 29), 30: None, 50: None}),
    (60, {0: (0, 59), 10: (0, 59), 20: (20, 59), 25: (20, 59), 30: (30, 59), 50: (30, 59),
          60: None}),
])
def test_a_committed_read_returns_whole_batches_below_the_high_watermark(
        high_watermark: int, expected: dict[int, tuple[int, int] | None]) -> None:
    """testReadUpToHighWatermark: reading below a high watermark (what a listener is handed)
    returns the whole batches that end at or before it, from the batch holding the start."""
    log = _log((20, 1), (10, 1), (30, 1))
    for start, offsets in expected.items():
        assert _read_range(log, start, high_watermark) == offsets, start


def test_a_read_below_the_log_start_is_refused() -> None:
    """testReadOutOfRangeOffset (below the start): after a snapshot ending at 5, a read
    from 4 is refused (kraftsim: RaftLogError)."""
    log = RaftLog()
    log.install_snapshot(Snapshot(SnapshotId(5, 0), ()))
    log.append(Batch(5, 3, ("foo",)), flushed=True)
    with pytest.raises(RaftLogError, match="below the log start"):
        log.read(4, log.end_offset, 100)
    assert log.read(log.end_offset + 1, log.end_offset + 5, 100) == ()


def test_a_leaders_appends_end_its_epoch_and_read_back_in_order() -> None:
    """testAppendAsLeader (and testReadRecords' point): a batch of one record, then one of
    two, appended in epoch 2; after each the epoch ends at the log end, the last fetched
    epoch is 2, and a read from 0 gives every record in order."""
    log = RaftLog()
    expected: list[str] = []
    for records in (("one",), ("two", "three")):
        log.append(Batch(log.end_offset, 2, records), flushed=True)
        expected.extend(records)
        assert log.end_offset_for_epoch(2) == OffsetAndEpoch(len(expected), 2)
        assert log.last_epoch == 2
        assert [r for b in log.read(0, log.end_offset, 1 << 30) for r in b.records] == expected


def test_a_leader_change_control_record_is_a_batch_of_its_own() -> None:
    """testAppendControlRecord: a LeaderChange record appended in epoch 3 takes offset 0,
    is read back as a control batch holding that record, and ends epoch 3 at offset 1."""
    message = LeaderChangeMessage(leader_id=0, voters=(), granting_voters=())
    log = RaftLog()
    log.append(Batch(0, 3, control_records=(message,)), flushed=True)
    assert (log.start_offset, log.end_offset, log.last_epoch) == (0, 1, 3)
    [batch] = log.read(0, log.end_offset, 1 << 30)
    assert batch.is_control and batch.control_records == (message,)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(1, 3)
