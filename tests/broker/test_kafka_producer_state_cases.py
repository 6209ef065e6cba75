"""Cases of Kafka's ProducerStateManagerTest not ported before, in kraftsim's terms.

Kafka class followed: ``ProducerStateManagerTest``
(``storage/src/test/java/org/apache/kafka/storage/internals/log``). Kafka's
producer state lives in :class:`~broker.partition_log.PartitionLog` (sequences,
epochs, coordinator epochs) and :class:`~broker.txn.log_state.TxnLogState`
(ongoing and unreplicated transactions, the abort index). A leader's client
append is ``check_batch`` then ``append_as_leader``; a follower's (replication)
append is ``append_entries``, which checks nothing. Kafka's offsets are placed
with plain filler records, as kraftsim's logs start at offset 0.

Producer-id expiration (testPidExpirationTimeout,
testProducersWithOngoingTransactionsDontExpire, testRemoveExpiredPidsOnReload,
testAcceptAppendWithoutProducerStateOnReplica) is ``remove_expired_producers``, with
a batch's time given to ``append_as_leader`` (Kafka's producer.id.expiration.ms is its
argument); Kafka's reload from a snapshot is a truncation, which rebuilds the state and
applies the last expiration again.

Ported here too: testBasicIdMapping (test_basic_id_mapping).

Left out, as kraftsim does not model them:

- producer snapshots and their files (a replica rebuilds its state by replaying its log
  instead; ``dump-log`` only reads Kafka's ``.snapshot`` files): testTakeSnapshot,
  testFetchSnapshotEmptySnapShot, testRecoverFromSnapshotFinishedTransaction,
  testRecoverFromSnapshotEmptyTransaction, testDeleteSnapshotsBefore, testReloadSnapshots,
  testLoadFromSnapshotRetainsNonExpiredProducers, testSkipSnapshotIfOffsetUnchanged,
  testLoadFromEmptySnapshotFile, testLoadFromTruncatedSnapshotFile,
  testLoadFromCorruptSnapshotFile, testRemoveStraySnapshotsKeepCleanShutdownSnapshot,
  testRemoveAllStraySnapshots, testRemoveAndMarkSnapshotForDeletion,
  testRemoveAndMarkSnapshotForDeletionAlreadyDeleted, testReadWriteSnapshot,
  testTruncateAndReloadRemovesOutOfRangeSnapshots;
- late-transaction detection (``transaction.max.timeout.ms`` on the partition):
  testHasLateTransaction, testHasLateTransactionInitializedAfterReload,
  testHasLateTransactionUpdatedAfterPartialTruncation,
  testHasLateTransactionUpdatedAfterFullTruncation;
- log start offsets: testTruncateFullyAndStartAt; segment positions in offset metadata:
  testTxnFirstOffsetMetadataCached;
- empty control batches left by compaction: testAppendEmptyControlBatch.

The partition leader's transaction verification (KIP-890 part 1): the verification
states are the log's (``maybe_start_transaction_verification``, ``verifying``):
testEntryForVerification, testSequenceAndEpochInVerificationEntry,
testThrowOutOfOrderSequenceWithVerificationSequenceCheck (both parameters: the sequence
check holds with verification on or off, ``check_batch`` without a guard),
testVerificationStateEntryExpiration.
"""

from __future__ import annotations

import pytest

from broker.partition_log import LogEntry, PartitionLog, SequenceError
from broker.txn.log_state import AbortedTxn
from broker.txn.verification import SENTINEL, VerificationStateEntry

PID = 1
INT_MAX = 2**31 - 1


def _client(log: PartitionLog, epoch: int, first_sequence: int, count: int = 1,
            transactional: bool = False, pid: int = PID) -> tuple[int, int]:
    """A client batch at the leader: checked, then appended (or its duplicate's offsets)."""
    duplicate = log.check_batch(pid, epoch, first_sequence, count, transactional)
    if duplicate is not None:
        return duplicate
    return log.append_as_leader([f"v{log.end_offset + i}" for i in range(count)], 1, pid,
                                epoch, first_sequence, transactional)


def _refused(log: PartitionLog, epoch: int, first_sequence: int,
             transactional: bool = False) -> str:
    with pytest.raises(SequenceError) as refused:
        _client(log, epoch, first_sequence, transactional=transactional)
    return refused.value.code


def _replicate(log: PartitionLog, epoch: int, first_sequence: int, count: int = 1,
               pid: int = PID) -> None:
    """A follower's copy of a batch: sequences wrap as the leader wrote them."""
    start = log.end_offset
    log.append_entries([LogEntry(start + i, 1, "r", pid, epoch, first_sequence,
                                 (first_sequence + i) % (INT_MAX + 1), count)
                        for i in range(count)])


def _pad(log: PartitionLog, to_offset: int) -> None:
    while log.end_offset < to_offset:
        log.append_as_leader(["plain"], 1)


def _txn_data(log: PartitionLog, pid: int, offset: int, epoch: int = 5) -> None:
    _pad(log, offset)
    log.append_as_leader(["t"], 1, pid, epoch, -1, transactional=True)


def _marker(log: PartitionLog, pid: int, offset: int, commit: bool, epoch: int = 5,
            coordinator_epoch: int = 0) -> None:
    _pad(log, offset)
    log.check_marker(pid, epoch, coordinator_epoch)
    log.append_marker(1, pid, epoch, commit, coordinator_epoch)


def test_a_marker_without_producer_state_still_fences_and_resets_the_sequence() -> None:
    """testAppendTxnMarkerWithNoProducerState."""
    log = PartitionLog()
    _marker(log, PID, 27, True, epoch=2)
    assert (log.producers[PID].epoch, log.producers[PID].batches) == (2, [])
    assert _refused(log, 0, 0) == "INVALID_PRODUCER_EPOCH"
    assert _refused(log, 2, 17) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    _client(log, 2, 0)
    assert log.producers[PID].batches[-1].last_sequence == 0


def test_the_sequence_after_int_max_is_zero() -> None:
    """testProducerSequenceWrapAround and testProducerSequenceInvalidWrapAround."""
    log = PartitionLog()
    _pad(log, 735)
    _replicate(log, 15, INT_MAX)
    assert _refused(log, 15, 1) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    first, _ = _client(log, 15, 0)
    assert first == 736
    batch = log.producers[PID].batches[-1]
    assert (log.producers[PID].epoch, batch.first_sequence, batch.last_sequence) == (15, 0, 0)
    assert _client(log, 15, 0) == (736, 736)  # the retry is a duplicate


def test_a_batch_whose_sequences_wrap() -> None:
    """testProducerSequenceWithWrapAroundBatchRecord: a follower takes a batch from
    INT_MAX - 10 to 9; the leader then expects 10 and knows the batch as a duplicate."""
    log = PartitionLog()
    _pad(log, 2000)
    _replicate(log, 15, INT_MAX - 10, 21)
    batch = log.producers[PID].batches[-1]
    assert (batch.first_sequence, batch.last_sequence, batch.first_offset,
            batch.last_offset) == (INT_MAX - 10, 9, 2000, 2020)
    assert log.check_batch(PID, 15, INT_MAX - 10, 21) == (2000, 2020)
    first, last = _client(log, 15, 10, 3)
    assert (first, last) == (2021, 2023)
    leader_copy = PartitionLog()
    leader_copy.append_as_leader(["x"] * 21, 1, PID, 15, INT_MAX - 10)
    assert [e.sequence for e in leader_copy.entries[9:13]] == [INT_MAX - 1, INT_MAX, 0, 1]
    assert leader_copy.producers[PID].batches[-1].last_sequence == 9


def test_a_follower_takes_any_first_sequence_and_sequence_gaps() -> None:
    """testNoValidationOnFirstEntryWhenLoadingLog, testAcceptAppendWithoutProducerStateOnReplica
    and testAcceptAppendWithSequenceGapsOnReplica."""
    log = PartitionLog()
    _pad(log, 735)
    _replicate(log, 5, 16)
    batch = log.producers[PID].batches[-1]
    assert (log.producers[PID].epoch, batch.first_sequence, batch.last_sequence,
            batch.first_offset, batch.last_offset) == (5, 16, 16, 735, 735)
    log = PartitionLog()
    _client(log, 0, 0)
    assert _refused(log, 0, 3) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.producers[PID].batches[-1].last_sequence == 0
    _replicate(log, 0, 3)
    assert log.producers[PID].batches[-1].last_sequence == 3


def test_an_abort_marker_at_a_bumped_epoch_closes_the_transaction() -> None:
    """testControlRecordBumpsProducerEpoch and testProducerStateAfterFencingAbortMarker."""
    log = PartitionLog()
    _client(log, 0, 0, transactional=True)
    assert log.txns.ongoing == {PID: 0}
    _marker(log, PID, 1, False, epoch=1)
    assert log.txns.ongoing == {}
    assert (log.producers[PID].epoch, log.producers[PID].batches) == (1, [])
    _client(log, 1, 0)
    assert log.producers[PID].batches[-1].first_sequence == 0


def test_after_a_marker_bumps_the_epoch_the_sequence_restarts_at_zero() -> None:
    """testOutOfSequenceAfterControlRecordEpochBump."""
    log = PartitionLog()
    _client(log, 0, 0, transactional=True)
    _client(log, 0, 1, transactional=True)
    _marker(log, PID, 2, False, epoch=1)
    assert _refused(log, 1, 2, transactional=True) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _refused(log, 2, 2, transactional=True) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    _client(log, 1, 0, transactional=True)
    assert (log.producers[PID].epoch, log.producers[PID].batches[-1].last_sequence) == (1, 0)


def test_a_plain_write_inside_the_producers_open_transaction_is_refused() -> None:
    """testNonTransactionalAppendWithOngoingTransaction."""
    log = PartitionLog()
    _client(log, 0, 0, transactional=True)
    assert _refused(log, 0, 1) == "INVALID_TXN_STATE"
    with pytest.raises(SequenceError) as refused:
        log.check_batch(PID, 0, -1, 1)  # a record without sequence (an offset commit)
    assert refused.value.code == "INVALID_TXN_STATE"
    assert log.end_offset == 1
    _client(log, 0, 1, transactional=True)     # the transaction goes on
    _client(log, 0, 0, pid=PID + 1)            # another producer is not concerned


def test_first_unstable_offset_after_truncation() -> None:
    """testFirstUnstableOffsetAfterTruncation: a truncation that keeps the marker keeps the
    transaction complete; one below it (and below the HW, which comes down with it)
    opens the transaction again."""
    log = PartitionLog()
    _txn_data(log, PID, 99)
    assert log.txns.first_unstable_offset(log.high_watermark) == 99
    _marker(log, PID, 105, True)
    log.update_high_watermark(106)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    _client(log, 5, 0)
    log.truncate_to(106)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    log.truncate_to(100)
    assert log.high_watermark == 100
    assert log.txns.first_unstable_offset(log.high_watermark) == 99


def test_first_unstable_offset() -> None:
    """testFirstUnstableOffset: a completed transaction stays unstable until its marker is
    below the HW."""
    log = PartitionLog()
    assert log.txns.first_unstable_offset(0) is None
    _txn_data(log, PID, 99)
    assert log.txns.first_unstable_offset(0) == 99
    _txn_data(log, 2, 105)
    assert log.txns.first_unstable_offset(0) == 99
    _marker(log, PID, 109, True)
    assert min(log.txns.ongoing.values()) == 105
    assert log.txns.first_unstable_offset(0) == 99
    log.update_high_watermark(100)
    assert log.txns.first_unstable_offset(log.high_watermark) == 99
    log.update_high_watermark(110)
    assert log.txns.first_unstable_offset(log.high_watermark) == 105
    _marker(log, 2, 112, False)
    assert log.txns.ongoing == {}
    assert log.txns.first_unstable_offset(log.high_watermark) == 105
    log.update_high_watermark(113)
    assert log.txns.first_unstable_offset(log.high_watermark) is None


def test_coordinator_epochs_of_markers() -> None:
    """testCoordinatorFencing and testCoordinatorFencedAfterReload."""
    log = PartitionLog()
    _txn_data(log, PID, 99)
    _marker(log, PID, 100, True, coordinator_epoch=1)
    assert log.coordinator_epochs[PID] == 1
    _marker(log, PID, 101, True, coordinator_epoch=1)   # the same coordinator epoch
    _marker(log, PID, 102, True, coordinator_epoch=2)   # a newer one
    with pytest.raises(SequenceError) as refused:
        log.check_marker(PID, 5, 1)
    assert refused.value.code == "TRANSACTION_COORDINATOR_FENCED"
    reloaded = PartitionLog()
    reloaded.append_entries(list(log.entries))
    with pytest.raises(SequenceError) as refused:
        reloaded.check_marker(PID, 5, 1)
    assert refused.value.code == "TRANSACTION_COORDINATOR_FENCED"


def test_the_abort_index_lso_is_the_next_open_transaction_of_another_producer() -> None:
    """testLastStableOffsetCompletedTxn (with aborts, whose index entries carry it)."""
    log = PartitionLog()
    start1, start2, start3 = 2342, 2342 + 25, 2342 + 57
    for pid, start in ((1, start1), (2, start2), (3, start3)):
        _txn_data(log, pid, start)
    last1 = start3 + 15
    _marker(log, 1, last1, False)
    log.update_high_watermark(last1 + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) == start2
    last3 = last1 + 20
    _marker(log, 3, last3, False)
    log.update_high_watermark(last3 + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) == start2
    last2 = last3 + 78
    _marker(log, 2, last2, False)
    log.update_high_watermark(last2 + 1)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    assert log.txns.aborted == [AbortedTxn(1, start1, last1, start2),
                                AbortedTxn(3, start3, last3, start2),
                                AbortedTxn(2, start2, last2, last2 + 1)]


def test_markers_of_empty_transactions_complete_nothing() -> None:
    """testSkipEmptyTransactions."""
    log = PartitionLog()
    for offset in range(16, 21):
        _txn_data(log, PID, offset)
    log.update_high_watermark(21)
    assert log.txns.first_unstable_offset(log.high_watermark) == 16
    _marker(log, PID, 21, True)
    _marker(log, PID, 22, True)       # empty
    _marker(log, PID, 23, False)      # empty
    for offset in range(24, 28):
        _txn_data(log, PID, offset)
    _marker(log, PID, 28, False)
    _marker(log, PID, 29, False)      # empty
    _txn_data(log, PID, 30)
    _txn_data(log, PID, 31)
    assert log.txns.aborted == [AbortedTxn(PID, 24, 28, 29)]
    log.update_high_watermark(32)
    assert log.txns.first_unstable_offset(log.high_watermark) == 30


def test_a_producer_without_state_may_start_at_any_sequence() -> None:
    """testRemoveExpiredPidsOnReload and UnifiedLogTest's
    testAllowNonZeroSequenceOnFirstAppendNonZeroEpoch: a leader with no state of the
    producer (here: a log that never saw it) takes whatever sequence comes, and checks the
    next batch against it."""
    log = PartitionLog()
    assert _client(log, 0, 2) == (0, 0)
    batch = log.producers[PID].batches[-1]
    assert (log.producers[PID].epoch, batch.first_sequence, batch.last_sequence) == (0, 2, 2)
    assert _refused(log, 0, 5) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _client(log, 0, 3) == (1, 1)
    assert _client(log, 1, 3, 2, transactional=True, pid=PID + 1) == (2, 3)
    assert log.txns.ongoing == {PID + 1: 2}


def test_a_marker_of_an_older_producer_epoch_is_refused() -> None:
    """testOldEpochForControlRecord and UnifiedLogTest's testEndTxnWithFencedProducerEpoch:
    nothing is written and the transaction stays open."""
    log = PartitionLog()
    _txn_data(log, PID, 99, epoch=5)
    with pytest.raises(SequenceError) as refused:
        log.check_marker(PID, 3, 0)
    assert refused.value.code == "INVALID_PRODUCER_EPOCH"
    assert log.txns.ongoing == {PID: 99} and log.end_offset == 100
    empty = PartitionLog()
    _marker(empty, PID, 0, False, epoch=5, coordinator_epoch=1)  # a marker without data
    with pytest.raises(SequenceError) as refused:
        empty.check_marker(PID, 4, 1)
    assert refused.value.code == "INVALID_PRODUCER_EPOCH"


def test_a_marker_keeps_the_producers_batches_and_records_the_coordinator_epoch() -> None:
    """updateProducerTransactionState and UnifiedLogTest's testActiveProducers: a marker at
    the producer's epoch closes the transaction, keeps the last sequence (the next batch
    follows it, a retried batch is still a duplicate) and records the coordinator epoch."""
    log = PartitionLog()
    _client(log, 5, 0, 5, transactional=True)
    assert (log.producers[PID].batches[-1].last_sequence, log.txns.ongoing) == (4, {PID: 0})
    assert PID not in log.coordinator_epochs
    _marker(log, PID, 5, True, epoch=5, coordinator_epoch=15)
    assert log.producers[PID].epoch == 5 and log.txns.ongoing == {}
    assert log.producers[PID].batches[-1].last_sequence == 4
    assert log.coordinator_epochs[PID] == 15
    assert _client(log, 5, 0, 5, transactional=True) == (0, 4)  # a retry: a duplicate
    assert log.txns.ongoing == {}
    assert _client(log, 5, 5, transactional=True) == (6, 6)
    assert log.txns.ongoing == {PID: 6}
    idempotent = PID + 1
    _client(log, 5, 0, 3, pid=idempotent)
    assert log.producers[idempotent].batches[-1].last_sequence == 2
    assert idempotent not in log.txns.ongoing and idempotent not in log.coordinator_epochs


@pytest.mark.parametrize(("epoch", "first_sequence", "transactional", "code"), [
    (0, 9, False, "OUT_OF_ORDER_SEQUENCE_NUMBER"),
    (0, 3, False, "OUT_OF_ORDER_SEQUENCE_NUMBER"),   # overlaps the last batch
    (1, 4, True, "OUT_OF_ORDER_SEQUENCE_NUMBER"),    # a new epoch not at sequence 0
    (-1, 6, True, "INVALID_PRODUCER_EPOCH"),
])
def test_a_refused_batch_changes_no_producer_state(epoch: int, first_sequence: int,
                                                    transactional: bool, code: str) -> None:
    """testPrepareUpdateDoesNotMutate: the state changes only once a batch is written."""
    log = PartitionLog()
    _client(log, 0, 0, 6)
    before = (log.producers[PID].epoch, list(log.producers[PID].batches))
    assert _refused(log, epoch, first_sequence, transactional) == code
    assert (log.producers[PID].epoch, list(log.producers[PID].batches)) == before
    assert log.txns.ongoing == {} and log.end_offset == 6
    assert _client(log, 0, 6) == (6, 6)


def test_a_replica_that_reloads_its_log_keeps_open_closed_and_empty_transactions() -> None:
    """testRecoverFromSnapshotUnfinishedTransaction, ...FinishedTransaction and
    ...EmptyTransaction. kraftsim has no producer snapshots: a replica rebuilds its producer
    state by replaying the entries it holds (as Kafka does from the log after a snapshot)."""
    def reloaded(log: PartitionLog) -> PartitionLog:
        again = PartitionLog()
        again.append_entries(list(log.entries))
        return again

    unfinished = PartitionLog()
    _client(unfinished, 0, 0, transactional=True)
    _client(unfinished, 0, 1, transactional=True)
    again = reloaded(unfinished)
    assert again.txns.ongoing == {PID: 0}
    assert again.producers[PID].batches[-1] == unfinished.producers[PID].batches[-1]
    assert _client(again, 0, 2, transactional=True) == (2, 2)
    assert again.txns.first_unstable_offset(again.high_watermark) == 0

    finished = PartitionLog()
    _client(finished, 0, 0, transactional=True)
    _client(finished, 0, 1, transactional=True)
    _marker(finished, PID, 2, False, epoch=0)
    again = reloaded(finished)
    assert again.txns.ongoing == {} and again.txns.aborted == [AbortedTxn(PID, 0, 2, 3)]
    assert again.producers[PID].batches[-1].last_sequence == 1

    empty = PartitionLog()
    _marker(empty, PID, 0, False, epoch=0)
    again = reloaded(empty)
    assert again.txns.ongoing == {} and again.txns.aborted == []
    assert (again.producers[PID].epoch, again.producers[PID].batches) == (0, [])


def test_offset_commits_of_a_transaction_carry_no_sequence() -> None:
    """testSequenceNotValidatedForGroupMetadataTopic: the group coordinator's transactional
    writes have no sequence (NO_SEQUENCE); one after another they are all taken, the first
    opens the transaction, and only the epoch is checked."""
    log = PartitionLog()
    _pad(log, 99)
    for _ in range(2):
        assert log.check_batch(PID, 5, -1, 1, transactional=True) is None
        log.append_as_leader(["offsets"], 1, PID, 5, -1, transactional=True)
    assert log.txns.ongoing == {PID: 99} and log.end_offset == 101
    with pytest.raises(SequenceError) as fenced:
        log.check_batch(PID, 4, -1, 1, transactional=True)
    assert fenced.value.code == "INVALID_PRODUCER_EPOCH"


EXPIRATION_MS = 86_400_000
"""producer.id.expiration.ms, Kafka's default (as the test's config)."""


def _timed(log: PartitionLog, epoch: int, first_sequence: int, timestamp: int,
           transactional: bool = False) -> tuple[int, int]:
    assert log.check_batch(PID, epoch, first_sequence, 1, transactional) is None
    return log.append_as_leader(["v"], 1, PID, epoch, first_sequence, transactional,
                                timestamp=timestamp)


def test_an_idle_producer_expires() -> None:
    """testPidExpirationTimeout: once producer.id.expiration.ms has passed since its last
    batch the producer is forgotten (not a millisecond before), and its next batch is
    taken at whatever sequence it carries and starts its state again."""
    log = PartitionLog()
    _timed(log, 5, 0, timestamp=1)
    assert log.remove_expired_producers(EXPIRATION_MS, EXPIRATION_MS) == []
    assert log.remove_expired_producers(EXPIRATION_MS + 1, EXPIRATION_MS) == [PID]
    assert dict(log.producers) == {} and log.active_producers() == []
    _timed(log, 5, 1, timestamp=EXPIRATION_MS + 2)
    [active] = log.active_producers()
    assert (active.producer_id, active.producer_epoch, active.last_sequence,
            active.last_timestamp) == (PID, 5, 1, EXPIRATION_MS + 2)
    assert log.end_offset == 2


def test_a_producer_with_an_open_transaction_does_not_expire() -> None:
    """testProducersWithOngoingTransactionsDontExpire: its transaction stays open too; once
    the marker is written, the marker's time counts."""
    log = PartitionLog()
    _pad(log, 99)
    _timed(log, 5, 0, timestamp=0, transactional=True)
    for _ in range(2):
        assert log.remove_expired_producers(EXPIRATION_MS + 1, EXPIRATION_MS) == []
        assert PID in log.producers and log.txns.ongoing == {PID: 99}
    log.append_marker(1, PID, 5, True, 0, timestamp=EXPIRATION_MS + 1)
    assert log.remove_expired_producers(2 * EXPIRATION_MS, EXPIRATION_MS) == []
    assert log.remove_expired_producers(2 * EXPIRATION_MS + 1, EXPIRATION_MS) == [PID]


def test_an_expired_producer_stays_expired_after_a_reload() -> None:
    """testRemoveExpiredPidsOnReload: a truncation rebuilds the state from the log without
    the producers already expired; the next batch at sequence 2 is taken and is the
    producer's last."""
    log = PartitionLog()
    _timed(log, 0, 0, timestamp=0)
    _timed(log, 0, 1, timestamp=1)
    _pad(log, 3)
    log.remove_expired_producers(70_000, 60_000)
    log.truncate_to(2)
    assert dict(log.producers) == {}
    _timed(log, 0, 2, timestamp=70_001)
    [active] = log.active_producers()
    assert active.last_sequence == 2 and log.end_offset == 3


def test_a_replica_takes_a_batch_of_an_expired_producer() -> None:
    """testAcceptAppendWithoutProducerStateOnReplica: a follower whose state forgot the
    producer copies its next batch and knows the producer again from it."""
    log = PartitionLog()
    _replicate(log, 0, 0)
    _replicate(log, 0, 1)
    log.remove_expired_producers(EXPIRATION_MS, EXPIRATION_MS)
    assert PID not in log.producers
    _replicate(log, 0, 2)
    batch = log.producers[PID].batches[-1]
    assert (log.producers[PID].epoch, batch.last_sequence, batch.last_offset) == (0, 2, 2)


def test_basic_id_mapping() -> None:
    """testBasicIdMapping: sequences 0 and 1 at epoch 0 are taken; a sequence past the
    next one is out of order; a new epoch starts again at 0, after which the old epoch is
    refused. Kafka's state manager refuses the second copy of sequence 1 too, because its
    log finds duplicates before asking it: kraftsim's ``check_batch`` is both, so the
    copy is answered with the offsets of the batch it repeats."""
    log = PartitionLog()
    assert _client(log, 0, 0) == (0, 0)
    assert _client(log, 0, 1) == (1, 1)
    assert _client(log, 0, 1) == (1, 1)  # the duplicate, not a new entry
    assert log.end_offset == 2
    assert _refused(log, 0, 5) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _client(log, 1, 0) == (2, 2)
    assert log.producers[PID].epoch == 1
    assert _refused(log, 0, 0) == "INVALID_PRODUCER_EPOCH"
    assert log.end_offset == 3


# ---------------------------------------------------------------- KIP-890 verification
def _verification(log: PartitionLog, sequence: int, epoch: int, now: int = 0
                  ) -> VerificationStateEntry:
    log.maybe_start_transaction_verification(PID, sequence, epoch, now)
    assert log.verifying is not None
    return log.verifying[PID]


def test_entry_for_verification() -> None:
    """testEntryForVerification: a second start reuses the entry; the transaction's data
    clears it."""
    log = PartitionLog()
    original = _verification(log, 0, 0)
    again = _verification(log, 0, 0)
    assert again is original and log.verification_guard(PID) is original.guard
    _client(log, 0, 0, transactional=True)
    assert log.verifying is not None and PID not in log.verifying
    assert log.verification_guard(PID) is SENTINEL


def test_sequence_and_epoch_in_verification_entry() -> None:
    """testSequenceAndEpochInVerificationEntry: a lower sequence of the epoch lowers it, a
    newer epoch takes its own sequence, an older epoch is ignored; the guard stays."""
    log = PartitionLog()
    entry = _verification(log, 1, 0)
    guard = entry.guard
    assert (entry.lowest_sequence, entry.epoch) == (1, 0)
    _verification(log, 0, 0)
    assert (entry.lowest_sequence, entry.epoch) == (0, 0)
    _verification(log, 2, 1)
    assert (entry.lowest_sequence, entry.epoch) == (2, 1)
    _verification(log, 0, 0)
    assert (entry.lowest_sequence, entry.epoch, entry.guard) == (2, 1, guard)


def test_throw_out_of_order_sequence_with_verification_sequence_check() -> None:
    """testThrowOutOfOrderSequenceWithVerificationSequenceCheck: while verifying from
    sequence 0, sequence 4 is OUT_OF_ORDER_SEQUENCE_NUMBER, with or without the guard
    check (verification turned off), and the entry stays."""
    log = PartitionLog()
    entry = _verification(log, 0, 0)
    assert _refused(log, 0, 4, transactional=True) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    with pytest.raises(SequenceError) as refused:
        log.check_batch(PID, 0, 4, 1, True, entry.guard)
    assert refused.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.verifying is not None and log.verifying[PID] is entry


def test_verification_state_entry_expiration() -> None:
    """testVerificationStateEntryExpiration: kept until producer.id.expiration.ms after
    it started, then dropped."""
    log = PartitionLog()
    entry = _verification(log, 0, 0, now=0)
    log.remove_expired_producers(5_000, 10_000)
    assert log.verifying is not None and log.verifying[PID] is entry
    log.remove_expired_producers(10_001, 10_000)
    assert PID not in log.verifying
