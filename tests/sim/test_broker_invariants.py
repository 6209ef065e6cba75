"""The broker checkers catch each violation they name, and nothing else: replicas that
disagree below their high watermarks, an acknowledged write lost, a duplicate idempotent
write, two leaders in one leader epoch, a fenced broker leading. Each is fed what a
broken broker would show it."""

from __future__ import annotations

import msgspec
import pytest

from broker.compact_leader import CompactLeader
from broker.partition_log import LogEntry
from broker.replica import Replica
from broker.replica_manager import ReplicaManager
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from sim.clients import Acknowledged, Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.brokers import BrokerInvariants
from sim.world import InvariantViolation, NodeSlot

TOPIC = "AAAAAAAAAAAAAAAAAAAAAA"


def _entries(*values: str, epoch: int = 1, producer: int = -1,
             sequences: tuple[int, ...] = ()) -> list[LogEntry]:
    return [LogEntry(offset, epoch, value, producer, 0 if producer >= 0 else -1,
                     sequences[0] if sequences else -1,
                     sequences[offset] if sequences else -1)
            for offset, value in enumerate(values)]


def _check(invariants: BrokerInvariants, entries: list[LogEntry], start: int, hw: int,
           broker: int = 1) -> None:
    invariants._check_entries("t", TOPIC, 0, entries, start, hw, broker)


def test_replicas_agree_below_the_high_watermark_only() -> None:
    invariants = BrokerInvariants()
    _check(invariants, _entries("a", "b", "c"), 0, 3, broker=1)
    _check(invariants, _entries("a", "b", "x"), 0, 2, broker=2)  # differs above its HW
    with pytest.raises(InvariantViolation) as caught:
        _check(invariants, _entries("a", "b", "x"), 2, 3, broker=2)
    assert caught.value.invariant == "ReplicasAgree"
    assert "t-0 offset 2: broker 2 holds 'x' (epoch 1) below its HW, another replica 'c' " \
           "(epoch 1)" in str(caught.value)
    with pytest.raises(InvariantViolation, match="ReplicasAgree"):  # same value, other epoch
        _check(invariants, _entries("a", epoch=2), 0, 1, 3)


def test_an_acknowledged_write_must_be_what_replicas_hold() -> None:
    invariants = BrokerInvariants()
    invariants.acked[(TOPIC, 0)] = {1: "b"}
    _check(invariants, _entries("a", "b"), 0, 2)
    lost = BrokerInvariants()
    lost.acked[(TOPIC, 0)] = {1: "b"}
    with pytest.raises(InvariantViolation) as caught:
        _check(lost, _entries("a", "z"), 0, 2, broker=4)
    assert caught.value.invariant == "AckedWriteDurable"
    assert "t-0 offset 1: acknowledged 'b', broker 4 holds 'z' below its HW 2" in \
        str(caught.value)


def test_one_idempotent_sequence_is_at_one_offset() -> None:
    invariants = BrokerInvariants()
    _check(invariants, _entries("a", "b", producer=7, sequences=(0, 1)), 0, 2)
    with pytest.raises(InvariantViolation) as caught:
        _check(invariants, [*_entries("a", "b", producer=7, sequences=(0, 1)),
                            LogEntry(2, 1, "b", 7, 0, 1, 1)], 2, 3)
    assert caught.value.invariant == "NoDuplicates"
    assert "producer 7 epoch 0 sequence 1 at offsets 1 and 2" in str(caught.value)


def test_producer_zero_at_sequence_zero_is_checked_too() -> None:
    with pytest.raises(InvariantViolation, match="producer 0 epoch 0 sequence 0 at offsets 0 "
                                                 "and 1"):
        _check(BrokerInvariants(), [LogEntry(0, 1, "a", 0, 0, 0, 0),
                                    LogEntry(1, 1, "a", 0, 0, 0, 0)], 0, 2)


def test_markers_unsequenced_records_and_other_epochs_are_not_duplicates() -> None:
    invariants = BrokerInvariants()
    entries = [
        LogEntry(0, 1, "a", 7, 0, 0, 0),
        LogEntry(1, 1, "COMMIT", 7, 0, transactional=True, control=1),
        LogEntry(2, 1, "ABORT", 7, 0, transactional=True, control=0),
        LogEntry(3, 1, "ABORT", 7, 0, transactional=True, control=0),
        LogEntry(4, 1, "offsets", 7, 0, -1, -1),  # a TxnOffsetCommit: no sequence
        LogEntry(5, 1, "offsets", 7, 0, -1, -1),
        LogEntry(6, 1, "a", 7, 1, 0, 0),  # the next epoch starts over at sequence 0
        LogEntry(7, 1, "plain", -1, -1, 0, 0),  # no producer id: not idempotent
        LogEntry(8, 1, "plain", -1, -1, 0, 0),
    ]
    _check(invariants, entries, 0, len(entries))


def test_one_leader_per_partition_and_leader_epoch() -> None:
    invariants = BrokerInvariants()
    key = (TOPIC, 0)
    for epoch, broker in ((1, 1), (1, 1), (2, 2), (5, 1), (2, 2)):
        invariants._check_single_leader(key, epoch, broker, "t")
    for epoch, other in ((5, 3), (2, 1), (1, 2)):  # the latest epoch, then earlier ones
        with pytest.raises(InvariantViolation) as caught:
            invariants._check_single_leader(key, epoch, other, "t")
        assert caught.value.invariant == "SingleLeaderPerEpoch"
        assert "t-0 has leaders" in str(caught.value)
        assert f"and {other} in leader epoch {epoch}" in str(caught.value)
    # broker ids at and past the packed range's edge, and epoch 0
    for pid, (epoch, broker) in enumerate(((3, (1 << 20) - 1), (3, 1 << 20), (0, 1 << 21),
                                           (0, 0)), start=1):
        invariants._check_single_leader((TOPIC, pid), epoch, broker, "t")
        invariants._check_single_leader((TOPIC, pid), epoch, broker, "t")
        with pytest.raises(InvariantViolation, match=f"has leaders {broker} and 4"):
            invariants._check_single_leader((TOPIC, pid), epoch, 4, "t")
        invariants._check_single_leader((TOPIC, pid), epoch + 1, 4, "t")
        with pytest.raises(InvariantViolation, match=f"has leaders {broker} and 5"):
            invariants._check_single_leader((TOPIC, pid), epoch, 5, "t")


def _image(fenced: tuple[int, ...], leader: int) -> MetadataImage:
    records: list[MetadataRecord] = [
        *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=b, fenced=b in fenced)
          for b in (1, 2, 3)),
        TopicRecord("t", TOPIC),
        PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 2, 3), isr=(1, 2, 3),
                        leader=leader, leader_epoch=0, partition_epoch=0),
    ]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(40, 1)


def test_a_fenced_broker_never_leads_in_a_published_image() -> None:
    invariants = BrokerInvariants()
    invariants._check_fenced(2, _image(fenced=(3,), leader=1))
    invariants._check_fenced(2, _image(fenced=(), leader=3))
    with pytest.raises(InvariantViolation) as caught:
        invariants._check_fenced(2, _image(fenced=(3,), leader=3))
    assert caught.value.invariant == "FencedNotLeader"
    assert "broker 2's image at 40: fenced broker 3 leads t-0" in str(caught.value)


def test_a_fenced_broker_made_leader_by_a_partition_change_alone_is_caught() -> None:
    """An image that changes only the topics (a partition's leader moves to a broker that
    was fenced all along) is checked as well as one that fences a broker."""
    invariants = BrokerInvariants()
    before = _image(fenced=(3,), leader=1)
    invariants._check_fenced(2, before)
    delta = MetadataDelta(before)
    delta.replay(PartitionChangeRecord(partition_id=0, topic_id=TOPIC, leader=3))
    after = delta.apply(41, 1)
    assert after.brokers is before.brokers and after.topics_by_id is not before.topics_by_id
    with pytest.raises(InvariantViolation) as caught:
        invariants._check_fenced(2, after)
    assert caught.value.invariant == "FencedNotLeader"
    assert "broker 2's image at 41: fenced broker 3 leads t-0" in str(caught.value)


def _produced(unclean: bool = False) -> tuple[KRaftCluster, Producer]:
    """A 3-broker cluster whose topic ``t`` (one partition, RF 3) took 5 acks=all writes."""
    cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3))
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", 1, 3),)))
    assert cluster.wait(handle)
    if unclean:
        assert cluster.wait(cluster.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, "t", (ConfigChange("unclean.leader.election.enable", "true"),))))
    producer = Producer(cluster, "p", "t", acks=-1)
    producer.send(5)
    assert cluster.run_until(lambda: producer.idle and cluster.idle(), 30_000)
    assert cluster.sim.violation is None and len(producer.acknowledged) >= 1
    return cluster, producer


def _claim(cluster: KRaftCluster, values: tuple[str, ...], acks: int = -1,
           min_isr_met: bool = True) -> None:
    """Tell the checker a producer was acknowledged ``values`` at offset 0."""
    cluster.broker_invariants.acknowledge(
        cluster.sim, Acknowledged("t", 0, 0, values, acks, cluster.sim.now), min_isr_met)


def test_an_acknowledgement_of_what_the_replicas_do_not_hold_is_a_lost_write() -> None:
    cluster, producer = _produced()
    held = producer.acknowledged[0].values
    topic_id = cluster.active_controller().image.topics_by_name["t"]  # type: ignore[union-attr]
    # the run's producer told the checker of its acks=all acknowledgements itself
    assert cluster.broker_invariants.acked.get((topic_id, 0)) == {
        ack.first_offset + i: value for ack in producer.acknowledged
        for i, value in enumerate(ack.values)}
    _claim(cluster, held)  # what they hold: nothing to say
    acked = cluster.broker_invariants.acked[(topic_id, 0)]
    assert [acked[offset] for offset in range(len(held))] == list(held)
    cluster.broker_invariants.check(cluster.sim, list(cluster.sim.slots.values()))
    _claim(cluster, ("other",) * len(held))
    with pytest.raises(InvariantViolation) as caught:
        cluster.broker_invariants.check(cluster.sim, [])
    assert caught.value.invariant == "AckedWriteDurable"
    assert f"t-0 offset 0: acknowledged 'other', replicas hold {held[0]!r}" in \
        str(caught.value)


@pytest.mark.parametrize(("unclean", "acks", "min_isr_met"), [
    (True, -1, True),  # unclean election may lose acknowledged writes
    (False, 1, True),  # acks=1 promises nothing after the leader
    (False, -1, False),  # acknowledged below min.insync.replicas
])
def test_acknowledgements_without_the_acks_all_promise_are_not_checked(
        unclean: bool, acks: int, min_isr_met: bool) -> None:
    cluster, _ = _produced(unclean)
    _claim(cluster, ("other",), acks, min_isr_met)
    cluster.broker_invariants.check(cluster.sim, list(cluster.sim.slots.values()))
    assert cluster.broker_invariants.acked.get(
        (cluster.active_controller().image.topics_by_name["t"], 0),  # type: ignore[union-attr]
        {}).get(0) != "other"


def _manager_of(cluster: KRaftCluster, topic: str, leader: bool = True) -> tuple[
        NodeSlot, ReplicaManager, tuple[str, int]]:
    """The slot and replica manager of the broker leading (or following) ``topic``-0."""
    for slot in cluster.sim.slots.values():
        for app in slot.apps:
            if isinstance(app, ReplicaManager) and app.image is not None:
                key = (app.image.topics_by_name[topic], 0)
                reg = app.image.topics_by_id[key[0]].partitions[0]
                if (reg.leader == app.broker_id) == leader and app.broker_id in reg.replicas:
                    return slot, app, key
    raise AssertionError(f"no broker for {topic}")


def test_a_broker_acting_on_an_image_it_did_not_publish_is_caught() -> None:
    cluster, _ = _produced()
    slot, manager, _ = _manager_of(cluster, "t")
    invariants = cluster.broker_invariants
    invariants.check(cluster.sim, [slot])
    assert manager.image is not None
    manager.image = msgspec.structs.replace(manager.image)  # equal, but not the published one
    with pytest.raises(InvariantViolation) as caught:
        invariants.check(cluster.sim, [slot])
    assert caught.value.invariant == "ActsOnPublishedImage"
    assert f"broker {manager.broker_id} acts on image at {manager.image.offset}" in \
        str(caught.value)


@pytest.mark.parametrize("topic", ["t", "empty"])
def test_a_second_leader_in_a_leader_epoch_is_caught_from_a_brokers_replicas(
        topic: str) -> None:
    """Seen from the replica manager: a leader with records, and an empty (compact) one."""
    cluster, _ = _produced()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("empty", 1, 3),))))
    cluster.run_until(lambda: cluster.idle(), 5_000)
    slot, manager, key = _manager_of(cluster, topic)
    held = manager.held(key)
    assert type(held) is (Replica if topic == "t" else CompactLeader)
    fresh = BrokerInvariants()
    epoch = held.leader_epoch if isinstance(held, Replica) else held.reg.leader_epoch
    fresh._check_single_leader(key, epoch, 99, topic)
    manager._changed[key] = None
    with pytest.raises(InvariantViolation) as caught:
        fresh.check(cluster.sim, [slot])
    assert caught.value.invariant == "SingleLeaderPerEpoch"
    assert f"{topic}-0 has leaders 99 and {manager.broker_id} in leader epoch {epoch}" in \
        str(caught.value)


def test_a_replica_is_checked_up_to_its_hw_once_and_then_from_there() -> None:
    """Each replica's offsets below its HW are checked once; a new HW one offset further
    is checked too."""
    cluster, _ = _produced()
    slot, manager, key = _manager_of(cluster, "t", leader=False)
    replica = manager.held(key)
    assert type(replica) is Replica
    hw = replica.log.high_watermark
    assert hw >= 2
    fresh = BrokerInvariants()
    ckey = (slot.node_id, slot.incarnation, key[0], 0)
    manager._changed[key] = None
    fresh.check(cluster.sim, [slot])
    assert fresh.checked[ckey] == hw
    fresh.checked[ckey] = hw - 1
    last = replica.log.entries[hw - 1]
    fresh.committed[(key[0], 0)][hw - 1] = (last.leader_epoch, "other")
    manager._changed[key] = None
    with pytest.raises(InvariantViolation) as caught:
        fresh.check(cluster.sim, [slot])
    assert caught.value.invariant == "ReplicasAgree"
    assert f"t-0 offset {hw - 1}: broker {manager.broker_id} holds" in str(caught.value)


def test_a_clusters_run_checks_its_brokers_online() -> None:
    """The broker checkers are among the cluster's monitors: a broker acting on an image
    it did not publish fails the run at its next event."""
    cluster, _ = _produced()
    _, manager, _ = _manager_of(cluster, "t")
    assert manager.image is not None
    manager.image = msgspec.structs.replace(manager.image)
    assert not cluster.sim.run_for(1000)
    assert cluster.sim.violation is not None
    assert cluster.sim.violation.invariant == "ActsOnPublishedImage"
