"""Cases of Kafka's TransactionsExpirationTest, in kraftsim's terms.

Kafka class followed: ``TransactionsExpirationTest``
(``core/src/test/scala/integration/kafka/api``): a cluster of three brokers
whose coordinators forget a transactional id idle for 10 s
(transactional.id.expiration.ms, looked for every 500 ms). Here the cluster is
kraftsim's simulated one with the same transaction configs
(``TxnCoordinatorConfig.from_kafka``), topics ``topic1`` and ``topic2`` (four
partitions, three replicas), a :class:`sim.txn_clients.TransactionalProducer`
and read_committed reads from the partition leaders. Kafka's
DescribeTransactions (the admin client) is ``broker.txn.admin.describe_transactions``
at the id's coordinator.

Kafka's DescribeProducers (the partitions' producer state, which forgets a producer
after producer.id.expiration.ms, 5 s here) is
:meth:`broker.replica_manager.ReplicaManager.describe_producers` at the leader.

Not ported: none.
"""

from __future__ import annotations

from broker.txn.admin import describe_transactions
from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.fetch import READ_COMMITTED
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_clients import TransactionalProducer, TxnProducerState
from sim.txn_cluster import TxnCluster
from tests.sim.test_kafka_transactions_cases import (
    TOPIC1,
    TOPIC2,
    all_tps,
    committed,
    consume,
    create_topic,
    init,
    settle,
)

P = TxnProducerState
TXN_ID = "transactionalProducer"
CONFIG = TxnCoordinatorConfig.from_kafka({
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.replication.factor": "2",
    "transaction.state.log.min.isr": "2",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
    "transactional.id.expiration.ms": "10000",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "500",
    "producer.id.expiration.ms": "5000",
    "producer.id.expiration.check.interval.ms": "500",
})
"""Kafka's serverProps, as far as the transaction coordinator goes."""


def world() -> TxnCluster:
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, CONFIG)
    for topic in (TOPIC1, TOPIC2):
        create_topic(txns, topic, 4, 3, min_isr=None)
    assert txns.start()
    cluster.sim.run_for(1_000)
    return txns


def described(txns: TxnCluster) -> str:
    """DescribeTransactions of the id at its coordinator: its error code."""
    coordinator = txns.coordinator(txns.find_coordinator(TXN_ID))
    assert coordinator is not None
    (description,) = describe_transactions(coordinator, [TXN_ID])
    return description.ErrorCode


def wait_until_expired(txns: TxnCluster) -> None:
    """Kafka's waitUntilTransactionalStateExpires."""
    assert txns.cluster.sim.run_until_true(
        lambda: described(txns) == "TRANSACTIONAL_ID_NOT_FOUND", 60_000)


def test_bump_transactional_epoch_after_invalid_producer_id_mapping() -> None:
    """testBumpTransactionalEpochAfterInvalidProducerIdMapping: after an aborted
    transaction the id expires; the next send's AddPartitionsToTxn gets
    INVALID_PRODUCER_ID_MAPPING (abortable); the abort sends no EndTxn and re-initializes
    with the old producer id and epoch, which the coordinator, knowing the id no more,
    answers with a new producer; the next transaction commits its four records."""
    txns = world()
    producer = TransactionalProducer(txns, TXN_ID, "p")
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    producer.send(TOPIC2, 0, 1)
    producer.end_transaction(commit=False)
    settle(txns, producer)
    assert described(txns) == "NONE"
    wait_until_expired(txns)
    old_producer_id = producer.producer_id
    producer.begin_transaction()
    producer.send(TOPIC1, 3, 1)
    settle(txns, producer)
    assert (producer.state, producer.last_error) == (P.ABORTABLE_ERROR,
                                                     "INVALID_PRODUCER_ID_MAPPING")
    producer.end_transaction(commit=False)
    settle(txns, producer)
    assert producer.state == P.READY and producer.producer_epoch == 0
    assert producer.producer_id != old_producer_id
    producer.begin_transaction()
    producer.send(TOPIC2, 1, 1)
    producer.send(TOPIC1, 2, 1)
    producer.send(TOPIC2, 3, 1)
    producer.send(TOPIC1, 3, 1)
    producer.end_transaction(commit=True)
    settle(txns, producer)
    assert described(txns) == "NONE"
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(records) == 4 and all(committed(producer, v) for v in records)


def producer_state(txns: TxnCluster) -> list[tuple[int, int]] | None:
    """Kafka's producerState: DescribeProducers of topic1-0 at its leader, as (producer
    id, epoch); None while the leader cannot answer (the admin client retries)."""
    c = txns.cluster
    manager = c.replica_manager(c.partition_leader(TOPIC1, 0))
    found = manager.describe_producers(TOPIC1, 0) if manager is not None else "NO_LEADER"
    return None if isinstance(found, str) else [(p.producer_id, p.producer_epoch)
                                              for p in found]


def test_transaction_after_producer_id_expires() -> None:
    """testTransactionAfterProducerIdExpires: after the aborted transaction topic1-0
    forgets the producer (producer.id.expiration.ms) while the coordinator keeps the
    transactional id, so a new instance gets the same producer id with the epoch + 1,
    topic1-0 knows it again, and its transaction to topic1-0 and topic1-3 commits."""
    txns = world()
    sim = txns.cluster.sim
    producer = TransactionalProducer(txns, TXN_ID, "p1")
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 0, 1)
    assert sim.run_until_true(lambda: bool(producer_state(txns)), 15_000)
    assert producer_state(txns) == [old := (producer.producer_id, producer.producer_epoch)]
    producer.end_transaction(commit=False)
    settle(txns, producer)
    assert sim.run_until_true(lambda: producer_state(txns) == [], 15_000)
    assert described(txns) == "NONE"  # the transactional id outlives the producer id
    producer.close()
    again = TransactionalProducer(txns, TXN_ID, "p2")
    init(txns, again)
    assert (again.producer_id, again.producer_epoch) == (old[0], old[1] + 1)
    again.begin_transaction()
    again.send(TOPIC1, 0, 1)
    again.send(TOPIC1, 3, 1)
    again.end_transaction(commit=True)
    settle(txns, again)
    assert producer_state(txns) == [(old[0], old[1] + 1)]
    records = consume(txns, READ_COMMITTED, (TOPIC1, 0), (TOPIC1, 3))
    assert len(records) == 2 and all(committed(again, v) for v in records)
