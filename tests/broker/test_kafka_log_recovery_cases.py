"""The cases of Kafka's ``kafka.server.LogRecoveryTest``.

Kafka runs two brokers (controlled shutdown off) with a partition replicated on
both, produces, stops and starts brokers, and reads each broker's high
watermark checkpoint (``replication-offset-checkpoint``, 0 for a partition not
in it) after it stopped or after an explicit checkpoint. kraftsim runs the
same on a :class:`~sim.cluster.KRaftCluster` (one controller, two brokers): a
broker stop is a clean shutdown and a start a restart from its disk. kraftsim's
clean shutdown is always a controlled one (its leaderships move first), where
Kafka's test turns controlled shutdown off and the leadership moves when the
broker's session expires: either way the other in-sync broker leads. (A crash
would be an unclean shutdown, after which the controller takes the broker out
of every ISR when it registers again, as Kafka's does: the last test could not
then elect the broker that comes back first.) A broker's partition logs live in its
:class:`~broker.log_dir.LogDir`, which outlives the process with each log's
high watermark, so what Kafka's checkpoint holds after a stop is read there:
kraftsim keeps the high watermark on its disk as it moves, where Kafka writes
the file every ``replica.high.watermark.checkpoint.interval.ms`` and at
shutdown (the file is what :func:`sim.save_partitions.write_high_watermarks`
writes from it, see ``test_kafka_highwatermark_persistence_cases.py``). Log
segments are not modelled, so the "multiple log segments" cases differ from
the single-segment ones only by their record counts. "server1" is the broker
the partition's leader is created on (Kafka's preferred replica, broker 0),
"server2" the other. No Kafka test method is left out.
"""

from __future__ import annotations

from controller.operations import CreateTopics, NewTopic
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster

TOPIC = "new-topic"


class _Setup:
    """The cluster, its topic, the two brokers and a producer (acks=all)."""

    def __init__(self, seed: int) -> None:
        c = self.c = KRaftCluster(ClusterConfig(seed=seed, controllers=1, brokers=2))
        c.start()
        assert c.wait(c.submit(CreateTopics((NewTopic(TOPIC, 1, 2),))))
        assert c.run_until(lambda: c.partition_leader(TOPIC, 0) is not None and c.idle(),
                           10_000)
        leader = c.partition_leader(TOPIC, 0)
        assert leader is not None
        self.server1 = leader
        self.server2 = next(b for b in c.config.broker_ids if b != leader)
        manager = c.replica_manager(leader)
        assert manager is not None and manager.image is not None
        self.key = (manager.image.topics_by_name[TOPIC], 0)
        self.producer = Producer(c, "p", TOPIC, 0, acks=-1)

    def send(self, count: int) -> None:
        """Kafka's sendMessages: ``count`` records, each acknowledged."""
        producer = self.producer
        producer.send(count)
        assert self.c.run_until(lambda: producer.idle, 60_000)
        assert producer.failed == []

    def hw_file(self, broker: int) -> int:
        """The high watermark ``broker``'s disk holds for the partition (0: none)."""
        log = self.c.log_dir(broker).logs.get(self.key)
        return 0 if log is None else log.high_watermark

    def live_hw(self, broker: int) -> int:
        """The high watermark of ``broker``'s running replica (-1: not running)."""
        manager = self.c.replica_manager(broker)
        return -1 if manager is None else manager.replicas[self.key].log.high_watermark

    def await_hw(self, broker: int, hw: int) -> None:
        assert self.c.run_until(lambda: self.live_hw(broker) == hw, 30_000)

    def await_leader(self, leader: int) -> None:
        """Kafka's awaitLeaderChange, to the leader the test expects."""
        assert self.c.run_until(lambda: self.c.partition_leader(TOPIC, 0) == leader, 60_000)

    def stop(self, broker: int) -> None:
        """A clean shutdown: the broker stops once its leaderships moved away."""
        c = self.c
        c.sim.shutdown(broker)
        assert c.run_until(lambda: not c.sim.slots[broker].running, 60_000)

    def start(self, broker: int) -> None:
        c = self.c
        c.sim.restart(broker)
        assert c.run_until(c.brokers_unfenced, 60_000)


def test_hw_checkpoint_no_failures_single_log_segment() -> None:
    """testHWCheckpointNoFailuresSingleLogSegment."""
    s = _Setup(seed=11)
    s.send(2)
    s.await_hw(s.server2, 2)
    assert s.hw_file(s.server1) == 2
    assert s.hw_file(s.server2) == 2


def test_hw_checkpoint_with_failures_single_log_segment() -> None:
    """testHWCheckpointWithFailuresSingleLogSegment: the leader stops (the follower leads),
    comes back and catches up into the ISR; the new leader stops (the first one leads
    again) and comes back; each stopped broker's disk keeps the high watermark, and both
    have the last one once it moves."""
    s = _Setup(seed=12)
    assert s.hw_file(s.server1) == 0
    s.send(1)
    hw = 1
    s.await_hw(s.server2, hw)
    s.stop(s.server1)
    assert s.hw_file(s.server1) == hw
    s.await_leader(s.server2)
    s.start(s.server1)
    assert s.c.partition_leader(TOPIC, 0) == s.server2
    assert s.hw_file(s.server1) == hw
    manager = s.c.replica_manager(s.server2)
    assert manager is not None
    assert s.c.run_until(lambda: len(manager.replicas[s.key].isr) == 2, 30_000)
    s.stop(s.server2)
    assert s.hw_file(s.server2) == hw
    s.await_leader(s.server1)
    s.start(s.server2)
    s.send(1)
    hw += 1
    s.await_hw(s.server2, hw)
    s.stop(s.server1)
    s.stop(s.server2)
    assert s.hw_file(s.server1) == hw
    assert s.hw_file(s.server2) == hw


def test_hw_checkpoint_no_failures_multiple_log_segments() -> None:
    """testHWCheckpointNoFailuresMultipleLogSegments."""
    s = _Setup(seed=13)
    s.send(20)
    s.await_hw(s.server2, 20)
    s.stop(s.server1)
    s.stop(s.server2)
    assert s.hw_file(s.server1) == 20
    assert s.hw_file(s.server2) == 20


def test_hw_checkpoint_with_failures_multiple_log_segments() -> None:
    """testHWCheckpointWithFailuresMultipleLogSegments: both brokers stop, the follower
    comes back first and leads, then the first one follows it; the high watermark on
    each disk is the one before the stop, then the one after more records."""
    s = _Setup(seed=14)
    s.send(2)
    hw = 2
    s.await_hw(s.server2, hw)
    s.stop(s.server1)
    s.stop(s.server2)
    assert s.hw_file(s.server1) == hw
    assert s.hw_file(s.server2) == hw
    s.c.sim.restart(s.server2)
    s.await_leader(s.server2)
    assert s.hw_file(s.server1) == hw
    s.start(s.server1)
    assert s.hw_file(s.server1) == hw
    assert s.hw_file(s.server2) == hw
    s.send(2)
    hw += 2
    s.await_hw(s.server1, hw)
    s.stop(s.server1)
    s.stop(s.server2)
    assert s.hw_file(s.server1) == hw
    assert s.hw_file(s.server2) == hw
