"""KIP-939 two-phase commit in a simulated cluster, PreparedTxnSurvives checked online.

A 2PC producer prepares a transaction; its coordinator crashes, time runs far
past the producer's transaction timeout, the producer restarts with
KeepPreparedTxn, finds the transaction and completes it as the external
transaction manager decided. Also: the admin's ListTransactions (running
longer than), DescribeTransactions and forceTerminateTransaction, and the
injected 2PC bugs caught by the invariant.
"""

from __future__ import annotations

from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.mutations import TxnMutation
from broker.txn.state import NO_TIMEOUT_MS
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_admin import TxnAdmin
from sim.txn_clients import PreparedTxnState, TransactionalProducer, TxnClientError
from sim.txn_clients import TxnProducerState as P
from sim.txn_cluster import TxnCluster
from tests.sim.test_txn_scenarios import committed_values

CONFIG = TxnCoordinatorConfig(num_partitions=3, two_phase_commit_enable=True,
                              abort_timed_out_interval_ms=1_000, max_timeout_ms=10_000)
TIMEOUT_MS = 2_000


class World:
    """Three brokers, topic t (2 partitions), the monitor online."""

    def __init__(self, mutations: frozenset[TxnMutation] = frozenset()) -> None:
        self.monitor = ProducerTxnInvariants()
        self.cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3),
                                    extra_monitors=[self.monitor])
        self.cluster.start()
        assert self.cluster.wait(self.cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
        self.txns = TxnCluster(self.cluster, CONFIG, mutations,
                               on_transition=self.monitor.transition)
        assert self.txns.start()
        self.sim = self.cluster.sim
        self.sim.run_for(1_000)
        self.admin = TxnAdmin(self.txns)

    def producer(self, instance: str, keep: bool = False, wait: bool = True
                 ) -> TransactionalProducer:
        m = self.monitor
        p = TransactionalProducer(
            self.txns, "db", instance, TIMEOUT_MS, enable_2pc=True,
            on_initialized=self._initialized, on_sent=m.sent,
            on_committed=m.commit_acknowledged,
            on_prepared=lambda q, s: m.prepared_txn(
                q.transactional_id, f"db/{q.instance}/{q.transactions}", s.producer_id,
                s.epoch),
            on_complete=lambda q, s, c: m.completing(q.transactional_id,
                                                     (s.producer_id, s.epoch), c))
        m.two_phase("db")
        p.init_transactions(keep_prepared_txn=keep)
        if wait:
            self.idle(p)
        return p

    def _initialized(self, p: TransactionalProducer) -> None:
        self.monitor.initialized(p.transactional_id, p.instance, self.sim.now)
        if p.kept_init:
            state = p.prepared_state or PreparedTxnState()
            self.monitor.kept(p.transactional_id, (state.producer_id, state.epoch))

    def idle(self, p: TransactionalProducer) -> None:
        assert self.sim.run_until_true(lambda: p.idle, 60_000)
        self.sim.run_for(500)

    def prepared(self) -> tuple[TransactionalProducer, PreparedTxnState]:
        p = self.producer("db-1")
        assert p.transaction_prepared([("t", 0, 2), ("t", 1, 1)])
        self.idle(p)
        assert p.state == P.PREPARED_TRANSACTION and p.prepared_state is not None
        return p, p.prepared_state

    def crash_coordinator_and_wait(self) -> None:
        coordinator = self.txns.find_coordinator("db")
        assert coordinator is not None
        self.sim.crash(coordinator)
        self.sim.run_for(15_000)      # far past the producer's 2 s timeout
        self.sim.restart(coordinator)
        self.sim.run_for(15_000)


def test_a_prepared_transaction_survives_failover_and_restart_then_commits() -> None:
    w = World()
    p1, state = w.prepared()
    w.crash_coordinator_and_wait()
    assert committed_values(w.txns, "t", 0) == []          # still open: LSO held
    listed = w.admin.list_transactions(duration_filter_ms=20_000)
    assert [(t.TransactionalId, t.TransactionState) for t in listed.TransactionStates
            if t.TransactionalId == "db"] == [("db", "Ongoing")]
    assert w.admin.list_transactions(["Ongoing"], duration_filter_ms=10**9
                                     ).TransactionStates == []
    [described] = w.admin.describe_transactions(["db"])
    assert (described.ErrorCode, described.TransactionState, described.TransactionTimeoutMs,
            described.ProducerId, described.ProducerEpoch, described.Topics) == (
        "NONE", "Ongoing", NO_TIMEOUT_MS, state.producer_id, state.epoch, [("t", [0, 1])])
    p2 = w.producer("db-2", keep=True)                       # the restarted application
    assert p2.state == P.PREPARED_TRANSACTION and p2.prepared_state == state
    assert (p2.producer_id, p2.producer_epoch) != (state.producer_id, state.epoch)
    p2.complete_transaction(state)                           # the external decision: commit
    w.idle(p2)
    assert p2.state == P.READY and w.sim.violation is None
    assert committed_values(w.txns, "t", 0) == ["db/db-1/1/0", "db/db-1/1/1"]
    assert committed_values(w.txns, "t", 1) == ["db/db-1/1/0"]
    p1.complete_transaction(state)                           # the fenced original
    w.idle(p1)
    assert p1.state == P.FATAL_ERROR
    assert p2.transaction([("t", 0, 1)], commit=True)        # the next transaction, TV2
    w.idle(p2)
    assert committed_values(w.txns, "t", 0)[-1] == "db/db-2/1/0"
    assert w.sim.violation is None


def test_a_mismatching_prepared_state_aborts_and_complete_needs_a_prepared_txn() -> None:
    w = World()
    _, state = w.prepared()
    p2 = w.producer("db-2", keep=True)
    p2.complete_transaction(PreparedTxnState(state.producer_id, state.epoch + 7))
    w.idle(p2)
    assert p2.aborted == [0] and p2.state == P.READY
    assert committed_values(w.txns, "t", 0) == [] and w.sim.violation is None
    p2.complete_transaction(state)   # nothing kept any more: a no-op after a keep init
    p3 = w.producer("db-3")
    try:
        p3.complete_transaction(state)
        raise AssertionError("complete without a prepared transaction")
    except TxnClientError as error:
        assert error.error == "INVALID_TXN_STATE"


def test_force_terminate_aborts_the_prepared_transaction() -> None:
    w = World()
    p1, state = w.prepared()
    done: list[str] = []
    w.monitor.force_terminated("db")
    w.admin.force_terminate_transaction(   # a timeout within transaction.max.timeout.ms
        "db", lambda error: (done.append(error), w.monitor.force_terminate_done("db")),
        timeout_ms=5_000)
    assert w.sim.run_until_true(lambda: bool(done), 30_000) and done == ["NONE"]
    w.sim.run_for(1_000)
    [described] = w.admin.describe_transactions(["db"])
    assert described.TransactionState == "Empty"
    p1.complete_transaction(state)
    w.idle(p1)
    assert p1.state == P.FATAL_ERROR and committed_values(w.txns, "t", 0) == []
    assert w.sim.violation is None


def test_a_2pc_transaction_aborted_on_timeout_is_caught() -> None:
    w = World(frozenset({TxnMutation.TWO_PC_TIMEOUT_KEPT}))
    w.prepared()
    w.sim.run_for(30_000)
    assert w.sim.violation is not None and w.sim.violation.invariant == "PreparedTxnSurvives"


def test_a_restart_that_aborts_the_prepared_transaction_is_caught() -> None:
    w = World(frozenset({TxnMutation.KEEP_PREPARED_FENCES}))
    w.prepared()
    w.producer("db-2", keep=True, wait=False)
    w.sim.run_for(5_000)
    assert w.sim.violation is not None and w.sim.violation.invariant == "PreparedTxnSurvives"
