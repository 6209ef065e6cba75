"""Cases of Kafka's TransactionsWithMaxInFlightOneTest, in kraftsim's terms.

Kafka class followed: ``TransactionsWithMaxInFlightOneTest``
(``core/src/test/scala/integration/kafka/api``): one broker (every request of
the producer queued on one connection), ``__transaction_state`` of one
partition and one replica, a producer with max.in.flight.requests.per.connection
1. kraftsim's :class:`sim.txn_clients.TransactionalProducer` always has one
request in flight; the cluster is the simulated one with one broker, topics
``topic1`` and ``topic2`` of four partitions with min.insync.replicas 1.

Not ported: none.
"""

from __future__ import annotations

from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.fetch import READ_COMMITTED, READ_UNCOMMITTED
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_clients import TransactionalProducer
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

CONFIG = TxnCoordinatorConfig.from_kafka({
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
})
"""Kafka's serverProps, as far as the transaction coordinator goes."""


def test_transactional_producer_single_broker_max_in_flight_one() -> None:
    """testTransactionalProducerSingleBrokerMaxInFlightOne: an aborted transaction then a
    committed one, each to topic1 and topic2; read_committed sees the two committed
    records only."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=1))
    cluster.start()
    txns = TxnCluster(cluster, CONFIG)
    for topic in (TOPIC1, TOPIC2):
        create_topic(txns, topic, 4, 1, min_isr=1)
    assert txns.start()
    cluster.sim.run_for(1_000)
    assert len(cluster.config.broker_ids) == 1
    producer = TransactionalProducer(txns, "transactional-producer", "p")
    init(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC2, 0, 1)
    producer.send(TOPIC1, 1, 1)
    settle(txns, producer)
    producer.end_transaction(commit=False)
    settle(txns, producer)
    producer.begin_transaction()
    producer.send(TOPIC1, 2, 1)
    producer.send(TOPIC2, 3, 1)
    producer.end_transaction(commit=True)
    settle(txns, producer)
    assert producer.aborted == [1] and producer.committed == [2]
    records = consume(txns, READ_COMMITTED, *all_tps(TOPIC1, TOPIC2))
    assert len(records) == 2 and all(committed(producer, v) for v in records)
    assert len(consume(txns, READ_UNCOMMITTED, *all_tps(TOPIC1, TOPIC2))) == 4
