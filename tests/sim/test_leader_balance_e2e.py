"""Leadership returns to the preferred replicas by itself (Kafka's
auto.leader.rebalance.enable): a crashed broker is fenced and loses its leaderships;
back and in sync again, it leads them again once the active controller's leader
imbalance check comes (leader.imbalance.check.interval.seconds after the move): the
shape of Kafka's QuorumControllerTest.testBalancePartitionLeaders, with real brokers."""

from __future__ import annotations

import pytest

from controller import ControllerConfig, WriteMode
from controller.operations import CreateTopics, ElectLeaders, NewTopic
from metadata.image import MetadataImage, PartitionRegistration
from sim.cluster import ClusterConfig, KRaftCluster

INTERVAL_MS = 60_000


def _leaders(image: MetadataImage) -> dict[int, int]:
    topic = image.topic("t")
    assert topic is not None
    return {pid: reg.leader for pid, reg in topic.partitions.items()}


def _preferred(image: MetadataImage) -> dict[int, int]:
    topic = image.topic("t")
    assert topic is not None
    return {pid: reg.replicas[0] for pid, reg in topic.partitions.items()}


def _image(cluster: KRaftCluster) -> MetadataImage:
    active = cluster.active_controller()
    assert active is not None
    return active.committed_image()


@pytest.mark.parametrize("interval", [INTERVAL_MS, 0])
def test_a_returning_broker_leads_its_preferred_partitions_again(interval: int) -> None:
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=3, controller=(
        ControllerConfig(leader_imbalance_check_interval_ms=interval))))
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", 6, 3),)))
    assert cluster.wait(handle) and handle.error is None
    preferred = _preferred(_image(cluster))
    assert _leaders(_image(cluster)) == preferred
    cluster.sim.crash(1)
    assert cluster.run_until(lambda: _image(cluster).brokers[1].fenced, 20_000)
    moved_at = cluster.sim.now
    assert all(leader != 1 for leader in _leaders(_image(cluster)).values())
    cluster.sim.restart(1)
    assert cluster.run_until(lambda: not _image(cluster).brokers[1].fenced, 30_000)
    assert _leaders(_image(cluster)) != preferred  # unfencing gives no leadership back
    cluster.sim.run_for(max(0, moved_at + INTERVAL_MS - 1_000 - cluster.sim.now))
    assert _leaders(_image(cluster)) != preferred  # not before the check
    cluster.sim.run_for(3_000)
    assert (_leaders(_image(cluster)) == preferred) == (interval > 0)
    assert cluster.sim.violation is None


def test_requested_preferred_elections_are_split_over_batches_even_in_atomic_mode() -> None:
    """Kafka writes ElectLeaders as a non-atomic result: in atomic mode, elections that need
    more records than a batch holds are written over several batches, not refused."""
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=3, controller=(
        ControllerConfig(leader_imbalance_check_interval_ms=0, max_records_per_batch=3,
                         write_mode=WriteMode.ATOMIC))))
    cluster.start()
    topics = [f"t{i}" for i in range(15)]
    for name in topics:  # a TopicRecord and a PartitionRecord: one batch each
        assert cluster.wait(cluster.submit(CreateTopics((NewTopic(name, 1, 3),))))

    def partition(name: str) -> PartitionRegistration:
        topic = _image(cluster).topic(name)
        assert topic is not None
        return topic.partitions[0]

    leaders = [partition(name).leader for name in topics]
    broker = max(sorted(set(leaders)), key=leaders.count)  # the one leading the most
    led = [name for name in topics if partition(name).leader == broker]
    assert len(led) > 3
    cluster.sim.crash(broker)
    assert cluster.run_until(lambda: _image(cluster).brokers[broker].fenced, 20_000)
    cluster.sim.restart(broker)
    assert cluster.run_until(lambda: all(broker in partition(name).isr for name in topics),
                             30_000)
    handle = cluster.submit(ElectLeaders("PREFERRED", None), mode=WriteMode.ATOMIC)
    assert cluster.wait(handle) and handle.error is None
    assert isinstance(handle.response, dict)
    elected = sorted(t["topic"] for t in handle.response["results"] for p in t["partitions"]
                     if p["error"] == "NONE")
    assert elected == sorted(led)
    assert handle.batch_count == -(-len(led) // 3)
    assert all(partition(name).leader == broker for name in led)
    assert cluster.sim.violation is None
