"""The idempotent and transactional cases of Kafka's ``UnifiedLogTest``, in kraftsim's terms.

Kafka's UnifiedLog is kraftsim's :class:`~broker.partition_log.PartitionLog`
(its producer state and :class:`~broker.txn.log_state.TxnLogState`) read by
:func:`~broker.txn.fetch.fetch_log`. A leader's client append is
``check_batch`` then ``append_as_leader`` (a duplicate returns its original
offsets, as Kafka's appendAsLeader does); a follower's is ``append_entries``,
which validates nothing. A "reopened" log is a new log that replays the
entries (kraftsim keeps no producer snapshots). Kafka batches of several
records are kraftsim batches of as many entries; the fetch bounds are the
same (a read_committed fetch stops at the LSO, read_uncommitted at the HW).

Also ported (at the end): the leader-epoch cases (shouldApplyEpochToMessageOnAppendIfLeader,
followerShouldSaveEpochInformationFromReplicatedMessagesToTheEpochCache,
shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog), testOldProducerEpoch,
testNonSequentialAppend, testMultipleProducerIdsPerMemoryRecord, testFetchUpToHighWatermark,
testFetchUpToLogEndOffset, testAppendBelowExpectedOffsetThrowsException and
testAppendWithOutOfOrderOffsetsThrowsException. Fixed while porting (failed on the old code):
a follower append whose offsets went out of order part-way was appended up to there before
it was refused; it is now refused whole, as Kafka validates a fetched set before appending.

Transaction verification (KIP-890 part 1, at the end): testTransactionIsOngoingAndVerificationGuard
(the CLIENT origin), testEmptyTransactionStillClearsVerificationGuard,
testDisabledVerificationClearsVerificationGuard, testEnablingVerificationWhenRequestIsAtLogLayer.
The config is the caller's: ``check_batch`` takes the append's guard when verification is on
and None when it is off.

Producer-id expiration (testPeriodicProducerIdExpiration and the like) is tested with
ProducerStateManagerTest's cases (test_kafka_producer_state_cases.py) and on the cluster
with ProducerIdExpirationTest's. testActiveProducers and testEndTxnWithFencedProducerEpoch
are in test_kafka_producer_state_cases.py.

Kept difference: testTruncateToEndOffsetClearsEpochCache. Kafka's new leader enters its
epoch in the cache at the log end as the epoch begins, and a truncation at or past the log
end removes that entry again; kraftsim's log enters an epoch with its first record and the
replica counts the leader's own epoch apart (broker/replica.py, end_offset_for_epoch), so
there is no such entry to remove.

Left out, as kraftsim does not model them, with the cases:

- remote storage (tiered storage is off): testFetchOffsetByTimestampFromRemoteStorage,
  testFetchLatestTieredTimestampNoRemoteStorage,
  testFetchLatestTieredTimestampWithRemoteStorage,
  testRemoteLogStorageIsDisabledOnInternalAndRemoteLogMetadataTopic,
  testNoOpWhenRemoteLogStorageIsDisabled, testStartOffsetsRemoteLogStorageIsEnabled,
  testActiveSegmentDeletionDueToRetentionTimeBreachWithRemoteStorage,
  testSegmentDeletionEnabledBeforeUploadToRemoteTierWhenLogStartOffsetMovedAhead,
  testRetentionOnLocalLogDeletionWhenRemoteLogCopyEnabledAndDefaultLocalRetentionBytes,
  testRetentionOnLocalLogDeletionWhenRemoteLogCopyEnabledAndDefaultLocalRetentionMs,
  testRetentionOnLocalLogDeletionWhenRemoteLogCopyDisabled,
  testIncrementLocalLogStartOffsetAfterLocalLogDeletion,
  testFetchOffsetByTimestampShouldReadOnlyLocalLogWhenLogIsEmpty;
- producer snapshots and their files: testOffsetFromProducerSnapshotFile,
  testInitializationOfProducerSnapshotsUpgradePath,
  testProducerIdMapOffsetUpdatedForNonIdempotentData,
  testRebuildProducerIdMapWithCompactedData, testUpdateProducerIdMapWithCompactedData,
  testProducerIdMapTruncateTo, testProducerIdMapTruncateToWithNoSnapshots,
  testRetentionDeletesProducerStateSnapshots,
  testLogStartOffsetMovementDeletesSnapshots,
  testCompactionDeletesProducerStateSnapshots,
  testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset,
  testProducerIdMapTruncateFullyAndStartAt,
  testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint,
  testProducerSnapshotAfterSegmentRollOnAppend,
  testDeleteSnapshotsOnIncrementLogStartOffset, testOffsetSnapshot,
  testRecoveryPointNotIncrementedOnProducerStateSnapshotFlushFailure;
- segments, indexes, rolls and their deletion (a log is one sequence of entries):
  testHighWatermarkMetadataUpdatedAfterSegmentRoll, testTimeBasedLogRollDuringAppend,
  testRollSegmentThatAlreadyExists, testLogSegmentsCallCorrect,
  testProducerIdExpirationOnSegmentDeletion, testTimeBasedLogRollJitter,
  testSizeBasedLogRoll, testLogRollAfterLogHandlerClosed,
  testFlushingEmptyActiveSegments, testLogRolls,
  testThatGarbageCollectingSegmentsDoesntChangeOffset,
  testLogFlushesPartitionMetadataOnAppend, testLogFlushesPartitionMetadataOnClose,
  testBuildTimeIndexWhenNotAssigningOffsets, testIndexResizingAtTruncation,
  testTopicIdFlushesBeforeDirectoryRename, testSplitOnOffsetOverflow,
  testDegenerateSegmentSplit, testDegenerateSegmentSplitWithOutOfRangeBatchLastOffset,
  testDeleteOldSegments, shouldDeleteSizeBasedSegments,
  shouldNotDeleteSizeBasedSegmentsWhenUnderRetentionSize,
  shouldDeleteTimeBasedSegmentsReadyToBeDeleted,
  shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted,
  shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete,
  shouldDeleteSegmentsReadyToBeDeletedWhenCleanupPolicyIsCompactAndDelete,
  shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete,
  shouldTruncateLeaderEpochsWhenDeletingSegments,
  shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments,
  testLastStableOffsetDoesNotExceedLogStartOffsetMidSegment,
  testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion,
  testAppendToTransactionIndexFailure, testLoadPartitionDirWithNoSegmentsShouldNotThrow,
  testSegmentDeletionWithHighWatermarkInitialization,
  testCannotDeleteSegmentsAtOrAboveHighWatermark, testDeletableSegmentsFilter,
  testDeletableSegmentsIteration, testGetFirstBatchTimestampForSegments, testTruncateTo (its segment
  counts; truncation itself is ported with the epoch and transaction cases);
- retention, log start offsets, DeleteRecords and log deletion (logs start at 0 and keep
  every entry): testTruncateFullyAndStartBelowFirstUnstableOffset,
  testTruncateFullyAndStart, testLogReinitializeAfterManualDelete,
  testProducerExpireCheckAfterDelete, testRetentionIdempotency, testAsyncDelete,
  testAppendEmptyLogBelowLogStartOffsetThrowsException, testLogDeletionAfterClose,
  testLogDeletionAfterDeleteRecords, testCannotIncrementLogStartOffsetPastHighWatermark;
- testTransactionIsOngoingAndVerificationGuard's COORDINATOR origin (kraftsim's group
  coordinator writes are not verified);
- message formats, compression, byte sizes and record timestamps:
  testReadWithMinMessage, testReadWithTooSmallMaxLength, testCompressedMessages,
  testMessageSetSizeCheck, testMessageSizeCheck, testMessageSizeCheckInAppendAsFollower,
  testFetchOffsetByTimestampIncludesLeaderEpoch,
  testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp,
  testAppendMessageWithNullPayload, testAppendWithNoTimestamp,
  testLeaderEpochCacheClearedAfterDowngradeInAppendedMessages,
  testLeaderEpochCacheClearedAfterDynamicMessageFormatDowngrade,
  testLeaderEpochCacheCreatedAfterMessageFormatUpgrade;
- log directories, topic-id files and renames: testLoadEmptyLog, testLogRecoversTopicId,
  testNoOpWhenKeepPartitionMetadataFileIsFalse, testLogFailsWhenInconsistentTopicIdSet,
  testAppendToOrReadFromLogInFailedLogDir,
  testWriteLeaderEpochCheckpointAfterDirectoryRename,
  testTopicIdTransfersAfterDirectoryRename, testRenamingDirWithoutReinitialization;
- compaction: testRebuildProducerStateWithEmptyCompactedBatch,
  testCompactedTopicConstraints;
- log offset listeners: testLogOffsetsListener, testUpdateLogOffsetsListener;
- offsets metadata and append info (segment positions; kraftsim reads entries by
  offset): testAppendInfoFirstOffset, testAppendAndReadWithSequentialOffsets,
  testAppendAndReadWithNonSequentialOffsets, testReadAtLogGap,
  testConvertToOffsetMetadataDoesNotThrowOffsetOutOfRangeError;
- the metadata log's own appends (kraftsim's raft log is its own, tests/raft):
  testAppendAsLeaderWithRaftLeader.
"""

from __future__ import annotations

import pytest

from broker.partition_log import LogEntry, PartitionLog, SequenceError
from broker.txn.fetch import READ_COMMITTED, fetch_log
from broker.txn.log_state import AbortedTxn
from broker.txn.verification import SENTINEL, VerificationGuard


def _plain(log: PartitionLog, count: int) -> tuple[int, int]:
    return log.append_as_leader([f"p{log.end_offset + i}" for i in range(count)], 0)


class _Producer:
    """Kafka's LogTestUtils.appendTransactionalAsLeader / appendIdempotentAsLeader: each
    call appends one batch of ``count`` records at the next sequences."""

    def __init__(self, log: PartitionLog, pid: int, epoch: int = 0,
                 transactional: bool = True) -> None:
        self.log, self.pid, self.epoch, self.transactional = log, pid, epoch, transactional
        self.sequence = 0

    def __call__(self, count: int) -> tuple[int, int]:
        log = self.log
        assert log.check_batch(self.pid, self.epoch, self.sequence, count,
                               self.transactional) is None
        offsets = log.append_as_leader([f"{self.pid}-{self.sequence + i}" for i in range(count)],
                                       0, self.pid, self.epoch, self.sequence, self.transactional)
        self.sequence += count
        return offsets

    def end(self, commit: bool, coordinator_epoch: int = 0) -> int:
        """Kafka's appendEndTxnMarkerAsLeader: checked, then written."""
        self.log.check_marker(self.pid, self.epoch, coordinator_epoch)
        return self.log.append_marker(0, self.pid, self.epoch, commit, coordinator_epoch)


def _idempotent(log: PartitionLog, pid: int, epoch: int, sequence: int,
                count: int = 1) -> tuple[int, int]:
    """A client's idempotent batch at the leader: the duplicate's offsets, or the new ones."""
    duplicate = log.check_batch(pid, epoch, sequence, count)
    if duplicate is not None:
        return duplicate
    return log.append_as_leader(["v"] * count, 0, pid, epoch, sequence)


def _committed_read(log: PartitionLog, offset: int) -> list[int]:
    return [e.offset for e in fetch_log(log, offset, 1 << 20, READ_COMMITTED).entries]


def _assert_lso_bounded_fetches(log: PartitionLog) -> None:
    """Every offset below the LSO reads records, all below it; none from it to the LEO."""
    lso = log.txns.last_stable_offset(log.high_watermark)
    for offset in range(lso):
        read = _committed_read(log, offset)
        assert read and read[0] == offset and read[-1] < lso
    for offset in range(lso, log.end_offset + 1):
        assert _committed_read(log, offset) == []


def test_read_committed_fetches_stop_at_the_last_stable_offset() -> None:
    """testFetchUpToLastStableOffset."""
    log = PartitionLog()
    p1, p2 = _Producer(log, 1), _Producer(log, 2)
    p1(5)
    _plain(log, 3)
    p2(2)
    p1(4)
    _plain(log, 2)
    p1(10)
    _assert_lso_bounded_fetches(log)
    log.update_high_watermark(log.end_offset)
    assert log.txns.last_stable_offset(log.high_watermark) == 0
    _assert_lso_bounded_fetches(log)
    p1.end(commit=True)
    assert log.txns.last_stable_offset(log.high_watermark) == 0   # the marker is above the HW
    log.update_high_watermark(log.end_offset)
    assert log.txns.last_stable_offset(log.high_watermark) == 8
    _assert_lso_bounded_fetches(log)
    p2.end(commit=False)
    assert log.txns.last_stable_offset(log.high_watermark) == 8
    log.update_high_watermark(log.end_offset)
    assert log.txns.last_stable_offset(log.high_watermark) == log.end_offset == 28
    _assert_lso_bounded_fetches(log)


def test_the_first_unstable_offset_holds_until_the_marker_is_below_the_hw() -> None:
    """testFirstUnstableOffsetNoTransactionalData and
    testFirstUnstableOffsetWithTransactionalData."""
    log = PartitionLog()
    _plain(log, 3)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    producer = _Producer(log, 137, epoch=5)
    first, _ = producer(3)
    assert log.txns.first_unstable_offset(log.high_watermark) == first == 3
    producer(1)
    assert log.txns.first_unstable_offset(log.high_watermark) == 3
    marker = producer.end(commit=True)
    assert log.txns.first_unstable_offset(log.high_watermark) == 3
    log.update_high_watermark(marker)
    assert log.txns.first_unstable_offset(log.high_watermark) == 3
    log.update_high_watermark(marker + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) is None


def test_the_lso_moves_to_the_next_producers_transaction_among_plain_data() -> None:
    """testLastStableOffsetWithMixedProducerData."""
    log = PartitionLog()
    p1, p2 = _Producer(log, 137, epoch=5), _Producer(log, 983, epoch=5)
    first1, _ = p1(3)
    assert log.txns.first_unstable_offset(log.high_watermark) == first1
    _plain(log, 3)
    first2, _ = p2(3)
    assert log.txns.first_unstable_offset(log.high_watermark) == first1
    log.update_high_watermark(p1.end(commit=False) + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) == first2 == 6
    assert log.txns.last_stable_offset(log.high_watermark) == 6
    log.update_high_watermark(p2.end(commit=True) + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    assert log.txns.last_stable_offset(log.high_watermark) == log.end_offset


def _interleaved_transactions(log: PartitionLog) -> None:
    """testTransactionIndexUpdated's log: four producers, plain data between, two aborts."""
    p1, p2, p3, p4 = (_Producer(log, pid) for pid in (1, 2, 3, 4))
    p1(5)
    _plain(log, 3)
    p2(2)
    p1(4)
    p3(3)
    _plain(log, 2)
    p1(10)
    assert p1.end(commit=False) == 29
    p2(6)
    p4(3)
    _plain(log, 10)
    p3(9)
    assert p3.end(commit=True) == 58
    p4(8)
    p2(7)
    assert p2.end(commit=False) == 74
    _plain(log, 10)
    p4(4)
    assert p4.end(commit=True) == 89


@pytest.mark.parametrize("replicated", [False, True], ids=["leader", "follower"])
def test_the_abort_index_and_first_unstable_offset_of_interleaved_transactions(
        replicated: bool) -> None:
    """testTransactionIndexUpdated and testTransactionIndexUpdatedThroughReplication: a
    follower that copies the leader's log builds the same abort index, each entry with the
    LSO when its ABORT was written."""
    leader = PartitionLog()
    _interleaved_transactions(leader)
    log = leader
    if replicated:
        log = PartitionLog()
        log.append_entries(list(leader.entries))
    assert log.txns.aborted == [AbortedTxn(1, 0, 29, 8), AbortedTxn(2, 8, 74, 36)]
    log.update_high_watermark(30)
    assert log.txns.first_unstable_offset(log.high_watermark) == 8
    log.update_high_watermark(75)
    assert log.txns.first_unstable_offset(log.high_watermark) == 36
    log.update_high_watermark(log.end_offset)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    fetched = fetch_log(log, 0, 1 << 20, READ_COMMITTED)
    assert fetched.aborted_transactions == ((1, 0), (2, 8))
    assert fetch_log(log, 30, 1 << 20, READ_COMMITTED).aborted_transactions == ((2, 8),)


def test_a_reopened_log_rebuilds_a_completed_transaction() -> None:
    """testRebuildTransactionalState: an aborted transaction below the HW leaves no
    unstable offset, before and after the log is replayed."""
    log = PartitionLog()
    producer = _Producer(log, 137, epoch=5)
    producer(3)
    marker = producer.end(commit=False)
    log.update_high_watermark(marker + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    reopened = PartitionLog()
    reopened.append_entries(list(log.entries))
    reopened.update_high_watermark(marker + 1)
    assert reopened.txns.first_unstable_offset(reopened.high_watermark) is None
    assert reopened.txns.aborted == [AbortedTxn(137, 0, 3, 4)]


def test_truncating_below_the_first_unstable_offset_forgets_the_transaction() -> None:
    """testTruncateBelowFirstUnstableOffset."""
    log = PartitionLog()
    _plain(log, 3)
    _Producer(log, 17, epoch=10)(2)
    assert log.txns.first_unstable_offset(log.high_watermark) == 3
    log.truncate_to(0)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    assert not log.producers and log.txns.ongoing == {}


def test_read_committed_never_returns_a_transaction_before_its_abort() -> None:
    """testReadCommittedWithConcurrentHighWatermarkUpdates, without threads: each
    single-record transaction is read (read_committed) right after it is written, with the
    HW at the log end; nothing is returned, then it aborts."""
    log = PartitionLog()
    producer = _Producer(log, 15)
    while log.end_offset < 50:
        offset = log.end_offset
        producer(1)
        log.update_high_watermark(log.end_offset)
        assert _committed_read(log, offset) == []
        producer.end(commit=False)
        log.update_high_watermark(log.end_offset)
    assert log.txns.last_stable_offset(log.high_watermark) == 50
    assert len(log.txns.aborted) == 25


def test_a_zombie_coordinators_marker_is_fenced() -> None:
    """testZombieCoordinatorFenced."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer(10)
    producer.end(commit=False, coordinator_epoch=1)
    producer(5)
    producer.end(commit=True, coordinator_epoch=2)
    with pytest.raises(SequenceError) as fenced:
        producer.end(commit=False, coordinator_epoch=1)
    assert fenced.value.code == "TRANSACTION_COORDINATOR_FENCED"
    assert log.end_offset == 17


def test_a_zombie_coordinator_is_fenced_by_markers_of_empty_transactions() -> None:
    """testZombieCoordinatorFencedEmptyTransaction: a transaction replicated from a leader
    (coordinator epoch 0), then two markers without data at coordinator epoch 2: they raise
    the epoch the partition knows, and a marker at epoch 1 is refused."""
    source = PartitionLog()
    producer = _Producer(source, 1)
    producer(10)
    producer.end(commit=True, coordinator_epoch=0)
    log = PartitionLog()
    log.append_entries(list(source.entries))
    zombie = _Producer(log, 1)
    zombie.end(commit=False, coordinator_epoch=2)
    zombie.end(commit=False, coordinator_epoch=2)
    assert log.txns.aborted == [] and log.coordinator_epochs[1] == 2
    with pytest.raises(SequenceError) as fenced:
        zombie.end(commit=False, coordinator_epoch=1)
    assert fenced.value.code == "TRANSACTION_COORDINATOR_FENCED"


def test_duplicates_of_the_last_five_batches_return_their_offsets() -> None:
    """testDuplicateAppends."""
    log = PartitionLog()
    pid = 1
    for sequence in range(6):
        assert _idempotent(log, pid, 0, sequence) == (sequence, sequence)
    tail = _idempotent(log, pid, 0, 6, 3)
    assert tail == (6, 8)
    assert _idempotent(log, pid, 0, 6, 3) == tail            # the multi-record tail again
    assert log.end_offset == 9
    with pytest.raises(SequenceError) as partial:            # part of the tail: refused
        _idempotent(log, pid, 0, 7, 2)
    assert partial.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _idempotent(log, pid, 0, 2) == (2, 2)             # fourth from the tail
    with pytest.raises(SequenceError) as older:              # beyond the last five
        _idempotent(log, pid, 0, 1)
    assert older.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    single = _idempotent(log, pid, 0, 9)
    assert single == (9, 9) and _idempotent(log, pid, 0, 9) == single
    assert log.end_offset == 10


def test_a_follower_appends_duplicate_sequences_unchecked() -> None:
    """testDuplicateAppendToFollower and testMultipleProducersWithDuplicatesInSingleAppend:
    validation is the leader's; a follower writes what it fetched."""
    log = PartitionLog()
    for first in (0, 2):
        log.append_entries([LogEntry(first + i, 0, "ab"[i], 1, 0, 0, i, 2) for i in range(2)])
    assert log.end_offset == 4
    follower = PartitionLog()
    for offset, (pid, sequence) in enumerate([(1, 0), (2, 0), (1, 1), (2, 1), (1, 1)]):
        follower.append_entries([LogEntry(offset, 0, "v", pid, 0, sequence, sequence)])
    assert follower.end_offset == 5
    assert follower.producers[1].batches[-1].last_offset == 4


def test_high_watermark_maintenance() -> None:
    """testHighWatermarkMaintenance and testMaybeUpdateHighWatermarkAsFollower: an append
    does not move the HW, an update never moves it past the log end (nor down), and a
    truncation below it brings it down to the new log end."""
    log = PartitionLog()
    assert log.high_watermark == 0
    _plain(log, 3)
    assert log.high_watermark == 0            # an append does not move it
    log.update_high_watermark(1)
    assert log.high_watermark == 1
    log.update_high_watermark(5)
    assert log.high_watermark == 3            # not past the log end
    log.append_entries([LogEntry(3 + i, 0, "f") for i in range(3)])
    log.update_high_watermark(6)
    assert log.high_watermark == 6
    log.update_high_watermark(7)
    assert log.high_watermark == 6
    log.truncate_to(3)
    assert (log.end_offset, log.high_watermark) == (3, 3)
    _plain(log, 3)
    assert (log.end_offset, log.high_watermark) == (6, 3)

@pytest.mark.parametrize("isolation", ["read_uncommitted", READ_COMMITTED])
def test_a_read_past_the_log_end_is_out_of_range(isolation: str) -> None:
    """testReadOutOfRange (kraftsim's logs start at 0): at the log end a read is empty,
    past it (or below the start) OFFSET_OUT_OF_RANGE, whatever the isolation level bounds
    the read by."""
    log = PartitionLog()
    _plain(log, 1)
    log.update_high_watermark(1)
    at_end = fetch_log(log, 1, 1000, isolation)
    assert (at_end.error, at_end.entries) == ("NONE", ())
    for offset in (2, -1):
        beyond = fetch_log(log, offset, 1000, isolation)
        assert (beyond.error, beyond.entries) == ("OFFSET_OUT_OF_RANGE", ())
    _Producer(log, 7)(2)                       # above the HW and the LSO, below the LEO
    assert fetch_log(log, 3, 1000, isolation).error == "NONE"
    assert fetch_log(log, 4, 1000, isolation).error == "OFFSET_OUT_OF_RANGE"


def test_a_read_that_stops_before_the_abort_marker_still_names_its_transaction() -> None:
    """testAbortedTransactionSpanningMultipleSegments (a short read stands for a read that
    ends with a segment): the fetch returns only the first batch of an aborted
    transaction, and lists the transaction; so does a read from inside it."""
    log = PartitionLog()
    producer = _Producer(log, 137, epoch=5)
    producer(3)
    producer(3)
    log.update_high_watermark(producer.end(commit=False) + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    first_part = fetch_log(log, 0, 3, READ_COMMITTED)
    assert [e.offset for e in first_part.entries] == [0, 1, 2]
    assert first_part.aborted_transactions == ((137, 0),)
    assert fetch_log(log, 4, 1, READ_COMMITTED).aborted_transactions == ((137, 0),)
    assert fetch_log(log, 7, 10, READ_COMMITTED).aborted_transactions == ()


# ---------------------------------------------------------------------- epochs, plain reads


def test_a_leader_stamps_its_epoch_on_what_it_appends() -> None:
    """shouldApplyEpochToMessageOnAppendIfLeader: fifty records appended one by one by the
    leader of epoch 72 each carry epoch 72, and the epoch starts at the first of them."""
    log = PartitionLog()
    for i in range(50):
        log.append_as_leader([str(i)], 72)
    assert {e.leader_epoch for e in log.read(0, 100)} == {72}
    assert log.epoch_starts == [(72, 0)]


def test_a_follower_takes_the_epochs_of_what_it_replicates() -> None:
    """followerShouldSaveEpochInformationFromReplicatedMessagesToTheEpochCache: records
    replicated one by one from a leader of epoch 42 put epoch 42 in the follower's cache."""
    log = PartitionLog()
    for i in range(50):
        log.append_entries([LogEntry(i, 42, str(i))])
    assert log.last_epoch == 42 and log.epoch_starts == [(42, 0)]


def test_truncation_takes_the_epochs_that_start_above_it() -> None:
    """shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog: epochs 0, 1 and 2 start at
    0, 10 and 16; truncating at the log end changes nothing, at 11 drops epoch 2, at 10
    epoch 1, at 0 every epoch."""
    log = PartitionLog()
    for epoch, start, count in ((0, 0, 10), (1, 10, 6), (2, 16, 4)):
        log.append_entries([LogEntry(start + i, epoch, "value") for i in range(count)])
    assert log.end_offset == 20
    for offset, left in ((20, 3), (11, 2), (10, 1), (0, 0)):
        log.truncate_to(offset)
        assert len(log.epoch_starts) == left, offset
    assert log.end_offset == 0


def test_an_older_producer_epoch_is_refused() -> None:
    """testOldProducerEpoch: after a batch of producer 1 at epoch 1, its batch at epoch 0
    is refused INVALID_PRODUCER_EPOCH and nothing is appended."""
    log = PartitionLog()
    _idempotent(log, 1, 1, 0)
    with pytest.raises(SequenceError) as refused:
        _idempotent(log, 1, 0, 0)
    assert refused.value.code == "INVALID_PRODUCER_EPOCH" and log.end_offset == 1


def test_one_follower_append_may_hold_several_producers() -> None:
    """testMultipleProducerIdsPerMemoryRecord: one replicated append of four batches, of
    producers 1 to 4 at sequence 0, is read back batch by batch with each batch's producer,
    offset and sequence, and every producer is known."""
    log = PartitionLog()
    log.append_entries([LogEntry(i, 0, "value", i + 1, 0, 0, 0, 1) for i in range(4)])
    assert [(e.producer_id, e.offset, e.sequence) for e in log.read(0, 10)] == \
        [(1, 0, 0), (2, 1, 0), (3, 2, 0), (4, 3, 0)]
    assert sorted(log.producers) == [1, 2, 3, 4]


@pytest.mark.parametrize("high_watermark", [0, 3, 5])
def test_a_consumer_reads_up_to_the_high_watermark_only(high_watermark: int) -> None:
    """testFetchUpToHighWatermark (and testFetchUpToLogEndOffset, a follower's read): five
    records in two batches; every offset below the high watermark reads records, none from
    it to the log end; a replica's read (up to the log end) reads from every offset."""
    log = PartitionLog()
    log.append_as_leader(["0", "1", "2"], 0)
    log.append_as_leader(["3", "4"], 0)
    log.update_high_watermark(high_watermark)
    for offset in range(high_watermark):
        assert fetch_log(log, offset, 1 << 20).entries
    for offset in range(high_watermark, log.end_offset + 1):
        assert not fetch_log(log, offset, 1 << 20).entries
    for offset in range(log.end_offset):
        assert log.read(offset, 1 << 20)


@pytest.mark.parametrize("offsets", [[1], [0], [2, 3, 5, 4, 6]],
                         ids=["below-the-end", "far-below", "out-of-order"])
def test_a_follower_append_that_does_not_continue_the_log_is_refused_whole(
        offsets: list[int]) -> None:
    """testAppendBelowExpectedOffsetThrowsException and
    testAppendWithOutOfOrderOffsetsThrowsException: a replicated append whose offsets do
    not run on from the log end (below it, or out of order) is refused before any of it is
    appended (Kafka validates the whole fetched set first)."""
    log = PartitionLog()
    _plain(log, 2)
    with pytest.raises(ValueError, match="does not follow LEO"):
        log.append_entries([LogEntry(o, 0, "v", 1, 0, 0, 0) for o in offsets])
    assert log.end_offset == 2 and not log.producers


def test_a_sequence_gap_at_the_leader_is_out_of_order() -> None:
    """testNonSequentialAppend: after producer 1's sequence 0, its sequence 2 is refused
    OUT_OF_ORDER_SEQUENCE_NUMBER at the leader."""
    log = PartitionLog()
    _idempotent(log, 1, 0, 0)
    with pytest.raises(SequenceError) as refused:
        _idempotent(log, 1, 0, 2)
    assert refused.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER" and log.end_offset == 1


# ---------------------------------------------------------------- KIP-890 verification
VPID, VEPOCH = 23, 1


def _append(log: PartitionLog, sequence: int, transactional: bool,
            guard: VerificationGuard | None) -> None:
    """A client's batch of two records: checked (with the guard, None: verification off),
    then written."""
    assert log.check_batch(VPID, VEPOCH, sequence, 2, transactional, guard) is None
    log.append_as_leader(["1", "2"], 0, VPID, VEPOCH, sequence, transactional)


def test_transaction_is_ongoing_and_verification_guard() -> None:
    """testTransactionIsOngoingAndVerificationGuard: idempotent data keeps the guard; the
    verified transactional data clears it and opens the transaction, after which nothing
    needs verifying; the marker closes it, and the next transaction gets a new guard."""
    log = PartitionLog()
    assert not log.has_ongoing_transaction(VPID)
    assert log.verification_guard(VPID) is SENTINEL
    assert not log.verification_guard(VPID).verify(SENTINEL)
    guard = log.maybe_start_transaction_verification(VPID, 5, VEPOCH, 0)
    assert guard is not SENTINEL
    _append(log, 3, transactional=False, guard=SENTINEL)
    assert not log.has_ongoing_transaction(VPID) and log.verification_guard(VPID) is guard
    assert log.verification_guard(VPID).verify(guard)
    _append(log, 5, transactional=True, guard=guard)
    assert log.has_ongoing_transaction(VPID) and log.verification_guard(VPID) is SENTINEL
    assert log.maybe_start_transaction_verification(VPID, 5, VEPOCH, 0) is SENTINEL
    log.append_marker(0, VPID, VEPOCH, True, 0)
    assert not log.has_ongoing_transaction(VPID) and log.verification_guard(VPID) is SENTINEL
    new_guard = log.maybe_start_transaction_verification(VPID, 7, VEPOCH, 0)
    assert new_guard is not SENTINEL and new_guard is not guard
    assert not guard.verify(new_guard)


def test_empty_transaction_still_clears_verification_guard() -> None:
    """testEmptyTransactionStillClearsVerificationGuard: a marker with no data clears it."""
    log = PartitionLog()
    assert log.maybe_start_transaction_verification(VPID, 0, VEPOCH, 0) is not SENTINEL
    log.append_marker(0, VPID, VEPOCH, True, 0)
    assert not log.has_ongoing_transaction(VPID)
    assert log.verification_guard(VPID) is SENTINEL


def test_disabled_verification_clears_verification_guard() -> None:
    """testDisabledVerificationClearsVerificationGuard: verification turned off, the data
    is written without a guard, opens the transaction and clears the entry."""
    log = PartitionLog()
    assert log.maybe_start_transaction_verification(VPID, 0, VEPOCH, 0) is not SENTINEL
    _append(log, 0, transactional=True, guard=None)
    assert log.has_ongoing_transaction(VPID)
    assert log.verification_guard(VPID) is SENTINEL


def test_enabling_verification_when_request_is_at_log_layer() -> None:
    """testEnablingVerificationWhenRequestIsAtLogLayer: verification turned on while the
    request had none: INVALID_TXN_STATE, nothing written; verified, it is written."""
    log = PartitionLog()
    with pytest.raises(SequenceError) as refused:
        log.check_batch(VPID, VEPOCH, 4, 2, True, SENTINEL)
    assert refused.value.code == "INVALID_TXN_STATE"
    assert not log.has_ongoing_transaction(VPID) and log.verification_guard(VPID) is SENTINEL
    guard = log.maybe_start_transaction_verification(VPID, 4, VEPOCH, 0)
    assert guard is not SENTINEL
    _append(log, 4, transactional=True, guard=guard)
    assert log.has_ongoing_transaction(VPID) and log.verification_guard(VPID) is SENTINEL


def test_a_batch_of_the_next_epoch_is_verified_while_the_last_marker_is_on_its_way() -> None:
    """kraftsim's own, KIP-890 part 2 (Kafka's hasOngoingTransaction with the producer
    epoch): under TV2 each transaction has its own epoch, so the next transaction's batch
    (epoch + 1) does not join the open transaction of the last epoch whose marker has not
    landed: it must be verified (added) first."""
    log = PartitionLog()
    guard = log.maybe_start_transaction_verification(VPID, 0, VEPOCH, 0)
    _append(log, 0, transactional=True, guard=guard)
    assert log.has_ongoing_transaction(VPID, VEPOCH)
    assert log.maybe_start_transaction_verification(VPID, 2, VEPOCH, 0) is SENTINEL
    assert not log.has_ongoing_transaction(VPID, VEPOCH + 1)
    assert log.maybe_start_transaction_verification(VPID, 0, VEPOCH + 1, 0) is not SENTINEL
    with pytest.raises(SequenceError) as refused:
        log.check_batch(VPID, VEPOCH + 1, 0, 1, True, SENTINEL)
    assert refused.value.code == "INVALID_TXN_STATE"
