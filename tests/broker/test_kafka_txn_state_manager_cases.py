"""Cases of Kafka's TransactionStateManagerTest, in kraftsim's terms.

Kafka class followed: ``TransactionStateManagerTest``
(``core/src/test/scala/unit/kafka/coordinator/transaction``): the parts about
loading ``__transaction_state`` partitions, giving them up, the append-error
mapping, timeouts and ListTransactions. In kraftsim the state manager is part
of :class:`~broker.txn.coordinator.TransactionCoordinator` (``become_leader``,
``resign``, ``_write``, ``abort_timed_out``, ``remove_expired``) and
:mod:`broker.txn.admin`.

Not ported, kept differences (grouped):

- Not modelled: loading in progress (``become_leader`` loads at once:
  testDeleteLoadingPartition, testAppendFailToCoordinatorLoadingError,
  testListTransactionsWithCoordinatorLoadingInProgress), metrics
  (testPartitionLoadMetric), log directories (testTransactionalExpirationWithOfflineLogDir),
  the binary record format (testIgnoreUnknownRecordType; kraftsim's records are its own
  encoding) and the finalized transaction.version (testTransactionVersionInTransactionManager:
  a cluster can finalize it, but kraftsim's coordinator takes the protocol from each
  request's version and never reads the feature).
- Not modelled: batching tombstones under max.message.bytes
  (testTransactionalExpirationWithTooSmallBatchSize,
  testTransactionExpirationShouldRespectBatchSize): each expired id is its own append.
- Internal API without a behaviour of its own: testAddGetPids,
  testAppendTransactionToLogWhileProducerFenced (a mock changing the epoch under a lock).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from broker.txn.admin import list_transactions
from broker.txn.coordinator import (
    TransactionCoordinator,
    TxnCoordinatorConfig,
    TxnResult,
    partition_for,
)
from broker.txn.state import (
    IllegalTransition,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    decode_record,
    encode_record,
)
from tests.broker.test_txn_coordinator import Harness

S = TransactionState
TIMEOUT = 1_000


def _transit(pid: int, epoch: int, state: TransactionState,
             partitions: frozenset[tuple[str, int]] = frozenset(),
             start: int = 0) -> TxnTransitMetadata:
    return TxnTransitMetadata(pid, -1, -1, epoch, -1, TIMEOUT, state, partitions, start, 0)


def _record(txn_id: str, pid: int, epoch: int, state: TransactionState,
            *parts: tuple[str, int]) -> str:
    return encode_record(txn_id, _transit(pid, epoch, state, frozenset(parts)))


def _coordinator(num_partitions: int = 1, append_error: str = "NONE"
                 ) -> tuple[TransactionCoordinator, list[str]]:
    log: list[str] = []

    def append(partition: int, text: str, done: Callable[[str], None]) -> None:
        if append_error == "NONE":
            log.append(text)
        done(append_error)

    coordinator = TransactionCoordinator(0, TxnCoordinatorConfig(num_partitions=num_partitions),
                                         append, lambda: ("NONE", 500))
    return coordinator, log


def _init(coordinator: TransactionCoordinator, txn_id: str, timeout: int = TIMEOUT
          ) -> TxnResult:
    out: list[TxnResult] = []
    coordinator.handle_init_producer_id(txn_id, timeout, None, 0, out.append)
    return out[0]


def _add(coordinator: TransactionCoordinator, txn_id: str, pid: int, epoch: int) -> str:
    out: list[str] = []
    coordinator.handle_add_partitions(txn_id, pid, epoch, frozenset({("topic2", 0)}), 0,
                                      out.append)
    return out[0]


@pytest.mark.parametrize(("timeout", "error"), [(1, "NONE"), (-1, "INVALID_TRANSACTION_TIMEOUT"),
                                                (0, "INVALID_TRANSACTION_TIMEOUT"),
                                                (900_000, "NONE"),
                                                (900_001, "INVALID_TRANSACTION_TIMEOUT")])
def test_the_transaction_timeout_is_validated(timeout: int, error: str) -> None:
    """testValidateTransactionTimeout: 0 < timeout <= transaction.max.timeout.ms."""
    coordinator, _ = _coordinator()
    coordinator.become_leader(0, 0, [], 0)
    assert _init(coordinator, "t", timeout).error == error


def test_resigning_one_partition_keeps_the_others() -> None:
    """testDeletePartition."""
    coordinator, _ = _coordinator(num_partitions=2)
    ids = {partition_for(t, 2): t for t in ("a", "b", "c", "d")}
    assert set(ids) == {0, 1}
    coordinator.become_leader(0, 0, [], 0)
    coordinator.become_leader(1, 0, [], 0)
    for txn_id in ids.values():
        assert _init(coordinator, txn_id).error == "NONE"
    coordinator.resign(0)
    assert set(coordinator.txns) == {ids[1]}
    assert _init(coordinator, ids[0]).error == "NOT_COORDINATOR"


def test_loading_keeps_the_latest_record_of_each_id_and_resigning_forgets_them() -> None:
    """testLoadAndRemoveTransactionsForPartition (and a tombstone removes its id, as
    Kafka's loader does)."""
    records = [
        _record("t1", 1, 0, S.ONGOING, ("topic1", 0), ("topic1", 1)),
        _record("t1", 1, 0, S.ONGOING, ("topic1", 0), ("topic1", 1), ("topic2", 0),
                ("topic2", 1), ("topic2", 2)),
        _record("t1", 1, 0, S.PREPARE_COMMIT, ("topic1", 0), ("topic1", 1), ("topic2", 0),
                ("topic2", 1), ("topic2", 2)),
        _record("t2", 2, 0, S.ONGOING, ("topic3", 0), ("topic3", 1), ("topic3", 2)),
        _record("t2", 2, 0, S.PREPARE_ABORT, ("topic3", 0), ("topic3", 1), ("topic3", 2)),
        _record("t2", 2, 0, S.COMPLETE_ABORT),
        _record("t2", 2, 0, S.EMPTY),
        _record("gone", 3, 0, S.EMPTY),
        encode_record("gone", None),
    ]
    coordinator, _ = _coordinator()
    assert _add(coordinator, "t1", 1, 0) == "NOT_COORDINATOR"   # not loaded yet
    coordinator.become_leader(0, 0, records, 0)
    t1, t2 = coordinator.txns["t1"], coordinator.txns["t2"]
    assert (t1.state, t1.producer_id, len(t1.topic_partitions)) == (S.PREPARE_COMMIT, 1, 5)
    assert (t2.state, t2.producer_id, t2.topic_partitions) == (S.EMPTY, 2, frozenset())
    assert "gone" not in coordinator.txns
    coordinator.resign(0)
    assert coordinator.txns == {}
    assert _add(coordinator, "t1", 1, 0) == "NOT_COORDINATOR"
    assert _add(coordinator, "t2", 2, 0) == "NOT_COORDINATOR"


@pytest.mark.parametrize(("append_error", "answer"), [
    ("UNKNOWN_TOPIC_OR_PARTITION", "COORDINATOR_NOT_AVAILABLE"),
    ("NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE"),
    ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", "COORDINATOR_NOT_AVAILABLE"),
    ("REQUEST_TIMED_OUT", "COORDINATOR_NOT_AVAILABLE"),
    ("NOT_LEADER_OR_FOLLOWER", "NOT_COORDINATOR"),
    ("MESSAGE_TOO_LARGE", "UNKNOWN_SERVER_ERROR"),
    ("RECORD_LIST_TOO_LARGE", "UNKNOWN_SERVER_ERROR"),
])
def test_a_failed_append_answers_the_mapped_error_and_changes_nothing(
        append_error: str, answer: str) -> None:
    """testAppendFailTo{CoordinatorNotAvailable,NotCoordinator,Unknown}Error: the client
    gets the mapped error, the pending state is cleared and the metadata is as before."""
    h = Harness()
    pid = h.init().producer_id
    h.fail_next = [append_error]
    assert h.add(pid, 0, ("topic2", 0)) == answer
    m = h.meta
    assert (m.state, m.pending_state, m.topic_partitions) == (S.EMPTY, None, frozenset())
    assert h.add(pid, 0, ("topic2", 0)) == "NONE"   # and the next attempt goes through


def test_an_append_that_lands_after_resigning_answers_not_coordinator() -> None:
    """testAppendFailToNotCoordinatorError, the partition given up while appending."""
    h = Harness(auto_ack=False)
    h.put(TransactionMetadata("t", 7, TIMEOUT, 0, 0))
    out: list[str] = []
    h.coordinator.handle_add_partitions("t", 7, 0, frozenset({("topic2", 0)}), 0, out.append)
    h.coordinator.resign(0)
    h.waiting.pop()("NONE")
    assert out == ["NOT_COORDINATOR"]


def test_completing_a_transition_that_is_not_pending_is_a_bug() -> None:
    """testAppendTransactionToLogWhilePendingStateChanged."""
    meta = TransactionMetadata("t", 7, TIMEOUT, 0, 0)
    transit = meta.transit(S.ONGOING, 1, topic_partitions=frozenset({("topic1", 0)}))
    meta.pending_state = None
    with pytest.raises(IllegalTransition):
        meta.complete_transition_to(transit)


def test_a_broker_owning_no_partition_is_not_the_coordinator() -> None:
    """shouldReturnNotCoordinatorErrorIfTransactionIdPartitionNotOwned."""
    coordinator, _ = _coordinator()
    assert _init(coordinator, "t").error == "NOT_COORDINATOR"


def test_list_transactions_filters() -> None:
    """testListTransactionsFiltering: by duration (strictly longer), state names (unknown
    ones reported) and producer ids; Dead is never listed."""
    coordinator, _ = _coordinator()
    coordinator.become_leader(0, 0, [], 0)
    for n, (state, start) in enumerate([
            (S.ONGOING, 0), (S.ONGOING, 0), (S.PREPARE_COMMIT, 1000), (S.PREPARE_ABORT, 1000),
            (S.COMPLETE_COMMIT, 2000), (S.COMPLETE_ABORT, 2000), (S.COMPLETE_ABORT, 2000),
            (S.PREPARE_EPOCH_FENCE, 2000), (S.DEAD, 3000)]):
        meta = TransactionMetadata(f"t{n}", n, TIMEOUT, start, 0, state=state)
        meta.txn_start_timestamp = start
        coordinator.txns[meta.transactional_id] = meta

    def listed(states: tuple[str, ...] = (), pids: tuple[int, ...] = (),
               duration: int = -1) -> set[str]:
        result = list_transactions(coordinator, 3000, states, pids, duration)
        assert result.ErrorCode == "NONE"
        assert result.UnknownStateFilters == [s for s in states if s == "UnknownState"]
        return {t.TransactionalId for t in result.TransactionStates}

    every = {f"t{n}" for n in range(8)}
    assert listed() == every
    assert listed(duration=0) == every
    assert listed(duration=1000) == {"t0", "t1", "t2", "t3"}
    assert listed(duration=2000) == {"t0", "t1"}
    assert listed(duration=3000) == set()
    assert listed(("Ongoing",)) == {"t0", "t1"}
    assert listed(("Ongoing", "UnknownState")) == {"t0", "t1"}
    assert listed(("PrepareCommit", "CompleteCommit")) == {"t2", "t4"}
    assert listed(("UnknownState",)) == set()
    assert listed(pids=(5,)) == {"t5"}
    assert listed(pids=(5, 6, 8, 9)) == {"t5", "t6"}
    assert listed(("CompleteCommit",), (4, 5)) == {"t4"}
    assert listed(("CompleteCommit", "CompleteAbort"), (4, 5)) == {"t4", "t5"}
    assert listed(("UnknownState",), (3, 6)) == set()
    assert listed(("CompleteCommit",), (10,)) == set()
    assert listed(("Dead",)) == set()


def test_only_ongoing_transactions_past_their_timeout_are_aborted() -> None:
    """shouldOnlyConsiderTransactionsInTheOngoingStateToAbort."""
    coordinator, log = _coordinator()
    coordinator.become_leader(0, 0, [], 0)
    for n, (txn_id, state, timeout) in enumerate([
            ("ongoing", S.ONGOING, TIMEOUT), ("not-expiring", S.ONGOING, 10_000),
            ("prepare-commit", S.PREPARE_COMMIT, TIMEOUT),
            ("prepare-abort", S.PREPARE_ABORT, TIMEOUT),
            ("complete-commit", S.COMPLETE_COMMIT, TIMEOUT),
            ("complete-abort", S.COMPLETE_ABORT, TIMEOUT)]):
        meta = TransactionMetadata(txn_id, n, timeout, 0, 0, state=state)
        meta.txn_start_timestamp = 0
        coordinator.txns[txn_id] = meta
    coordinator.abort_timed_out(2000)
    changed = {t for t, m in coordinator.txns.items() if m.producer_epoch != 0}
    assert changed == {"ongoing"}
    assert {decode_record(text).TransactionalId for text in log} == {"ongoing"}


@pytest.mark.parametrize(("state", "commit"), [(S.PREPARE_COMMIT, True),
                                               (S.PREPARE_ABORT, False)])
def test_loading_a_prepared_transaction_sends_its_markers(state: TransactionState,
                                                          commit: bool) -> None:
    """shouldWriteTxnMarkersForTransactionInPrepared{Commit,Abort}State."""
    coordinator, _ = _coordinator()
    coordinator.become_leader(0, 3, [_record("t1", 1, 4, state, ("topic1", 0),
                                             ("topic1", 1))], 0)
    sent = coordinator.drain_outbox()
    assert [(m.transactional_id, m.coordinator_epoch, m.producer_id, m.producer_epoch,
             m.commit, m.topic, m.partition) for m in sent] == [
        ("t1", 3, 1, 4, commit, "topic1", 0), ("t1", 3, 1, 4, commit, "topic1", 1)]


def test_loading_again_at_a_newer_epoch_without_resigning() -> None:
    """testSuccessfulReimmigration (and testLoadTransactionMetadataWithCorruptedLog's
    empty partition loads as nothing). Markers of the earlier load not yet sent are
    dropped (Kafka's onElection removes them): only the new epoch's go out."""
    coordinator, _ = _coordinator()
    records = [_record("t1", 1, 0, S.PREPARE_COMMIT, ("topic1", 0), ("topic1", 1))]
    coordinator.become_leader(0, 0, records, 0)
    coordinator.become_leader(0, 1, records, 0)
    assert coordinator.owned == {0: 1} and coordinator.txns["t1"].state == S.PREPARE_COMMIT
    assert [m.coordinator_epoch for m in coordinator.drain_outbox()] == [1, 1]
    coordinator.become_leader(0, 2, [], 0)
    assert coordinator.owned == {0: 2} and coordinator.txns == {}


# ---------------------------------------------------------------- transactional id expiration
EXPIRATION = TxnCoordinatorConfig().transactional_id_expiration_ms
NOW = EXPIRATION + 5_000


def _idle(txn_id: str, pid: int, state: TransactionState, updated: int,
          epoch: int = 0) -> TransactionMetadata:
    meta = TransactionMetadata(txn_id, pid, TIMEOUT, updated, epoch, -1, -1, state)
    if state in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT):
        meta.topic_partitions = frozenset({("topic1", 0)})
        meta.txn_start_timestamp = updated
    return meta


def _two_ids(state: TransactionState) -> Harness:
    """t1 in ``state``, last updated exactly the expiration ago; t2 updated just now."""
    h = Harness(first_pid=900)
    h.put(_idle("t1", 1, state, NOW - EXPIRATION))
    h.put(_idle("t2", 2, S.EMPTY, NOW))
    return h


@pytest.mark.parametrize("state", [S.COMPLETE_COMMIT, S.COMPLETE_ABORT, S.EMPTY])
def test_an_idle_transactional_id_expires_with_a_tombstone(state: TransactionState) -> None:
    """shouldRemove{CompleteCommit,CompleteAbort,Empty}ExpiredTransactionalIds: one
    tombstone for t1, t1 forgotten (its next InitProducerId starts over with a new producer
    id), t2 kept."""
    h = _two_ids(state)
    h.coordinator.remove_expired(NOW)
    assert [(r.TransactionalId, r.Value) for r in map(decode_record, h.log)] == [("t1", None)]
    assert set(h.coordinator.txns) == {"t2"}
    assert h.coordinator.txns["t2"].pending_state is None
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t1", TIMEOUT, (1, 0), NOW, out.append)
    assert out == [TxnResult("NONE", 900, 0)]


@pytest.mark.parametrize("state", [S.ONGOING, S.PREPARE_ABORT, S.PREPARE_COMMIT])
def test_an_open_transaction_never_expires(state: TransactionState) -> None:
    """shouldNotRemove{Ongoing,PrepareAbort,PrepareCommit}TransactionalIds."""
    h = _two_ids(state)
    h.coordinator.remove_expired(NOW)
    assert h.log == [] and set(h.coordinator.txns) == {"t1", "t2"}
    assert h.coordinator.txns["t1"].pending_state is None


def test_an_id_whose_tombstone_fails_is_kept_and_usable() -> None:
    """shouldNotRemoveExpiredTransactionalIdsIfLogAppendFails."""
    h = _two_ids(S.COMPLETE_ABORT)
    h.fail_next = ["NOT_ENOUGH_REPLICAS"]
    h.coordinator.remove_expired(NOW)
    assert h.log == [] and set(h.coordinator.txns) == {"t1", "t2"}
    t1 = h.coordinator.txns["t1"]
    assert (t1.state, t1.pending_state) == (S.COMPLETE_ABORT, None)
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t1", TIMEOUT, None, NOW, out.append)
    assert out == [TxnResult("NONE", 1, 1)]


def test_an_id_whose_first_init_producer_id_failed_expires_too() -> None:
    """testTransactionExpirationShouldNotFailWithUninitializedTransactionMetadata: the first
    InitProducerId's append failed, so the metadata stays at epoch -1; it expires."""
    h = Harness(first_pid=900)
    h.fail_next = ["NOT_ENOUGH_REPLICAS"]
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("id", TIMEOUT, None, 0, out.append)
    assert out == [TxnResult("COORDINATOR_NOT_AVAILABLE")]
    assert h.coordinator.txns["id"].producer_epoch == -1
    h.coordinator.remove_expired(EXPIRATION + 1)
    assert [decode_record(r).TransactionalId for r in h.log] == ["id"]
    assert h.coordinator.txns == {}


def test_requests_wait_while_the_tombstone_is_written() -> None:
    """While the tombstone is appended the id is pending Dead: InitProducerId and
    AddPartitionsToTxn get CONCURRENT_TRANSACTIONS (Kafka's pending-state checks); an id
    given up meanwhile is simply gone."""
    h = _two_ids(S.COMPLETE_COMMIT)
    h.auto_ack = False
    h.coordinator.remove_expired(NOW)
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t1", TIMEOUT, None, NOW, out.append)
    added: list[str] = []
    h.coordinator.handle_add_partitions("t1", 1, 0, frozenset({("a", 0)}), NOW, added.append)
    assert (out, added) == ([TxnResult("CONCURRENT_TRANSACTIONS")], ["CONCURRENT_TRANSACTIONS"])
    h.coordinator.resign(0)
    h.waiting.pop()("NONE")
    assert h.coordinator.txns == {}


def test_the_expiration_check_runs_every_interval() -> None:
    """The coordinator's poll runs the check every
    transaction.remove.expired.transaction.cleanup.interval.ms (Kafka's scheduler, first
    one interval after start-up); next_deadline names it."""
    h = Harness()
    interval = h.coordinator.config.remove_expired_interval_ms
    h.put(_idle("t1", 1, S.EMPTY, 0))
    h.coordinator.next_abort_check = 10 * EXPIRATION  # only the expiration check is due
    assert h.coordinator.next_deadline() == interval
    h.coordinator.poll(EXPIRATION - 1)
    assert h.log == [] and h.coordinator.next_deadline() == EXPIRATION - 1 + interval
    h.coordinator.poll(EXPIRATION)        # before the next check: nothing
    assert h.log == []
    h.coordinator.poll(EXPIRATION - 1 + interval)
    assert [decode_record(r).TransactionalId for r in h.log] == ["t1"]
    assert h.coordinator.txns == {}


# ---------------------------------------------------------------- appends
def test_a_successful_append_takes_the_transition() -> None:
    """testCompleteTransitionWhenAppendSucceeded: Ongoing with both partitions, nothing
    pending."""
    h = Harness()
    pid = h.init().producer_id
    assert h.add(pid, 0, ("topic1", 0), ("topic1", 1)) == "NONE"
    m = h.meta
    assert (m.state, m.pending_state, m.topic_partitions) == \
        (S.ONGOING, None, frozenset({("topic1", 0), ("topic1", 1)}))


@pytest.mark.parametrize("append_error", ["UNKNOWN_TOPIC_OR_PARTITION", "NOT_ENOUGH_REPLICAS"])
def test_a_completion_append_to_retry_keeps_its_pending_state(append_error: str) -> None:
    """testPendingStateNotResetOnRetryAppend: the Complete* append after the markers fails
    COORDINATOR_NOT_AVAILABLE (mapped from ``append_error``); Kafka keeps the pending state
    for the retry, so an EndTxn meanwhile is CONCURRENT_TRANSACTIONS whatever its result
    (not INVALID_TXN_STATE for an abort of the PrepareCommit), an InitProducerId too, and
    the next poll appends the very same record."""
    h = Harness()
    pid = h.init().producer_id
    assert h.add(pid, 0, ("topic1", 0)) == "NONE"
    assert h.end(pid, 0, True) == "NONE"
    h.fail_next = [append_error]
    h.deliver_markers()
    assert (h.meta.state, h.meta.pending_state) == (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)
    assert (h.end(pid, 0, False), h.end(pid, 0, True)) == \
        ("CONCURRENT_TRANSACTIONS", "CONCURRENT_TRANSACTIONS")
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    written = len(h.log)
    h.coordinator.poll(50)
    assert len(h.log) == written + 1
    r = decode_record(h.log[-1]).Value
    assert r is not None
    assert (S(r.TransactionStatus), r.TransactionLastUpdateTimestampMs) == \
        (S.COMPLETE_COMMIT, 10)  # the first attempt's time (deliver_markers' 10)
    assert (h.meta.state, h.meta.pending_state) == (S.COMPLETE_COMMIT, None)
