"""Cases of Kafka's ProducerIdExpirationTest, on kraftsim's simulated cluster.

Kafka class followed: ``ProducerIdExpirationTest``
(``core/src/test/scala/integration/kafka/api``): three brokers whose data partitions
forget a producer idle for 10 s (producer.id.expiration.ms, looked for every 500 ms),
whose coordinators forget a transactional id idle for 5 s, and ``topic1`` (one
partition, three replicas). Here the cluster is kraftsim's, with the same configs
(``TxnCoordinatorConfig.from_kafka``: kraftsim's :class:`~sim.txn_cluster.TxnCluster`
runs the partitions' expiration check), an idempotent :class:`sim.clients.Producer` or a
:class:`sim.txn_clients.TransactionalProducer`, and Kafka's DescribeProducers
(``admin.describeProducers``) as
:meth:`broker.replica_manager.ReplicaManager.describe_producers` at the leader.
Kafka's incrementalAlterConfigs of the cluster-wide broker config is the controller's
IncrementalAlterConfigs of the BROKER resource ``""``; its
``logManager.producerStateManagerConfig`` is
:meth:`~broker.replica_manager.ReplicaManager.producer_id_expiration_ms`.

Ported: testProducerIdExpirationWithNoTransactions,
testTransactionAfterTransactionIdExpiresButProducerIdRemains,
testDynamicProducerIdExpirationMs (each once: Kafka's ZooKeeper variant is not modelled).
Beyond Kafka's checks, the first case asserts when the id goes: not before 10 s, and
within one check interval after.

Not ported: none.
"""

from __future__ import annotations

from broker.partition_log import ActiveProducer
from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.fetch import READ_COMMITTED
from controller.operations import IncrementalAlterConfigs
from controller.operations.configs import ConfigChange
from metadata.delta import BROKER_RESOURCE
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_clients import TransactionalProducer, TxnProducerState
from sim.txn_cluster import TxnCluster
from tests.sim.test_kafka_transactions_cases import committed, consume, create_topic, init, settle
from tests.sim.test_kafka_transactions_expiration_cases import wait_until_expired

P = TxnProducerState
TOPIC1 = "topic1"
TXN_ID = "transactionalProducer"
EXPIRATION_MS = 10_000
CONFIG = TxnCoordinatorConfig.from_kafka({
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.replication.factor": "2",
    "transaction.state.log.min.isr": "2",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
    "transactional.id.expiration.ms": "5000",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "500",
    "producer.id.expiration.ms": str(EXPIRATION_MS),
    "producer.id.expiration.check.interval.ms": "500",
})
"""Kafka's serverProps, as far as transactions and producer ids go."""


def world() -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, CONFIG)
    create_topic(txns, TOPIC1, 1, 3, min_isr=None)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def described_producers(txns: TxnCluster) -> list[ActiveProducer] | str:
    """DescribeProducers of topic1-0 at its leader: the producers, or the error."""
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(TOPIC1, 0))
    return "NOT_LEADER_OR_FOLLOWER" if manager is None else manager.describe_producers(TOPIC1, 0)


def producer_state(txns: TxnCluster) -> list[ActiveProducer]:
    """Kafka's producerState: DescribeProducers of topic1-0 at its leader."""
    found = described_producers(txns)
    assert not isinstance(found, str), found
    return found


def no_producers(txns: TxnCluster) -> bool:
    """The leader answers and knows no producer (an error is retried, as Kafka's admin
    client does while leadership moves)."""
    return described_producers(txns) == []


def send_and_flush(txns: TxnCluster, producer: Producer) -> None:
    acknowledged = len(producer.acknowledged)
    producer.send(1)
    assert txns.cluster.sim.run_until_true(lambda: producer.idle, 10_000)
    assert len(producer.acknowledged) == acknowledged + 1 and not producer.failed


def alter_expiration(txns: TxnCluster, value: str) -> None:
    c = txns.cluster
    handle = c.submit(IncrementalAlterConfigs(
        BROKER_RESOURCE, "", (ConfigChange("producer.id.expiration.ms", value),)))
    assert c.wait(handle) and handle.error is None, handle.error


def expiration_everywhere(txns: TxnCluster, expected: int) -> bool:
    """Every broker applies producer.id.expiration.ms ``expected``."""
    c = txns.cluster
    managers = [c.replica_manager(b) for b in c.config.broker_ids]
    return all(m is not None and m.producer_id_expiration_ms(CONFIG.producer_id_expiration_ms)
               == expected for m in managers)


def test_producer_id_expiration_with_no_transactions() -> None:
    """testProducerIdExpirationWithNoTransactions: the idempotent producer's id is known,
    forgotten after producer.id.expiration.ms, and known again after its next send (which
    the partition takes although its sequence goes on from the forgotten state)."""
    txns = world()
    sim = txns.cluster.sim
    producer = Producer(txns.cluster, "p", TOPIC1, idempotent=True)
    send_and_flush(txns, producer)
    [state] = producer_state(txns)
    assert state.producer_id == producer.producer_id and state.last_sequence == 0
    sim.run_for(EXPIRATION_MS - 1_000)
    assert len(producer_state(txns)) == 1, "expired before producer.id.expiration.ms"
    assert sim.run_until_true(lambda: no_producers(txns), 1_500)
    send_and_flush(txns, producer)
    [state] = producer_state(txns)
    assert (state.producer_id, state.last_sequence) == (producer.producer_id, 1)


def test_transaction_after_transaction_id_expires_but_producer_id_remains() -> None:
    """testTransactionAfterTransactionIdExpiresButProducerIdRemains: the transactional id
    expires (5 s) before the producer id does (10 s); the next send fails
    INVALID_PRODUCER_ID_MAPPING, and after an abort a new transaction commits."""
    txns = world()
    producer = TransactionalProducer(txns, TXN_ID, "p")
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    assert txns.cluster.sim.run_until_true(lambda: len(producer_state(txns)) == 1, 15_000)
    producer.end_transaction(commit=False)
    settle(txns, producer, ms=15_000)
    wait_until_expired(txns)
    assert len(producer_state(txns)) == 1
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    settle(txns, producer, ms=15_000)
    assert (producer.state, producer.last_error) == (P.ABORTABLE_ERROR,
                                                     "INVALID_PRODUCER_ID_MAPPING")
    producer.end_transaction(commit=False)
    settle(txns, producer, ms=15_000)
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    producer.send(TOPIC1, 0, 1)
    assert producer_state(txns), "the old producer id should still be known"
    producer.end_transaction(commit=True)
    settle(txns, producer, ms=15_000)
    assert producer.state == P.READY, producer.fatal
    records = consume(txns, READ_COMMITTED, (TOPIC1, 0))
    assert len(records) == 2 and all(committed(producer, v) for v in records)


def test_dynamic_producer_id_expiration_ms() -> None:
    """testDynamicProducerIdExpirationMs: the cluster-wide broker config changes the
    expiration on every broker, a raised one keeps the id for 4 s, and a lowered one is
    still applied by a broker restarted after the change."""
    txns = world()
    sim = txns.cluster.sim
    producer = Producer(txns.cluster, "p", TOPIC1, idempotent=True)
    send_and_flush(txns, producer)
    assert len(producer_state(txns)) == 1
    assert sim.run_until_true(lambda: no_producers(txns), 15_000)
    alter_expiration(txns, "100000")
    assert sim.run_until_true(lambda: expiration_everywhere(txns, 100_000), 15_000)
    send_and_flush(txns, producer)
    assert len(producer_state(txns)) == 1
    assert not sim.run_until_true(lambda: no_producers(txns), 4_000)
    alter_expiration(txns, "100")
    first = txns.cluster.config.broker_ids[0]
    sim.crash(first)
    sim.restart(first)
    assert sim.run_until_true(lambda: expiration_everywhere(txns, 100), 15_000)
    assert sim.run_until_true(lambda: no_producers(txns), 15_000)
