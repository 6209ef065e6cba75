"""Cases of Kafka's TransactionMarkerRequestCompletionHandlerTest and
TransactionMarkerChannelManagerTest, in kraftsim's terms.

Kafka classes followed: ``TransactionMarkerRequestCompletionHandlerTest`` and
``TransactionMarkerChannelManagerTest``
(``core/src/test/scala/unit/kafka/coordinator/transaction``). In kraftsim the
channel manager and the completion handler are part of
:class:`~broker.txn.coordinator.TransactionCoordinator`: the WriteTxnMarkers
partitions to send leave through ``drain_outbox`` (one
:class:`~broker.txn.coordinator.MarkerRequest` per partition; ``sim.txn_cluster``
sends each to the partition's leader), each partition's answer comes back
through ``on_marker_result``, retries wait ``marker_retry_backoff_ms`` in
``retries`` and are sent again by ``poll``, and a transaction whose markers are
out is in ``completions`` (Kafka's transactionsWithPendingMarkers, with the
partitions still waiting) until its Complete* record is written. A
disconnection (Kafka's ``wasDisconnected``) is the answer NETWORK_EXCEPTION.

Not ported, with the reason:

- shouldThrowIllegalStateExceptionIfErrorCodeNotAvailableForPid: answers are per
  partition; there is no per-producer error map that could lack an entry.
- shouldCompleteDelayedOperationWhenCoordinatorLoading and the
  COORDINATOR_LOAD_IN_PROGRESS rows of shouldNotLoseTxnCompletionAfterLoad:
  loading is instantaneous in kraftsim (docs/transactions.md), so there is no
  loading window; the "no longer coordinator" and "new coordinator epoch" rows
  are ported.
- shouldSkipSendMarkersWhenLeaderNotFound, shouldSaveForLaterWhenLeaderUnknownButNotAvailable
  and the per-broker grouping of shouldGenerateRequestPerPartitionPerBroker: the
  coordinator has no metadata cache. ``sim.txn_cluster`` looks the leader up
  when it delivers each partition and answers NOT_LEADER_OR_FOLLOWER without
  one, so the partition is retried (as Kafka's unknown-broker queue holds it).
  A partition missing from the metadata is retried too, not skipped as Kafka
  skips a deleted one: kraftsim's AddPartitionsToTxn does not check that a
  partition exists, so a lagging image could otherwise skip a partition that
  holds the transaction's data.
- testRemoveMetricsOnClose, shouldCreateMetricsOnStarting: no metrics.

Kept differences (asserted as kraftsim behaves):

- A failed partition is sent again after ``marker_retry_backoff_ms`` (100 ms);
  Kafka re-enqueues it for the sender thread's next round.
- kraftsim prepares the Complete* transition when the last marker is written;
  Kafka prepares it when the markers are queued, so its pending state is
  Complete* while they are out (an EndTxn with the other result answers
  CONCURRENT_TRANSACTIONS there, INVALID_TXN_STATE in kraftsim), and keeps it
  while a Complete* append answered COORDINATOR_NOT_AVAILABLE waits for its
  retry, where kraftsim clears it and prepares again. After NOT_COORDINATOR both
  leave no pending state and the state Prepare*.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from broker.txn.coordinator import (
    MarkerRequest,
    TransactionCoordinator,
    TxnCoordinatorConfig,
    UnexpectedMarkerError,
)
from broker.txn.state import TransactionMetadata, TransactionState, decode_record

S = TransactionState
EPOCH = 0
TIMEOUT = 60_000
BACKOFF = TxnCoordinatorConfig().marker_retry_backoff_ms
P1 = ("topic1", 0)
P2 = ("topic1", 1)
ID1, ID2 = "txnId1", "txnId2"  # __transaction_state partitions 0 and 1 of 2
PIDS = {ID1: 0, ID2: 1}


class Coordinator:
    """A coordinator of both ``__transaction_state`` partitions (epoch 0) whose log
    acknowledges each append at once, or holds it (``hold``), or fails it
    (``fail_next``)."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.held: list[Callable[[str], None]] = []
        self.hold = False
        self.fail_next: list[str] = []
        self.c = TransactionCoordinator(0, TxnCoordinatorConfig(num_partitions=2),
                                        self._append, lambda: ("NONE", 99))
        self.c.become_leader(0, 0, [], 0)
        self.c.become_leader(1, 0, [], 0)

    def _append(self, partition: int, text: str, done: Callable[[str], None]) -> None:
        if self.fail_next:
            done(self.fail_next.pop(0))
            return
        self.log.append(text)
        if self.hold:
            self.held.append(done)
        else:
            done("NONE")

    def ongoing(self, txn_id: str, *partitions: tuple[str, int]) -> TransactionMetadata:
        pid = PIDS[txn_id]
        meta = TransactionMetadata(txn_id, pid, TIMEOUT, 0, EPOCH, -1, pid, S.ONGOING)
        meta.topic_partitions = frozenset(partitions)
        meta.txn_start_timestamp = 0
        self.c.txns[txn_id] = meta
        return meta

    def commit(self, txn_id: str, *partitions: tuple[str, int]) -> TransactionMetadata:
        """``txn_id`` in Ongoing on ``partitions``, then EndTxn(commit): PrepareCommit is
        written and its markers are queued."""
        meta = self.ongoing(txn_id, *partitions)
        out: list[str] = []
        self.c.handle_end_txn(txn_id, PIDS[txn_id], EPOCH, True, 5, out.append)
        assert out == ["NONE"] and meta.state == S.PREPARE_COMMIT
        return meta

    def statuses(self, txn_id: str) -> list[TransactionState]:
        records = [decode_record(text) for text in self.log]
        return [S(r.Value.TransactionStatus) for r in records
                if r.TransactionalId == txn_id and r.Value is not None]

    def answer(self, markers: list[MarkerRequest], error: str = "NONE",
               now: int = 10) -> None:
        for marker in markers:
            self.c.on_marker_result(marker, error, now)


def _one(h: Coordinator) -> MarkerRequest:
    [marker] = h.c.drain_outbox()
    return marker


# ------------------------------------------------ TransactionMarkerRequestCompletionHandlerTest
def test_the_marker_carries_the_producer_the_coordinator_epoch_and_the_result() -> None:
    h = Coordinator()
    h.commit(ID1, P1)
    assert _one(h) == MarkerRequest(ID1, 0, PIDS[ID1], EPOCH, True, *P1)


def test_a_written_marker_completes_the_transaction() -> None:
    """shouldCompleteDelayedOperationWhenNoErrors."""
    h = Coordinator()
    meta = h.commit(ID1, P1)
    h.answer([_one(h)])
    assert h.statuses(ID1) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
    assert (meta.state, meta.pending_state, meta.topic_partitions) == \
        (S.COMPLETE_COMMIT, None, frozenset())
    assert h.c.completions == {}


def test_a_disconnection_sends_the_marker_again() -> None:
    """shouldReEnqueuePartitionsWhenBrokerDisconnected."""
    h = Coordinator()
    h.commit(ID1, P1)
    marker = _one(h)
    h.answer([marker], "NETWORK_EXCEPTION")
    h.c.poll(10 + BACKOFF)
    assert h.c.drain_outbox() == [marker]
    assert h.statuses(ID1) == [S.PREPARE_COMMIT]


@pytest.mark.parametrize("error", ["UNKNOWN_TOPIC_OR_PARTITION", "NOT_LEADER_OR_FOLLOWER",
                                   "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                                   "KAFKA_STORAGE_ERROR", "REQUEST_TIMED_OUT"])
def test_a_retriable_error_sends_that_partition_again(error: str) -> None:
    """shouldRetryPartitionWhen{UnknownTopicOrPartition,NotLeaderOrFollower,
    NotEnoughReplicas,NotEnoughReplicasAfterAppend,KafkaStorage}Error (and the handler's
    REQUEST_TIMED_OUT): the partition still waits, only it is sent again, and the
    transaction completes once it is written."""
    h = Coordinator()
    meta = h.commit(ID1, P1, P2)
    first, second = h.c.drain_outbox()
    h.answer([first], error)
    h.answer([second])
    assert h.c.completions[ID1].remaining == {(first.topic, first.partition)}
    assert meta.topic_partitions == {P1, P2} and meta.state == S.PREPARE_COMMIT
    h.c.poll(10 + BACKOFF - 1)
    assert h.c.drain_outbox() == []
    h.c.poll(10 + BACKOFF)
    assert h.c.drain_outbox() == [first]
    h.answer([first])
    assert meta.state == S.COMPLETE_COMMIT


@pytest.mark.parametrize("error", ["INVALID_PRODUCER_EPOCH", "TRANSACTION_COORDINATOR_FENCED"])
def test_a_fenced_marker_stops_the_transactions_markers(error: str) -> None:
    """shouldCompleteDelayedOperationWhen{InvalidProducerEpoch,CoordinatorEpochFenced}: the
    transaction leaves the pending set, no Complete record is written, a retry already
    waiting is not sent, and later answers change nothing."""
    h = Coordinator()
    meta = h.commit(ID1, P1, P2)
    first, second = h.c.drain_outbox()
    h.answer([second], "NOT_LEADER_OR_FOLLOWER")
    h.answer([first], error)
    assert h.c.completions == {}
    h.c.poll(10 + BACKOFF)
    assert h.c.drain_outbox() == []
    h.answer([second])
    assert h.statuses(ID1) == [S.PREPARE_COMMIT]
    assert (meta.state, meta.pending_state) == (S.PREPARE_COMMIT, None)


@pytest.mark.parametrize("error", ["UNSUPPORTED_FOR_MESSAGE_FORMAT", "UNSUPPORTED_VERSION"])
def test_a_partition_refusing_markers_stops_waiting(error: str) -> None:
    """shouldRemoveTopicPartitionFromWaitingSetOnUnsupportedForMessageFormat (and the
    handler's UNSUPPORTED_VERSION): the partition counts as done."""
    h = Coordinator()
    meta = h.commit(ID1, P1)
    h.answer([_one(h)], error)
    assert meta.state == S.COMPLETE_COMMIT
    assert h.statuses(ID1) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]


@pytest.mark.parametrize("error", ["UNKNOWN_SERVER_ERROR", "CORRUPT_MESSAGE",
                                   "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE",
                                   "INVALID_REQUIRED_ACKS"])
def test_an_unexpected_marker_error_is_an_illegal_state(error: str) -> None:
    """shouldThrowIllegalStateExceptionWhen{Unknown,CorruptMessage,MessageTooLarge,
    RecordListTooLarge,InvalidRequiredAcks}Error: nothing is counted written or retried."""
    h = Coordinator()
    meta = h.commit(ID1, P1)
    marker = _one(h)
    with pytest.raises(UnexpectedMarkerError, match=error):
        h.answer([marker], error)
    assert h.c.completions[ID1].remaining == {P1} and h.c.retries == []
    assert meta.state == S.PREPARE_COMMIT and h.statuses(ID1) == [S.PREPARE_COMMIT]


@pytest.mark.parametrize("error", ["NONE", "NETWORK_EXCEPTION", "CORRUPT_MESSAGE"])
def test_an_answer_after_the_partition_emigrated_is_ignored(error: str) -> None:
    """shouldCompleteDelayedOperationWhenNotCoordinator: whatever the answer, nothing is
    written, retried or raised."""
    h = Coordinator()
    h.commit(ID1, P1)
    marker = _one(h)
    h.c.resign(0)
    h.answer([marker], error)
    h.c.poll(10 + BACKOFF)
    assert h.c.drain_outbox() == [] and h.statuses(ID1) == [S.PREPARE_COMMIT]


def test_an_answer_of_an_older_coordinator_epoch_is_ignored() -> None:
    """shouldCompleteDelayedOperationWhenCoordinatorEpochChanged: the partition was loaded
    again under coordinator epoch 1, which sends its own markers."""
    h = Coordinator()
    h.commit(ID1, P1)
    old = _one(h)
    h.c.resign(0)
    h.c.become_leader(0, 1, list(h.log), 20)
    new = _one(h)
    assert (old.coordinator_epoch, new.coordinator_epoch) == (0, 1)
    h.answer([old])
    assert h.statuses(ID1) == [S.PREPARE_COMMIT] and h.c.txns[ID1].state == S.PREPARE_COMMIT
    h.answer([new])
    assert h.statuses(ID1) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]


# ------------------------------------------------ TransactionMarkerChannelManagerTest
def test_nothing_to_send_without_pending_markers() -> None:
    """shouldGenerateEmptyMapWhenNoRequestsOutstanding."""
    assert Coordinator().c.drain_outbox() == []


def test_one_marker_per_partition_of_each_transaction_sent_once() -> None:
    """shouldGenerateRequestPerPartitionPerBroker (the markers; see the module docs for
    the grouping by broker)."""
    h = Coordinator()
    h.commit(ID1, P1, P2)
    h.commit(ID2, P1)
    sent = h.c.drain_outbox()
    assert sent == [MarkerRequest(ID1, 0, 0, EPOCH, True, *P1),
                    MarkerRequest(ID1, 0, 0, EPOCH, True, *P2),
                    MarkerRequest(ID2, 0, 1, EPOCH, True, *P1)]
    assert set(h.c.completions) == {ID1, ID2}
    assert h.c.drain_outbox() == []


def test_emigration_drops_only_that_partitions_markers() -> None:
    """shouldRemoveMarkersForTxnPartitionWhenPartitionEmigrated."""
    h = Coordinator()
    h.commit(ID1, P1, P2)
    h.commit(ID2, P1)
    queued = list(h.c.outbox)
    h.c.resign(0)
    assert set(h.c.completions) == {ID2}
    assert h.c.drain_outbox() == [m for m in queued if m.transactional_id == ID2]


def test_the_completion_is_written_once() -> None:
    """shouldOnlyWriteTxnCompletionOnce: a repeated answer, and polls while the Complete
    record is being appended, write no second record."""
    h = Coordinator()
    meta = h.commit(ID2, P1)
    marker = _one(h)
    h.hold = True
    h.answer([marker, marker])
    h.c.poll(20)
    assert h.statuses(ID2) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT] and len(h.held) == 1
    h.held.pop()("NONE")
    h.answer([marker])
    h.c.poll(30)
    assert h.statuses(ID2) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
    assert (meta.state, meta.pending_state) == (S.COMPLETE_COMMIT, None)


@pytest.mark.parametrize("old_answer", ["NONE", "NETWORK_EXCEPTION"])
@pytest.mark.parametrize("reloaded_first", [True, False])
def test_a_completion_is_not_lost_when_the_partition_is_loaded_again(
        old_answer: str, reloaded_first: bool) -> None:
    """shouldNotLoseTxnCompletionAfterLoad: markers in flight, the partition emigrates and
    is loaded again under coordinator epoch 1, which sends them again; the old answer,
    written or disconnected, arriving while the partition is away or after the reload,
    changes nothing, and the new answer completes the transaction with one Complete
    record."""
    h = Coordinator()
    h.commit(ID2, P1)
    old = _one(h)
    h.c.resign(1)
    if reloaded_first:
        h.c.become_leader(1, 1, list(h.log), 20)
    h.answer([old], old_answer, now=30)
    if not reloaded_first:
        h.c.become_leader(1, 1, list(h.log), 20)
    new = _one(h)
    assert new == MarkerRequest(ID2, 1, PIDS[ID2], EPOCH, True, *P1)
    h.c.poll(30 + BACKOFF)
    assert h.c.drain_outbox() == [] and h.statuses(ID2) == [S.PREPARE_COMMIT]
    h.answer([new], now=40)
    assert h.statuses(ID2) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
    assert h.c.txns[ID2].state == S.COMPLETE_COMMIT and h.c.completions == {}


def test_markers_written_complete_the_transaction_once_the_log_has_it() -> None:
    """shouldCompleteAppendToLogOnEndTxnWhenSendMarkersSucceed: the state moves only once
    the Complete record is acknowledged."""
    h = Coordinator()
    meta = h.commit(ID2, P1)
    h.hold = True
    h.answer([_one(h)])
    assert (meta.state, meta.pending_state) == (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)
    h.held.pop()("NONE")
    assert (meta.state, meta.pending_state) == (S.COMPLETE_COMMIT, None)
    assert h.c.completions == {} and h.c.drain_outbox() == []


@pytest.mark.parametrize("append_error", ["NOT_LEADER_OR_FOLLOWER", "KAFKA_STORAGE_ERROR"])
def test_a_complete_append_answered_not_coordinator_is_not_retried(append_error: str) -> None:
    """shouldAbortAppendToLogOnEndTxnWhenNotCoordinatorError: the log's error maps to
    NOT_COORDINATOR; the write is skipped, the state stays PrepareCommit with no pending
    state, and polls do not write it again (the next load of the partition will)."""
    h = Coordinator()
    meta = h.commit(ID2, P1)
    h.fail_next = [append_error]
    h.answer([_one(h)])
    assert h.c.completions == {}
    assert (meta.state, meta.pending_state) == (S.PREPARE_COMMIT, None)
    h.c.poll(10_000)
    assert h.statuses(ID2) == [S.PREPARE_COMMIT]


@pytest.mark.parametrize("append_error", ["NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT",
                                          "UNKNOWN_TOPIC_OR_PARTITION"])
def test_a_complete_append_answered_coordinator_not_available_is_retried(
        append_error: str) -> None:
    """shouldRetryAppendToLogOnEndTxnWhenCoordinatorNotAvailableError: the log's error
    maps to COORDINATOR_NOT_AVAILABLE; the next poll appends again and completes."""
    h = Coordinator()
    meta = h.commit(ID2, P1)
    h.fail_next = [append_error]
    h.answer([_one(h)])
    assert meta.state == S.PREPARE_COMMIT and ID2 in h.c.completions
    h.c.poll(20)
    assert h.statuses(ID2) == [S.PREPARE_COMMIT, S.COMPLETE_COMMIT]
    assert (meta.state, meta.pending_state) == (S.COMPLETE_COMMIT, None)
    assert h.c.completions == {}
