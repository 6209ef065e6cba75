"""Transactional producers against a simulated cluster: commit, abort, fencing, failover."""

from __future__ import annotations

import pytest

from broker.partition_log import PartitionLog
from broker.txn.coordinator import TRANSACTION_STATE_TOPIC, TxnCoordinatorConfig
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from broker.txn.mutations import TxnMutation
from controller.operations import CreateTopics, NewTopic
from metadata.delta import TOPIC_RESOURCE
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import TransactionalProducer, TxnProducerState
from sim.txn_cluster import TxnCluster
from tests.sim.txn_helpers import until_idle


def _world(seed: int = 1) -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=3))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
    txns = TxnCluster(cluster)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def committed_values(txns: TxnCluster, topic: str, partition: int) -> list[str]:
    """What a read_committed consumer of the partition leader returns."""
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(topic, partition))
    assert manager is not None
    replica = manager.leader_replica(topic, partition)
    assert not isinstance(replica, str)
    result = fetch_log(replica.log, 0, 100_000, READ_COMMITTED)
    return [e.value for e in filter_committed(result.entries, result.aborted_transactions)]


def test_commit_and_abort_are_visible_to_read_committed_as_such() -> None:
    txns = _world()
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    until_idle(txns, p)
    assert p.state == TxnProducerState.READY and p.producer_epoch == 0
    assert p.transaction([("t", 0, 2), ("t", 1, 1)], commit=True)
    until_idle(txns, p)
    assert p.transaction([("t", 0, 3)], commit=False)
    until_idle(txns, p)
    assert p.committed == [1] and p.aborted == [2]
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]
    assert committed_values(txns, "t", 1) == ["app/app-1/1/0"]


def test_a_new_instance_fences_the_old_one() -> None:
    txns = _world()
    old = TransactionalProducer(txns, "app", "app-1")
    old.init_transactions()
    until_idle(txns, old)
    new = TransactionalProducer(txns, "app", "app-2")
    new.init_transactions()
    until_idle(txns, new)
    assert new.producer_epoch == 1
    assert old.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, old)
    assert old.state == TxnProducerState.FATAL_ERROR and old.fatal == "PRODUCER_FENCED"
    assert committed_values(txns, "t", 0) == []


def test_a_coordinator_failover_completes_the_transaction() -> None:
    txns = _world()
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    until_idle(txns, p)
    assert p.transaction([("t", 0, 2)], commit=True)
    sim = txns.cluster.sim
    # the coordinator dies once the client has asked it to commit
    assert sim.run_until_true(lambda: p.state is TxnProducerState.COMMITTING_TRANSACTION,
                              5_000)
    coordinator = txns.find_coordinator("app")
    assert coordinator is not None
    sim.crash(coordinator)
    until_idle(txns, p)
    sim.run_for(5_000)
    assert p.state == TxnProducerState.READY
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]
    assert txns.find_coordinator("app") not in (None, coordinator)
    assert TRANSACTION_STATE_TOPIC == "__transaction_state"


def _first_committed_txn(txns: TxnCluster) -> TransactionalProducer:
    p = TransactionalProducer(txns, "app", "app-1")
    p.init_transactions()
    until_idle(txns, p)
    assert p.transaction([("t", 0, 2)], commit=True)
    until_idle(txns, p)
    return p


def _each_log(txns: TxnCluster) -> list[PartitionLog]:
    logs = []
    for broker in txns.cluster.config.broker_ids:
        manager = txns.cluster.replica_manager(broker)
        assert manager is not None
        logs += [replica.log for replica in manager.replicas.values()]
    return logs


def test_a_partition_that_forgot_the_producer_takes_its_next_sequence() -> None:
    """Kafka's checkSequence takes any sequence from a producer it has no state of (as
    after its state expired): no UNKNOWN_PRODUCER_ID since KIP-360."""
    txns = _world()
    p = _first_committed_txn(txns)
    for log in _each_log(txns):
        log.producers = {}
    assert p.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, p)
    assert p.errors.get("UNKNOWN_PRODUCER_ID") is None
    assert p.state == TxnProducerState.READY and p.producer_epoch == 0
    assert p.committed == [1, 2]
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1", "app/app-1/2/2"]


def test_kip360_an_out_of_order_sequence_aborts_then_bumps_the_epoch() -> None:
    """The partitions lose the producer's last batches but keep its epoch: its next
    sequence (2) does not follow, the transaction aborts and the epoch is bumped."""
    txns = _world()
    p = _first_committed_txn(txns)
    for log in _each_log(txns):
        for entry in log.producers.values():
            entry.batches.clear()
    assert p.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, p)
    assert p.errors.get("OUT_OF_ORDER_SEQUENCE_NUMBER") == 1
    assert p.state == TxnProducerState.READY and p.producer_epoch == 1
    assert p.committed == [1] and p.aborted == [2]
    assert p.transaction([("t", 0, 1)], commit=True)
    until_idle(txns, p)
    assert p.committed == [1, 3]
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1", "app/app-1/3/0"]


# ---------------------------------------------------------------- each mutation, scripted
def _mutated(mutation: TxnMutation) -> tuple[TxnCluster, ProducerTxnInvariants]:
    monitor = ProducerTxnInvariants()
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3),
                           extra_monitors=[monitor])
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 2, 3),))))
    txns = TxnCluster(cluster, mutations=frozenset({mutation}),
                      on_transition=lambda b, t, x, y: monitor.transition(b, t, x, y))
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns, monitor


def _producer(txns: TxnCluster, monitor: ProducerTxnInvariants, instance: str
              ) -> TransactionalProducer:
    p = TransactionalProducer(
        txns, "app", instance,
        on_initialized=lambda q: monitor.initialized(q.transactional_id, q.instance,
                                                     txns.cluster.sim.now),
        on_sent=monitor.sent, on_committed=monitor.commit_acknowledged)
    p.init_transactions()
    txns.cluster.sim.run_until_true(lambda: p.idle, 30_000)
    return p


def _violation(txns: TxnCluster) -> str | None:
    txns.cluster.sim.run_for(30_000)
    violation = txns.cluster.sim.violation
    return violation.invariant if violation is not None else None


def test_lso_ignoring_open_transactions_is_caught() -> None:
    txns, monitor = _mutated(TxnMutation.LSO_IGNORES_OPEN_TXN)
    p = _producer(txns, monitor, "app-1")
    p.transaction([("t", 0, 2)], commit=False)
    assert _violation(txns) == "ReadCommittedOnlyCommitted"


def test_an_unbumped_fence_lets_the_zombie_commit() -> None:
    txns, monitor = _mutated(TxnMutation.EPOCH_NOT_BUMPED_ON_FENCE)
    old = _producer(txns, monitor, "app-1")
    new = _producer(txns, monitor, "app-2")
    assert new.producer_epoch == old.producer_epoch
    old.transaction([("t", 0, 1)], commit=True)
    assert _violation(txns) == "ZombieNeverCommits"


def test_markers_before_a_durable_prepare_lose_an_acknowledged_commit() -> None:
    txns, monitor = _mutated(TxnMutation.MARKERS_BEFORE_PREPARE_DURABLE)
    p = _producer(txns, monitor, "app-1")
    sim = txns.cluster.sim
    p.transaction([("t", 0, 1), ("t", 1, 1)], commit=True)
    assert sim.run_until_true(lambda: p.state == TxnProducerState.COMMITTING_TRANSACTION,
                              30_000)
    coordinator = txns.find_coordinator("app")
    assert coordinator is not None
    sim.crash(coordinator)
    assert _violation(txns) == "AckedCommitNeverAborts"


def test_transaction_state_is_replicated_three_ways_with_two_in_sync() -> None:
    """__transaction_state gets RF min(3, brokers) and min.insync.replicas min(2, RF)
    (Kafka's transaction.state.log defaults), however many brokers there are."""
    for brokers, rf, isr in ((4, 3, "2"), (1, 1, "1")):
        cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=brokers))
        cluster.start()
        assert TxnCluster(cluster).start()
        active = cluster.active_controller()
        assert active is not None
        image = active.image
        topic = image.topics_by_id[image.topics_by_name[TRANSACTION_STATE_TOPIC]]
        assert {len(p.replicas) for p in topic.partitions.values()} == {rf}
        configs = image.configs.get((TOPIC_RESOURCE, TRANSACTION_STATE_TOPIC))
        assert configs is not None and configs["min.insync.replicas"] == isr


def _state_topic(config: TxnCoordinatorConfig, brokers: int) -> tuple[set[int], str]:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=brokers))
    cluster.start()
    assert TxnCluster(cluster, config).start()
    active = cluster.active_controller()
    assert active is not None
    image = active.image
    topic = image.topics_by_id[image.topics_by_name[TRANSACTION_STATE_TOPIC]]
    assert len(topic.partitions) == config.num_partitions
    configs = image.configs.get((TOPIC_RESOURCE, TRANSACTION_STATE_TOPIC))
    assert configs is not None
    return {len(p.replicas) for p in topic.partitions.values()}, configs["min.insync.replicas"]


@pytest.mark.parametrize(("rf", "min_isr", "brokers", "expected"), [
    (3, 2, 4, (3, "2")), (2, 1, 3, (2, "1")), (3, 2, 1, (1, "1")), (1, 3, 3, (1, "1"))])
def test_the_state_topic_is_created_with_the_log_configs(
        rf: int, min_isr: int, brokers: int, expected: tuple[int, str]) -> None:
    """transaction.state.log.{num.partitions,replication.factor,min.isr} shape
    ``__transaction_state`` (a cluster with fewer brokers than the factor gets one
    replica per broker; the min ISR is at most the replica count)."""
    config = TxnCoordinatorConfig.from_kafka({
        "transaction.state.log.num.partitions": "2",
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": str(min_isr)})
    replicas, min_insync = _state_topic(config, brokers)
    assert (replicas, min_insync) == ({expected[0]}, expected[1])


def test_a_transaction_is_refused_unless_the_producer_is_ready_and_idle() -> None:
    """transaction() queues nothing and answers False before init_transactions, while
    initializing and while another transaction runs; only the accepted one commits."""
    txns = _world()
    p = TransactionalProducer(txns, "app", "app-1")
    assert p.transaction([("t", 0, 1)], commit=True) is False
    assert p.idle and p.state == TxnProducerState.UNINITIALIZED
    p.init_transactions()
    assert p.transaction([("t", 0, 1)], commit=True) is False
    until_idle(txns, p)
    assert p.transaction([("t", 0, 2)], commit=True) is True
    assert p.transaction([("t", 1, 5)], commit=True) is False
    until_idle(txns, p)
    assert p.committed == [1] and p.transactions == 1
    assert committed_values(txns, "t", 0) == ["app/app-1/1/0", "app/app-1/1/1"]
    assert committed_values(txns, "t", 1) == []
