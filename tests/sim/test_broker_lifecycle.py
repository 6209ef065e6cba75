"""Brokers register and heartbeat by themselves; the controller fences, unfences, elects.

Kafka's ClusterControlManager / BrokerHeartbeatManager / ReplicationControlManager
behaviour over the simulated network: a crashed or partitioned broker is fenced
after broker.session.timeout.ms, its leaderships move to the ISR, a restart
registers a new incarnation and is unfenced once caught up, and a controlled
shutdown moves leaderships away before the broker stops.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from broker.alter_partition_manager import AlterPartitionItem
from broker.config import BrokerConfig
from broker.fetch_messages import FetchPartition, ReplicaFetchRequest
from broker.lifecycle import BrokerLifecycleManager
from broker.replica_manager import ReplicaManager
from controller import ControllerConfig, WriteMode
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.broker_index import partitions_of
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import NO_LEADER, RECOVERED, RECOVERING, MetadataImage, PartitionRegistration
from metadata.requests import AlterPartitionPartitionResponse, NodeMessage
from metadata.schema import BeginTransactionRecord, PartitionChangeRecord
from sim.brokers import BrokerSettings
from sim.clients import Producer, consume
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault
from sim.network import LinkConfig
from sim.world import InvariantViolation, Monitor, NodeSlot, NodeStatus, Simulation


def _cluster(brokers: int = 3, seed: int = 3, **kwargs: object) -> KRaftCluster:
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=brokers, **kwargs))  # type: ignore[arg-type]
    cluster.start()
    assert cluster.brokers_unfenced()
    return cluster


def _image(cluster: KRaftCluster) -> MetadataImage:
    active = cluster.active_controller()
    assert active is not None
    return active.committed_image()


def _record_at(cluster: KRaftCluster, offset: int) -> object:
    batch = cluster.history.batch_containing(offset)
    assert batch is not None
    return batch.records[offset - batch.base_offset]


def _create(cluster: KRaftCluster, name: str, partitions: int, rf: int) -> None:
    handle = cluster.submit(CreateTopics((NewTopic(name, partitions, rf),)))
    assert cluster.wait(handle) and handle.error is None


def test_brokers_register_with_their_record_offset_as_epoch() -> None:
    cluster = _cluster()
    image = _image(cluster)
    for broker_id in (0, 1, 2):
        broker = image.brokers[broker_id]
        assert not broker.fenced
        record = _record_at(cluster, broker.epoch)
        assert type(record).__name__ == "RegisterBrokerRecord"


def test_crashed_broker_is_fenced_after_the_session_timeout_and_loses_leadership() -> None:
    cluster = _cluster()
    _create(cluster, "t", 12, 3)
    before = _image(cluster).topic("t")
    assert before is not None
    cluster.sim.crash(1)
    crashed_at = cluster.sim.now
    assert cluster.run_until(lambda: _image(cluster).brokers[1].fenced, 20_000)
    waited = cluster.sim.now - crashed_at
    assert 9_000 - 2_000 <= waited <= 9_000 + 1_000  # last heartbeat + session, checked each s
    topic = _image(cluster).topic("t")
    assert topic is not None
    for pid, reg in topic.partitions.items():
        old = before.partitions[pid]
        assert reg.leader != 1 and 1 not in reg.isr
        if old.leader == 1:
            assert reg.leader_epoch == old.leader_epoch + 1
            assert reg.leader == next(r for r in old.replicas if r != 1)
        assert reg.partition_epoch == old.partition_epoch + 1
    assert cluster.sim.violation is None


def test_partitioned_broker_is_fenced_and_comes_back_when_healed() -> None:
    cluster = _cluster()
    cluster.sim.apply_fault(parse_fault(f"isolate:2@{cluster.sim.now}"))
    assert cluster.run_until(lambda: _image(cluster).brokers[2].fenced, 20_000)
    cluster.sim.apply_fault(parse_fault(f"heal@{cluster.sim.now}"))
    assert cluster.run_until(lambda: not _image(cluster).brokers[2].fenced, 20_000)


def test_restart_registers_a_new_incarnation_and_is_unfenced_once_caught_up() -> None:
    cluster = _cluster()
    old = _image(cluster).brokers[0]
    cluster.sim.crash(0)
    cluster.sim.run_for(1_000)
    cluster.sim.restart(0)
    assert cluster.run_until(lambda: (b := _image(cluster).brokers[0]).incarnation_id !=
                             old.incarnation_id and not b.fenced, 30_000)
    assert _image(cluster).brokers[0].epoch > old.epoch


def test_a_restarted_broker_rejoins_every_isr_at_its_first_fetches_once_unfenced() -> None:
    """Kafka's leader asks for an ISR expansion at every follower fetch (maybeExpandIsr,
    whatever the fetch session leaves out of the answer), so a restarted broker that is
    caught up is back in the ISRs within a fetch round of being unfenced: the partitions
    it follows do not go idle in its fetch session while it is outside their ISR. Both
    kinds of leader: partitions with records, and empty ones (compact leaders)."""
    cluster = _cluster()
    _create(cluster, "t", 6, 3)
    for partition in (0, 1, 2):  # 3-5 stay empty
        producer = Producer(cluster, f"p{partition}", "t", partition, acks=-1)
        producer.send(3)
        assert cluster.run_until(lambda p=producer: p.idle, 10_000)  # type: ignore[misc]
    cluster.sim.crash(1)
    assert cluster.run_until(lambda: _image(cluster).brokers[1].fenced, 20_000)
    topic = _image(cluster).topic("t")
    assert topic is not None and all(1 not in reg.isr for reg in topic.partitions.values())
    cluster.sim.restart(1)
    assert cluster.run_until(lambda: not _image(cluster).brokers[1].fenced, 30_000)
    unfenced_at = cluster.sim.now

    def back_in_every_isr() -> bool:
        topic = _image(cluster).topic("t")
        return topic is not None and all(1 in reg.isr for reg in topic.partitions.values())

    assert cluster.run_until(back_in_every_isr, 15_000)
    assert cluster.sim.now - unfenced_at <= 1_000  # not the leaders' periodic ISR check
    assert cluster.sim.violation is None


def test_controlled_shutdown_moves_leaders_before_stopping() -> None:
    cluster = _cluster()
    _create(cluster, "t", 9, 3)
    cluster.sim.shutdown(2)
    assert cluster.sim.slots[2].status is NodeStatus.RUNNING  # waits for the controller
    assert cluster.run_until(lambda: cluster.sim.slots[2].status is NodeStatus.STOPPED, 10_000)
    image = _image(cluster)
    assert image.brokers[2].fenced and image.brokers[2].in_controlled_shutdown
    topic = image.topic("t")
    assert topic is not None
    assert all(reg.leader != 2 and 2 not in reg.isr for reg in topic.partitions.values())


def test_last_isr_member_fenced_leaves_the_partition_leaderless_unless_unclean() -> None:
    cluster = _cluster(brokers=2)
    _create(cluster, "clean", 2, 1)
    _create(cluster, "unclean", 2, 2)
    topic = _image(cluster).topic("clean")
    assert topic is not None
    victim = topic.partitions[0].leader
    # shrink the unclean topic's ISR to the victim, so only an unclean election can help
    change = cluster.submit(IncrementalAlterConfigs(
        TOPIC_RESOURCE, "unclean", (ConfigChange("unclean.leader.election.enable", "true"),)))
    assert cluster.wait(change)
    cluster.sim.crash(victim)
    assert cluster.run_until(lambda: _image(cluster).brokers[victim].fenced, 20_000)
    clean = _image(cluster).topic("clean")
    assert clean is not None
    reg = clean.partitions[0]
    assert reg.leader == NO_LEADER and reg.isr == (victim,)
    cluster.sim.restart(victim)
    assert cluster.run_until(lambda: _image(cluster).topic("clean").partitions[0].leader  # type: ignore[union-attr]
                             == victim, 30_000)


def test_an_unclean_election_recovers_once_the_new_leader_expands_its_isr() -> None:
    """KIP-704 end to end: the ISR's last member down, an out-of-sync replica comes back
    and is elected uncleanly (ISR just it, RECOVERING); when the old leader returns and
    catches up, the new leader's ISR expansion marks the partition RECOVERED."""
    cluster = _cluster(brokers=2)
    _create(cluster, "u", 1, 2)
    change = cluster.submit(IncrementalAlterConfigs(
        TOPIC_RESOURCE, "u", (ConfigChange("unclean.leader.election.enable", "true"),)))
    assert cluster.wait(change)

    def reg() -> PartitionRegistration:
        topic = _image(cluster).topic("u")
        assert topic is not None
        return topic.partitions[0]

    first = reg().leader
    other = 1 - first
    cluster.sim.crash(other)
    assert cluster.run_until(lambda: reg().isr == (first,), 30_000)
    cluster.sim.crash(first)
    assert cluster.run_until(lambda: reg().leader == NO_LEADER, 30_000)
    assert reg().leader_recovery_state == RECOVERED
    cluster.sim.restart(other)
    assert cluster.run_until(lambda: reg().leader == other, 30_000)
    assert (reg().isr, reg().leader_recovery_state) == ((other,), RECOVERING)
    cluster.sim.restart(first)
    assert cluster.run_until(lambda: set(reg().isr) == {other, first}, 60_000)
    assert reg().leader_recovery_state == RECOVERED
    assert cluster.sim.violation is None


def _partition(cluster: KRaftCluster, topic: str) -> PartitionRegistration:
    found = _image(cluster).topic(topic)
    assert found is not None
    return found.partitions[0]


def _send_one(cluster: KRaftCluster, producer_name: str, topic: str) -> str:
    """One acks=all record to ``topic``-0, acknowledged; its value."""
    producer = Producer(cluster, producer_name, topic, acks=-1)
    producer.send(1)
    assert cluster.run_until(lambda: producer.idle, 30_000)
    assert len(producer.acknowledged) == 1
    return producer.acknowledged[0].values[0]


def _set_unclean(cluster: KRaftCluster, resource: tuple[int, str], enabled: str) -> None:
    change = cluster.submit(IncrementalAlterConfigs(
        resource[0], resource[1], (ConfigChange("unclean.leader.election.enable", enabled),)))
    assert cluster.wait(change) and change.error is None


@pytest.mark.parametrize(("cluster_default", "topic_config", "elected"), [
    ("true", None, True),  # testUncleanLeaderElectionEnabled
    (None, None, False),  # testUncleanLeaderElectionDisabled
    ("false", "true", True),  # testUncleanLeaderElectionEnabledByTopicOverride
    ("true", "false", False),  # testUncleanLeaderElectionDisabledByTopicOverride
])
def test_the_last_isr_member_gone_an_out_of_sync_replica_leads_only_if_unclean(
        cluster_default: str | None, topic_config: str | None, elected: bool) -> None:
    """Kafka's UncleanLeaderElectionTest (the cluster default stands for the controllers'
    static config): the follower down, a record only the leader has, the leader down, the
    follower back. Allowed, the follower is elected at once and the record is lost;
    otherwise the partition has no leader until the old leader is back, and nothing is
    lost."""
    cluster = _cluster(brokers=2)
    if cluster_default is not None:
        _set_unclean(cluster, (BROKER_RESOURCE, ""), cluster_default)
    configs = () if topic_config is None else (("unclean.leader.election.enable",
                                                topic_config),)
    handle = cluster.submit(CreateTopics((NewTopic("u", 1, 2, configs),)))
    assert cluster.wait(handle) and handle.error is None
    first = _send_one(cluster, "first", "u")
    leader = _partition(cluster, "u").leader
    follower = 1 - leader
    cluster.sim.crash(follower)
    assert cluster.run_until(lambda: _partition(cluster, "u").isr == (leader,), 30_000)
    second = _send_one(cluster, "second", "u")
    cluster.sim.crash(leader)
    assert cluster.run_until(lambda: _partition(cluster, "u").leader == NO_LEADER, 30_000)
    cluster.sim.restart(follower)
    assert cluster.run_until(lambda: not _image(cluster).brokers[follower].fenced, 30_000)
    if elected:
        assert _partition(cluster, "u").leader == follower  # elected as it was unfenced
        third = _send_one(cluster, "third", "u")
        assert consume(cluster, "u") == [first, third]  # the second record was lost
    else:
        cluster.sim.run_for(30_000)
        assert (_partition(cluster, "u").leader, _partition(cluster, "u").isr) == \
            (NO_LEADER, (leader,))
        assert consume(cluster, "u") is None  # no leader to read from
        cluster.sim.restart(leader)
        assert cluster.run_until(lambda: _partition(cluster, "u").leader == leader, 30_000)
        third = _send_one(cluster, "third", "u")
        assert cluster.run_until(lambda: follower in _partition(cluster, "u").isr, 30_000)
        assert consume(cluster, "u") == [first, second, third]
    assert cluster.sim.violation is None


def test_an_invalid_unclean_election_override_is_refused() -> None:
    """testUncleanLeaderElectionInvalidTopicOverride, with ConfigDef's message."""
    cluster = _cluster(brokers=2)
    handle = cluster.submit(CreateTopics((NewTopic(
        "u", 1, 2, (("unclean.leader.election.enable", "invalid"),)),)))
    assert cluster.wait(handle) and handle.error is not None
    assert (handle.error.code, handle.error.message) == (
        "INVALID_CONFIG", "Invalid value invalid for configuration "
        "unclean.leader.election.enable: Expected value to be either true or false")


def test_enabling_unclean_election_elects_a_leaderless_partition_at_the_next_check() -> None:
    """Kafka's UncleanLeaderElectionTest.testTopicUncleanLeaderElectionEnableWithAlterTopic
    Configs: enabling unclean election while the leader lives changes nothing; with the
    ISR's last member down and the other replica back, the partition stays leaderless
    until the topic allows unclean election; then the controller's periodic check elects
    the out-of-sync replica, and what only the old leader held is lost."""
    interval = 10_000
    cluster = _cluster(brokers=2, controller=ControllerConfig(
        unclean_leader_election_interval_ms=interval))
    _create(cluster, "u", 1, 2)
    topic = (TOPIC_RESOURCE, "u")

    def reg() -> PartitionRegistration:
        return _partition(cluster, "u")

    first = _send_one(cluster, "first", "u")
    leader = reg().leader
    follower = 1 - leader
    _set_unclean(cluster, topic, "true")
    cluster.sim.run_for(2 * interval)
    _set_unclean(cluster, topic, "false")
    assert reg().leader == leader  # the leader lives: nothing to elect
    cluster.sim.crash(follower)
    assert cluster.run_until(lambda: reg().isr == (leader,), 30_000)
    _send_one(cluster, "second", "u")
    cluster.sim.crash(leader)
    assert cluster.run_until(lambda: reg().leader == NO_LEADER, 30_000)
    cluster.sim.restart(follower)
    assert cluster.run_until(lambda: not _image(cluster).brokers[follower].fenced, 30_000)
    cluster.sim.run_for(3 * interval)
    assert (reg().leader, reg().isr) == (NO_LEADER, (leader,))  # no unclean election
    enabled_at = cluster.sim.now
    _set_unclean(cluster, topic, "true")
    assert cluster.run_until(lambda: reg().leader == follower, 2 * interval)
    assert cluster.sim.now - enabled_at <= interval + 1_000
    assert (reg().isr, reg().leader_recovery_state) == ((follower,), RECOVERING)
    third = _send_one(cluster, "third", "u")
    assert consume(cluster, "u") == [first, third]  # "second" was lost
    assert cluster.sim.violation is None


def test_a_large_fence_is_one_transaction_in_transactional_mode() -> None:
    cluster = _cluster(controller=ControllerConfig(max_records_per_batch=20,
                                                   write_mode=WriteMode.TRANSACTIONAL))
    _create(cluster, "big", 90, 3)
    start = cluster.history.end
    cluster.sim.crash(0)
    assert cluster.run_until(lambda: _image(cluster).brokers[0].fenced, 20_000)
    cluster.run_until(cluster.idle, 10_000)
    written = [_record_at(cluster, o) for o in range(start, cluster.history.end)]
    begins = [r for r in written if isinstance(r, BeginTransactionRecord)]
    changes = [r for r in written if isinstance(r, PartitionChangeRecord)]
    assert len(changes) == 90  # RF 3 of 3 brokers: broker 0 is in every ISR
    assert [b.name for b in begins] == ["FenceBroker(0)"]
    assert cluster.sim.violation is None


def test_the_broker_index_holds_exactly_each_brokers_replicas() -> None:
    cluster = _cluster(brokers=4)
    _create(cluster, "a", 7, 2)
    _create(cluster, "b", 5, 3)
    image = _image(cluster)
    for broker_id in range(4):
        expected = sorted((t.topic_id, pid) for t in image.topics_by_id.values()
                          for pid, reg in t.partitions.items() if broker_id in reg.replicas)
        assert list(partitions_of(image.partitions_by_broker, broker_id)) == expected


def test_legacy_start_still_registers_by_operation() -> None:
    cluster = _cluster(brokers_settings=BrokerSettings(lifecycle=False))
    cluster.sim.crash(1)
    cluster.sim.run_for(20_000)
    assert not _image(cluster).brokers[1].fenced  # nobody watches sessions


def test_a_leader_restarted_at_once_keeps_its_log_and_loses_no_acked_record() -> None:
    cluster = _cluster()
    _create(cluster, "t", 1, 3)
    change = cluster.submit(IncrementalAlterConfigs(
        TOPIC_RESOURCE, "t", (ConfigChange("min.insync.replicas", "2"),)))
    assert cluster.wait(change)
    before = Producer(cluster, "before", "t", acks=-1, idempotent=True)
    before.send(20)
    assert cluster.run_until(lambda: before.idle, 30_000)
    leader = cluster.partition_leader("t", 0)
    assert leader is not None
    cluster.sim.crash(leader)
    cluster.sim.restart(leader)  # before the controller notices: same leader epoch in its image
    after = Producer(cluster, "after", "t", acks=-1, idempotent=True)
    after.send(20)
    assert cluster.run_until(lambda: after.idle and cluster.brokers_unfenced(), 60_000)
    assert cluster.run_until(cluster.idle, 30_000)
    assert not before.failed and not after.failed
    acked = [v for p in (before, after) for a in p.acknowledged for v in a.values]
    assert len(acked) == 40
    values = consume(cluster, "t", 0)
    assert values is not None and sorted(values) == sorted(acked)
    assert len(set(values)) == len(values)
    cluster.sim.run_for(2_000)  # followers fetch up to the leader's high watermark
    logs = [[e.value for e in r.log.entries[:r.log.high_watermark]]
            for b in (0, 1, 2) if (m := cluster.replica_manager(b)) is not None
            for r in m.replicas.values()]
    assert len(logs) == 3 and all(log == values for log in logs)
    assert cluster.sim.violation is None


def test_partition_logs_survive_a_crash_but_not_a_wiped_disk() -> None:
    cluster = _cluster()
    _create(cluster, "t", 1, 3)
    producer = Producer(cluster, "p", "t", acks=-1)
    producer.send(4)
    assert cluster.run_until(lambda: producer.idle, 30_000)
    topic_id = _image(cluster).topics_by_name["t"]
    cluster.sim.crash(2)
    cluster.sim.restart(2)
    assert cluster.log_dir(2).logs[(topic_id, 0)].end_offset == 4
    cluster.sim.wipe(2)
    assert cluster.log_dir(2).replica_keys() == []
    cluster.sim.restart(2)
    assert cluster.run_until(lambda: (m := cluster.replica_manager(2)) is not None
                             and m.started and cluster.log_dir(2).replica_keys() == [(topic_id, 0)]
                             and cluster.log_dir(2).logs[(topic_id, 0)].end_offset == 4,
                             60_000)


def test_a_submission_that_reaches_no_controller_fails_at_once() -> None:
    """To a controller that is down: NOT_CONTROLLER naming the active one; with none
    active: NOT_CONTROLLER; once the run stopped on a violation: the run stopped."""
    cluster = _cluster(brokers=1)
    active = cluster.active_controller()
    assert active is not None
    down = next(n for n in cluster.config.controller_ids if n != active.node_id)
    cluster.sim.crash(down)
    topic = CreateTopics((NewTopic("t", 1, 1),))
    handle = cluster.submit(topic, node_id=down)
    assert handle.done and handle.error is not None and handle.error.code == "NOT_CONTROLLER"
    assert handle.error.message == \
        f"The active controller appears to be node {active.node_id}."
    for node in cluster.config.controller_ids:
        cluster.sim.crash(node)
    handle = cluster.submit(topic)
    assert handle.error is not None and handle.error.code == "NOT_CONTROLLER"
    assert handle.error.message == "No controller appears to be active."

    class Stop(Monitor):
        def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
            raise InvariantViolation("Stop", "stopped")

    cluster.sim.monitors.append(Stop())
    cluster.sim.act("stop", lambda: None)
    handle = cluster.submit(topic)
    assert handle.done and handle.op_id == 0 and handle.error is not None
    assert (handle.error.code, handle.error.message) == ("UNKNOWN_SERVER_ERROR",
                                                         "the simulation stopped")


def test_an_idempotent_producer_keeps_its_producer_id_zero_through_lost_answers() -> None:
    """The cluster's first producer id is 0; an idempotent producer keeps it across the
    retries of answers lost on the way back, so the broker drops each resent batch."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=3))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 1, 3),))))
    producer = Producer(cluster, "p", "t", idempotent=True, response_loss=0.5)
    producer.send(10)
    assert cluster.run_until(lambda: producer.idle, 60_000)
    cluster.sim.run_for(1_000)
    assert producer.producer_id == 0 and producer.errors["REQUEST_TIMED_OUT"] > 0
    assert consume(cluster, "t") == [f"p-{i}" for i in range(10)]


def _two_replicas_written_to() -> tuple[KRaftCluster, Producer, ReplicaManager, int, int]:
    """Two brokers heartbeating every 500 ms and a topic "t" of one partition on both,
    three records written with acks=all: the cluster, the producer, the partition
    leader's replica manager, the leader and the follower."""
    config = BrokerConfig(heartbeat_interval_ms=500, replica_lag_time_max_ms=2_000)
    cluster = _cluster(brokers=2, seed=5, brokers_settings=BrokerSettings(config=config))
    _create(cluster, "t", 1, 2)
    producer = Producer(cluster, "p", "t", 0, acks=-1)
    producer.send(3)
    assert cluster.run_until(lambda: producer.idle, 10_000)
    reg = _partition(cluster, "t")
    leader, follower = reg.leader, next(r for r in reg.replicas if r != reg.leader)
    manager = cluster.replica_manager(leader)
    assert manager is not None
    return cluster, producer, manager, leader, follower


def test_a_fetch_of_a_restarted_followers_old_incarnation_does_not_take_it_back() -> None:
    """KIP-903: a follower's fetches stop reaching the leader while it appends, so it leaves the
    ISR; it crashes, is fenced once its session runs out, restarts and registers again with a
    new broker epoch, and is unfenced. A fetch carrying its old incarnation's epoch reaches the
    leader only now (in Kafka a request still queued at the leader; the simulated network drops
    a crashed node's messages, so the test hands it to the leader), caught up, and the leader's
    image, a link behind, still shows the old registration unfenced: the leader asks to take the
    follower back. The AlterPartition names the broker epoch that fetch carried, and the
    controller refuses it (INELIGIBLE_REPLICA) instead of putting back in the ISR a replica on
    the word of an incarnation that is gone; the leader drops the proposal, and the follower
    rejoins at its new incarnation's fetches once the leader's image shows that registration.
    (The append: a follower at the leader's log end never leaves the ISR at the leader's check,
    as in Kafka.)"""
    cluster, producer, manager, leader, follower = _two_replicas_written_to()
    old_epoch = _image(cluster).brokers[follower].epoch
    topic_id = _image(cluster).topics_by_name["t"]
    replica = manager.replicas[(topic_id, 0)]
    cluster.sim.network.block(follower, leader)
    producer.send(1)
    assert cluster.run_until(lambda: replica.isr == (leader,), 10_000)
    stale = ReplicaFetchRequest(10_000, follower, old_epoch, (FetchPartition(
        topic_id, 0, replica.leader_epoch, replica.log.end_offset, replica.log.last_epoch),))
    cluster.sim.crash(follower)
    cluster.sim.network.heal()
    # the leader's image lags the controllers by 1.5 s from now on
    for controller in cluster.config.controller_ids:
        cluster.sim.network.set_link(controller, leader, LinkConfig(latency_ms=1_500))
    # restarted once the controller has fenced the old incarnation (its session ran out):
    # the first registration is taken, while the leader's image still shows the old one
    assert cluster.run_until(lambda: _image(cluster).brokers[follower].fenced, 15_000)
    cluster.sim.restart(follower)

    def race() -> bool:  # re-registered and unfenced; the leader's image still the old one
        now, seen = _image(cluster).brokers[follower], manager.image
        assert seen is not None
        return now.epoch != old_epoch and not now.fenced and \
            seen.brokers[follower].epoch == old_epoch and not seen.brokers[follower].fenced
    assert cluster.run_until(race, 30_000)
    assert _partition(cluster, "t").isr == (leader,) and replica.isr == (leader,)
    answers: list[str] = []  # the errors of the AlterPartition answers the leader takes
    take = manager.alter_partitions.on_answer

    def noted(item: AlterPartitionItem, answer: AlterPartitionPartitionResponse,
              now: int) -> None:
        answers.append(answer.error)
        take(item, answer, now)
    manager.alter_partitions.on_answer = noted
    cluster.sim.act("late fetch", lambda: manager.handle_message(
        NodeMessage(follower, leader, stale), cluster.sim.now))
    assert replica.pending_isr == (leader, follower)
    assert cluster.run_until(lambda: bool(answers), 5_000)
    assert answers == ["INELIGIBLE_REPLICA"]
    assert _partition(cluster, "t").isr == (leader,)
    assert replica.pending_isr is None and replica.maximal_isr() == (leader,)
    assert cluster.run_until(lambda: _partition(cluster, "t").isr == (leader, follower), 10_000)
    assert cluster.sim.violation is None


def test_a_fetch_of_a_restarted_followers_old_incarnation_is_refused() -> None:
    """KIP-903, the leader's image up to date: a follower crashes, restarts, registers
    again with a new broker epoch, is unfenced and rejoins the ISR, all of which the
    leader's image shows. A fetch its old incarnation sent reaches the leader only now
    (handed to it, as in the test above), from offset 0: the leader answers it
    NOT_LEADER_OR_FOLLOWER and records nothing of it (Kafka's
    Replica.updateFetchStateOrThrow), so what it knows of the follower (its log end, when
    it was caught up, its broker epoch) stays that of the new incarnation; the follower
    stays in the ISR and the cluster goes on."""
    cluster, producer, manager, leader, follower = _two_replicas_written_to()
    old_epoch = _image(cluster).brokers[follower].epoch
    topic_id = _image(cluster).topics_by_name["t"]
    cluster.sim.crash(follower)
    cluster.sim.restart(follower)

    def back() -> bool:  # registered again, unfenced and in the ISR, as the leader sees it
        seen = manager.image
        assert seen is not None
        broker = seen.brokers[follower]
        return broker.epoch != old_epoch and not broker.fenced and \
            manager.replicas[(topic_id, 0)].isr == (leader, follower)
    assert cluster.run_until(back, 30_000)
    new_epoch = _image(cluster).brokers[follower].epoch
    producer.send(2)
    assert cluster.run_until(lambda: producer.idle, 10_000)
    replica = manager.replicas[(topic_id, 0)]
    state = replica.follower(follower)
    assert state is not None and state.fetched_broker_epoch() == new_epoch
    known = (state.end_offset, state.last_caught_up(), state.fetched_broker_epoch())
    stale = ReplicaFetchRequest(10_000, follower, old_epoch, (FetchPartition(
        topic_id, 0, replica.leader_epoch, 0, -1),))
    errors: list[str] = []

    def late_fetch() -> None:
        manager.handle_message(NodeMessage(follower, leader, stale), cluster.sim.now)
        errors.extend(p.error for env in manager.outbox if env.dst == follower
                      and getattr(env.message, "correlation_id", None) == 10_000
                      for p in env.message.partitions)  # type: ignore[attr-defined]
        after = replica.follower(follower)
        assert after is not None
        known_after = (after.end_offset, after.last_caught_up(), after.fetched_broker_epoch())
        assert known_after == known
    cluster.sim.act("late fetch", late_fetch)
    assert errors == ["NOT_LEADER_OR_FOLLOWER"]
    producer.send(2)
    assert cluster.run_until(lambda: producer.idle, 10_000)
    assert _partition(cluster, "t").isr == (leader, follower)
    assert cluster.sim.violation is None


def test_an_isr_expansion_lost_with_a_crashed_controller_goes_to_the_next_one() -> None:
    """The follower falls out of the ISR and catches up again; the leader asks to take it
    back, and the active controller crashes before the AlterPartition reaches it. Once a
    new controller is active and the leader's raft client knows it, the leader sends the
    request again (Kafka's controller channel, beneath the AlterPartitionManager) and the
    ISR expands, with no other change of the partition between (before, the change
    stayed pending, and the follower out of the ISR, until the partition's next metadata
    change, which nothing here would bring)."""
    cluster, producer, manager, leader, follower = _two_replicas_written_to()
    topic_id = _image(cluster).topics_by_name["t"]
    replica = manager.replicas[(topic_id, 0)]
    cluster.sim.network.block(follower, leader)  # its fetches: it leaves the ISR
    producer.send(1)  # once the leader appends (one at the log end stays in sync)
    assert cluster.run_until(lambda: _partition(cluster, "t").isr == (leader,), 10_000)
    assert cluster.run_until(lambda: replica.isr == (leader,), 5_000)
    shrunk = _partition(cluster, "t")
    cluster.sim.network.heal()
    assert cluster.run_until(lambda: replica.pending_isr is not None, 10_000)
    assert replica.pending_isr == (leader, follower)
    active = cluster.active_controller()
    assert active is not None
    cluster.sim.crash(active.node_id)  # the request is on its way to it: never answered

    def new_active() -> bool:
        now = cluster.active_controller()
        return now is not None and now.node_id != active.node_id
    assert cluster.run_until(new_active, 10_000)
    assert _partition(cluster, "t") == shrunk
    # The leader's raft client, an observer, learns of the new controller by asking voters
    # drawn at random (a draw of the crashed one waits out a request timeout).
    elected = cluster.active_controller()
    assert elected is not None
    broker_raft = cluster.sim.slots[leader].raft
    assert broker_raft is not None
    assert cluster.run_until(lambda: broker_raft.leader_id == elected.node_id, 10_000)
    known_at = cluster.sim.now
    assert cluster.run_until(lambda: _partition(cluster, "t").isr == (leader, follower),
                             5_000)
    expanded = _partition(cluster, "t")
    assert expanded.partition_epoch == shrunk.partition_epoch + 1
    assert expanded.leader_epoch == shrunk.leader_epoch
    assert cluster.sim.now - known_at < 2_500
    assert cluster.run_until(lambda: replica.isr == (leader, follower), 2_000)
    assert replica.pending_isr is None
    assert cluster.sim.violation is None


def _topic_t_leader(brokers: int) -> tuple[KRaftCluster, ReplicaManager]:
    """A one-controller cluster with topic ``t`` (one partition on every broker) and the
    replica manager of its leader."""
    cluster = KRaftCluster(ClusterConfig(seed=1, controllers=1, brokers=brokers))
    cluster.start()
    assert cluster.wait(cluster.submit(CreateTopics((NewTopic("t", 1, brokers),))))
    assert cluster.run_until(lambda: cluster.partition_leader("t", 0) is not None, 10_000)
    manager = cluster.replica_manager(cluster.partition_leader("t", 0))
    assert manager is not None
    return cluster, manager


def test_a_plain_consumer_skips_transaction_markers() -> None:
    """Kafka's FetcherTest testFetcherIgnoresControlRecords: a consumer never returns a
    control record, at read_uncommitted either, and reads on past it. A transaction's two
    records and its COMMIT marker, then a plain record: :func:`sim.clients.consume` gives
    the three records (it used to give the marker's value as a fourth)."""
    cluster, manager = _topic_t_leader(brokers=3)
    answers: list[str] = []
    manager.produce("t", 0, ["t-0", "t-1"], -1, lambda r: answers.append(r.error), 7, 0, 0,
                    transactional=True)
    manager.write_txn_marker("t", 0, 7, 0, True, 0, lambda r: answers.append(r.error))
    manager.produce("t", 0, ["p-3"], -1, lambda r: answers.append(r.error))
    assert cluster.run_until(lambda: len(answers) == 3, 10_000)
    assert answers == ["NONE"] * 3
    assert consume(cluster, "t") == ["t-0", "t-1", "p-3"]


def test_a_consumer_reads_a_log_longer_than_one_fetch() -> None:
    """:func:`sim.clients.consume` fetches on from where each answer ends until the high
    watermark: a log of more records than one fetch returns is read whole, in order."""
    cluster, manager = _topic_t_leader(brokers=1)
    values = [f"v-{i}" for i in range(10_050)]  # one fetch returns at most 10 000
    answers: list[str] = []
    manager.produce("t", 0, values, -1, lambda r: answers.append(r.error))
    assert cluster.run_until(lambda: len(answers) == 1, 10_000) and answers == ["NONE"]
    assert consume(cluster, "t") == values


def test_a_broker_in_controlled_shutdown_stops_fetching_what_it_left_the_isr_of() -> None:
    """Kafka's BrokerServer tells its replica manager first: once the shutting-down broker's
    image has it out of a partition's ISR, it no longer fetches that partition (so it
    never asks to rejoin), while it waits for the controller's word to stop."""
    cluster = _cluster()
    _create(cluster, "t", 9, 3)
    slot = cluster.sim.slots[2]
    [manager] = [app for app in slot.apps if isinstance(app, ReplicaManager)]
    cluster.sim.shutdown(2)
    assert manager.in_controlled_shutdown

    def left_every_isr() -> bool:
        image = manager.image
        topic = image.topic("t") if image is not None else None
        return topic is not None and all(2 not in reg.isr for reg in topic.partitions.values())

    assert cluster.run_until(left_every_isr, 10_000)
    assert slot.status is NodeStatus.RUNNING
    topic = manager.image.topic("t") if manager.image is not None else None
    assert topic is not None
    followed = [key for key in manager.replica_keys() if topic.partitions[key[1]].leader != 2]
    assert followed and all(key in manager._stopped for key in followed)
    assert cluster.run_until(lambda: slot.status is NodeStatus.STOPPED, 10_000)


def test_a_clean_shutdown_is_named_at_the_next_registration_and_a_crash_is_not() -> None:
    """KIP-966's previousBrokerEpoch: a broker that shut down cleanly keeps the broker epoch
    it held on its disk (Kafka's clean-shutdown file) and its next process registers with
    it; the mark is used up at that start, so a crash afterwards leaves none (-1)."""
    c = _cluster()
    active = c.active_controller()
    assert active is not None
    epoch = active.image.brokers[1].epoch
    c.sim.shutdown(1)
    assert c.run_until(lambda: c.sim.slots[1].status is NodeStatus.STOPPED, 60_000)
    c.sim.restart(1)

    def previous_epoch() -> int:
        lifecycle = next(app for app in c.sim.slots[1].apps
                         if isinstance(app, BrokerLifecycleManager))
        return lifecycle.previous_broker_epoch

    assert previous_epoch() == epoch
    assert c.run_until(c.brokers_unfenced, 60_000)
    c.sim.crash(1)
    c.sim.restart(1)
    assert previous_epoch() == -1
