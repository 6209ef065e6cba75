"""Producer ids handed out by several brokers, following Kafka's ProducerIdsIntegrationTest
(core/src/test/scala/integration/kafka/coordinator/transaction/).

Kafka's test starts a KRaft cluster of three brokers at metadata.version 3.3-IV0 and sends
each broker 1,001 InitProducerId requests without a transactional id (enough for every
broker to use up one block of 1,000 and take a second), retrying an answer of
COORDINATOR_LOAD_IN_PROGRESS (no block yet, or the next one on its way) until it gets an
id, within five seconds; no id may be handed out twice. It runs here twice over:

- each broker's :meth:`~broker.replica_manager.ReplicaManager.init_producer_id` is the
  request, asked as a client's action in the simulation; a retry lets the simulation run
  on for the broker's AllocateProducerIds round trip to the controller;
- the request goes through each broker's transaction coordinator and its request handler
  (:mod:`broker.txn.requests`), with ``__transaction_state`` of one partition as in
  Kafka's test, one request at a time (Kafka sends them from a thread pool).

Not ported: none; the one method of the class is here.
"""

from __future__ import annotations

from broker.replica_manager import ReplicaManager
from broker.txn.coordinator import TxnCoordinatorConfig, TxnResult
from broker.txn.requests import handle_init_producer_id_request
from controller import ControllerConfig
from controller.operations.cluster import PRODUCER_ID_BLOCK_SIZE
from metadata.versions import LEVELS
from sim.cluster import ClusterConfig, KRaftCluster
from sim.txn_cluster import TxnCluster

IDS_PER_BROKER = 1001
RETRY_MS = 10
DEADLINE_MS = 5_000
"""Kafka's test gives each id five seconds."""


def _next_producer_id(cluster: KRaftCluster, broker: int) -> int:
    """Kafka's nextProducerId: InitProducerId until it answers other than
    COORDINATOR_LOAD_IN_PROGRESS, which must be NONE within the deadline."""
    manager = cluster.replica_manager(broker)
    assert isinstance(manager, ReplicaManager)
    deadline = cluster.sim.now + DEADLINE_MS
    answers: list[tuple[str, int]] = []

    def ask() -> None:
        answers.append(manager.init_producer_id(cluster.sim.now))
        cluster.sim.touch(cluster.sim.slots[broker])

    while True:
        cluster.sim.act(f"InitProducerId at broker {broker}", ask)
        error, producer_id = answers.pop()
        if error != "COORDINATOR_LOAD_IN_PROGRESS":
            assert error == "NONE"
            return producer_id
        assert cluster.sim.now < deadline
        cluster.sim.run_for(RETRY_MS)


def test_unique_producer_ids() -> None:
    """testUniqueProducerIds (metadata.version 3.3-IV0, three brokers): 1,001 ids from each
    broker, none twice; each broker took two blocks of the controller's."""
    config = ClusterConfig(seed=2, controllers=1, brokers=3, controller=ControllerConfig(
        bootstrap_metadata_version=LEVELS["3.3-IV0"]))
    cluster = KRaftCluster(config)
    assert cluster.start()
    ids = [_next_producer_id(cluster, broker)
           for broker in cluster.config.broker_ids for _ in range(IDS_PER_BROKER)]
    expected = IDS_PER_BROKER * len(cluster.config.broker_ids)
    assert len(ids) == expected
    assert len(set(ids)) == expected, "found duplicate producer ids"
    active = cluster.active_controller()
    assert active is not None
    assert active.committed_image().next_producer_id == \
        2 * PRODUCER_ID_BLOCK_SIZE * len(cluster.config.broker_ids)
    assert cluster.sim.violation is None


def _coordinator_producer_id(txns: TxnCluster, broker: int) -> int:
    """nextProducerId through the broker's InitProducerId request handler (no
    transactional id), retried while COORDINATOR_LOAD_IN_PROGRESS, within the deadline."""
    sim = txns.cluster.sim
    deadline = sim.now + DEADLINE_MS
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
        sim.run_for(RETRY_MS)


def test_unique_producer_ids_through_the_coordinators() -> None:
    """testUniqueProducerIds with the requests sent to the transaction coordinators
    (``__transaction_state`` of one partition): 3 x 1,001 ids, all distinct, each broker
    on to its second block."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    txns = TxnCluster(cluster, TxnCoordinatorConfig.from_kafka(
        {"transaction.state.log.num.partitions": "1"}))
    assert txns.start()
    ids = [_coordinator_producer_id(txns, broker) for broker in cluster.config.broker_ids
           for _ in range(IDS_PER_BROKER)]
    assert len(ids) == IDS_PER_BROKER * 3
    assert len(set(ids)) == len(ids), "found duplicate producer ids"
    assert max(ids) >= 3 * PRODUCER_ID_BLOCK_SIZE  # each broker went on to a second block
