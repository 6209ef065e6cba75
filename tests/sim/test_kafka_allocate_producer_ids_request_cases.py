"""AllocateProducerIds sent by a broker straight to a controller, following the cases of
Kafka's AllocateProducerIdsRequestTest (core/src/test/scala/unit/kafka/server/).

Kafka's test starts a KRaft cluster (one broker; one controller, or three), reads the
broker's epoch from its lifecycle manager and the active controller from its raft
client, and sends an AllocateProducerIds request of the broker's over the controller
listener. Here the cluster is a :class:`~sim.cluster.KRaftCluster` whose broker has
registered itself; the request leaves the broker's node over the simulated network with
the epoch its lifecycle manager holds, and the controller's broker service
(:class:`~controller.broker_service.ControllerBrokerService`) answers it. The answer is
caught on the broker's node before its own producer-id manager sees it (it ignores an
answer to a request it did not send).

Not ported: none; both methods of the class are here.
"""

from __future__ import annotations

from broker.lifecycle import BrokerLifecycleManager
from broker.replica_manager import ReplicaManager
from controller.operations.cluster import PRODUCER_ID_BLOCK_SIZE
from metadata.requests import AllocateProducerIdsRequest, AllocateProducerIdsResponse, NodeMessage
from sim.cluster import ClusterConfig, KRaftCluster

CORRELATION_ID = 4242
"""Far from the ids the broker's own producer-id manager uses."""


def _cluster(controllers: int) -> KRaftCluster:
    """Kafka's @ClusterTest: one broker, ``controllers`` controllers, started."""
    cluster = KRaftCluster(ClusterConfig(seed=5, controllers=controllers, brokers=1))
    assert cluster.start() and cluster.brokers_unfenced()
    return cluster


def _app(cluster: KRaftCluster, node_id: int, kind: type[object]) -> object:
    [app] = [a for a in cluster.sim.slots[node_id].apps if isinstance(a, kind)]
    return app


def _send_allocate(cluster: KRaftCluster, broker: int, controller: int
                   ) -> AllocateProducerIdsResponse:
    """Kafka's sendAndReceiveAllocateProducerIds: the broker's id and its lifecycle
    manager's broker epoch, sent from the broker's node to ``controller``; the answer."""
    lifecycle = _app(cluster, broker, BrokerLifecycleManager)
    assert isinstance(lifecycle, BrokerLifecycleManager) and lifecycle.broker_epoch >= 0
    replicas = _app(cluster, broker, ReplicaManager)
    assert isinstance(replicas, ReplicaManager)
    slot = cluster.sim.slots[broker]
    answers: list[AllocateProducerIdsResponse] = []

    def catch(env: NodeMessage, now: int) -> None:
        if isinstance(env.message, AllocateProducerIdsResponse) \
                and env.message.correlation_id == CORRELATION_ID:
            answers.append(env.message)

    slot.handlers.insert(0, catch)
    request = AllocateProducerIdsRequest(CORRELATION_ID, broker, lifecycle.broker_epoch)

    def send() -> None:
        replicas.outbox.append(NodeMessage(broker, controller, request))
        cluster.sim.touch(slot)

    try:
        cluster.sim.act("send AllocateProducerIds", send)
        assert cluster.run_until(lambda: bool(answers), 5_000)
    finally:
        slot.handlers.remove(catch)
    [answer] = answers
    return answer


def test_allocate_producers_id_sent_to_controller() -> None:
    """testAllocateProducersIdSentToController: the controller the broker knows as leader
    grants a whole block starting at a non-negative id."""
    cluster = _cluster(controllers=1)
    broker = cluster.config.broker_ids[0]
    loader = cluster.loader(broker)
    assert loader is not None
    controller = loader.leader.leader_id
    assert controller is not None
    answer = _send_allocate(cluster, broker, controller)
    assert answer.error == "NONE"
    assert answer.producer_id_len == PRODUCER_ID_BLOCK_SIZE
    assert answer.producer_id_start >= 0


def test_allocate_producers_id_sent_to_non_controller() -> None:
    """testAllocateProducersIdSentToNonController: of three controllers, one that is not
    the leader the broker knows answers NOT_CONTROLLER."""
    cluster = _cluster(controllers=3)
    broker = cluster.config.broker_ids[0]
    loader = cluster.loader(broker)
    assert loader is not None
    leader = loader.leader.leader_id
    other = next(c for c in cluster.config.controller_ids if c != leader)
    answer = _send_allocate(cluster, broker, other)
    assert answer.error == "NOT_CONTROLLER"
    assert (answer.producer_id_start, answer.producer_id_len) == (-1, 0)
