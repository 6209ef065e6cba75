"""The transactional and leader-epoch recovery cases of Kafka's ``LogSegmentTest``, in
kraftsim's terms.

Kafka's segment recovery re-reads a segment's batches into the producer state, the
abort index (``.txnindex``) and the leader-epoch cache. kraftsim keeps a partition's log
as one list of entries (:class:`~broker.partition_log.PartitionLog`, no segments); a
recovered log is a new log that replays the entries, as a follower appends them, and its
abort index is what ``--save`` writes as the ``.txnindex`` (:mod:`kafka_format.data_log`).

Ported: testRecoverTransactionIndex (its first part: producer 5's transaction at 100-101,
producer 10's at 102-103, plain records at 104-105, producer 10 aborted at 106 and 5
committed at 107: one aborted transaction, producer 10 from 102 to 106 with last stable
offset 100, the same after the index file's round trip), testRecoveryRebuildsEpochCache
(batches of epochs 0, 1, 1, 2 from 104, 106, 108, 110: the cache holds 1 at 106 and 2 at
110; epoch 0 begins at 0, not 104, as kraftsim's log starts at offset 0).

Left out, as kraftsim has no segments or segment files:
testRecoverTransactionIndex's second part (producer state loaded for a transaction begun
in an earlier segment), testAppendForLogSegmentOffsetOverflowException,
testReadOnEmptySegment, testReadBeforeFirstOffset, testReadAfterLast, testReadFromGap,
testReadWhenNoMaxPosition, testTruncate, testTruncateEmptySegment,
testReloadLargestTimestampAndNextOffsetAfterTruncation, testTruncateFull,
testFindOffsetByTimestamp, testNextOffsetCalculation, testChangeFileSuffixes,
testRecoveryFixesCorruptIndex, testRecoveryFixesCorruptTimeIndex,
testRecoveryWithCorruptMessage, testCreateWithInitFileSizeAppendMessage,
testCreateWithInitFileSizeClearShutdown, testAppendFromFile, testGetFirstBatchTimestamp,
testDeleteIfExistsWithGetParentIsNull (segment reads, truncation and files; the log's own
reads and truncation are UnifiedLogTest's cases, test_kafka_unified_log_txn_cases.py, and
the index files OffsetIndexTest's and TimeIndexTest's).
"""

from __future__ import annotations

from broker.partition_log import LogEntry, PartitionLog
from broker.txn.log_state import AbortedTxn
from kafka_format.data_log import AbortedTxnEntry, decode_txn_index, encode_txn_index

LEADER_EPOCH = 15
PID1, PID2 = 5, 10


def _entries() -> list[LogEntry]:
    """100 plain records, then the transactional records of testRecoverTransactionIndex."""
    out = [LogEntry(o, LEADER_EPOCH, f"v{o}") for o in range(100)]

    def txn(offset: int, pid: int) -> list[LogEntry]:
        return [LogEntry(offset + i, LEADER_EPOCH, "ab"[i], pid, 0, 100, 100 + i, 2,
                         transactional=True) for i in range(2)]

    out += txn(100, PID1) + txn(102, PID2)
    out += [LogEntry(o, LEADER_EPOCH, "ab"[o - 104]) for o in (104, 105)]
    out += [LogEntry(106, LEADER_EPOCH, "ABORT", PID2, 0, transactional=True, control=0,
                     coordinator_epoch=0),
            LogEntry(107, LEADER_EPOCH, "COMMIT", PID1, 0, transactional=True, control=1,
                     coordinator_epoch=0)]
    return out


def test_recover_transaction_index() -> None:
    log = PartitionLog()
    log.append_entries(_entries())
    assert log.end_offset == 108
    expected = [AbortedTxn(PID2, first_offset=102, last_offset=106, last_stable_offset=100)]
    assert log.txns.aborted == expected
    recovered = PartitionLog()           # a reopened log replays what it holds
    recovered.append_entries(list(log.entries))
    assert recovered.txns.aborted == expected and recovered.txns.ongoing == {}
    written = encode_txn_index([AbortedTxnEntry(a.producer_id, a.first_offset,
                                                a.last_offset, a.last_stable_offset)
                                for a in expected])
    assert decode_txn_index(written).entries == (AbortedTxnEntry(PID2, 102, 106, 100),)


def test_recovery_rebuilds_epoch_cache() -> None:
    log = PartitionLog()
    log.append_entries([LogEntry(o, 0, f"v{o}") for o in range(104)])
    for first, epoch in ((104, 0), (106, 1), (108, 1), (110, 2)):
        log.append_entries([LogEntry(first + i, epoch, "ab"[i]) for i in range(2)])
    recovered = PartitionLog()
    recovered.append_entries(list(log.entries))
    # kraftsim's log starts at offset 0, so epoch 0 begins there rather than at 104
    assert list(recovered.epoch_starts) == [(0, 0), (1, 106), (2, 110)]
    assert recovered.end_offset_for_epoch(1) == (1, 110)
