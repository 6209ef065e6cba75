"""Kafka's ``TransactionManagerTest`` (clients' producer internals) on the simulated producers.

The cases follow Kafka's
``clients/src/test/java/org/apache/kafka/clients/producer/internals/TransactionManagerTest.java``:
the producer's transaction state machine (which calls are legal in which
state), which answers are retried, which make the transaction abortable (and
need an epoch bump afterwards, KIP-360) and which are fatal, for
InitProducerId, AddPartitionsToTxn, Produce, AddOffsetsToTxn,
TxnOffsetCommit and EndTxn. The producers are
:class:`sim.txn_clients.TransactionalProducer` and
:class:`sim.eos_clients.EosProducer` against a simulated cluster. An answer
the simulated brokers do not give by themselves (an authorization error,
TRANSACTION_ABORTABLE, ...) is scripted: the first requests of one kind are
answered with the listed errors, the rest go to the real broker.

Java's IllegalStateException (a call in the wrong state, which leaves the
producer as it was) is :class:`sim.txn_clients.TxnClientError` with error
``ILLEGAL_STATE``.

Covered by a case here under another name:
testTransactionalIdAuthorizationFailureInTxnOffsetCommit (test_fatal_errors_in_txn_offset_commit),
testCommitWithTopicAuthorizationFailureInAddPartitionsInFlight
(test_abortable_errors_in_add_partitions_abort_without_end_txn: the queued commit ends
ABORTABLE_ERROR), the testIsSendToPartitionAllowed* cases and testNoDrainWhenPartitionsPending
(no Produce before its partition is added, none after a fatal error or to a partition whose
add failed: test_basic_transaction, test_every_call_fails_after_a_fatal_error,
test_abortable_errors_in_add_partitions_abort_without_end_txn).

Where kraftsim's producer differs (kept; docs/architecture.md): calls are queued and run in
order, one request at a time (max.in.flight 1, no record accumulator), so

- a send queued before abortTransaction() is sent first and its records are aborted by
  the marker; Kafka fails the records its sender has not drained yet
  (testCancelUnsentAddPartitionsAndProduceOnAbort, the record of
  testAbortResendsAddPartitionErrorIfRetried), and a produce can never fail while an
  abort is already running (testAbortableErrorWhileAbortInProgress);
- each partition's AddPartitionsToTxn is followed by its Produce; Kafka adds the
  partitions of several sends in one request before producing
  (testMultipleAddPartitionsPerForOneProduce);
- a commit queued behind a send that fails abortable becomes the abort (the
  application's abortTransaction() after commitTransaction() throws); called when the
  producer is idle in ABORTABLE_ERROR it raises, as Kafka's;
- calls do not block, so there is no max.block.ms: calling initTransactions(),
  commitTransaction() or abortTransaction() again while the first is queued or running
  is the retry of a call that timed out (the same call waits for the first; the
  other one is ILLEGAL_STATE); Kafka's result that must still be acknowledged by a
  second call after it completed is not modelled.

Not ported, by reason:

- idempotent (non-transactional) producer and its sequence bookkeeping with several
  batches in flight per partition (TxnPartitionMap, unresolved sequences):
  testFailIfNotReadyForSendIdempotentProducer,
  testFailIfNotReadyForSendIdempotentProducerFatalError,
  testBumpEpochAndResetSequenceNumbersAfterUnknownProducerId, testBatchFailureAfterProducerReset,
  testBatchCompletedAfterProducerReset, testDuplicateSequenceAfterProducerReset,
  testSequenceNumberOverflow, testProducerIdReset,
  testBumpEpochAfterTimeoutWithoutPendingInflightRequests,
  testNoProducerIdResetAfterLastInFlightBatchSucceeds, testEpochBumpAfterLastInflightBatchFails,
  testNoFailedBatchHandlingWhenTxnManagerIsInFatalError, testHealthyPartitionRetriesDuringEpochBump,
  testFailedInflightBatchAfterEpochBump: kraftsim's producers keep one batch in flight;
- request versions and broker features (no epoch bump before InitProducerId v3, TV2
  detection, old TxnOffsetCommit): testTransitionToFatalErrorWhenRetriedBatchIsExpired,
  testAbortTransactionAndReuseSequenceNumberOnError,
  testAbortTransactionAndResetSequenceNumberOnUnknownProducerId, testTransactionManagerEnablesV2,
  testCanBumpEpochDuringCoordinatorDisconnect,
  testSendOffsetWithGroupMetadataFailAsAutoDowngradeTxnCommitNotEnabled;
- FindCoordinator is a look-up that answers a broker or none, never an error code:
  testUnsupportedFindCoordinator, testTransactionalIdAuthorizationFailureInFindCoordinator,
  testGroupAuthorizationFailureInFindCoordinator,
  testTransactionAbortableExceptionInFindCoordinator,
  testFindCoordinatorAllowedInAbortableErrorState;
- Sender and accumulator internals with no counterpart (drain, close, a background
  thread's invalid transition): testSenderShutdownWithPendingTransactions,
  testAllowDrainInAbortableErrorState, testRaiseErrorWhenNoPartitionsPendingOnDrain,
  testBackgroundInvalidStateTransitionIsFatal; and resendFailedProduceRequestAfterAbortableError,
  which moves the manager to an abortable error by hand (transitionToAbortableError) while a
  produce waits for its retry: kraftsim's producer has no such entry point, its errors come
  from the answers it gets;
- consumer group metadata (member id, generation, instance id) is not sent, the group
  coordinator's answers are scripted instead: testSendOffsetsWithGroupMetadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from broker.replica_manager import ProduceResult, ReplicaManager
from broker.txn.coordinator import TransactionCoordinator, TxnResult
from broker.txn.group import GroupCoordinator
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_clients import EosProducer
from sim.group_cluster import GroupCluster
from sim.txn_clients import (
    ADD_PARTITIONS_RETRY_BACKOFF_MS,
    RETRY_BACKOFF_MS,
    TransactionalProducer,
    TxnClientError,
    TxnProducerState,
)
from sim.txn_cluster import TxnCluster

P = TxnProducerState
GROUP = "g"


class World:
    """One cluster with topic ``t`` (2 partitions), the transaction and group coordinators."""

    def __init__(self) -> None:
        cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
        cluster.start()
        assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
        self.txns = TxnCluster(cluster)
        assert self.txns.start()
        self.groups = GroupCluster(cluster)
        assert self.groups.start()
        for broker in cluster.config.broker_ids:  # each fetches its block of producer ids
            coordinator = self.txns.coordinator(broker)
            assert coordinator is not None
            coordinator.allocate_pid()
        cluster.sim.run_for(1_000)
        self.cluster = cluster
        self.requests: list[str] = []
        self.sent_at: list[tuple[str, int]] = []

    def _sent(self, request: str) -> None:
        self.requests.append(request)
        self.sent_at.append((request, self.cluster.sim.now))

    def producer(self, instance: str = "app-1") -> EosProducer:
        p = EosProducer(self.txns, self.groups, "app", instance)
        p.on_request = self._sent
        return p

    def run(self, *producers: TransactionalProducer) -> None:
        sim = self.cluster.sim
        assert sim.run_until_true(lambda: all(p.idle for p in producers), 60_000)
        sim.run_for(500)

    def ready(self, instance: str = "app-1") -> EosProducer:
        p = self.producer(instance)
        p.init_transactions()
        self.run(p)
        assert p.state == P.READY
        self.requests.clear()
        return p

    def markers(self, topic: str, partition: int) -> list[int]:
        """The control records (0 ABORT, 1 COMMIT) in the partition leader's log."""
        c = self.cluster
        manager = c.replica_manager(c.partition_leader(topic, partition))
        assert manager is not None
        replica = manager.leader_replica(topic, partition)
        assert not isinstance(replica, str)
        return [e.control for e in replica.log.read(0, 10_000, replica.log.high_watermark)
                if e.control >= 0]


@pytest.fixture
def world() -> World:
    return World()


class Script:
    """Answers the next requests of scripted kinds with scripted errors (then the real ones)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.answered: list[tuple[str, str]] = []

    def _patch(self, owner: type, name: str, errors: list[str],
               answer: Callable[[tuple[Any, ...], dict[str, Any], str], None],
               when: Callable[[tuple[Any, ...]], bool] = lambda _: True) -> None:
        real = getattr(owner, name)
        pending = iter(errors)

        def scripted(this: Any, *args: Any, **kwargs: Any) -> None:
            error = next(pending, None) if when(args) else None
            if error is None:
                real(this, *args, **kwargs)
                return
            self.answered.append((name, error))
            answer(args, kwargs, error)

        self.monkeypatch.setattr(owner, name, scripted)

    def init_producer_id(self, *errors: str) -> None:
        self._patch(TransactionCoordinator, "handle_init_producer_id", list(errors),
                    lambda a, _, e: a[4](TxnResult(e)))

    def add_partitions(self, *errors: str) -> None:
        self._patch(TransactionCoordinator, "handle_add_partitions", list(errors),
                    lambda a, _, e: a[5](e))

    def add_offsets(self, *errors: str) -> None:
        self._patch(TransactionCoordinator, "handle_add_offsets", list(errors),
                    lambda a, _, e: a[6](e))

    def end_txn(self, *errors: str) -> None:
        self._patch(TransactionCoordinator, "handle_end_txn", list(errors),
                    lambda a, _, e: a[5](e))

    def txn_offset_commit(self, *errors: str) -> None:
        self._patch(GroupCoordinator, "handle_txn_offset_commit", list(errors),
                    lambda a, _, e: a[6](e))

    def produce(self, *errors: str) -> None:
        """Produce to topic ``t`` (the coordinators' own appends are not scripted)."""
        self._patch(ReplicaManager, "produce", list(errors),
                    lambda a, _, e: a[4](ProduceResult(e)), lambda a: a[0] == "t")


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    yield Script(monkeypatch)


def _distinct(requests: list[str]) -> list[str]:
    """The requests with retries of the same one (CONCURRENT_TRANSACTIONS) collapsed."""
    return [r for i, r in enumerate(requests) if i == 0 or requests[i - 1] != r]


def _begin_send(p: EosProducer, *tps: tuple[str, int]) -> None:
    p.begin_transaction()
    for topic, partition in tps:
        p.send(topic, partition, 1)


# ---------------------------------------------------------------- the happy path
def test_basic_transaction(world: World) -> None:
    """testBasicTransaction: every request in order, then the records and the marker."""
    p = world.producer()
    p.init_transactions()
    world.run(p)
    assert (p.state, p.producer_epoch) == (P.READY, 0)
    _begin_send(p, ("t", 0))
    p.send_offsets_to_transaction({("in", 0): 5}, GROUP)
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["InitProducerId", "AddPartitionsToTxn", "Produce t-0",
                              "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn"]
    assert p.state == P.READY and p.committed == [1] and p.fatal is None
    assert world.markers("t", 0) == [1]


def test_abort_without_a_partition_added_sends_no_end_txn(world: World) -> None:
    """testEndTxnNotSentIfIncompleteBatches' other side: an empty transaction ends locally."""
    p = world.ready()
    p.begin_transaction()
    p.end_transaction(False)
    world.run(p)
    assert world.requests == [] and p.aborted == [1] and p.state == P.READY


def test_commit_latencies_run_from_commit_and_from_begin_to_the_acknowledgement(
        world: World) -> None:
    """commit_latencies_ms: commitTransaction() (its EndTxn) -> acknowledged;
    txn_latencies_ms: beginTransaction() -> acknowledged; one each per commit."""
    p = world.ready()
    began = world.cluster.sim.now
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    [end_txn_at] = [t for r, t in world.sent_at if r == "EndTxn"]
    [acknowledged_at] = [t for op, _, t in p.completed if op[0] == "end"]
    assert acknowledged_at > end_txn_at > began
    assert p.commit_latencies_ms == [acknowledged_at - end_txn_at]
    assert p.txn_latencies_ms == [acknowledged_at - began]


def test_a_broker_keeps_one_group_coordinator_per_incarnation(world: World) -> None:
    """GroupCluster: one coordinator per running broker incarnation; a restart loses it."""
    groups, sim = world.groups, world.cluster.sim
    broker = groups.find_coordinator(GROUP)
    assert broker is not None
    first = groups.sync(broker)
    assert first is not None and groups.coordinator_for(GROUP) is first
    sim.run_for(500)
    assert groups.sync(broker) is first
    sim.crash(broker)
    assert groups.sync(broker) is None
    sim.restart(broker)
    assert world.cluster.run_until(lambda: groups.sync(broker) is not None, 30_000)
    again = groups.sync(broker)
    assert again is not first and groups.sync(broker) is again


# ---------------------------------------------------------------- illegal calls
def test_calls_before_init_transactions_are_illegal_and_recoverable(world: World) -> None:
    """testNotReadyForSendBeforeInitTransactions, testFailIfNotReadyForSendNoProducerId,
    testForegroundInvalidStateTransitionIsRecoverable."""
    p = world.producer()
    for call in (p.begin_transaction, lambda: p.send("t", 0, 1),
                 lambda: p.end_transaction(True), lambda: p.end_transaction(False)):
        with pytest.raises(TxnClientError) as raised:
            call()
        assert raised.value.error == "ILLEGAL_STATE"
    assert p.state == P.UNINITIALIZED and p.idle and world.requests == []
    p.init_transactions()
    _begin_send(p, ("t", 1))
    p.end_transaction(True)
    world.run(p)
    assert p.committed == [1] and world.markers("t", 1) == [1]


def test_send_and_end_outside_a_transaction_are_illegal(world: World) -> None:
    """testNotReadyForSendBeforeBeginTransaction, testFailIfNotReadyForSendNoOngoingTransaction:
    the state does not change and nothing is sent."""
    p = world.ready()
    for call in (lambda: p.send("t", 0, 1), lambda: p.end_transaction(True),
                 lambda: p.end_transaction(False),
                 lambda: p.send_offsets_to_transaction({("in", 0): 1}, GROUP)):
        with pytest.raises(TxnClientError) as raised:
            call()
        assert raised.value.error == "ILLEGAL_STATE"
    world.run(p)
    assert p.state == P.READY and world.requests == []


def test_init_transactions_twice_is_illegal(world: World) -> None:
    """testInitializeTransactionsTwiceRaisesError."""
    p = world.ready()
    with pytest.raises(TxnClientError) as raised:
        p.init_transactions()
    assert raised.value.error == "ILLEGAL_STATE"
    p.begin_transaction()
    world.run(p)
    with pytest.raises(TxnClientError):
        p.begin_transaction()  # a transaction is already open
    assert (p.state, p.producer_epoch) == (P.IN_TRANSACTION, 0) and world.requests == []


def test_every_call_fails_after_a_fatal_error(world: World, script: Script) -> None:
    """testNotReadyForSendAfterFatalError, testFailIfNotReadyForSendAfterFatalError,
    testHasOngoingTransactionFatalError: nothing more is sent, not even an abort."""
    p = world.ready()
    script.add_partitions("TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
    _begin_send(p, ("t", 0))
    world.run(p)
    assert p.state == P.FATAL_ERROR and p.fatal == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    for call in (p.begin_transaction, lambda: p.send("t", 0, 1),
                 lambda: p.end_transaction(True), lambda: p.end_transaction(False),
                 p.init_transactions):
        with pytest.raises(TxnClientError) as raised:
            call()
        assert raised.value.error == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn"]


# ---------------------------------------------------------------- InitProducerId
@pytest.mark.parametrize("error", ["CONCURRENT_TRANSACTIONS", "COORDINATOR_LOAD_IN_PROGRESS",
                                   "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"])
def test_init_producer_id_is_retried_on_retriable_errors(world: World, script: Script,
                                                         error: str) -> None:
    """testRetriableErrors, testCoordinatorNotAvailable,
    testLookupCoordinatorOnNotCoordinatorError."""
    script.init_producer_id(error, error)
    p = world.producer()
    p.init_transactions()
    world.run(p)
    assert world.requests == ["InitProducerId"] * 3
    assert (p.state, p.producer_epoch, p.errors) == (P.READY, 0, {error: 2})


@pytest.mark.parametrize("error", ["PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"])
def test_fenced_in_init_producer_id_is_fatal_producer_fenced(world: World, script: Script,
                                                             error: str) -> None:
    """testProducerFencedExceptionInInitProducerId,
    testInvalidProducerEpochConvertToProducerFencedInInitProducerId."""
    script.init_producer_id(error)
    p = world.producer()
    p.init_transactions()
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")


@pytest.mark.parametrize("error", ["TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
                                   "CLUSTER_AUTHORIZATION_FAILED", "UNSUPPORTED_VERSION"])
def test_fatal_errors_in_init_producer_id(world: World, script: Script, error: str) -> None:
    """testTransactionalIdAuthorizationFailureInInitProducerId, testUnsupportedInitTransactions."""
    script.init_producer_id(error)
    p = world.producer()
    p.init_transactions()
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, error)
    assert world.requests == ["InitProducerId"]


def test_transaction_abortable_in_init_producer_id_is_abortable(world: World,
                                                                  script: Script) -> None:
    """testTransactionAbortableExceptionInInitProducerId: initTransactions fails with
    TRANSACTION_ABORTABLE and the producer is in the abortable error state, not failed."""
    script.init_producer_id("TRANSACTION_ABORTABLE")
    p = world.producer()
    p.init_transactions()
    world.run(p)
    assert world.requests == ["InitProducerId"]
    assert (p.state, p.fatal, p.last_error) == (P.ABORTABLE_ERROR, None,
                                                "TRANSACTION_ABORTABLE")
    assert [e for _, e, _ in p.completed] == ["TRANSACTION_ABORTABLE"]


# ---------------------------------------------------------------- AddPartitionsToTxn
@pytest.mark.parametrize("error", ["CONCURRENT_TRANSACTIONS", "COORDINATOR_LOAD_IN_PROGRESS",
                                   "NOT_COORDINATOR", "UNKNOWN_TOPIC_OR_PARTITION"])
def test_add_partitions_is_retried_on_retriable_errors(world: World, script: Script,
                                                       error: str) -> None:
    """testRetriableErrors, testHandlingOfUnknownTopicPartitionErrorOnAddPartitions."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "AddPartitionsToTxn", "Produce t-0",
                              "EndTxn"]
    assert p.committed == [1] and world.markers("t", 0) == [1]


@pytest.mark.parametrize(("error", "backoff"), [
    # testAddPartitionToTransactionRetainsRetryBackoffForRegularRetriableError
    ("COORDINATOR_LOAD_IN_PROGRESS", RETRY_BACKOFF_MS),
    # testAddPartitionToTransactionOverridesRetryBackoffForConcurrentTransactions: the
    # previous transaction is still completing (KAFKA-5482)
    ("CONCURRENT_TRANSACTIONS", ADD_PARTITIONS_RETRY_BACKOFF_MS),
])
def test_the_first_add_partitions_waits_20_ms_only_after_concurrent_transactions(
        world: World, script: Script, error: str, backoff: int) -> None:
    """A transaction's first AddPartitionsToTxn is sent again after 20 ms when answered
    CONCURRENT_TRANSACTIONS, after retry.backoff.ms (100 ms) for another retriable error."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    world.run(p)
    times = [t for r, t in world.sent_at if r == "AddPartitionsToTxn"]
    assert len(times) == 2 and times[1] - times[0] == backoff
    assert (RETRY_BACKOFF_MS, ADD_PARTITIONS_RETRY_BACKOFF_MS) == (100, 20)


def test_add_partitions_keeps_the_retry_backoff_once_a_partition_is_added(
        world: World, script: Script) -> None:
    """testAddPartitionToTransactionRetainsRetryBackoffWhenPartitionsAlreadyAdded: with a
    partition already in the transaction, CONCURRENT_TRANSACTIONS waits retry.backoff.ms."""
    p = world.ready()
    script._patch(TransactionCoordinator, "handle_add_partitions", ["CONCURRENT_TRANSACTIONS"],
                  lambda a, _, e: a[5](e), when=lambda a: ("t", 1) in a[3])
    _begin_send(p, ("t", 0), ("t", 1))
    p.end_transaction(True)
    world.run(p)
    times = [t for r, t in world.sent_at if r == "AddPartitionsToTxn"]
    assert len(times) == 3 and times[2] - times[1] == RETRY_BACKOFF_MS
    assert p.committed == [1]


@pytest.mark.parametrize("error", ["PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"])
def test_fenced_in_add_partitions_is_fatal_producer_fenced(world: World, script: Script,
                                                           error: str) -> None:
    """testProducerFencedInAddPartitionToTxn,
    testInvalidProducerEpochConvertToProducerFencedInAddPartitionToTxn."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    assert world.requests == ["AddPartitionsToTxn"]


@pytest.mark.parametrize("error", ["TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "INVALID_TXN_STATE"])
def test_fatal_errors_in_add_partitions(world: World, script: Script, error: str) -> None:
    """testTransactionalIdAuthorizationFailureInAddPartitions,
    testInvalidTxnStateInAddPartitions."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert (p.state, p.fatal, world.requests) == (P.FATAL_ERROR, error, ["AddPartitionsToTxn"])


@pytest.mark.parametrize("error", ["TOPIC_AUTHORIZATION_FAILED", "TRANSACTION_ABORTABLE"])
def test_abortable_errors_in_add_partitions_abort_without_end_txn(
        world: World, script: Script, error: str) -> None:
    """testTopicAuthorizationFailureInAddPartitions,
    testTransactionAbortableExceptionInAddPartitions,
    shouldNotSendAbortTxnRequestWhenOnlyAddPartitionsRequestFailed,
    shouldNotAddPartitionsToTransactionWhenTopicAuthorizationFailed: the commit
    becomes an abort, no partition was added so no EndTxn is sent, no epoch bump."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    p.send("t", 1, 1)
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn"]
    assert p.errors == {error: 1} and p.aborted == [1] and p.committed == []
    assert (p.state, p.producer_epoch, p.fatal) == (P.READY, 0, None)
    assert [e for _, e, _ in p.completed[-3:]] == [error, "ABORTABLE_ERROR", "ABORTABLE_ERROR"]
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert p.committed == [2] and world.markers("t", 0) == [1]


@pytest.mark.parametrize("error", ["INVALID_PRODUCER_ID_MAPPING", "UNKNOWN_PRODUCER_ID"])
def test_unknown_producer_in_add_partitions_is_abortable_and_bumps_the_epoch(
        world: World, script: Script, error: str) -> None:
    """testBumpTransactionalEpochOnRecoverableAddPartitionRequestError (KIP-360): abortable,
    then InitProducerId with the current producer id and epoch bumps the epoch."""
    p = world.ready()
    script.add_partitions(error)
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert (p.state, p.fatal, p.producer_epoch) == (P.READY, None, 1)
    assert p.aborted == [1]
    assert world.requests == ["AddPartitionsToTxn", "InitProducerId"]  # no partition: no EndTxn
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert p.committed == [2] and world.markers("t", 0) == [1]


# ---------------------------------------------------------------- Produce
def test_an_abortable_produce_error_bumps_the_epoch_after_the_abort(world: World,
                                                                     script: Script) -> None:
    """testBumpTransactionalEpochOnAbortableError: any abortable produce error (here
    TOPIC_AUTHORIZATION_FAILED) -> abort (EndTxn), then InitProducerId bumps the epoch
    and the sequences start at 0 again."""
    p = world.ready()
    p.transaction([("t", 0, 2)], commit=True)
    world.run(p)
    world.requests.clear()
    script.produce("TOPIC_AUTHORIZATION_FAILED")
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert _distinct(world.requests) == ["AddPartitionsToTxn", "Produce t-0", "EndTxn",
                                         "InitProducerId"]
    assert (p.state, p.producer_epoch, p.sequences) == (P.READY, 1, {})
    assert p.committed == [1] and p.aborted == [2]
    assert world.markers("t", 0) == [1, 0]


@pytest.mark.parametrize("error", ["INVALID_PRODUCER_EPOCH", "UNKNOWN_PRODUCER_ID",
                                   "OUT_OF_ORDER_SEQUENCE_NUMBER"])
def test_kip360_produce_errors_are_abortable_then_bump(world: World, script: Script,
                                                       error: str) -> None:
    """testInvalidProducerEpochFromProduce, testBumpTransactionalEpochOnUnknownProducerIdError:
    EndTxn(abort) first, then InitProducerId."""
    p = world.ready()
    script.produce(error)
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert _distinct(world.requests) == ["AddPartitionsToTxn", "Produce t-0", "EndTxn",
                                         "InitProducerId"]
    assert (p.state, p.producer_epoch, p.fatal) == (P.READY, 1, None)
    assert world.markers("t", 0) == [0]


def test_a_commit_after_a_produce_failure_aborts(world: World, script: Script) -> None:
    """testDisallowCommitOnProduceFailure, testAllowAbortOnProduceFailure: no
    EndTxn(COMMIT) is sent; the transaction's records are aborted."""
    p = world.ready()
    script.produce("NOT_ENOUGH_REPLICAS", "INVALID_RECORD")
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert p.committed == [] and p.aborted == [1]
    assert world.markers("t", 0) == [0]
    errors = {op[0]: error for op, error, _ in p.completed[1:]}
    assert errors == {"begin": "NONE", "send": "INVALID_RECORD", "end": "ABORTABLE_ERROR",
                      "init": "NONE"}
    assert p.producer_epoch == 1 and p.errors["NOT_ENOUGH_REPLICAS"] == 1


# ---------------------------------------------------------------- EndTxn
@pytest.mark.parametrize("error", ["CONCURRENT_TRANSACTIONS", "COORDINATOR_LOAD_IN_PROGRESS",
                                   "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"])
def test_end_txn_is_retried_on_retriable_errors(world: World, script: Script, error: str) -> None:
    """testRetryCommitTransaction / testRetryAbortTransaction's retried EndTxn."""
    p = world.ready()
    script.end_txn(error)
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "EndTxn", "EndTxn"]
    assert p.committed == [1] and world.markers("t", 0) == [1]


@pytest.mark.parametrize("error", ["PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"])
def test_fenced_in_end_txn_is_fatal_producer_fenced(world: World, script: Script,
                                                    error: str) -> None:
    """testInvalidProducerEpochConvertToProducerFencedInEndTxn."""
    p = world.ready()
    script.end_txn(error)
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert (p.state, p.fatal, p.committed) == (P.FATAL_ERROR, "PRODUCER_FENCED", [])


def test_transaction_abortable_in_end_txn_commit_then_abort(world: World, script: Script) -> None:
    """testTransactionAbortableExceptionInEndTxn: the commit fails abortable; the abort
    that follows sends EndTxn(ABORT) at once (no retry backoff) and the producer goes on
    (no epoch bump)."""
    p = world.ready()
    script.end_txn("TRANSACTION_ABORTABLE")
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "EndTxn", "EndTxn"]
    commit_at, abort_at = [t for r, t in world.sent_at if r == "EndTxn"]
    assert abort_at == commit_at
    assert (p.state, p.producer_epoch, p.fatal) == (P.READY, 0, None)
    assert p.aborted == [1] and world.markers("t", 0) == [0]


def test_unknown_producer_in_end_txn_goes_straight_to_init_producer_id(
        world: World, script: Script) -> None:
    """KIP-360 beside testBumpTransactionalEpochOnRecoverableAddPartitionRequestError:
    INVALID_PRODUCER_ID_MAPPING from EndTxn is abortable; the abort sends no EndTxn
    (the coordinator would refuse it) but InitProducerId with the current identity.

    Here the answer is scripted while the coordinator still holds the open
    transaction, so InitProducerId fences it (CONCURRENT_TRANSACTIONS, the
    abort) and the retry, still at the old epoch, is PRODUCER_FENCED: Kafka's
    coordinator does the same (its epoch moved past the request's)."""
    p = world.ready()
    script.end_txn("INVALID_PRODUCER_ID_MAPPING")
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert _distinct(world.requests) == ["AddPartitionsToTxn", "Produce t-0", "EndTxn",
                                         "InitProducerId"]
    assert (p.state, p.fatal, p.errors["CONCURRENT_TRANSACTIONS"]) == (
        P.FATAL_ERROR, "PRODUCER_FENCED", 1)
    world.cluster.sim.run_for(2_000)
    assert world.markers("t", 0) == [0]


# ---------------------------------------------------------------- sendOffsetsToTransaction
def _offsets_txn(p: EosProducer) -> None:
    _begin_send(p, ("t", 0))
    p.send_offsets_to_transaction({("in", 0): 5}, GROUP)
    p.end_transaction(True)


@pytest.mark.parametrize("error", ["PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"])
def test_fenced_in_add_offsets_is_fatal_producer_fenced(world: World, script: Script,
                                                        error: str) -> None:
    """testProducerFencedInAddOffSetsToTxn,
    testInvalidProducerEpochConvertToProducerFencedInAddOffSetsToTxn."""
    p = world.ready()
    script.add_offsets(error)
    _offsets_txn(p)
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")


@pytest.mark.parametrize("error", ["TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "INVALID_TXN_STATE",
                                   "UNKNOWN_SERVER_ERROR"])
def test_fatal_errors_in_add_offsets(world: World, script: Script, error: str) -> None:
    """testTransactionalIdAuthorizationFailureInAddOffsetsToTxn,
    testInvalidTxnStateFailureInAddOffsetsToTxn, shouldFailAbortIfAddOffsetsFailsWithFatalError."""
    p = world.ready()
    script.add_offsets(error)
    _offsets_txn(p)
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, error)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "AddOffsetsToTxn"]


@pytest.mark.parametrize("error", ["GROUP_AUTHORIZATION_FAILED", "TRANSACTION_ABORTABLE"])
def test_abortable_errors_in_add_offsets(world: World, script: Script, error: str) -> None:
    """testGroupAuthorizationFailureInTxnOffsetCommit's AddOffsets side,
    testTransactionAbortableExceptionInAddOffsetsToTxn: abortable, the abort ends the
    transaction (its data partition was added), no TxnOffsetCommit, no epoch bump."""
    p = world.ready()
    script.add_offsets(error)
    _offsets_txn(p)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "AddOffsetsToTxn", "EndTxn"]
    assert (p.state, p.producer_epoch, p.aborted) == (P.READY, 0, [1])


def test_only_add_offsets_failed_sends_no_end_txn(world: World, script: Script) -> None:
    """shouldNotSendAbortTxnRequestWhenOnlyAddOffsetsRequestFailed."""
    p = world.ready()
    script.add_offsets("GROUP_AUTHORIZATION_FAILED")
    p.begin_transaction()
    p.send_offsets_to_transaction({("in", 0): 5}, GROUP)
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["AddOffsetsToTxn"] and p.aborted == [1]


@pytest.mark.parametrize("error", ["INVALID_PRODUCER_ID_MAPPING", "UNKNOWN_PRODUCER_ID"])
def test_unknown_producer_in_add_offsets_is_abortable_and_bumps_the_epoch(
        world: World, script: Script, error: str) -> None:
    """testBumpTransactionalEpochOnRecoverableAddOffsetsRequestError."""
    p = world.ready()
    script.add_offsets(error)
    p.begin_transaction()
    p.send_offsets_to_transaction({("in", 0): 5}, GROUP)
    p.end_transaction(True)
    world.run(p)
    assert (p.state, p.fatal, p.producer_epoch, p.aborted) == (P.READY, None, 1, [1])
    assert world.requests == ["AddOffsetsToTxn", "InitProducerId"]


@pytest.mark.parametrize("error", ["UNKNOWN_TOPIC_OR_PARTITION", "COORDINATOR_LOAD_IN_PROGRESS",
                                   "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE",
                                   "REQUEST_TIMED_OUT", "NETWORK_EXCEPTION"])
def test_txn_offset_commit_is_retried_on_retriable_errors(world: World, script: Script,
                                                          error: str) -> None:
    """testHandlingOfUnknownTopicPartitionErrorOnTxnOffsetCommit,
    testHandlingOfCoordinatorLoadingErrorOnTxnOffsetCommit,
    testHandlingOfNetworkExceptionOnTxnOffsetCommit."""
    p = world.ready()
    script.txn_offset_commit(error)
    _offsets_txn(p)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "AddOffsetsToTxn",
                              "TxnOffsetCommit", "TxnOffsetCommit", "EndTxn"]
    assert p.committed == [1]


@pytest.mark.parametrize("error, fatal", [
    ("PRODUCER_FENCED", "PRODUCER_FENCED"), ("INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED"),
    ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    ("UNSUPPORTED_FOR_MESSAGE_FORMAT", "UNSUPPORTED_FOR_MESSAGE_FORMAT"),
    ("INVALID_COMMIT_OFFSET_SIZE", "INVALID_COMMIT_OFFSET_SIZE")])
def test_fatal_errors_in_txn_offset_commit(world: World, script: Script, error: str,
                                           fatal: str) -> None:
    """testHandlingOfProducerFencedErrorOnTxnOffsetCommit,
    testHandlingOfInvalidProducerEpochErrorOnTxnOffsetCommit,
    testHandlingOfTransactionalIdAuthorizationFailedErrorOnTxnOffsetCommit,
    testHandlingOfUnsupportedForMessageFormatErrorOnTxnOffsetCommit,
    testUnsupportedForMessageFormatInTxnOffsetCommit (an unexpected error is fatal)."""
    p = world.ready()
    script.txn_offset_commit(error)
    _offsets_txn(p)
    world.run(p)
    assert (p.state, p.fatal) == (P.FATAL_ERROR, fatal)
    assert "EndTxn" not in world.requests


@pytest.mark.parametrize("error", ["GROUP_AUTHORIZATION_FAILED", "UNKNOWN_MEMBER_ID",
                                   "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID",
                                   "TRANSACTION_ABORTABLE"])
def test_abortable_errors_in_txn_offset_commit(world: World, script: Script, error: str) -> None:
    """testGroupAuthorizationFailureInTxnOffsetCommit,
    testUnknownMemberIdInTxnOffsetCommitByGroupMetadata,
    testIllegalGenerationInTxnOffsetCommitByGroupMetadata,
    testFencedInstanceIdInTxnOffsetCommitByGroupMetadata,
    testTransactionAbortableExceptionInTxnOffsetCommit."""
    p = world.ready()
    script.txn_offset_commit(error)
    _offsets_txn(p)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "AddOffsetsToTxn",
                              "TxnOffsetCommit", "EndTxn"]
    assert (p.state, p.fatal, p.aborted, p.producer_epoch) == (P.READY, None, [1], 0)
    assert world.markers("t", 0) == [0]


# ---------------------------------------------------------------- fencing by a new instance
def test_a_new_instance_fences_the_old_ones_end_txn(world: World) -> None:
    """testProducerFencedInAddPartitionToTxn's real cause: the old instance, mid
    transaction, is fenced by a new InitProducerId; its EndTxn gets PRODUCER_FENCED."""
    old = world.ready("app-1")
    _begin_send(old, ("t", 0))
    world.run(old)
    new = world.producer("app-2")
    new.init_transactions()
    world.run(new)
    assert new.errors.get("CONCURRENT_TRANSACTIONS", 0) >= 1 and new.producer_epoch == 2
    old.end_transaction(True)
    world.run(old)
    assert (old.state, old.fatal) == (P.FATAL_ERROR, "PRODUCER_FENCED")
    assert world.markers("t", 0) == [0]


# ---------------------------------------------------------------- hasOngoingTransaction
@pytest.mark.parametrize("commit", [True, False])
def test_has_ongoing_transaction_from_begin_to_the_end_txn_answer(world: World,
                                                                  commit: bool) -> None:
    """testHasOngoingTransactionSuccessfulCommit, testHasOngoingTransactionSuccessfulAbort,
    testFlushPendingPartitionsOnCommit: beginTransaction() is local and takes effect at
    once; the transaction stays ongoing while completing, until EndTxn is answered."""
    p = world.producer()
    assert not p.has_ongoing_transaction
    p.init_transactions()
    world.run(p)
    assert not p.has_ongoing_transaction
    p.begin_transaction()
    assert (p.state, p.has_ongoing_transaction, p.idle) == (P.IN_TRANSACTION, True, True)
    p.send("t", 0, 1)
    p.end_transaction(commit)
    sim = world.cluster.sim
    assert sim.run_until_true(lambda: "EndTxn" in world.requests, 10_000)
    ending = P.COMMITTING_TRANSACTION if commit else P.ABORTING_TRANSACTION
    assert (p.state, p.has_ongoing_transaction) == (ending, True)
    world.run(p)
    assert (p.state, p.has_ongoing_transaction) == (P.READY, False)
    assert world.markers("t", 0) == [int(commit)]


def test_has_ongoing_transaction_in_abortable_error_until_the_abort(world: World,
                                                                    script: Script) -> None:
    """testHasOngoingTransactionAbortableError."""
    p = world.ready()
    script.produce("TOPIC_AUTHORIZATION_FAILED")
    _begin_send(p, ("t", 0))
    world.run(p)
    assert (p.state, p.has_ongoing_transaction) == (P.ABORTABLE_ERROR, True)
    p.end_transaction(False)
    assert p.has_ongoing_transaction
    world.run(p)
    assert (p.state, p.has_ongoing_transaction, p.producer_epoch) == (P.READY, False, 1)


def test_no_ongoing_transaction_after_a_fatal_error(world: World, script: Script) -> None:
    """testHasOngoingTransactionFatalError: a fatal error ends the transaction for the client."""
    p = world.ready()
    _begin_send(p, ("t", 0))
    world.run(p)
    assert p.has_ongoing_transaction
    script.add_partitions("TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
    p.send("t", 1, 1)
    world.run(p)
    assert (p.state, p.has_ongoing_transaction) == (P.FATAL_ERROR, False)


# ---------------------------------------------------------------- abortable error recovery
def test_calls_in_abortable_error_raise_it_until_the_abort(world: World, script: Script) -> None:
    """testFailIfNotReadyForSendAfterAbortableError, testNotReadyForSendAfterAbortableError,
    testRecoveryFromAbortableErrorTransactionNotStarted: send, commit, begin,
    sendOffsetsToTransaction and initTransactions raise the error that made the
    transaction abortable (Kafka's maybeFailWithError) and change nothing; the abort
    sends no EndTxn (no partition was added) and the next transaction commits."""
    p = world.ready()
    script.add_partitions("TOPIC_AUTHORIZATION_FAILED")
    _begin_send(p, ("t", 0))
    world.run(p)
    assert (p.state, p.last_error) == (P.ABORTABLE_ERROR, "TOPIC_AUTHORIZATION_FAILED")
    for call in (lambda: p.send("t", 0, 1), lambda: p.end_transaction(True),
                 p.begin_transaction, p.init_transactions,
                 lambda: p.send_offsets_to_transaction({("in", 0): 1}, GROUP)):
        with pytest.raises(TxnClientError) as raised:
            call()
        assert raised.value.error == "TOPIC_AUTHORIZATION_FAILED"
    world.run(p)
    assert p.state == P.ABORTABLE_ERROR and world.requests == ["AddPartitionsToTxn"]
    p.end_transaction(False)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn"] and p.aborted == [1]
    assert (p.state, p.producer_epoch) == (P.READY, 0)
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert p.committed == [2] and world.markers("t", 0) == [1]


@pytest.mark.parametrize("produce_errors", [(), ("REQUEST_TIMED_OUT",)])
def test_recovery_from_an_abortable_error_after_a_partition_was_added(
        world: World, script: Script, produce_errors: tuple[str, ...]) -> None:
    """testRecoveryFromAbortableErrorTransactionStarted,
    testRecoveryFromAbortableErrorProduceRequestInRetry: t-0 is in the transaction (its
    produce retried once in the second case), adding t-1 fails abortable; the abort
    ends the transaction with EndTxn(ABORT), no epoch bump; the next one commits."""
    p = world.ready()
    script.produce(*produce_errors)
    script._patch(TransactionCoordinator, "handle_add_partitions", ["TOPIC_AUTHORIZATION_FAILED"],
                  lambda a, _, e: a[5](e), when=lambda a: ("t", 1) in a[3])
    _begin_send(p, ("t", 0), ("t", 1))
    world.run(p)
    assert (p.state, p.last_error) == (P.ABORTABLE_ERROR, "TOPIC_AUTHORIZATION_FAILED")
    p.end_transaction(False)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", *["Produce t-0"] * (1 + len(produce_errors)),
                              "AddPartitionsToTxn", "EndTxn"]
    assert (p.state, p.producer_epoch, p.aborted) == (P.READY, 0, [1])
    _begin_send(p, ("t", 0))
    p.end_transaction(True)
    world.run(p)
    assert p.committed == [2] and world.markers("t", 0) == [0, 1]


# ---------------------------------------------------------------- a call made again
def test_init_transactions_called_again_while_it_runs_waits_for_it(world: World) -> None:
    """testRetryInitTransactionsAfterTimeout: the second call is the first one (one
    InitProducerId); once it is done, another is ILLEGAL_STATE."""
    p = world.producer()
    p.init_transactions()
    p.init_transactions()
    world.run(p)
    assert world.requests == ["InitProducerId"] and (p.state, p.producer_epoch) == (P.READY, 0)
    with pytest.raises(TxnClientError) as raised:
        p.init_transactions()
    assert raised.value.error == "ILLEGAL_STATE"
    p.begin_transaction()
    assert p.has_ongoing_transaction


@pytest.mark.parametrize("commit", [True, False])
def test_commit_or_abort_called_again_while_it_runs(world: World, commit: bool) -> None:
    """testRetryCommitTransactionAfterTimeout, testRetryAbortTransactionAfterTimeout,
    testRetryAbortTransactionAfterCommitTimeout, testRetryCommitTransactionAfterAbortTimeout:
    the same call again is the one already running (one EndTxn); the other one is
    ILLEGAL_STATE; once done, both are ILLEGAL_STATE and a new transaction can begin."""
    p = world.ready()
    _begin_send(p, ("t", 0))
    p.end_transaction(commit)
    p.end_transaction(commit)
    with pytest.raises(TxnClientError) as raised:
        p.end_transaction(not commit)
    assert raised.value.error == "ILLEGAL_STATE"
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "EndTxn"]
    assert (p.committed, p.aborted) == (([1], []) if commit else ([], [1]))
    for call in (lambda: p.end_transaction(True), lambda: p.end_transaction(False),
                 lambda: p.send("t", 0, 1), p.init_transactions):
        with pytest.raises(TxnClientError) as raised:
            call()
        assert raised.value.error == "ILLEGAL_STATE"
    p.begin_transaction()
    assert p.has_ongoing_transaction


# ---------------------------------------------------------------- batch expiry
@pytest.mark.parametrize("commit", [True, False])
def test_an_expired_send_makes_the_transaction_abortable_with_an_epoch_bump(
        world: World, script: Script, commit: bool) -> None:
    """testTransitionToAbortableErrorOnBatchExpiry,
    testTransitionToAbortableErrorOnMultipleBatchExpiry,
    testDropCommitOnBatchExpiry, testBumpTransactionalEpochOnTimeout: a send not
    acknowledged delivery.timeout.ms after it started fails (Kafka's TimeoutException,
    DELIVERY_TIMEOUT); the transaction is abortable, the commit aborts (EndTxn(ABORT),
    the partition was added), then InitProducerId bumps the epoch and the
    sequences start again."""
    p = world.ready()
    p.delivery_timeout_ms = 3_000
    script.produce(*["NOT_LEADER_OR_FOLLOWER"] * 1_000)
    _begin_send(p, ("t", 0), ("t", 1))
    p.end_transaction(commit)
    world.run(p)
    sent = [t for r, t in world.sent_at if r == "Produce t-0"]
    assert sent[-1] - sent[0] < 3_000 <= sent[-1] - sent[0] + RETRY_BACKOFF_MS
    assert p.errors["DELIVERY_TIMEOUT"] == 1 and p.last_error is None
    assert [(op[0], e) for op, e, _ in p.completed[-4:]] == [
        ("send", "DELIVERY_TIMEOUT"), ("send", "ABORTABLE_ERROR"),
        ("end", "ABORTABLE_ERROR" if commit else "NONE"), ("init", "NONE")]
    assert _distinct(world.requests)[-2:] == ["EndTxn", "InitProducerId"]
    assert (p.state, p.producer_epoch, p.sequences, p.aborted) == (P.READY, 1, {}, [1])
    assert world.markers("t", 0) == [0]


def test_the_delivery_timeout_is_kafkas_default() -> None:
    """delivery.timeout.ms defaults to 120 s, as Kafka's."""
    from sim.txn_clients import DELIVERY_TIMEOUT_MS
    assert DELIVERY_TIMEOUT_MS == 120_000


# ---------------------------------------------------------------- requests in order
def test_a_partition_is_added_once_per_transaction(world: World) -> None:
    """testMaybeAddPartitionToTransaction, testDefaultSequenceNumber: one
    AddPartitionsToTxn per partition; the sequences count the records per partition and
    go on in the next transaction (no epoch bump)."""
    p = world.ready()
    p.begin_transaction()
    p.send("t", 0, 1)
    p.send("t", 0, 3)
    p.send("t", 1, 2)
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "Produce t-0",
                              "AddPartitionsToTxn", "Produce t-1", "EndTxn"]
    assert p.sequences == {("t", 0): 4, ("t", 1): 2}
    p.transaction([("t", 0, 1)], commit=True)
    world.run(p)
    assert p.sequences == {("t", 0): 5, ("t", 1): 2} and p.committed == [1, 2]


def test_the_commit_waits_for_the_produce_in_flight(world: World, script: Script) -> None:
    """testCommitTransactionWithInFlightProduceRequest,
    testCommitTransactionWithUnsentProduceRequest: commitTransaction() while the produce
    is out (and retried): EndTxn is sent only once the produce is acknowledged."""
    p = world.ready()
    script.produce("REQUEST_TIMED_OUT")
    _begin_send(p, ("t", 0))
    sim = world.cluster.sim
    assert sim.run_until_true(lambda: "Produce t-0" in world.requests, 10_000)
    p.end_transaction(True)
    world.run(p)
    assert world.requests == ["AddPartitionsToTxn", "Produce t-0", "Produce t-0", "EndTxn"]
    [acked_at] = [t for op, e, t in p.completed if op[0] == "send"]
    [end_txn_at] = [t for r, t in world.sent_at if r == "EndTxn"]
    assert acked_at <= end_txn_at and p.committed == [1]


@pytest.mark.parametrize(("retried", "first"), [("produce", "Produce t-0"),
                                                 ("add_partitions", "AddPartitionsToTxn")])
def test_an_abort_resends_the_request_being_retried_first(world: World, script: Script,
                                                          retried: str, first: str) -> None:
    """testAbortResendsProduceRequestIfRetried, testAbortResendsAddPartitionErrorIfRetried:
    the request retried when abortTransaction() is called is sent again before EndTxn.
    (In the second case Kafka fails the record, never sent; kraftsim's send runs
    whole before the abort, so the record is written and aborted: see the docstring.)"""
    p = world.ready()
    getattr(script, retried)("UNKNOWN_TOPIC_OR_PARTITION" if retried == "add_partitions"
                             else "REQUEST_TIMED_OUT")
    _begin_send(p, ("t", 0))
    sim = world.cluster.sim
    assert sim.run_until_true(lambda: first in world.requests, 10_000)
    p.end_transaction(False)
    world.run(p)
    again = 2 if first == "AddPartitionsToTxn" else 1
    assert world.requests == ["AddPartitionsToTxn"] * again + ["Produce t-0"] * (3 - again) + [
        "EndTxn"]
    assert (p.state, p.aborted, p.producer_epoch) == (P.READY, [1], 0)
    assert world.markers("t", 0) == [0]


# ---------------------------------------------------------------- lost connections
@pytest.mark.parametrize("lost", ["InitProducerId", "EndTxn"])
def test_a_coordinator_crash_sends_the_request_again_to_the_next_one(world: World,
                                                                     lost: str) -> None:
    """testDisconnectAndRetry, testLookupCoordinatorOnDisconnectAfterSend,
    testLookupCoordinatorOnDisconnectBeforeSend: the coordinator's broker stops with
    the request out; the producer finds the new coordinator and sends it again."""
    sim = world.cluster.sim
    coordinator = world.txns.find_coordinator("app")
    assert coordinator is not None
    if lost == "InitProducerId":
        p = world.producer()
        p.init_transactions()
    else:
        p = world.ready()
        _begin_send(p, ("t", 0))
        world.run(p)
        p.end_transaction(True)
    assert sim.run_until_true(lambda: lost in world.requests, 10_000)
    sim.crash(coordinator)
    world.run(p)
    assert world.requests.count(lost) == 2 and p.fatal is None
    assert world.txns.find_coordinator("app") != coordinator
    assert p.errors.get("NOT_COORDINATOR", 0) + p.errors.get("NETWORK_EXCEPTION", 0) >= 1
    if lost == "EndTxn":
        assert p.committed == [1] and world.markers("t", 0) == [1]
    else:
        assert (p.state, p.producer_epoch) == (P.READY, 0)
