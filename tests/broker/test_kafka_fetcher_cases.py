"""The transactional-read cases of Kafka's consumer fetch tests, in kraftsim's terms.

Kafka's ``FetcherTest``, ``FetchCollectorTest`` and ``CompletedFetchTest`` hand
a consumer fetch answers and check what its poll returns and where its
position goes. In kraftsim the broker's answer is
:func:`~broker.txn.fetch.fetch_log` (records bounded by the high watermark, or
by the last stable offset with the aborted transactions the read overlaps) and
the consumer's work on it is :func:`~broker.txn.fetch.consume_fetch` (Kafka's
``CompletedFetch``: the aborted-transaction filter
:func:`~broker.txn.fetch.filter_committed`, control records never returned,
the next position past every entry of the answer). Where the log can make the
answer, the tests build it with :class:`~broker.partition_log.PartitionLog` and
read it as a leader would; where Kafka's answer comes from what kraftsim's logs
never hold (records compacted away, a transaction whose first records are
below the log start), the answer is written out as entries, which the
consumer must take the same way. A Kafka batch of several records is a run
of entries of one producer; markers are entries of their own.

Cases already covered elsewhere:

- testFetcherIgnoresControlRecords, for the simulation's plain consumer
  (:func:`sim.clients.consume`): ``tests/sim/test_broker_lifecycle.py``
  ``test_a_plain_consumer_skips_transaction_markers``; its answer-level form is
  here too.
- the high watermark and LSO bounds of a read (Kafka's broker side):
  ``tests/broker/test_kafka_replica_manager_cases.py``
  (``test_a_consumer_reads_below_the_high_watermark_only``,
  ``test_read_committed_stops_at_the_last_stable_offset``) and
  ``tests/broker/test_kafka_unified_log_txn_cases.py``
  (``test_read_committed_fetches_stop_at_the_last_stable_offset``,
  ``test_a_read_that_stops_before_the_abort_marker_still_names_its_transaction``);
- a non-transactional record of an aborted producer id is returned:
  ``tests/broker/test_txn_log.py``
  ``test_the_consumer_filter_skips_only_transactional_records_of_an_aborted_producer``.

Left out, as kraftsim does not model them: compaction and empty batches
(testUpdatePositionWithLastRecordMissingFromBatch, testUpdatePositionOnEmptyBatch,
testEmptyControlBatch: every kraftsim entry is one record, so no batch's last
offset lacks a record and no batch is empty); consumer fetch sessions and
max.poll.records buffering (testConsumingViaIncrementalFetchRequests,
testFetcherSessionEpochUpdate, testFetchMaxPollRecords*, CompletedFetchTest's
testSimple and testNegativeFetchCount: a kraftsim consumer takes a whole answer
at once, bounded by the fetch's record count); metrics (testReadCommittedLagMetric
and the other *Metrics* cases); subscriptions, assignment, pausing, seeking and
offset resets (testFetchDuringEagerRebalance, testFetchOnPausedPartition,
testFetchedRecordsAfterSeek, testFetchOffsetOutOfRange*, FetchCollectorTest's
initialization cases); the network client and its errors (testFetchDisconnected,
testFetchError, testHandleFetchResponseError, testFetchRequestInternalError,
testUnauthorizedTopic); preferred read replicas; topic ids; leader epochs in
records and truncation detection (testTruncationDetected: kraftsim's consumers
do not validate positions); deserializers, headers and CRC checks
(testFetchedRecordsRaisesOnSerializationErrors, testParseCorruptedRecord,
testInvalidDefaultRecordBatch, testHeaders, CompletedFetchTest's
testCorruptedMessage); threading (testFetcherConcurrency).

Ported later: testFetchNormal (test_a_normal_fetch_returns_the_records_and_moves_the_position).
The other cases of FetcherTest and FetchCollectorTest left out, by the groups above:

- metrics: testQuotaMetrics, testFetcherMetrics, testFetcherLeadMetric,
  testFetchResponseMetrics, testFetchResponseMetricsWithOnePartitionError,
  testFetchResponseMetricsWithOnePartitionAtTheWrongOffset, testFetcherMetricsTemplates;
- preferred read replicas: testPreferredReadReplica,
  testFetchDisconnectedShouldClearPreferredReadReplica,
  testFetchDisconnectedShouldNotClearPreferredReadReplicaIfUnassigned,
  testFetchErrorShouldClearPreferredReadReplica, testPreferredReadReplicaOffsetError,
  FetchCollectorTest.testFetchWithReadReplica,
  FetchCollectorTest.testFetchWithOffsetOutOfRangeWithPreferredReadReplica;
- topic ids: testFetchWithNoTopicId, testFetchWithTopicId,
  testFetchForgetTopicIdWhenUnassigned, testFetchForgetTopicIdWhenReplaced,
  testFetchTopicIdUpgradeDowngrade;
- pausing, assignment, rebalances, seeking and positions:
  testInflightFetchOnPendingPartitions, testFetchingPendingPartitions,
  testFetchAfterPartitionWithFetchedRecordsIsUnassigned,
  testFetchDuringCooperativeRebalance, testInFlightFetchOnPausedPartition,
  testFetchOnCompletedFetchesForPausedAndResumedPartitions,
  testFetchOnCompletedFetchesForSomePausedPartitions,
  testFetchOnCompletedFetchesForAllPausedPartitions,
  testPartialFetchWithPausedPartitions,
  testFetchDiscardedAfterPausedPartitionResumedAndSoughtToNewOffset,
  testStaleOutOfRangeError, testFetchPositionAfterException, testSeekBeforeException,
  testSubscriptionPositionUpdatedWithEpoch,
  FetchCollectorTest.testNoResultsIfInitializing,
  FetchCollectorTest.testErrorInInitialize,
  FetchCollectorTest.testFetchingPausedPartitionsYieldsNoRecords,
  FetchCollectorTest.testFetchWithOffsetOutOfRange,
  FetchCollectorTest.testCollectFetchInitializationWithNullPosition,
  FetchCollectorTest.testCollectFetchInitializationWithUpdateHighWatermarkOnNotAssignedPartition,
  FetchCollectorTest.testCollectFetchInitializationWithUpdateLogStartOffsetOnNotAssignedPartition,
  FetchCollectorTest.testCollectFetchInitializationWithUpdateLastStableOffsetOnNotAssignedPartition,
  FetchCollectorTest.testCollectFetchInitializationWithUpdatePreferredReplicaOnNotAssignedPartition,
  FetchCollectorTest.testCollectFetchInitializationOffsetOutOfRangeErrorWithNullPosition,
  FetchCollectorTest.testCollectFetchInitializationOffsetOutOfRangeErrorWithOffsetReset;
- the network client, its errors and closing: testCloseShouldBeIdempotent,
  testFetcherCloseClosesFetchSessionsInBroker, testFetchSkipsBlackedOutNodes,
  testParseInvalidRecordBatch, testFetchRequestWhenRecordTooLarge,
  testFetchCompletedBeforeHandlerAdded, testCorruptMessageError,
  testWhenFetchResponseReturnsALeaderShipChangeErrorButNoNewLeaderInformation,
  testWhenFetchResponseReturnsALeaderShipChangeErrorAndNewLeaderInformation,
  FetchCollectorTest.testFetchWithMetadataRefreshErrors,
  FetchCollectorTest.testFetchWithTopicAuthorizationFailed,
  FetchCollectorTest.testFetchWithUnknownServerError,
  FetchCollectorTest.testFetchWithCorruptMessage,
  FetchCollectorTest.testFetchWithOtherErrors;
- leader epochs in records and positions: testMissingLeaderEpochInRecords,
  testLeaderEpochInConsumerRecord, testEpochSetInFetchRequest,
  FetchCollectorTest.testFetchWithUnknownLeaderEpoch;
- buffered and completed fetches of the consumer:
  testClearBufferedDataForTopicPartitions, testCompletedFetchRemoval,
  testFetcherDontCacheAnyData.
"""

from __future__ import annotations

from broker.partition_log import LogEntry, PartitionLog
from broker.txn.fetch import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    ConsumedFetch,
    TxnFetchResult,
    consume_fetch,
    fetch_log,
)


class _Producer:
    """A transactional producer's batches and markers written by the leader (epoch 0)."""

    def __init__(self, log: PartitionLog, pid: int) -> None:
        self.log, self.pid, self.sequence = log, pid, 0

    def send(self, *keys: str) -> tuple[int, int]:
        log = self.log
        assert log.check_batch(self.pid, 0, self.sequence, len(keys), True) is None
        offsets = log.append_as_leader(list(keys), 0, self.pid, 0, self.sequence, True)
        self.sequence += len(keys)
        return offsets

    def end(self, commit: bool) -> int:
        self.log.check_marker(self.pid, 0, 0)
        return self.log.append_marker(0, self.pid, 0, commit, 0)


def _poll(log: PartitionLog, offset: int, isolation: str = READ_COMMITTED,
          max_records: int = 100) -> tuple[TxnFetchResult, ConsumedFetch]:
    """The leader's answer to a fetch at ``offset`` (HW moved to the log end) and the
    consumer's take on it."""
    log.update_high_watermark(log.end_offset)
    fetched = fetch_log(log, offset, max_records, isolation)
    return fetched, consume_fetch(fetched, offset, isolation)


def _keys(consumed: ConsumedFetch) -> list[str]:
    return [entry.value for entry in consumed.records]


def _data(offset: int, pid: int, key: str, transactional: bool = True) -> LogEntry:
    """One record of a Kafka answer written out (a producer's batch of one)."""
    return LogEntry(offset, 0, key, pid, 0, 0, 0, transactional=transactional)


def _marker(offset: int, pid: int, commit: bool) -> LogEntry:
    return LogEntry(offset, 0, "COMMIT" if commit else "ABORT", pid, 0, transactional=True,
                    control=1 if commit else 0, coordinator_epoch=0)


def _answer(entries: list[LogEntry], aborted: tuple[tuple[int, int], ...] = ()
            ) -> TxnFetchResult:
    """An answer written out: HW and LSO 100, as Kafka's tests give."""
    return TxnFetchResult("NONE", tuple(entries), 100, 100, aborted)


# ---------------------------------------------------------------- aborted transactions
def test_an_aborted_transaction_returns_nothing_but_moves_the_position() -> None:
    """testSkippingAbortedTransactions and
    testConsumerPositionUpdatedWhenSkippingAbortedTransactions: two records of producer 1
    and its ABORT marker; read_committed returns none of them, and the position moves
    past the marker (to 3), so the consumer does not fetch them again."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer.send("abort1-1", "abort1-2")
    producer.end(commit=False)
    fetched, consumed = _poll(log, 0)
    assert fetched.aborted_transactions == ((1, 0),)
    assert consumed == ConsumedFetch((), 3)


def test_committed_transactions_are_returned() -> None:
    """testReturnCommittedTransactions (and CompletedFetchTest's
    testCommittedTransactionRecordsIncluded): a committed transaction's records are all
    returned at read_committed; the answer names no aborted transaction."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer.send(*(f"k{i}" for i in range(10)))
    producer.end(commit=True)
    fetched, consumed = _poll(log, 0)
    assert fetched.aborted_transactions == ()
    assert _keys(consumed) == [f"k{i}" for i in range(10)] and consumed.next_offset == 11


def test_read_committed_drops_aborted_records_read_uncommitted_keeps_them() -> None:
    """CompletedFetchTest's testAbortedTransactionRecordsRemoved and
    testReturnAbortedTransactionsInUncommittedMode: ten records of an aborted transaction
    are none at read_committed and all ten at read_uncommitted (the marker is returned at
    neither); the position is past the marker at both. A read_uncommitted consumer
    ignores an aborted-transaction list."""
    log = PartitionLog()
    producer = _Producer(log, 1000)
    producer.send(*(f"k{i}" for i in range(10)))
    producer.end(commit=False)
    assert _poll(log, 0)[1] == ConsumedFetch((), 11)
    _, uncommitted = _poll(log, 0, READ_UNCOMMITTED)
    assert _keys(uncommitted) == [f"k{i}" for i in range(10)]
    assert uncommitted.next_offset == 11
    # Kafka's test hands the read_uncommitted consumer the aborted list too: it is unused
    answer = _answer([_data(0, 1, "key"), _data(1, 1, "key"), _marker(2, 1, commit=False)],
                     ((1, 0),))
    assert _keys(consume_fetch(answer, 0, READ_UNCOMMITTED)) == ["key", "key"]


def test_committed_and_aborted_transactions_of_two_producers_interleaved() -> None:
    """testReadCommittedWithCommittedAndAbortedTransactions: producers 1 and 2 each commit
    one transaction and abort one, their batches and markers interleaved (2's aborted
    transaction spans 1's commit, 1's aborted one spans 2's next transaction); only the
    three committed records come back, and the answer lists both aborted transactions."""
    log = PartitionLog()
    one, two = _Producer(log, 1), _Producer(log, 2)
    assert one.send("commit1-1", "commit1-2") == (0, 1)
    assert two.send("abort2-1") == (2, 2)
    assert one.end(commit=True) == 3
    assert two.send("abort2-2") == (4, 4)
    assert two.end(commit=False) == 5
    assert one.send("abort1-1") == (6, 6)
    assert two.send("commit2-1") == (7, 7)
    assert one.send("abort1-2") == (8, 8)
    assert one.end(commit=False) == 9
    assert two.end(commit=True) == 10
    fetched, consumed = _poll(log, 0)
    assert sorted(fetched.aborted_transactions) == [(1, 6), (2, 2)]
    assert _keys(consumed) == ["commit1-1", "commit1-2", "commit2-1"]
    assert consumed.next_offset == 11


def test_a_duplicate_abort_marker_is_ignored() -> None:
    """testMultipleAbortMarkers: a second ABORT marker (a retried WriteTxnMarkers) follows
    the first; it writes no second abort index entry, and the producer's next
    transaction, committed, is returned whole."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer.send("abort1-1", "abort1-2")
    producer.end(commit=False)
    producer.end(commit=False)
    producer.send("commit1-1", "commit1-2")
    producer.end(commit=True)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in log.txns.aborted] == \
        [(1, 0, 2)]
    fetched, consumed = _poll(log, 0)
    assert fetched.aborted_transactions == ((1, 0),)
    assert _keys(consumed) == ["commit1-1", "commit1-2"] and consumed.next_offset == 7


def test_an_abort_marker_without_its_data_in_the_answer() -> None:
    """testReadCommittedAbortMarkerWithNoData: the answer starts at producer 1's ABORT
    marker, its transaction's records before the fetch; the answer lists that
    transaction, and the marker closes it, so the producer's next transaction (committed)
    is returned. In Kafka the records are below the log start; here the fetch starts at
    the marker."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer.send(*(f"a{i}" for i in range(5)))               # 0-4
    assert producer.end(commit=False) == 5
    assert producer.send("6", "7", "8") == (6, 8)
    producer.end(commit=True)
    fetched, consumed = _poll(log, 5)
    assert fetched.aborted_transactions == ((1, 0),)
    assert [(e.offset, e.value) for e in consumed.records] == [(6, "6"), (7, "7"), (8, "8")]
    assert consumed.next_offset == 10
    # Kafka's answer as the test writes it: nothing of the transaction but its marker
    answer = _answer([_marker(5, 1, commit=False), _data(6, 1, "6"), _data(7, 1, "7"),
                      _data(8, 1, "8"), _marker(9, 1, commit=True)], ((1, 0),))
    assert [e.offset for e in consume_fetch(answer, 0, READ_COMMITTED).records] == [6, 7, 8]


def test_an_abort_marker_first_then_the_producers_open_transaction() -> None:
    """FetchCollectorTest's testReadCommittedWithAbortedTransaction: twenty aborted
    records and their marker give no record and the position 21; the next answer starts
    with an ABORT marker whose transaction begins at the marker itself, then twenty
    records of the producer: the marker takes the producer out of the aborted set, so
    the twenty are returned and the position is 42."""
    pid = 1000
    first = _answer([_data(i, pid, f"k{i}") for i in range(20)] +
                    [_marker(20, pid, commit=False)], ((pid, 0),))
    assert consume_fetch(first, 0, READ_COMMITTED) == ConsumedFetch((), 21)
    second = _answer([_marker(21, pid, commit=False)] +
                     [_data(22 + i, pid, f"k{22 + i}") for i in range(20)], ((pid, 21),))
    consumed = consume_fetch(second, 21, READ_COMMITTED)
    assert [e.offset for e in consumed.records] == list(range(22, 42))
    assert consumed.next_offset == 42


def test_aborted_transactions_of_several_producers_over_a_compacted_answer() -> None:
    """testReadCommittedWithCompactedTopic: three producers' records with gaps (compacted
    away); producer 2's transaction aborted (listed from offset 6, below its first record
    left), producer 1's aborted with its marker past the answer (listed from 0); producer
    3 commits. Only producer 3's records come back."""
    entries = [_data(3, 3, "3"), _data(4, 3, "4"),
               *(_data(o, 2, str(o)) for o in (15, 16, 17)),
               _data(22, 1, "22"), _data(23, 1, "23"),
               _marker(28, 2, commit=False),
               *(_data(o, 3, str(o)) for o in (30, 31, 32)),
               _marker(35, 3, commit=True),
               _data(39, 1, "39"), _data(40, 1, "40")]
    consumed = consume_fetch(_answer(entries, ((2, 6), (1, 0))), 0, READ_COMMITTED)
    assert [e.offset for e in consumed.records] == [3, 4, 30, 31, 32]
    assert consumed.next_offset == 41


def test_an_aborted_transaction_begun_before_the_fetch_is_still_filtered() -> None:
    """The position inside an aborted transaction (the consumer read part of it before
    the marker was written, read_uncommitted, or a fetch bounded by its record count
    stopped inside it): the answer lists the transaction by its first offset, below the
    fetch, and its remaining records are dropped."""
    log = PartitionLog()
    producer = _Producer(log, 7)
    producer.send("a", "b", "c")
    producer.end(commit=False)
    log.append_as_leader(["plain"], 0)
    fetched, consumed = _poll(log, 2)
    assert fetched.aborted_transactions == ((7, 0),)
    assert _keys(consumed) == ["plain"] and consumed.next_offset == 5


# ---------------------------------------------------------------- control records and positions
def test_control_records_are_never_returned() -> None:
    """testFetcherIgnoresControlRecords: an idempotent record and an ABORT marker of the
    same producer (no transaction: nothing to filter); at read_uncommitted, Kafka's
    default, one record comes back and the position is 2, past the marker."""
    log = PartitionLog()
    log.append_as_leader(["key"], 0, 1, 0, 0)
    log.append_marker(0, 1, 0, commit=False, coordinator_epoch=0)
    assert log.txns.aborted == []
    for isolation in (READ_UNCOMMITTED, READ_COMMITTED):
        fetched, consumed = _poll(log, 0, isolation)
        assert len(fetched.entries) == 2
        assert _keys(consumed) == ["key"] and consumed.next_offset == 2


def test_a_fetch_bounded_before_the_marker_then_past_it() -> None:
    """A position after a marker-only answer (the control batch counts as read): a
    committed transaction fetched two entries at a time gives its records, then an
    answer holding only the COMMIT marker, which returns nothing and moves the position
    past it (Kafka's CompletedFetch sets the next fetch offset after a skipped control
    batch)."""
    log = PartitionLog()
    producer = _Producer(log, 1)
    producer.send("a", "b")
    producer.end(commit=True)
    log.append_as_leader(["plain"], 0)
    _, first = _poll(log, 0, max_records=2)
    assert _keys(first) == ["a", "b"] and first.next_offset == 2
    _, marker_only = _poll(log, 2, max_records=1)
    assert marker_only == ConsumedFetch((), 3)
    _, last = _poll(log, 3)
    assert _keys(last) == ["plain"] and last.next_offset == 4


def test_records_with_gaps_move_the_position_past_the_last() -> None:
    """testFetchNonContinuousRecords: an answer of offsets 15, 20 and 30 (a compacted
    topic) gives the three records and the position 31."""
    answer = _answer([LogEntry(o, 0, f"value-{i}") for i, o in enumerate((15, 20, 30), 1)])
    consumed = consume_fetch(answer, 0)
    assert [e.offset for e in consumed.records] == [15, 20, 30]
    assert consumed.next_offset == 31


def test_records_below_the_fetch_offset_are_not_returned() -> None:
    """The record count of testFetchResponseMetricsWithSkippedOffset: an answer whose
    batch begins before the position (Kafka's broker answers with the whole batch
    holding the fetch offset) returns only the records at or after it."""
    answer = _answer([LogEntry(o, 0, f"value-{o}") for o in range(3)])
    consumed = consume_fetch(answer, 1)
    assert [e.offset for e in consumed.records] == [1, 2] and consumed.next_offset == 3


def test_an_empty_or_failed_answer_leaves_the_position() -> None:
    """CompletedFetchTest's testNoRecordsInFetch: an answer without records returns none
    and the position stays at the fetch offset; an error answer likewise (the consumer
    handles the error, it reads nothing)."""
    log = PartitionLog()
    log.append_as_leader(["a"], 0)
    assert _poll(log, 1)[1] == ConsumedFetch((), 1)
    fetched, consumed = _poll(log, 5)
    assert fetched.error == "OFFSET_OUT_OF_RANGE" and consumed == ConsumedFetch((), 5)


# ---------------------------------------------------------------- the LSO bound
def test_read_committed_stops_at_the_lso_and_moves_on_once_it_advances() -> None:
    """The read_committed position against the LSO (the lag that testReadCommittedLagMetric
    measures from): an open transaction holds the answer below its first offset, even
    with committed records after it; once its marker is below the HW, the consumer reads
    on from where it stopped."""
    log = PartitionLog()
    log.append_as_leader(["p0"], 0)
    producer = _Producer(log, 1)
    producer.send("t1", "t2")
    log.append_as_leader(["p3"], 0)
    fetched, consumed = _poll(log, 0)
    assert (fetched.high_watermark, fetched.last_stable_offset) == (4, 1)
    assert _keys(consumed) == ["p0"] and consumed.next_offset == 1
    assert _poll(log, 1)[1] == ConsumedFetch((), 1)
    producer.end(commit=True)
    _, consumed = _poll(log, 1)
    assert _keys(consumed) == ["t1", "t2", "p3"] and consumed.next_offset == 5


def test_an_empty_read_committed_answer_names_no_aborted_transaction() -> None:
    """Kafka's LocalLog.read answers a fetch at (or past) the LSO with no records and an
    empty list of aborted transactions, without looking at the abort index. Here producer
    7's aborted transaction spans the fetch offset 1, where producer 8's open
    transaction holds the LSO: the answer is empty and lists nothing (kraftsim used to
    list producer 7's transaction)."""
    log = PartitionLog()
    seven, eight = _Producer(log, 7), _Producer(log, 8)
    seven.send("a")                                  # 0
    eight.send("b")                                  # 1, open
    seven.end(commit=False)                          # 2
    fetched, consumed = _poll(log, 1)
    assert fetched.last_stable_offset == 1
    assert (fetched.entries, fetched.aborted_transactions) == ((), ())
    assert consumed == ConsumedFetch((), 1)
    # a fetch that returns records still lists the aborted transaction it overlaps
    assert _poll(log, 0)[0].aborted_transactions == ((7, 0),)


def test_a_normal_fetch_returns_the_records_and_moves_the_position() -> None:
    """testFetchNormal (FetcherTest's and FetchCollectorTest's): from position 1, an answer
    of the records at 1, 2 and 3 returns the three, in offset order, and the next position
    is 4."""
    log = PartitionLog()
    log.append_as_leader(["0"], 0)
    log.append_as_leader(["1", "2", "3"], 0)
    log.update_high_watermark(log.end_offset)
    fetched, consumed = _poll(log, 1)
    assert fetched.error == "NONE"
    assert [e.offset for e in consumed.records] == [1, 2, 3] and consumed.next_offset == 4
