"""Cases of Kafka's ProducerStateManagerTest not ported before, in kraftsim's terms.

Kafka class followed: ``ProducerStateManagerTest``
(``storage/src/test/java/org/apache/kafka/storage/internals/log``). Kafka's
producer state lives in :class:`~broker.partition_log.PartitionLog` (sequences,
epochs, coordinator epochs) and :class:`~broker.txn.log_state.TxnLogState`
(ongoing and unreplicated transactions, the abort index). A leader's client
append is ``check_batch`` then ``append_as_leader``; a follower's (replication)
append is ``append_entries``, which checks nothing. Kafka's offsets are placed
with plain filler records, as kraftsim's logs start at offset 0.
"""

from __future__ import annotations

import pytest

from broker.partition_log import LogEntry, PartitionLog, SequenceError
from broker.txn.log_state import AbortedTxn

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
    """testFirstUnstableOffsetAfterTruncation (kraftsim never truncates below the HW:
    the marker is cut while still above it)."""
    log = PartitionLog()
    _txn_data(log, PID, 99)
    assert log.txns.first_unstable_offset(log.high_watermark) == 99
    _marker(log, PID, 105, True)
    log.update_high_watermark(106)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    _client(log, 5, 0)
    log.truncate_to(106)
    assert log.txns.first_unstable_offset(log.high_watermark) is None
    log = PartitionLog()
    _txn_data(log, PID, 99)
    _marker(log, PID, 105, True)
    log.update_high_watermark(100)
    log.truncate_to(100)
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
