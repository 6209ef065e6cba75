"""When the data partitions' producer expiration check runs in a simulated cluster.

:class:`sim.txn_cluster.TxnCluster` runs Kafka's periodic producer expiration check
every producer.id.expiration.check.interval.ms counted from its start (Kafka's scheduler
waits one interval before the first run). An idle producer is therefore forgotten at the
first check that finds it idle for producer.id.expiration.ms, not as soon as it has been:
with a check interval longer than the expiration, DescribeProducers keeps answering it
until that check.
"""

from __future__ import annotations

from broker.txn.coordinator import TxnCoordinatorConfig
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_cluster import TxnCluster
from tests.sim.test_kafka_producer_id_expiration_cases import (
    TOPIC1,
    no_producers,
    producer_state,
    send_and_flush,
)
from tests.sim.test_kafka_transactions_cases import create_topic

INTERVAL_MS = 5_000
EXPIRATION_MS = 1_000
CONFIG = TxnCoordinatorConfig.from_kafka({
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.replication.factor": "2",
    "producer.id.expiration.ms": str(EXPIRATION_MS),
    "producer.id.expiration.check.interval.ms": str(INTERVAL_MS),
})


def test_an_idle_producer_is_forgotten_at_the_next_check_only() -> None:
    """The producer's batch is idle for twice the expiration well before each of the
    first two checks; DescribeProducers still answers it until the check, and not after."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, CONFIG)
    create_topic(txns, TOPIC1, 1, 3, min_isr=None)
    assert txns.start()
    started = cluster.sim.now
    producer = Producer(cluster, "p", TOPIC1, idempotent=True)
    send_and_flush(txns, producer)
    for check in (started + INTERVAL_MS, started + 2 * INTERVAL_MS):
        assert cluster.sim.now + 2 * EXPIRATION_MS < check, "the batch came too late"
        cluster.sim.run_until(check - 1)
        assert [p.producer_id for p in producer_state(txns)] == [producer.producer_id]
        assert cluster.sim.run_until_true(lambda: no_producers(txns), 1)
        assert cluster.sim.now == check
        send_and_flush(txns, producer)  # known again, until the check after next
