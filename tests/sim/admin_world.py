"""A small transactional cluster for the ports of Kafka's Admin handler tests: three
brokers, topic ``t`` (two partitions, three replicas), coordinators running, and an
Admin client (:class:`sim.txn_admin.TxnAdmin`) that waits for its answers."""

from __future__ import annotations

from typing import TypeVar

from broker.partition_log import ActiveProducer
from broker.txn.admin import TransactionDescription
from broker.txn.coordinator import TxnCoordinatorConfig
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_admin import AbortTransactionSpec, TxnAdmin
from sim.txn_clients import TransactionalProducer
from sim.txn_cluster import TxnCluster

CONFIG = TxnCoordinatorConfig(num_partitions=3)
"""Kafka's defaults (transaction.max.timeout.ms 900000), three ``__transaction_state``
partitions."""


T = TypeVar("T")


class AdminWorld:
    """See the module docs."""

    def __init__(self, config: TxnCoordinatorConfig = CONFIG, seed: int = 5) -> None:
        self.cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=3))
        self.cluster.start()
        assert self.cluster.wait(self.cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
        self.txns = TxnCluster(self.cluster, config)
        assert self.txns.start()
        self.sim = self.cluster.sim
        self.sim.run_for(1_000)
        self.admin = TxnAdmin(self.txns)

    def producer(self, transactional_id: str, instance: str) -> TransactionalProducer:
        """An initialized transactional producer."""
        p = TransactionalProducer(self.txns, transactional_id, instance)
        p.init_transactions()
        self.idle(p)
        return p

    def idle(self, *producers: TransactionalProducer) -> None:
        """Run until every producer has nothing queued, then one more second."""
        assert self.sim.run_until_true(lambda: all(p.idle for p in producers), 60_000)
        self.sim.run_for(1_000)

    def open_transaction(self, transactional_id: str, instance: str
                         ) -> TransactionalProducer:
        """A producer with a transaction left open on ``t``-0 (two records sent)."""
        p = self.producer(transactional_id, instance)
        p.begin_transaction()
        p.send("t", 0, 2)
        self.idle(p)
        return p

    def fence(self, transactional_id: str, timeout_ms: int | None = None,
              within_ms: int = 120_000) -> str:
        """fenceProducers (forceTerminateTransaction) of one id: its answer."""
        done: list[str] = []
        self.admin.force_terminate_transaction(transactional_id, done.append, timeout_ms)
        return self._first(done, within_ms)

    def describe(self, transactional_id: str, timeout_ms: int | None = None,
                 within_ms: int = 120_000) -> TransactionDescription:
        """describeTransactions of one id: its description or error."""
        done: list[TransactionDescription] = []
        self.admin.describe_transaction(transactional_id, done.append, timeout_ms)
        return self._first(done, within_ms)

    def describe_producers(self, partition: int, broker_id: int | None = None,
                           timeout_ms: int | None = None, within_ms: int = 120_000
                           ) -> tuple[str, list[ActiveProducer]]:
        """describeProducers of ``t``-``partition``: the error and the producers."""
        done: list[tuple[str, list[ActiveProducer]]] = []
        self.admin.describe_producers("t", partition, lambda e, p: done.append((e, p)),
                                      broker_id, timeout_ms)
        return self._first(done, within_ms)

    def abort(self, spec: AbortTransactionSpec, timeout_ms: int | None = None,
              within_ms: int = 120_000) -> str:
        """abortTransaction of ``spec``: its answer."""
        done: list[str] = []
        self.admin.abort_transaction(spec, done.append, timeout_ms)
        return self._first(done, within_ms)

    def _first(self, done: list[T], within_ms: int) -> T:
        """Run the simulation until an Admin call's answer lands in ``done`` (within
        ``within_ms``): that answer."""
        assert self.sim.run_until_true(lambda: bool(done), within_ms)
        return done[0]

    def leader(self, partition: int) -> int:
        """The broker leading ``t``-``partition``."""
        leader = self.cluster.partition_leader("t", partition)
        assert leader is not None
        return leader

    def coordinator(self, transactional_id: str) -> int:
        """The broker coordinating ``transactional_id``."""
        broker = self.txns.find_coordinator(transactional_id)
        assert broker is not None
        return broker
