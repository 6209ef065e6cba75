"""Partition reassignment end to end: the controller's AlterPartitionReassignments, the
brokers' replicas following the replica lists, and the completion in the leader's
AlterPartition, with the simulation's invariants checked after every event.

- A partition with records moved to a set with a new broker and without its leader: the
  new replica fetches and catches up, the leader takes it into the ISR, that
  AlterPartition completes the reassignment (the first target replica leads), and the
  removed broker drops its replica; the records are all there on every new replica.
- A cancel mid-way (the new replica's broker down, so it never joins the ISR): the
  partition goes back to its original replicas with a new leader epoch, produce goes on,
  and the broker, once back, holds no replica of it.
"""

from __future__ import annotations

from controller.operations import (
    AlterPartitionReassignments,
    CreateTopics,
    NewTopic,
    ReassignablePartition,
    ReassignableTopic,
)
from controller.operations.reassignments import list_partition_reassignments
from metadata.image import PartitionRegistration
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 30_000


def _cluster_with_records(count: int) -> tuple[KRaftCluster, str, Producer]:
    """Three controllers, four brokers, topic t's one partition on brokers 0, 1, 2 (0
    leads) holding ``count`` acknowledged records."""
    cluster = KRaftCluster(ClusterConfig(seed=5, controllers=3, brokers=4))
    assert cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", -1, -1, assignments=((0, 1, 2),)),)))
    assert cluster.wait(handle) and handle.error is None
    producer = Producer(cluster, "p", "t", acks=-1)
    producer.send(count)
    assert cluster.run_until(lambda: producer.idle, WAIT_MS)
    active = cluster.active_controller()
    assert active is not None
    return cluster, active.committed_image().topics_by_name["t"], producer


def _partition(cluster: KRaftCluster, topic_id: str) -> PartitionRegistration:
    active = cluster.active_controller()
    assert active is not None
    return active.committed_image().topics_by_id[topic_id].partitions[0]


def _reassign(cluster: KRaftCluster, target: tuple[int, ...] | None) -> None:
    handle = cluster.submit(AlterPartitionReassignments(
        (ReassignableTopic("t", (ReassignablePartition(0, target),)),)))
    assert cluster.wait(handle) and handle.error is None
    assert handle.response == {"responses": [{"name": "t", "partitions": [
        {"partitionIndex": 0, "errorCode": "NONE", "errorMessage": None}]}]}


def test_a_partition_moves_to_a_new_broker_and_off_its_leader() -> None:
    cluster, topic_id, _ = _cluster_with_records(5)
    _reassign(cluster, (3, 1, 2))

    def completed() -> bool:
        active = cluster.active_controller()
        return active is not None and \
            list_partition_reassignments(active.committed_image()) == {"topics": []}
    assert cluster.run_until(completed, WAIT_MS)
    reg = _partition(cluster, topic_id)
    assert (reg.replicas, sorted(reg.isr), reg.leader) == ((3, 1, 2), [1, 2, 3], 3)
    assert (reg.adding_replicas, reg.removing_replicas) == ((), ())

    def settled() -> bool:
        managers = [cluster.replica_manager(b) for b in range(4)]
        return all(m is not None for m in managers) and \
            managers[0].held((topic_id, 0)) is None  # type: ignore[union-attr]
    assert cluster.run_until(settled, WAIT_MS)
    cluster.sim.run_for(2_000)
    for broker in (1, 2, 3):
        manager = cluster.replica_manager(broker)
        assert manager is not None
        replica = manager.peek((topic_id, 0))
        assert replica is not None and replica.log.high_watermark == 5
    assert cluster.sim.violation is None


def test_a_reassignment_cancelled_mid_way_goes_back_to_the_original_replicas() -> None:
    cluster, topic_id, producer = _cluster_with_records(5)
    cluster.sim.crash(3)
    assert cluster.run_until(
        lambda: _partition_broker_fenced(cluster, 3), WAIT_MS)
    _reassign(cluster, (3, 1, 2))
    reg = _partition(cluster, topic_id)
    assert (reg.replicas, reg.adding_replicas, reg.removing_replicas, reg.leader) == \
        ((3, 1, 2, 0), (3,), (0,), 0)
    cluster.sim.run_for(2_000)  # broker 3 is down: the reassignment cannot complete
    assert _partition(cluster, topic_id).adding_replicas == (3,)
    producer.send(3)
    assert cluster.run_until(lambda: producer.idle, WAIT_MS)
    _reassign(cluster, None)
    reg = _partition(cluster, topic_id)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_epoch) == ((1, 2, 0), (0, 1, 2), 0, 1)
    assert (reg.adding_replicas, reg.removing_replicas) == ((), ())
    cluster.sim.restart(3)
    cluster.sim.run_for(5_000)
    manager = cluster.replica_manager(3)
    assert manager is not None and manager.held((topic_id, 0)) is None
    for broker in (0, 1, 2):
        manager = cluster.replica_manager(broker)
        assert manager is not None
        replica = manager.peek((topic_id, 0))
        assert replica is not None and replica.log.high_watermark == 8
    assert cluster.sim.violation is None


def _partition_broker_fenced(cluster: KRaftCluster, broker: int) -> bool:
    active = cluster.active_controller()
    return active is not None and active.committed_image().brokers[broker].fenced
