"""Cases of Kafka's LeaderEpochFileCacheTest, in kraftsim's terms.

Kafka class followed: ``LeaderEpochFileCacheTest``
(``core/src/test/scala/unit/kafka/server/epoch``; the cache itself is
``storage/.../internals/epoch/LeaderEpochFileCache.java``). kraftsim has no
separate cache object: a data partition's :class:`~broker.partition_log.PartitionLog`
keeps ``epoch_starts`` (epoch, first offset) as entries are appended and
answers ``end_offset_for_epoch``; the metadata log's :class:`~raft.log.RaftLog`
keeps its own and drops the epochs below a snapshot (Kafka's
truncateFromStart). So Kafka's ``assign(epoch, offset)`` is an append of a
record of that leader epoch at that offset, ``truncateFromEnd`` is
``truncate_to`` and ``truncateFromStart`` is ``RaftLog.set_snapshot``. kraftsim
logs start at offset 0, so Kafka's offsets are shifted where its cache starts
later.

Not ported, with the reason:

- shouldEnforceMonotonicallyIncreasingEpochs, shouldEnforceOffsetsIncreaseMonotonically,
  shouldEnforceMonotonicallyIncreasingStartOffsets,
  shouldTruncateIfMatchingEpochButEarlierStartingOffset:
  the cache is derived from the records, one epoch per record in offset order,
  and a leader writes an epoch above every earlier one (a follower copies the
  leader after truncating), so an assignment that goes back in epoch or offset
  cannot happen.
- truncateFromStart on a data partition (shouldPreserveResetOffsetOnClearEarliestIfOneExists
  and the rest of the ``ClearEarliest`` cases, shouldNotClearAnythingIfOffsetToEarly,
  shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2 and
  shouldClearEarliestOnEmptyCache among them): data partition logs keep every
  record from offset 0 (no retention or DeleteRecords); the cases are ported on
  the metadata log's snapshot instead.
- shouldNotResetEpochHistoryHeadIfUndefinedPassed: no truncation from the start
  on a data partition (above); on the metadata log a snapshot cannot end at -1.
- testPreviousEpoch, testFindPreviousEpoch, testFindPreviousEntry, testFindNextEpoch,
  testGetEpochEntry: no such lookups (only the tiered-storage and fetch paths
  kraftsim does not model use them); their truncation parts are ported.
- shouldPersistEpochsBetweenInstances, shouldWriteCheckpointOnTruncation: a
  broker's logs survive a restart as objects (broker/log_dir.py); the
  ``leader-epoch-checkpoint`` text is checked here as written from a log's epochs.

Kept difference: an epoch above the latest one the log holds gives (latest epoch,
log end offset), where Kafka's cache answers UNDEFINED (-1, -1)
(shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked). Kafka's
leader puts its own epoch in the cache when it becomes leader; kraftsim's
enters it with its first record (docs/architecture.md), and the two give a
follower the same answer.
"""

from __future__ import annotations

import pytest

from broker.partition_log import LogEntry, PartitionLog
from kafka_format.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    decode_checkpoint,
    encode_checkpoint,
)
from raft import Batch, OffsetAndEpoch, RaftLog, Snapshot, SnapshotId

UNDEFINED = (-1, -1)
"""(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)."""


def _log(*runs: tuple[int, int]) -> PartitionLog:
    """A leader's log: ``(leader epoch, records)`` runs, one record per append."""
    log = PartitionLog()
    for epoch, count in runs:
        for _ in range(count):
            log.append_as_leader([f"v{log.end_offset}"], epoch)
    return log


def _raft(*runs: tuple[int, int]) -> RaftLog:
    log = RaftLog()
    for epoch, count in runs:
        for _ in range(count):
            log.append(Batch(log.end_offset, epoch, ("r",)), flushed=True)
    return log


# ------------------------------------------------------------------ endOffsetFor
def test_an_epochs_first_offset_is_kept_and_the_latest_ends_at_the_log_end() -> None:
    """shouldAddEpochAndMessageOffsetToCache, shouldSupportEpochsThatDoNotStartFromZero."""
    log = _log((2, 1))
    assert list(log.epoch_starts) == [(2, 0)] and log.last_epoch == 2
    assert log.end_offset_for_epoch(2) == (2, 1)


def test_the_latest_epoch_ends_at_the_log_end_offset() -> None:
    """shouldReturnLogEndOffsetIfLatestEpochRequested."""
    log = _log((1, 3), (2, 3))
    assert log.end_offset_for_epoch(2) == (2, 6)


def test_later_records_of_an_epoch_do_not_move_its_start() -> None:
    """shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned,
    shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned,
    shouldNotUpdateEpochAndStartOffsetIfItDidNotChange."""
    log = _log((2, 1))
    log.append_as_leader(["later"], 2)
    log.append_entries([LogEntry(2, 2, "fetched")])
    assert list(log.epoch_starts) == [(2, 0)]


@pytest.mark.parametrize("log", [_log((2, 1), (3, 1)), _log()], ids=["epochs", "empty"])
def test_the_undefined_epoch_has_no_end_offset(log: PartitionLog) -> None:
    """shouldReturnUndefinedOffsetIfUndefinedEpochRequested,
    shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested."""
    assert log.end_offset_for_epoch(-1) == UNDEFINED


@pytest.mark.parametrize("epoch", [0, 7])
def test_an_empty_log_knows_no_epoch(epoch: int) -> None:
    """shouldReturnUnsupportedIfNoEpochRecorded, shouldFetchEndOffsetOfEmptyCache,
    shouldFetchLatestEpochOfEmptyCache."""
    log = _log()
    assert log.end_offset_for_epoch(epoch) == UNDEFINED and log.last_epoch == -1


def test_an_epoch_below_the_first_ends_where_the_first_starts() -> None:
    """shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch: the requested epoch with
    the first known epoch's start offset."""
    assert _log((5, 1), (6, 1), (7, 1)).end_offset_for_epoch(4) == (4, 0)


def test_an_epoch_ends_where_the_next_one_starts() -> None:
    """shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch."""
    assert _log((1, 2), (2, 2), (3, 2)).end_offset_for_epoch(2) == (2, 4)


def test_an_epoch_not_led_here_gives_the_largest_one_below_it() -> None:
    """shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested."""
    log = _log((0, 3), (2, 4), (4, 1))
    assert log.end_offset_for_epoch(1) == (0, 3)
    assert log.end_offset_for_epoch(2) == (2, 7)
    assert log.end_offset_for_epoch(3) == (2, 7)


def test_an_epoch_above_the_latest_gives_the_latest_and_the_log_end() -> None:
    """shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked: a kept
    difference (see the module docs); Kafka's cache answers UNDEFINED."""
    assert _log((2, 3)).end_offset_for_epoch(3) == (2, 3)


def test_epochs_as_leaders_change_many_times() -> None:
    """shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes: epoch 0 wrote nothing, so its
    end is where epoch 1 starts."""
    log = _log((1, 5))
    assert log.last_epoch == 1
    assert log.end_offset_for_epoch(1) == (1, 5)
    assert log.end_offset_for_epoch(0) == (0, 0)
    for _ in range(5):
        log.append_as_leader(["x"], 2)
    assert log.end_offset_for_epoch(2) == (2, 10)
    assert log.end_offset_for_epoch(1) == (1, 5)
    assert log.end_offset_for_epoch(0) == (0, 0)


def test_epochs_as_a_follower_receives_many_messages() -> None:
    """shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages."""
    log = PartitionLog()
    for offset, epoch in enumerate([0, 0, 0, 1, 1, 1, 2, 2, 2]):
        log.append_entries([LogEntry(offset, epoch, "v")])
        assert log.last_epoch == epoch
        assert log.end_offset_for_epoch(epoch) == (epoch, offset + 1)
    assert log.end_offset_for_epoch(0) == (0, 3)
    assert log.end_offset_for_epoch(1) == (1, 6)


# ------------------------------------------------------------------ truncateFromEnd
def _three_epochs() -> PartitionLog:
    """Kafka's (2, 6), (3, 8), (4, 11), shifted to start at 0: (2, 0), (3, 2), (4, 5)."""
    return _log((2, 2), (3, 3), (4, 2))


def test_truncating_on_an_epoch_boundary_drops_that_epoch_and_later_ones() -> None:
    """shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries."""
    log = _three_epochs()
    log.truncate_to(2)
    assert list(log.epoch_starts) == [(2, 0)] and log.last_epoch == 2


def test_truncating_inside_an_epoch_keeps_it() -> None:
    """shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest (and testPreviousEpoch's
    truncation)."""
    log = _three_epochs()
    log.truncate_to(3)
    assert list(log.epoch_starts) == [(2, 0), (3, 2)] and log.last_epoch == 3
    assert log.end_offset_for_epoch(3) == (3, 3)
    assert log.end_offset_for_epoch(4) == (3, 3)


def test_truncating_everything_clears_the_epochs() -> None:
    """shouldClearAllEntries."""
    log = _three_epochs()
    log.truncate_to(0)
    assert list(log.epoch_starts) == [] and log.end_offset_for_epoch(2) == UNDEFINED


@pytest.mark.parametrize("hw", [0, 3])
def test_truncating_to_the_undefined_offset_changes_nothing(hw: int) -> None:
    """shouldNotResetEpochHistoryTailIfUndefinedPassed: the log refuses a negative offset
    (as Kafka's UnifiedLog.truncateTo) and keeps its records and epochs."""
    log = _three_epochs()
    log.update_high_watermark(hw)
    with pytest.raises(ValueError, match="negative"):
        log.truncate_to(-1)
    assert list(log.epoch_starts) == [(2, 0), (3, 2), (4, 5)] and log.end_offset == 7


def test_truncating_an_empty_log_is_harmless() -> None:
    """shouldClearLatestOnEmptyCache."""
    log = _log()
    log.truncate_to(7)
    assert list(log.epoch_starts) == [] and log.end_offset == 0


def test_the_epochs_write_kafkas_leader_epoch_checkpoint() -> None:
    """shouldPersistEpochsBetweenInstances / shouldWriteCheckpointOnTruncation: the epochs
    left after a truncation, as a ``leader-epoch-checkpoint``, read back the same."""
    log = _three_epochs()
    log.truncate_to(5)
    text = encode_checkpoint([EpochEntry(e, s) for e, s in log.epoch_starts])
    assert text == "0\n2\n2 0\n3 2\n"
    read = decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT)
    assert read.error is None and read.entries == (EpochEntry(2, 0), EpochEntry(3, 2))


# ------------------------------------------------------------------ the metadata log
def _raft_three_epochs() -> RaftLog:
    """Kafka's (2, 6), (3, 8), (4, 11) after six records of epoch 1; log end 15."""
    return _raft((1, 6), (2, 2), (3, 3), (4, 4))


def test_the_metadata_log_answers_as_kafkas_cache() -> None:
    """endOffsetFor on the metadata log: between epochs, the latest, and below the first
    (no snapshot): the requested epoch where the first one starts."""
    log = _raft((5, 1), (6, 1), (7, 1))
    assert log.end_offset_for_epoch(6) == OffsetAndEpoch(2, 6)
    assert log.end_offset_for_epoch(7) == OffsetAndEpoch(3, 7)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(0, 4)


def test_the_metadata_log_gives_the_epoch_of_an_offset() -> None:
    """shouldFetchEpochForGivenOffset."""
    log = _raft((0, 10), (1, 10), (5, 10))
    assert [log.epoch_at(o) for o in (25, 20, 19, 10, 5)] == [5, 5, 1, 1, 0]


@pytest.mark.parametrize(("end", "snapshot_epoch", "first_epoch"),
                         [(6, 1, 2), (8, 2, 3), (9, 3, 3), (11, 3, 4)])
def test_a_snapshot_truncates_the_epochs_from_the_start(end: int, snapshot_epoch: int,
                                                        first_epoch: int) -> None:
    """shouldNotClearAnythingIfOffsetToFirstOffset (6),
    shouldPreserveResetOffsetOnClearEarliestIfOneExists (8),
    shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs and
    shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest (9),
    shouldRetainLatestEpochOnClearAllEarliest (11): the epoch of the first record kept
    starts at the snapshot's end, the later ones stay as they were, and an epoch below
    the snapshot's answers the snapshot (Kafka's KafkaMetadataLog)."""
    log = _raft_three_epochs()
    log.set_snapshot(Snapshot(SnapshotId(end, snapshot_epoch), ()))
    assert log.start_offset == end and log.epoch_at(end) == first_epoch
    ends = {2: 8, 3: 11, 4: 15}
    for epoch in range(first_epoch, 5):
        assert log.end_offset_for_epoch(epoch) == OffsetAndEpoch(ends[epoch], epoch)
    assert log.end_offset_for_epoch(snapshot_epoch - 1) == OffsetAndEpoch(end, snapshot_epoch)


def test_a_snapshot_at_the_log_end_keeps_only_its_epoch() -> None:
    """shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset: past every record the
    last epoch goes on from the snapshot's end."""
    log = _raft_three_epochs()
    log.set_snapshot(Snapshot(SnapshotId(15, 4), ()))
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(15, 4)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(15, 4)
    log.append(Batch(15, 4, ("r",)), flushed=True)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(16, 4)
