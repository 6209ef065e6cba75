"""Cases of Kafka's TransactionCoordinatorTest, in kraftsim's terms.

Kafka class followed: ``TransactionCoordinatorTest``
(``core/src/test/scala/unit/kafka/coordinator/transaction``). Kafka mocks the
state manager and the producer-id manager; here the coordinator runs with a log
that acknowledges (or fails) each append, and every case asserts what the
client gets back, the state reached and the ``__transaction_state`` record
written. Kafka parametrizes many cases over the transaction version (0 and 2):
kraftsim's TV1 EndTxn is ``handle_end_txn`` and its TV2 (KIP-890 part 2) EndTxn
is ``handle_end_txn_tv2``; where Kafka's TV2 rules changed on trunk after the
mirrored test, the reference's trunk table (section 1.5) is followed.

Cases whose test docstrings abbreviate their Kafka names:
shouldRespondWithConcurrentTransactionOnAddPartitionsWhenStateIsPrepareAbort (with its
PrepareCommit twin, test_add_partitions_while_completing_is_concurrent);
shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAndResultIsCommit and
shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbort
(test_a_retried_end_txn_of_a_completed_transaction_succeeds);
shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort and
shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit
(test_end_txn_with_the_other_result_of_a_completed_transaction_is_invalid);
shouldAppendPrepareCommitToLogOnEndTxnWhenStatusIsOngoingAndResultIsCommit and
shouldAppendPrepareAbortToLogOnEndTxnWhenStatusIsOngoingAndResultIsAbort
(test_end_txn_of_an_ongoing_transaction_appends_prepare).

Not ported, kept differences (grouped):

- Not modelled: a coordinator loading a partition. ``become_leader`` loads the
  partition's records at once, so no request sees COORDINATOR_LOAD_IN_PROGRESS
  (shouldRespondWithCoordinatorLoadInProgressOnInitPidWhenCoordinatorLoading,
  shouldRespondWithCoordinatorLoadInProgressOnAddPartitionsWhenCoordinatorLoading,
  shouldRespondWithCoordinatorLoadInProgressOnEndTxnWhenCoordinatorIsLoading,
  testDescribeTransactionsWhileCoordinatorLoading).
- Not reproducible: shouldFailToAbortTransactionOnHandleInitPidWhenProducerEpochIsSmaller
  mocks another thread bumping the epoch between the fence and its abort; kraftsim's
  coordinator runs both in one step, so the abort always carries the fenced epoch.
- Deliberate: the EndTxn rules (TV1 or TV2) follow the request's version, not the stored
  transaction's (shouldReturnWhenTransactionVersionDowngraded,
  shouldReturnCorrectlyWhenTransactionVersionUpgraded; see those tests).
"""

from __future__ import annotations

import pytest

from broker.txn.admin import describe_transactions
from broker.txn.coordinator import TxnResult
from broker.txn.state import (
    EXHAUSTED_EPOCH,
    MAX_EPOCH,
    TV2,
    TransactionLogValue,
    TransactionMetadata,
    TransactionState,
    decode_record,
)
from tests.broker.test_txn_coordinator import Harness

S = TransactionState
PID = 10
EPOCH = 1
TIMEOUT = 1_000
NOW = 5
PARTS = frozenset({("topic1", 0)})


def _meta(state: TransactionState, epoch: int = EPOCH, *, last: int = EPOCH - 1,
          tv: int = 0, pid: int = PID, prev: int = PID,
          partitions: frozenset[tuple[str, int]] | None = None) -> TransactionMetadata:
    meta = TransactionMetadata("t", pid, TIMEOUT, 0, epoch, last, prev, state)
    meta.client_transaction_version = tv
    if partitions is None:
        partitions = PARTS if state in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT) \
            else frozenset()
    meta.topic_partitions = partitions
    meta.txn_start_timestamp = 0
    return meta


def _harness(meta: TransactionMetadata | None = None, first_pid: int = 100) -> Harness:
    h = Harness(first_pid=first_pid)
    if meta is not None:
        h.put(meta)
    return h


def _init(h: Harness, expected: tuple[int, int] | None = None, timeout: int = TIMEOUT,
          now: int = NOW) -> TxnResult:
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", timeout, expected, now, out.append)
    return out[0]


def _add(h: Harness, pid: int = PID, epoch: int = EPOCH, txn_id: str = "t",
         tv: int = 0) -> str:
    out: list[str] = []
    h.coordinator.handle_add_partitions(txn_id, pid, epoch, PARTS, NOW, out.append,
                                        transaction_version=tv)
    return out[0]


def _end(h: Harness, tv: int, epoch: int, commit: bool = True, pid: int = PID,
         txn_id: str = "t") -> TxnResult:
    """EndTxn of client transaction version ``tv``, answered as (error, pid, epoch)."""
    if tv >= TV2:
        out: list[TxnResult] = []
        h.coordinator.handle_end_txn_tv2(txn_id, pid, epoch, commit, NOW, out.append)
        return out[0]
    errors: list[str] = []
    h.coordinator.handle_end_txn(txn_id, pid, epoch, commit, NOW, errors.append)
    return TxnResult(errors[0])


def _retry_epoch(tv: int) -> int:
    """The epoch a client retrying the EndTxn of the current state holds (Kafka's
    requestEpoch): TV2 bumped the stored epoch at EndTxn, TV1 did not."""
    return EPOCH - 1 if tv >= TV2 else EPOCH


def _record(h: Harness) -> TransactionLogValue:
    value = decode_record(h.log[-1]).Value
    assert value is not None
    return value


# ---------------------------------------------------------------- AddPartitionsToTxn
def test_add_partitions_of_an_unknown_transactional_id_is_an_invalid_mapping() -> None:
    """shouldRespondWithInvalidPidMappingOnAddPartitionsToTransactionWhenTransactionalIdNotPresent."""
    assert _add(_harness()) == "INVALID_PRODUCER_ID_MAPPING"


def test_add_partitions_without_transactional_id_is_an_invalid_request() -> None:
    """shouldRespondWithInvalidRequestAddPartitionsToTransactionWhenTransactionalId{IsEmpty,IsNull}."""
    assert _add(_harness(), txn_id="") == "INVALID_REQUEST"


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_add_partitions_while_completing_is_concurrent(state: TransactionState) -> None:
    """shouldRespondWithConcurrentTransactions{s,}OnAddPartitionsWhenStateIsPrepare{Commit,Abort}."""
    h = _harness(_meta(state, 0, last=-1, pid=0, tv=TV2))
    assert _add(h, 0, 0) == "CONCURRENT_TRANSACTIONS"
    assert h.log == []


def test_add_partitions_with_another_epoch_is_fenced_before_the_state_is_looked_at() -> None:
    """shouldRespondWithProducerFencedOnAddPartitionsWhenEpochsAreDifferent."""
    h = _harness(_meta(S.PREPARE_COMMIT, 10, last=9, pid=0, tv=TV2))
    assert _add(h, 0, 0) == "PRODUCER_FENCED"


@pytest.mark.parametrize(("state", "tv"), [(S.EMPTY, 0), (S.ONGOING, 0),
                                           (S.COMPLETE_COMMIT, 0), (S.COMPLETE_COMMIT, TV2),
                                           (S.COMPLETE_ABORT, 0), (S.COMPLETE_ABORT, TV2)])
def test_add_partitions_appends_the_ongoing_state(state: TransactionState, tv: int) -> None:
    """shouldAppendNewMetadataToLogOnAddPartitionsWhenPartitionsAdded,
    shouldRespondWithSuccessOnAddPartitionsWhenStateIs{Ongoing,CompleteCommit,CompleteAbort}."""
    h = _harness(_meta(state, tv=tv, partitions=frozenset()))
    assert _add(h, tv=tv) == "NONE"
    record = _record(h)
    assert (S(record.TransactionStatus), record.ProducerId, record.ProducerEpoch,
            record.TransactionPartitions) == (S.ONGOING, PID, EPOCH, [("topic1", 0)])
    assert h.meta.state == S.ONGOING and h.meta.topic_partitions == PARTS


# ---------------------------------------------------------------- EndTxn
@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_of_an_unknown_transactional_id_is_an_invalid_mapping(tv: int) -> None:
    """shouldReplyWithInvalidPidMappingOnEndTxnWhenTxnIdDoesntExist."""
    assert _end(_harness(), tv, 0).error == "INVALID_PRODUCER_ID_MAPPING"


@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_of_another_producer_id_is_an_invalid_mapping(tv: int) -> None:
    """shouldReplyWithInvalidPidMappingOnEndTxnWhenPidDosentMatchMapped."""
    h = _harness(_meta(S.ONGOING, 0, last=-1))
    assert _end(h, tv, 0, pid=0).error == "INVALID_PRODUCER_ID_MAPPING"


@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_with_another_epoch_than_the_ongoing_one_is_fenced(tv: int) -> None:
    """shouldReplyWithProducerFencedOnEndTxnWhenEpochIsNotSameAsTransaction."""
    h = _harness(_meta(S.ONGOING))
    assert _end(h, tv, 0) == TxnResult("PRODUCER_FENCED")
    assert len(h.log) == 0


@pytest.mark.parametrize("tv", [0, TV2])
@pytest.mark.parametrize(("state", "commit"), [(S.COMPLETE_COMMIT, True),
                                               (S.COMPLETE_ABORT, False)])
def test_a_retried_end_txn_of_a_completed_transaction_succeeds(
        tv: int, state: TransactionState, commit: bool) -> None:
    """shouldReturnOkOnEndTxnWhenStatusIsComplete{Commit,Abort}AndResultIs{Commit,Abort}:
    TV2 answers the producer the client holds next (the stored one)."""
    h = _harness(_meta(state, tv=tv))
    answer = _end(h, tv, _retry_epoch(tv), commit)
    assert answer == (TxnResult("NONE", PID, EPOCH) if tv >= TV2 else TxnResult("NONE"))
    assert h.log == []


@pytest.mark.parametrize("tv", [0, TV2])
@pytest.mark.parametrize(("state", "commit"), [(S.COMPLETE_ABORT, True),
                                               (S.COMPLETE_COMMIT, False)])
def test_end_txn_with_the_other_result_of_a_completed_transaction_is_invalid(
        tv: int, state: TransactionState, commit: bool) -> None:
    """shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsComplete{Abort,Commit}AndResultIsNot..."""
    h = _harness(_meta(state, tv=tv))
    assert _end(h, tv, _retry_epoch(tv), commit).error == "INVALID_TXN_STATE"


@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_while_completing(tv: int) -> None:
    """shouldReturnConcurrentTransactionsOnEndTxnRequestWhenStatusIsPrepareCommit and
    shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort."""
    h = _harness(_meta(S.PREPARE_COMMIT, tv=tv))
    assert _end(h, tv, _retry_epoch(tv), True).error == "CONCURRENT_TRANSACTIONS"
    h = _harness(_meta(S.PREPARE_ABORT, last=-1, tv=tv))
    assert _end(h, tv, _retry_epoch(tv), True).error == "INVALID_TXN_STATE"


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_while_a_transition_is_pending_is_concurrent(commit: bool) -> None:
    """An EndTxn that arrives while an AddPartitionsToTxn's append is still in flight (a
    pending state) is answered CONCURRENT_TRANSACTIONS at once, and nothing is appended
    (Kafka's handleEndTransaction checks pendingState before the state)."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.meta.transit(S.ONGOING, NOW)  # the pending AddPartitionsToTxn
    assert _end(h, 0, EPOCH, commit).error == "CONCURRENT_TRANSACTIONS"
    assert h.log == [] and h.meta.pending_state == S.ONGOING


def test_tv2_end_txn_at_the_stored_epoch_is_the_next_request_not_a_retry() -> None:
    """shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry, as trunk answers it
    (reference 1.5): after CompleteCommit a commit at the stored epoch has nothing to
    commit (INVALID_TXN_STATE). During PrepareCommit kraftsim answers
    CONCURRENT_TRANSACTIONS where trunk answers PRODUCER_FENCED: it follows PR #21735
    (docs/transactions.md)."""
    h = _harness(_meta(S.COMPLETE_COMMIT, last=-1, tv=TV2))
    assert _end(h, TV2, EPOCH, True).error == "INVALID_TXN_STATE"
    h = _harness(_meta(S.PREPARE_COMMIT, last=-1, tv=TV2))
    assert _end(h, TV2, EPOCH, True).error == "CONCURRENT_TRANSACTIONS"


def test_tv2_end_txn_retried_across_an_epoch_overflow() -> None:
    """shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow."""
    prepared = _meta(S.PREPARE_COMMIT, MAX_EPOCH, last=MAX_EPOCH - 1, tv=TV2)
    prepared.next_producer_id, prepared.next_producer_epoch = 11, 0
    h = _harness(prepared)
    assert _end(h, TV2, MAX_EPOCH - 1).error == "CONCURRENT_TRANSACTIONS"
    h = _harness(_meta(S.COMPLETE_COMMIT, 0, last=-1, pid=11, prev=PID, tv=TV2))
    assert _end(h, TV2, MAX_EPOCH - 1) == TxnResult("NONE", 11, 0)


@pytest.mark.parametrize("tv", [0, TV2])
@pytest.mark.parametrize(("commit", "state"), [(True, S.PREPARE_COMMIT),
                                               (False, S.PREPARE_ABORT)])
def test_end_txn_of_an_ongoing_transaction_appends_prepare(
        tv: int, commit: bool, state: TransactionState) -> None:
    """shouldAppendPrepare{Commit,Abort}ToLogOnEndTxnWhenStatusIsOngoingAndResultIs...:
    TV1 keeps the epoch, TV2 bumps it."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.auto_ack = False
    out: list[object] = []
    if tv >= TV2:
        h.coordinator.handle_end_txn_tv2("t", PID, EPOCH, commit, NOW, out.append)
    else:
        h.coordinator.handle_end_txn("t", PID, EPOCH, commit, NOW, out.append)
    assert out == []  # answered once the record is durable
    record = _record(h)
    assert (S(record.TransactionStatus), record.ProducerId, record.ProducerEpoch,
            record.TransactionPartitions) == (state, PID, EPOCH + (tv >= TV2),
                                              [("topic1", 0)])


@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_without_transactional_id_is_an_invalid_request(tv: int) -> None:
    """shouldRespondWithInvalidRequestOnEndTxnWhenTransactionalIdIs{Null,Empty}."""
    assert _end(_harness(), tv, 0, txn_id="").error == "INVALID_REQUEST"


@pytest.mark.parametrize("tv", [0, TV2])
def test_end_txn_at_a_broker_that_is_not_the_coordinator(tv: int) -> None:
    """shouldRespondWithNotCoordinatorOnEndTxnWhenIsNotCoordinatorForId."""
    h = _harness(_meta(S.ONGOING))
    h.coordinator.resign(0)
    assert _end(h, tv, EPOCH).error == "NOT_COORDINATOR"


@pytest.mark.parametrize("tv", [0, TV2])
@pytest.mark.parametrize(("stored", "asked"), [(1, 2), (2, None)])
def test_end_txn_with_a_larger_or_smaller_epoch_is_fenced(tv: int, stored: int,
                                                          asked: int | None) -> None:
    """shouldReturnInvalidEpochOnEndTxnWhenEpochIs{Larger,Smaller} (a smaller one under
    TV2 is one older than a retry's)."""
    h = _harness(_meta(S.COMPLETE_COMMIT, stored, tv=tv))
    epoch = asked if asked is not None else _retry_epoch(tv)
    assert _end(h, tv, epoch).error == "PRODUCER_FENCED"


# ---------------------------------------------------------------- InitProducerId
@pytest.mark.parametrize(("state", "tv"), [(S.EMPTY, 0), (S.COMPLETE_ABORT, 0),
                                           (S.COMPLETE_ABORT, TV2), (S.COMPLETE_COMMIT, 0),
                                           (S.COMPLETE_COMMIT, TV2)])
def test_init_producer_id_bumps_the_epoch_and_takes_the_new_timeout(
        state: TransactionState, tv: int) -> None:
    """shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExisting{Empty,Complete,
    CompleteCommit}Transaction."""
    h = _harness(_meta(state, last=-1, tv=tv))
    assert _init(h, timeout=10, now=77) == TxnResult("NONE", PID, EPOCH + 1)
    m = h.meta
    assert (m.state, m.producer_id, m.producer_epoch, m.txn_timeout_ms,
            m.txn_last_update_timestamp) == (S.EMPTY, PID, EPOCH + 1, 10, 77)
    assert _record(h).TransactionTimeoutMs == 10


def test_init_producer_id_on_an_ongoing_transaction_writes_the_fenced_abort() -> None:
    """shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState: the
    PrepareAbort record carries epoch + 1 and no last epoch, the client is told to retry."""
    h = _harness(_meta(S.ONGOING))
    assert _init(h) == TxnResult("CONCURRENT_TRANSACTIONS")
    record = _record(h)
    assert (S(record.TransactionStatus), record.ProducerId, record.ProducerEpoch,
            record.LastProducerEpoch, record.PreviousProducerId,
            record.TransactionPartitions) == (S.PREPARE_ABORT, PID, EPOCH + 1, -1, PID,
                                              [("topic1", 0)])


def test_a_failed_fence_bumps_once_and_a_completed_abort_clears_the_failure() -> None:
    """shouldNotRepeatedlyBumpEpochDueToInitPidDuringOngoingTxnIfAppendToLogFails: two
    failed fence appends leave epoch + 1 (hasFailedEpochFence); the third writes it, and
    completing the abort clears the flag (Kafka's prepareComplete), so the next fence of a
    later transaction bumps again."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.fail_next = ["NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS"]
    for _ in range(2):
        assert _init(h).error == "COORDINATOR_NOT_AVAILABLE"
        assert (h.meta.producer_epoch, h.meta.has_failed_epoch_fence) == (EPOCH + 1, True)
    assert _init(h).error == "CONCURRENT_TRANSACTIONS"
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, EPOCH + 1)
    h.deliver_markers()
    assert (h.meta.state, h.meta.has_failed_epoch_fence) == (S.COMPLETE_ABORT, False)
    assert _init(h) == TxnResult("NONE", PID, EPOCH + 2)
    assert _add(h, PID, EPOCH + 2) == "NONE"
    assert _init(h).error == "CONCURRENT_TRANSACTIONS"   # the new transaction is fenced
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, EPOCH + 3)


def test_init_producer_id_with_a_pending_transition_is_concurrent() -> None:
    """shouldNotBumpEpochWithPendingTransaction."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.meta.transit(S.PREPARE_COMMIT, NOW)
    assert _init(h, (PID, 10)) == TxnResult("CONCURRENT_TRANSACTIONS")
    assert h.log == []


# ---------------------------------------------------------------- leadership, timeouts
def test_resigning_drops_the_partitions_transactions_and_markers() -> None:
    """shouldRemoveTransactionsForPartitionOnEmigration: the metadata and the markers in
    flight are forgotten; a late marker answer changes nothing."""
    h = _harness(_meta(S.ONGOING, last=-1))
    assert _end(h, 0, EPOCH).error == "NONE"
    [marker] = h.coordinator.drain_outbox()
    h.coordinator.resign(0)
    assert h.coordinator.txns == {} and h.coordinator.completions == {}
    h.coordinator.on_marker_result(marker, "NONE", 10)
    assert h.coordinator.txns == {} and len(h.log) == 1


def test_resigning_drops_the_markers_not_yet_sent() -> None:
    """shouldRemoveTransactionsForPartitionOnEmigration (removeMarkersForTxnTopicPartition):
    queued markers and marker retries of the partition are not sent after resigning."""
    h = _harness(_meta(S.ONGOING, last=-1, partitions=frozenset({("a", 0), ("b", 0)})))
    assert _end(h, 0, EPOCH).error == "NONE"
    first, second = h.coordinator.drain_outbox()
    h.coordinator.on_marker_result(first, "NOT_LEADER_OR_FOLLOWER", 10)  # to be retried
    h.coordinator.outbox.append(second)                                 # not sent yet
    h.coordinator.resign(0)
    h.coordinator.poll(10_000)
    assert h.coordinator.drain_outbox() == [] and h.coordinator.retries == []


def test_a_timed_out_transaction_is_fenced_and_aborted() -> None:
    """shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch: the PrepareAbort record
    has epoch + 1, no last epoch, the start time kept and the check's time as update."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.coordinator.abort_timed_out(10_000)
    r = _record(h)
    assert (S(r.TransactionStatus), r.ProducerId, r.PreviousProducerId, r.ProducerEpoch,
            r.LastProducerEpoch, r.TransactionStartTimestampMs,
            r.TransactionLastUpdateTimestampMs) == (S.PREPARE_ABORT, PID, PID, EPOCH + 1, -1,
                                                    0, 10_000)


def test_a_timed_out_transaction_with_a_pending_transition_is_left_alone() -> None:
    """shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.meta.transit(S.PREPARE_COMMIT, NOW)
    h.coordinator.abort_timed_out(10_000)
    assert h.log == [] and h.meta.pending_state == S.PREPARE_COMMIT


def test_a_failed_timeout_abort_keeps_the_bumped_epoch_and_does_not_bump_again() -> None:
    """shouldNotBumpEpochWhenAbortingExpiredTransactionIfAppendToLogFails."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.fail_next = ["NOT_ENOUGH_REPLICAS"]
    h.coordinator.abort_timed_out(10_000)
    assert (h.meta.state, h.meta.producer_epoch, h.meta.has_failed_epoch_fence) == \
        (S.ONGOING, EPOCH + 1, True)
    assert h.meta.pending_state is None and h.log == []
    h.coordinator.abort_timed_out(20_000)
    assert (h.meta.state, _record(h).ProducerEpoch) == (S.PREPARE_ABORT, EPOCH + 1)


# ---------------------------------------------------------------- DescribeTransactions
def test_describe_transactions_without_transactional_id_is_an_invalid_request() -> None:
    """testDescribeTransactionsWithEmptyTransactionalId."""
    [described] = describe_transactions(_harness().coordinator, [""])
    assert (described.ErrorCode, described.TransactionalId) == ("INVALID_REQUEST", "")


def test_describe_transactions_of_an_expiring_transactional_id_is_not_found() -> None:
    """testDescribeTransactionsWithExpiringTransactionalId."""
    [described] = describe_transactions(_harness(_meta(S.DEAD)).coordinator, ["t"])
    assert (described.ErrorCode, described.TransactionalId) == \
        ("TRANSACTIONAL_ID_NOT_FOUND", "t")


def test_describe_transactions() -> None:
    """testDescribeTransactions."""
    [d] = describe_transactions(_harness(_meta(S.ONGOING, last=-1)).coordinator, ["t"])
    assert (d.ErrorCode, d.TransactionalId, d.ProducerId, d.ProducerEpoch,
            d.TransactionTimeoutMs, d.TransactionStartTimeMs, d.TransactionState,
            d.Topics) == ("NONE", "t", PID, EPOCH, TIMEOUT, 0, "Ongoing", [("topic1", [0])])


def test_a_new_transactional_id_is_described_empty_without_a_start_time() -> None:
    """A transactional id whose first InitProducerId is still being written is Empty with
    no transaction start time (-1, as Kafka's new TransactionMetadata has), as it is once
    the record is durable."""
    h = _harness()
    h.auto_ack = False
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", TIMEOUT, None, NOW, out.append)
    [d] = describe_transactions(h.coordinator, ["t"])
    assert (d.TransactionState, d.TransactionStartTimeMs, d.Topics) == ("Empty", -1, [])
    h.waiting.pop()("NONE")
    [d] = describe_transactions(h.coordinator, ["t"])
    assert (d.TransactionState, d.TransactionStartTimeMs, d.ProducerEpoch) == ("Empty", -1, 0)
    assert out == [TxnResult("NONE", 100, 0)]


# ---------------------------------------------------------------- InitProducerId, more
def test_init_producer_id_without_transactional_id_is_an_invalid_request() -> None:
    """shouldReturnInvalidRequestWhenTransactionalIdIsEmpty: asked twice, answered twice,
    no producer id taken and nothing written."""
    h = _harness()
    out: list[TxnResult] = []
    for _ in range(2):
        h.coordinator.handle_init_producer_id("", TIMEOUT, None, NOW, out.append)
    assert out == [TxnResult("INVALID_REQUEST")] * 2
    assert (h.next_pid, h.log, h.coordinator.txns) == (100, [], {})


def test_an_idempotent_producer_gets_the_next_producer_id_at_epoch_zero() -> None:
    """shouldAcceptInitPidAndReturnNextPidWhenTransactionalIdIsNull: no transactional id,
    so no metadata and no record."""
    h = _harness()
    out: list[TxnResult] = []
    for _ in range(2):
        h.coordinator.handle_init_producer_id(None, TIMEOUT, None, NOW, out.append)
    assert out == [TxnResult("NONE", 100, 0), TxnResult("NONE", 101, 0)]
    assert (h.log, h.coordinator.txns) == ([], {})


@pytest.mark.parametrize("expected", [None, (PID, EPOCH)])
def test_a_new_transactional_id_gets_a_new_producer_id_at_epoch_zero(
        expected: tuple[int, int] | None) -> None:
    """shouldInitPidWithEpochZeroForNewTransactionalId and
    shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided: an expected producer
    the coordinator does not know changes nothing."""
    h = _harness()
    assert _init(h, expected) == TxnResult("NONE", 100, 0)
    r = _record(h)
    assert (S(r.TransactionStatus), r.ProducerId, r.ProducerEpoch, r.LastProducerEpoch,
            r.TransactionStartTimestampMs) == (S.EMPTY, 100, 0, -1, -1)


def test_init_producer_id_at_the_exhausted_epoch_takes_a_new_producer_id() -> None:
    """shouldGenerateNewProducerIdIfEpochsExhausted: Empty at 32,766, no expected producer:
    a new producer id at epoch 0 (no last epoch, the old id kept as previous)."""
    h = _harness(_meta(S.EMPTY, EXHAUSTED_EPOCH, last=EXHAUSTED_EPOCH - 1))
    assert _init(h) == TxnResult("NONE", 100, 0)
    r = _record(h)
    assert (r.ProducerId, r.ProducerEpoch, r.LastProducerEpoch, r.PreviousProducerId) == \
        (100, 0, -1, PID)


def test_init_producer_id_and_add_partitions_at_a_broker_that_is_not_the_coordinator() -> None:
    """shouldRespondWithNotCoordinatorOnInitPidWhenNotCoordinator and
    shouldRespondWithNotCoordinatorOnAddPartitionsWhenNotCoordinator."""
    h = _harness(_meta(S.ONGOING))
    h.coordinator.resign(0)
    assert _init(h) == TxnResult("NOT_COORDINATOR")
    assert _add(h) == "NOT_COORDINATOR"
    assert h.log == []


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_init_producer_id_waits_for_the_prepared_transaction(state: TransactionState) -> None:
    """shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepare{Commit,
    Abort}State (TV2 metadata): CONCURRENT_TRANSACTIONS, nothing written or bumped."""
    h = _harness(_meta(state, tv=TV2))
    assert _init(h) == TxnResult("CONCURRENT_TRANSACTIONS")
    assert (h.log, h.meta.producer_epoch, h.meta.pending_state) == ([], EPOCH, None)


def test_the_fence_of_an_exhausted_epoch_writes_the_last_epoch() -> None:
    """shouldUseLastEpochToFenceWhenEpochsAreExhausted: Ongoing at 32,766 (TV1); the fence
    writes PrepareAbort at 32,767 with no last epoch, the producer id kept (no rotation while
    a transaction is open) and the client version 0."""
    h = _harness(_meta(S.ONGOING, EXHAUSTED_EPOCH, last=EXHAUSTED_EPOCH - 1))
    assert _init(h) == TxnResult("CONCURRENT_TRANSACTIONS")
    assert h.meta.producer_epoch == MAX_EPOCH
    r = _record(h)
    assert (S(r.TransactionStatus), r.ProducerId, r.PreviousProducerId, r.NextProducerId,
            r.ProducerEpoch, r.LastProducerEpoch, r.TransactionPartitions,
            r.TransactionStartTimestampMs, r.TransactionLastUpdateTimestampMs,
            r.ClientTransactionVersion) == (S.PREPARE_ABORT, PID, PID, -1, MAX_EPOCH, -1,
                                            [("topic1", 0)], 0, NOW, 0)


def test_a_retry_is_fenced_when_the_last_epoch_is_not_known() -> None:
    """testInitProducerIdWithNoLastProducerData: metadata without a last epoch (written by
    an old broker, or by a plain InitProducerId) cannot recognise the retry of the epoch
    before the current one."""
    h = _harness(_meta(S.EMPTY, EPOCH + 1, last=-1, prev=-1))
    assert _init(h, (PID, EPOCH)) == TxnResult("PRODUCER_FENCED")
    assert h.log == []


def test_an_expected_producer_id_that_was_replaced_is_fenced() -> None:
    """testFenceProducerWhenMappingExistsWithDifferentProducerId: the id maps to PID + 1
    (PID is only its previous one, not at an exhausted epoch)."""
    h = _harness(_meta(S.EMPTY, EPOCH, last=EPOCH - 1, pid=PID + 1, prev=PID))
    assert _init(h, (PID, EPOCH)) == TxnResult("PRODUCER_FENCED")
    assert h.log == []


def test_init_producer_id_with_the_current_epoch_bumps_and_its_retry_is_answered() -> None:
    """testInitProducerIdWithCurrentEpochProvided: (PID, 10) -> epoch 11 (last 10); the same
    request again is a retry: 11 again, nothing more written."""
    h = _harness(_meta(S.EMPTY, 10, last=9))
    assert _init(h, (PID, 10)) == TxnResult("NONE", PID, 11)
    assert _init(h, (PID, 10)) == TxnResult("NONE", PID, 11)
    assert len(h.log) == 1 and h.meta.last_producer_epoch == 10


def test_a_new_instance_fences_the_old_ones_expected_epoch() -> None:
    """testInitProducerIdStaleCurrentEpochProvided: a new instance (no expected producer)
    takes 11 and clears the last epoch, so the old instance's (PID, 10) is fenced."""
    h = _harness(_meta(S.EMPTY, 10, last=9))
    assert _init(h) == TxnResult("NONE", PID, 11)
    assert _init(h, (PID, 10)) == TxnResult("PRODUCER_FENCED")
    assert len(h.log) == 1


def test_a_retry_after_a_producer_id_rotation_and_a_stale_one() -> None:
    """testRetryInitProducerIdAfterProducerIdRotation and
    testInitProducerIdWithInvalidEpochAfterProducerIdRotation: (PID, 32766) rotates to
    (100, 0); the same request again gets (100, 0); (PID, 32765) is fenced."""
    h = _harness(_meta(S.EMPTY, EXHAUSTED_EPOCH, last=EXHAUSTED_EPOCH - 1))
    assert _init(h, (PID, EXHAUSTED_EPOCH)) == TxnResult("NONE", 100, 0)
    assert _init(h, (PID, EXHAUSTED_EPOCH)) == TxnResult("NONE", 100, 0)
    assert _init(h, (PID, EXHAUSTED_EPOCH - 1)) == TxnResult("PRODUCER_FENCED")
    assert len(h.log) == 1 and (h.meta.producer_id, h.meta.prev_producer_id) == (100, PID)


# ---------------------------------------------------------------- AddPartitionsToTxn, more
def test_adding_partitions_the_transaction_has_answers_at_once() -> None:
    """shouldRespondWithErrorsNoneOnAddPartitionWhenNoErrorsAndPartitionsTheSame (Kafka's
    optimisation holds for Ongoing, as its coordinator has it): NONE, nothing written."""
    h = _harness(_meta(S.ONGOING))
    assert _add(h) == "NONE"
    assert h.log == [] and h.meta.pending_state is None


# ---------------------------------------------------------------- VerifyOnly (KIP-890 part 1)
def _verify(h: Harness, pid: int, epoch: int,
            partitions: frozenset[tuple[str, int]] = PARTS) -> dict[tuple[str, int], str]:
    out: list[dict[tuple[str, int], str]] = []
    h.coordinator.handle_verify_partitions("t", pid, epoch, partitions, out.append)
    return out[0]


def test_verify_partition_handling() -> None:
    """testVerifyPartitionHandling: another producer id is INVALID_PRODUCER_ID_MAPPING,
    another epoch PRODUCER_FENCED, a Prepare* state CONCURRENT_TRANSACTIONS (every
    partition the same), and a pending state is not looked at: a partition not in the
    transaction is TRANSACTION_ABORTABLE. Nothing is written."""
    h = _harness(_meta(S.PREPARE_COMMIT, 0, last=-1, pid=1))
    assert _verify(h, 0, 0) == {("topic1", 0): "INVALID_PRODUCER_ID_MAPPING"}
    h = _harness(_meta(S.PREPARE_COMMIT, 0, last=-1, pid=0))
    assert _verify(h, 0, 1) == {("topic1", 0): "PRODUCER_FENCED"}
    assert _verify(h, 0, 0) == {("topic1", 0): "CONCURRENT_TRANSACTIONS"}
    h = _harness(_meta(S.ONGOING, 0, last=-1, pid=0, partitions=frozenset()))
    h.meta.pending_state = S.COMPLETE_COMMIT
    assert _verify(h, 0, 0) == {("topic1", 0): "TRANSACTION_ABORTABLE"}
    assert _verify(_harness(), 0, 0) == {("topic1", 0): "INVALID_PRODUCER_ID_MAPPING"}
    assert h.log == []


def test_verify_only_of_the_transactions_partitions_is_none() -> None:
    """shouldRespondWithErrorsNoneOnAddPartitionWhenOngoingVerifyOnlyAndPartitionsTheSame."""
    h = _harness(_meta(S.ONGOING, 0, last=-1, pid=0))
    assert _verify(h, 0, 0) == {("topic1", 0): "NONE"}
    assert h.log == [] and h.meta.state == S.ONGOING


def test_verify_only_of_a_partition_not_in_the_transaction_is_abortable() -> None:
    """shouldRespondWithInvalidTxnStateWhenVerifyOnlyAndPartitionNotPresent: each partition
    answers for itself (TRANSACTION_ABORTABLE since KIP-890's v5)."""
    h = _harness(_meta(S.EMPTY, 0, last=-1, pid=0, partitions=PARTS))
    assert _verify(h, 0, 0, PARTS | {("topic2", 0)}) == {
        ("topic1", 0): "NONE", ("topic2", 0): "TRANSACTION_ABORTABLE"}


# ---------------------------------------------------------------- EndTxn, transaction versions
def test_a_tv1_end_txn_on_a_tv2_transaction_is_judged_by_tv1_rules() -> None:
    """shouldReturnWhenTransactionVersionDowngraded, kept difference: Kafka's mirrored test
    (Oct 2024) judges the epoch by the stored transaction's version, so an EndTxn v<5 at the
    epoch before a TV2 bump is a retry (CONCURRENT_TRANSACTIONS, then NONE). kraftsim picks
    the rules by the request's version (the reference's endTransactionWithTV1 split): an
    EndTxn v<5 must carry the stored epoch, so both are PRODUCER_FENCED."""
    h = _harness(_meta(S.PREPARE_COMMIT, EPOCH + 1, last=-1, tv=TV2))
    assert _end(h, 0, EPOCH).error == "PRODUCER_FENCED"
    h = _harness(_meta(S.COMPLETE_COMMIT, EPOCH + 1, last=-1, tv=TV2))
    assert _end(h, 0, EPOCH).error == "PRODUCER_FENCED"
    assert _end(h, 0, EPOCH + 1).error == "NONE"  # the stored epoch: TV1's idempotent retry


def test_a_tv2_end_txn_on_a_tv1_transaction() -> None:
    """shouldReturnCorrectlyWhenTransactionVersionUpgraded: PrepareCommit written by a TV1
    client answers CONCURRENT_TRANSACTIONS to a TV2 commit, as in Kafka. Kept difference:
    once CompleteCommit, a TV2 commit at the stored epoch is INVALID_TXN_STATE in kraftsim
    (the reference's TV2 retry matrix: only the epoch before the stored one is a retry),
    where the mirrored test answers NONE with the unbumped producer."""
    h = _harness(_meta(S.PREPARE_COMMIT, last=-1))
    assert _end(h, TV2, EPOCH) == TxnResult("CONCURRENT_TRANSACTIONS")
    h = _harness(_meta(S.COMPLETE_COMMIT, last=-1))
    assert _end(h, TV2, EPOCH) == TxnResult("INVALID_TXN_STATE")
    assert h.log == []


# ---------------------------------------------------------------- timeouts, more
def test_the_producer_of_a_timed_out_transaction_is_fenced() -> None:
    """shouldNotAcceptSmallerEpochDuringTransactionExpiration: once the timeout abort has
    bumped the epoch, the old producer's AddPartitionsToTxn and EndTxn at its epoch are
    PRODUCER_FENCED, while the abort is pending and after it completed; nothing is written
    for them."""
    h = _harness(_meta(S.ONGOING, last=-1))
    h.coordinator.abort_timed_out(10_000)
    written = len(h.log)
    assert (_add(h), _end(h, 0, EPOCH, commit=False).error) == \
        ("PRODUCER_FENCED", "PRODUCER_FENCED")
    h.deliver_markers()
    assert (h.meta.state, h.meta.producer_epoch) == (S.COMPLETE_ABORT, EPOCH + 1)
    assert (_add(h), _end(h, 0, EPOCH, commit=False).error) == \
        ("PRODUCER_FENCED", "PRODUCER_FENCED")
    assert len(h.log) == written + 1  # only CompleteAbort
