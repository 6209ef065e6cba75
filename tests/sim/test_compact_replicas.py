"""A broker keeps an idle follower replica compact, and it behaves as a full one.

A follower with an empty log is its registration alone (no Replica, no log)
until records arrive or someone reads it; reading it, through
``ReplicaManager.replicas`` or the log dir, gives the replica it stands for.
The broker checker's SingleLeaderPerEpoch keeps every epoch it has seen.
"""

from __future__ import annotations

from controller.operations import CreateTopics, NewTopic
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.brokers import BrokerInvariants


def _cluster_with_topic(partitions: int) -> tuple[KRaftCluster, str]:
    cluster = KRaftCluster(ClusterConfig(seed=5, controllers=3, brokers=3))
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", partitions, 3),)))
    assert cluster.wait(handle) and handle.error is None
    assert cluster.run_until(cluster.idle, 30_000)
    cluster.sim.run_for(1_000)
    active = cluster.active_controller()
    assert active is not None
    return cluster, active.committed_image().topics_by_name["t"]


def test_idle_followers_are_compact_and_read_as_full_replicas() -> None:
    cluster, topic_id = _cluster_with_topic(4)
    image = cluster.active_controller().committed_image()  # type: ignore[union-attr]
    for broker in (0, 1, 2):
        manager = cluster.replica_manager(broker)
        assert manager is not None and manager.started
        assert len(manager.replicas) == 4
        assert cluster.log_dir(broker).replica_keys() == [(topic_id, p) for p in range(4)]
        for pid in range(4):
            reg = image.topics_by_id[topic_id].partitions[pid]
            key = (topic_id, pid)
            if reg.leader == broker:
                assert manager.peek(key) is not None  # a leader has follower states
                continue
            assert manager.peek(key) is None  # compact: no objects of its own
            replica = manager.replicas[key]  # reading makes the replica it stands for
            assert manager.peek(key) is replica
            assert (replica.leader, replica.leader_epoch, replica.isr, replica.replicas) == \
                (reg.leader, reg.leader_epoch, reg.isr, reg.replicas)
            assert not replica.is_leader and replica.log.end_offset == 0
            assert replica.fetch_position().fetch_offset == 0
    assert cluster.sim.violation is None


def test_a_compact_follower_takes_records_like_a_full_one() -> None:
    cluster, topic_id = _cluster_with_topic(1)
    producer = Producer(cluster, "p", "t", acks=-1)
    producer.send(3)
    assert cluster.run_until(lambda: producer.idle, 30_000)
    cluster.sim.run_for(2_000)  # followers fetch up to the leader's high watermark
    logs = []
    for broker in (0, 1, 2):
        manager = cluster.replica_manager(broker)
        assert manager is not None
        replica = manager.peek((topic_id, 0))
        assert replica is not None  # records arrived: a replica of its own
        logs.append([e.value for e in replica.log.entries[:replica.log.high_watermark]])
    assert len(logs[0]) == 3 and logs[0] == logs[1] == logs[2]
    assert cluster.sim.violation is None


def test_single_leader_per_epoch_remembers_every_epoch() -> None:
    checker = BrokerInvariants()
    key = ("topic-id", 0)
    assert checker._leader_of(key, 0, 1) == 1
    assert checker._leader_of(key, 0, 1) == 1
    assert checker._leader_of(key, 2, 2) == 2  # a newer epoch elsewhere
    assert checker._leader_of(key, 0, 3) == 1  # epoch 0 was broker 1's: a violation
    assert checker._leader_of(key, 1, 3) == 3  # an epoch not seen before
    assert checker._leader_of(key, 1, 0) == 3
    assert checker._leader_of(key, 2, 1) == 2
    big = 1 << 40  # a broker id too large to pack: kept as a pair
    assert checker._leader_of(("other", 0), 5, big) == big
    assert checker._leader_of(("other", 0), 5, 1) == big
    assert checker._leader_of(("other", 0), 6, 1) == 1
    assert checker._leader_of(("other", 0), 5, 2) == big

