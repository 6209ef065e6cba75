"""The Admin client's transaction calls against a simulated cluster.

- :meth:`TxnAdmin.list_transactions`: ListTransactions sent to every running
  broker's coordinator, the answers merged (Kafka's Admin does the same), with
  the state, producer-id and duration filters (KIP-994 ``DurationFilter``,
  KIP-939's "running longer than").
  :meth:`TxnAdmin.list_transactions_call` is Kafka's listTransactions call: it
  asks every broker the metadata names alive (registered, unfenced), so a broker
  that crashed but is not fenced yet fails its listing at the call's timeout, and
  the whole call with it (:class:`ListTransactionsByBroker`).
- :meth:`TxnAdmin.describe_transactions`: DescribeTransactions at each id's
  coordinator (FindCoordinator first), answered at once: what one round of
  requests sees now (COORDINATOR_NOT_AVAILABLE for an id whose coordinator is not
  found). :meth:`TxnAdmin.describe_transaction` is Kafka's describeTransactions
  call: it retries in simulated time until it has the answer or a fatal error.
- :meth:`TxnAdmin.force_terminate_transaction`: KIP-939's
  ``forceTerminateTransaction``: as Kafka builds it, through ``fenceProducers``,
  InitProducerId with Enable2Pc=false and KeepPreparedTxn=false, retried while
  the coordinator answers CONCURRENT_TRANSACTIONS (the abort of the ongoing
  transaction is under way) or is loading, and sent to the coordinator found again
  after NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE. An ongoing transaction,
  prepared or not, is aborted and its producer fenced. Its InitProducerId carries
  the call's timeout as the transaction timeout, request.timeout.ms (30 s) when the
  call names none, as Kafka's FenceProducersHandler does.
- :meth:`TxnAdmin.describe_producers`: DescribeProducers (KIP-664) at the
  partition's leader, or at the broker the call names.
- :meth:`TxnAdmin.abort_transaction`: KIP-664's ``abortTransaction``: an ABORT
  marker written by WriteTxnMarkers straight to the partition's leader, for a
  hanging transaction its coordinator no longer knows.

The asynchronous calls sort every answer as Kafka's handlers do
(:mod:`sim.admin_handlers`) and give up with REQUEST_TIMED_OUT at their timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from broker.metadata_cache import alive_brokers
from broker.partition_log import ActiveProducer
from broker.replica_manager import ProduceResult
from broker.txn.admin import (
    ListTransactionsResult,
    TransactionDescription,
    describe_transactions,
    list_transactions,
)
from broker.txn.coordinator import TxnResult
from sim.admin_handlers import (
    DEFAULT_API_TIMEOUT_MS,
    Outcome,
    abort_transaction_outcome,
    describe_producers_outcome,
    describe_transactions_outcome,
    fence_producers_outcome,
    list_transactions_outcome,
)
from sim.txn_clients import REQUEST_TIMEOUT_MS, RETRY_BACKOFF_MS
from sim.txn_cluster import TxnCluster

UNREACHABLE = "NETWORK_EXCEPTION"
"""An attempt's answer when there is no broker to ask (no leader known) or the broker
does not run: Kafka's Admin driver looks the key up again and retries (a failed lookup,
or a DisconnectException), whatever the call."""


class AbortTransactionSpec(msgspec.Struct, frozen=True):
    """What abortTransaction aborts (Kafka's AbortTransactionSpec): the open transaction
    of producer ``producer_id`` at ``producer_epoch`` on one partition, the marker written
    as coordinator epoch ``coordinator_epoch``."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int


class ListTransactionsByBroker(msgspec.Struct, frozen=True):
    """What listTransactions answers (Kafka's ListTransactionsResult): each alive broker's
    listing, its ErrorCode NONE or the error that failed it; ``lookup_error`` is set
    (REQUEST_TIMED_OUT) when no broker could be asked which brokers are alive."""

    by_broker_id: dict[int, ListTransactionsResult]
    lookup_error: str = "NONE"

    def all(self) -> ListTransactionsResult:
        """Every broker's listing merged, sorted by transactional id (Kafka's ``all()``);
        its ErrorCode is the lookup's error or the lowest failed broker's, if any."""
        failed = [r.ErrorCode for _, r in sorted(self.by_broker_id.items())
                  if r.ErrorCode != "NONE"]
        error = self.lookup_error if self.lookup_error != "NONE" else \
            (failed[0] if failed else "NONE")
        if error != "NONE":
            return ListTransactionsResult(error, [], [])
        unknown = sorted({n for r in self.by_broker_id.values() for n in r.UnknownStateFilters})
        listed = sorted((t for r in self.by_broker_id.values() for t in r.TransactionStates),
                        key=lambda t: t.TransactionalId)
        return ListTransactionsResult("NONE", unknown, listed)


class TxnAdmin:
    """See the module docs."""

    def __init__(self, txns: TxnCluster) -> None:
        self.txns = txns

    def list_transactions(self, states_filter: Sequence[str] = (),
                          producer_id_filter: Sequence[int] = (),
                          duration_filter_ms: int = -1) -> ListTransactionsResult:
        """ListTransactions on every running broker now, merged and sorted by transactional
        id; a broker not running is left out (Kafka's call waits for it, and fails if it
        does not answer: :meth:`list_transactions_call`)."""
        now = self.txns.cluster.sim.now
        answered = {}
        for broker in self.txns.cluster.config.broker_ids:
            coordinator = self.txns.sync(broker)
            if coordinator is not None:
                answered[broker] = list_transactions(coordinator, now, states_filter,
                                                     producer_id_filter, duration_filter_ms)
        return ListTransactionsByBroker(answered).all()

    def list_transactions_call(self, on_done: Callable[[ListTransactionsByBroker], None],
                               states_filter: Sequence[str] = (),
                               producer_id_filter: Sequence[int] = (),
                               duration_filter_ms: int = -1,
                               timeout_ms: int | None = None) -> None:
        """listTransactions: ListTransactions at every alive broker, each retried until it
        answers or the call's timeout (60 s by default) fails it with REQUEST_TIMED_OUT;
        ``on_done`` gets every broker's answer once all are in."""
        sim = self.txns.cluster.sim
        give_up = sim.now + (DEFAULT_API_TIMEOUT_MS if timeout_ms is None else timeout_ms)
        results: dict[int, ListTransactionsResult] = {}

        def lookup() -> None:
            brokers = self._alive_brokers()
            if brokers is not None:
                ask_all(brokers)
            elif sim.now + RETRY_BACKOFF_MS > give_up:
                on_done(ListTransactionsByBroker({}, "REQUEST_TIMED_OUT"))
            else:
                sim.schedule(sim.now + RETRY_BACKOFF_MS, lookup, "admin lookup retry")

        def ask_all(brokers: tuple[int, ...]) -> None:
            if not brokers:
                on_done(ListTransactionsByBroker({}))
            for broker in brokers:
                ask(broker, len(brokers))

        def ask(broker: int, count: int) -> None:
            listed: list[ListTransactionsResult] = []

            def attempt(answer: Callable[[str], None]) -> None:
                coordinator = self.txns.sync(broker)
                if coordinator is None:
                    answer(UNREACHABLE)
                    return
                listed[:] = [list_transactions(coordinator, sim.now, states_filter,
                                               producer_id_filter, duration_filter_ms)]
                answer(listed[0].ErrorCode)

            def done(error: str) -> None:
                results[broker] = listed[0] if listed and listed[0].ErrorCode == error \
                    else ListTransactionsResult(error, [], [])
                if len(results) == count:
                    on_done(ListTransactionsByBroker(dict(sorted(results.items()))))

            self._call(attempt, list_transactions_outcome, done, give_up - sim.now)

        lookup()

    def _alive_brokers(self) -> tuple[int, ...] | None:
        """The brokers a client's Metadata request names (registered and unfenced, in a
        running broker's published image); None when no broker answers."""
        cluster = self.txns.cluster
        broker = cluster.any_running_broker()
        loader = cluster.loader(broker) if broker is not None else None
        image = loader.published if loader is not None else None
        return alive_brokers(image) if image is not None else None

    def describe_transactions(self, transactional_ids: Sequence[str]
                              ) -> list[TransactionDescription]:
        """DescribeTransactions, each id at its coordinator, answered now (no retries)."""
        return [self._describe_once(txn_id) for txn_id in transactional_ids]

    def _describe_once(self, transactional_id: str) -> TransactionDescription:
        broker = self.txns.find_coordinator(transactional_id)
        coordinator = self.txns.sync(broker) if broker is not None else None
        if coordinator is None:
            return TransactionDescription("COORDINATOR_NOT_AVAILABLE", transactional_id)
        [described] = describe_transactions(coordinator, [transactional_id])
        return described

    def describe_transaction(self, transactional_id: str,
                             on_done: Callable[[TransactionDescription], None],
                             timeout_ms: int | None = None) -> None:
        """describeTransactions for one id: ``on_done`` gets its description, or the error
        that ended the call (REQUEST_TIMED_OUT after the timeout, 60 s by default)."""
        described: list[TransactionDescription] = []

        def attempt(answer: Callable[[str], None]) -> None:
            described[:] = [self._describe_once(transactional_id)]
            answer(described[0].ErrorCode)

        def done(error: str) -> None:
            on_done(described[0] if described and described[0].ErrorCode == error
                    else TransactionDescription(error, transactional_id))

        self._call(attempt, describe_transactions_outcome, done, timeout_ms)

    def force_terminate_transaction(self, transactional_id: str,
                                    on_done: Callable[[str], None],
                                    timeout_ms: int | None = None) -> None:
        """forceTerminateTransaction: fence the id's producer, aborting what it has open.

        ``on_done`` gets NONE, or the error that ended the call (REQUEST_TIMED_OUT after
        ``timeout_ms``, 60 s by default). ``timeout_ms`` is also the transaction timeout
        the InitProducerId carries (30 s by default), so that one above the coordinator's
        transaction.max.timeout.ms fails INVALID_TRANSACTION_TIMEOUT, as in Kafka.
        """
        sim = self.txns.cluster.sim
        txn_timeout_ms = REQUEST_TIMEOUT_MS if timeout_ms is None else timeout_ms

        def attempt(answer: Callable[[str], None]) -> None:
            broker = self.txns.find_coordinator(transactional_id)
            coordinator = self.txns.sync(broker) if broker is not None else None
            if coordinator is None or broker is None:
                answer("COORDINATOR_NOT_AVAILABLE")
                return

            def answered(result: TxnResult) -> None:
                sim.schedule(sim.now, lambda: answer(result.error), "admin fence answer")

            coordinator.handle_init_producer_id(
                transactional_id, txn_timeout_ms, None, sim.now, answered,
                enable_2pc=False, keep_prepared_txn=False)
            self.txns.flush(broker)

        self._call(attempt, fence_producers_outcome, on_done, timeout_ms)

    def describe_producers(self, topic: str, partition: int,
                           on_done: Callable[[str, list[ActiveProducer]], None],
                           broker_id: int | None = None, timeout_ms: int | None = None) -> None:
        """describeProducers for one partition: ``on_done`` gets NONE and the partition's
        active producers, or the error that ended the call. Asked at the partition's
        leader, or at ``broker_id`` (Kafka's DescribeProducersOptions.brokerId), which
        answers from a follower too and fails NOT_LEADER_OR_FOLLOWER if it hosts none."""
        found: list[ActiveProducer] = []

        def attempt(answer: Callable[[str], None]) -> None:
            broker = broker_id if broker_id is not None \
                else self.txns.cluster.partition_leader(topic, partition)
            manager = self.txns.cluster.replica_manager(broker)
            if manager is None:
                answer(UNREACHABLE)
                return
            result = manager.describe_producers(topic, partition)
            if isinstance(result, str):
                answer(result)
            else:
                found[:] = result
                answer("NONE")

        def outcome(error: str) -> Outcome:
            return describe_producers_outcome(error, broker_named=broker_id is not None)

        self._call(attempt, outcome,
                   lambda error: on_done(error, list(found) if error == "NONE" else []),
                   timeout_ms)

    def abort_transaction(self, spec: AbortTransactionSpec, on_done: Callable[[str], None],
                          timeout_ms: int | None = None) -> None:
        """abortTransaction: WriteTxnMarkers with an ABORT marker for ``spec`` at the
        partition's leader; ``on_done`` gets NONE once the marker is below the high
        watermark, or the error that ended the call (INVALID_PRODUCER_EPOCH for an epoch
        older than the partition's, TRANSACTION_COORDINATOR_FENCED for an older
        coordinator epoch)."""
        sim = self.txns.cluster.sim

        def attempt(answer: Callable[[str], None]) -> None:
            leader = self.txns.cluster.partition_leader(spec.topic, spec.partition)
            manager = self.txns.cluster.replica_manager(leader)
            if manager is None:
                answer(UNREACHABLE)
                return

            def answered(result: ProduceResult) -> None:
                sim.schedule(sim.now, lambda: answer(result.error), "admin abort answer")

            manager.write_txn_marker(spec.topic, spec.partition, spec.producer_id,
                                     spec.producer_epoch, False, spec.coordinator_epoch,
                                     answered)

        self._call(attempt, abort_transaction_outcome, on_done, timeout_ms)

    def _call(self, attempt: Callable[[Callable[[str], None]], None],
              outcome: Callable[[str], Outcome], on_done: Callable[[str], None],
              timeout_ms: int | None) -> None:
        """Run ``attempt`` until ``outcome`` of its answer is done or fail, again after
        retry.backoff.ms while it is retry or lookup (each attempt looks up afresh) or
        :data:`UNREACHABLE`, and give up with REQUEST_TIMED_OUT at the timeout."""
        sim = self.txns.cluster.sim
        give_up = sim.now + (DEFAULT_API_TIMEOUT_MS if timeout_ms is None else timeout_ms)

        def answered(error: str) -> None:
            if error != UNREACHABLE and outcome(error) in (Outcome.DONE, Outcome.FAIL):
                on_done(error)
            elif sim.now + RETRY_BACKOFF_MS > give_up:
                on_done("REQUEST_TIMED_OUT")
            else:
                sim.schedule(sim.now + RETRY_BACKOFF_MS, lambda: attempt(answered),
                             "admin retry")

        attempt(answered)
