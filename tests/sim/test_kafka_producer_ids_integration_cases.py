"""Cases of Kafka's ProducerIdsIntegrationTest, in kraftsim's terms.

Kafka class followed: ``ProducerIdsIntegrationTest``
(``core/src/test/scala/integration/kafka/coordinator/transaction``): three KRaft
brokers (``__transaction_state`` of one partition) each answer 1001 idempotent
InitProducerId requests (no transactional id), enough for each broker to use two
blocks of 1000 ids from the controller (AllocateProducerIds); a request answered
COORDINATOR_LOAD_IN_PROGRESS (the broker waits for a block) is sent again, within
5 s. No id may be handed out twice. Here the cluster is kraftsim's simulated one
and the requests go to each broker's transaction coordinator
(:mod:`broker.txn.requests`), one at a time with the simulation running in
between (Kafka sends them from a thread pool).

Not ported: none.
"""

from __future__ import annotations

from broker.txn.coordinator import TxnCoordinatorConfig, TxnResult
from broker.txn.requests import handle_init_producer_id_request
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_cluster import TxnCluster

IDS_PER_BROKER = 1001


def _next_producer_id(txns: TxnCluster, broker: int) -> int:
    """Kafka's nextProducerId: InitProducerId(null) until it is not
    COORDINATOR_LOAD_IN_PROGRESS, within 5 simulated seconds."""
    sim = txns.cluster.sim
    deadline = sim.now + 5_000
    while True:
        coordinator = txns.coordinator(broker)
        assert coordinator is not None
        out: list[TxnResult] = []
        handle_init_producer_id_request(coordinator, 5, None, 10, -1, -1, sim.now, out.append)
        (result,) = out
        if result.error != "COORDINATOR_LOAD_IN_PROGRESS":
            assert result.error == "NONE" and result.producer_epoch == 0
            return result.producer_id
        assert sim.now < deadline
        sim.run_for(10)


def test_unique_producer_ids() -> None:
    """testUniqueProducerIds: 3 x 1001 ids, all distinct."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, TxnCoordinatorConfig.from_kafka(
        {"transaction.state.log.num.partitions": "1"}))
    assert txns.start()
    ids = [_next_producer_id(txns, broker) for broker in cluster.config.broker_ids
           for _ in range(IDS_PER_BROKER)]
    assert len(ids) == IDS_PER_BROKER * 3
    assert len(set(ids)) == len(ids), "Found duplicate producer IDs"
    assert max(ids) >= 3 * 1000  # each broker went on to a second block
