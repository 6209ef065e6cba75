"""The cases of Kafka's ``kafka.server.HighwatermarkPersistenceTest``, and the files a saved
broker keeps for its replicas.

Kafka's test makes a ReplicaManager, creates partitions led by it, appends to their logs
and moves their high watermarks by hand, and after each step checkpoints the high
watermarks (``checkpointHighWatermarks``) and reads ``replication-offset-checkpoint``
back (a partition missing from it reads as 0). kraftsim's broker is a
:class:`~broker.replica_manager.ReplicaManager` fed images by hand
(:class:`~tests.broker.replica_cell.Cell`); its
:meth:`~broker.replica_manager.ReplicaManager.high_watermarks` is what the checkpoint
holds, and :func:`sim.save_partitions.write_high_watermarks` writes the file, as a saved
run (``--save``) does for each running broker. The logs are appended to directly and
their high watermarks moved by hand, as in Kafka's test (which calls
``appendAsLeader`` and ``updateHighWatermark`` on the log).

Beyond Kafka's cases: a saved run of a cluster writes, for every broker, a
``replication-offset-checkpoint`` with each replica's high watermark, and for each
replica a ``leader-epoch-checkpoint`` with its leader-epoch cache and a
``partition.metadata`` with its topic id, all read back by Kafka's rules.

Not ported: none; both methods of the class are here (Kafka's scheduler, metrics, quota
managers and ZooKeeper metadata cache are its test's scaffolding, not checked).
"""

from __future__ import annotations

from pathlib import Path

from broker.replica_manager import ReplicaManager
from controller.operations import CreateTopics, NewTopic
from kafka_format.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA,
    EpochEntry,
    OffsetEntry,
    PartitionMetadata,
)
from kafka_format.data_log import partition_dir_name
from kafka_format.files import read_checkpoint, read_partition_metadata
from metadata.schema import PartitionRecord, TopicRecord
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.save import save_simulation
from sim.save_partitions import HIGH_WATERMARK_CHECKPOINT, write_high_watermarks
from tests.broker.replica_cell import Cell

LEADER, FOLLOWER = 1, 2


def _hwm_for(manager: ReplicaManager, directory: Path, topic: str, partition: int) -> int:
    """Kafka's hwmFor: checkpoint the high watermarks, read the file back, 0 if absent."""
    path = write_high_watermarks(manager, directory)
    result = read_checkpoint(path, HIGH_WATERMARK_CHECKPOINT)
    assert result.error is None
    found = {(e.topic, e.partition): e.offset for e in result.entries
             if isinstance(e, OffsetEntry)}
    return found.get((topic, partition), 0)


def _create(cell: Cell, topic: str, topic_id: str) -> None:
    """``topic`` with one partition led by LEADER, replicas (LEADER, FOLLOWER), ISR the
    leader alone (Kafka's updateAssignmentAndIsr)."""
    cell.publish(TopicRecord(topic, topic_id),
                 PartitionRecord(0, topic_id, (LEADER, FOLLOWER), (LEADER,), leader=LEADER,
                                 leader_epoch=0, partition_epoch=0))


def _append(cell: Cell, topic_id: str, count: int) -> None:
    """Kafka's append: records 0 to ``count`` (``count + 1`` of them) at leader epoch 0."""
    log = cell.managers[LEADER].replicas[topic_id, 0].log
    log.append_as_leader([str(i) for i in range(count + 1)], 0)


def test_high_watermark_persistence_single_partition(tmp_path: Path) -> None:
    """testHighWatermarkPersistenceSinglePartition."""
    cell = Cell(brokers=(LEADER, FOLLOWER))
    manager = cell.managers[LEADER]
    assert _hwm_for(manager, tmp_path, "foo", 0) == 0
    assert (tmp_path / HIGH_WATERMARK_CHECKPOINT).read_text() == "0\n0\n"  # no partition yet
    topic_id = "Zm9vAAAAAAAAAAAAAAAAAA"
    _create(cell, "foo", topic_id)
    assert _hwm_for(manager, tmp_path, "foo", 0) == 0  # held compact: an empty log
    # a compact replica is checkpointed too, at high watermark 0
    assert (tmp_path / HIGH_WATERMARK_CHECKPOINT).read_text() == "0\n1\nfoo 0 0\n"
    log = manager.replicas[topic_id, 0].log
    assert _hwm_for(manager, tmp_path, "foo", 0) == log.high_watermark == 0
    log.update_high_watermark(5)  # the log is empty: the high watermark stays at its end
    assert _hwm_for(manager, tmp_path, "foo", 0) == log.high_watermark == 0


def test_high_watermark_persistence_multiple_partitions(tmp_path: Path) -> None:
    """testHighWatermarkPersistenceMultiplePartitions."""
    cell = Cell(brokers=(LEADER, FOLLOWER))
    manager = cell.managers[LEADER]
    topic1, topic1_id = "foo1", "Zm9vMQAAAAAAAAAAAAAAAA"
    topic2, topic2_id = "foo2", "Zm9vMgAAAAAAAAAAAAAAAA"
    assert _hwm_for(manager, tmp_path, topic1, 0) == 0
    _create(cell, topic1, topic1_id)
    log1 = manager.replicas[topic1_id, 0].log
    assert _hwm_for(manager, tmp_path, topic1, 0) == log1.high_watermark
    _append(cell, topic1_id, 5)
    log1.update_high_watermark(5)
    assert log1.high_watermark == 5
    assert _hwm_for(manager, tmp_path, topic1, 0) == 5
    _create(cell, topic2, topic2_id)
    log2 = manager.replicas[topic2_id, 0].log
    assert _hwm_for(manager, tmp_path, topic2, 0) == log2.high_watermark
    _append(cell, topic2_id, 15)
    log2.update_high_watermark(15)
    assert log2.high_watermark == 15
    _append(cell, topic1_id, 5)
    log1.update_high_watermark(10)
    assert log1.high_watermark == 10
    assert _hwm_for(manager, tmp_path, topic2, 0) == 15
    assert _hwm_for(manager, tmp_path, topic1, 0) == 10
    assert (tmp_path / HIGH_WATERMARK_CHECKPOINT).read_text() == "0\n2\nfoo1 0 10\nfoo2 0 15\n"


def test_a_saved_broker_keeps_its_replicas_files(tmp_path: Path) -> None:
    """Beyond Kafka's cases: after a leader change, every saved broker's
    ``replication-offset-checkpoint`` holds its replicas' high watermarks, and each
    replica's directory its leader-epoch cache and topic id."""
    c = KRaftCluster(ClusterConfig(seed=5, controllers=1, brokers=3))
    c.start()
    assert c.wait(c.submit(CreateTopics((NewTopic("t", 2, 3),))))
    c.sim.run_for(500)
    producer = Producer(c, "p", "t", 0, acks=-1)
    producer.send(3)
    assert c.run_until(lambda: producer.idle, 10_000)
    leader = c.partition_leader("t", 0)
    assert leader is not None
    c.sim.crash(leader)
    c.sim.run_for(12_000)  # the session expires: the partition gets a new leader
    c.sim.restart(leader)
    producer.send(2)
    assert c.run_until(lambda: producer.idle and c.idle() and c.brokers_unfenced(), 30_000)
    save_simulation(c.sim, tmp_path / "run")
    epochs_seen = 0
    for broker in c.config.broker_ids:
        manager = next(a for a in c.sim.slots[broker].apps if isinstance(a, ReplicaManager))
        broker_dir = tmp_path / "run" / f"broker-{broker}"
        checkpoint = read_checkpoint(broker_dir / HIGH_WATERMARK_CHECKPOINT,
                                     HIGH_WATERMARK_CHECKPOINT)
        assert checkpoint.error is None
        replicas = sorted(manager.replicas.values(), key=lambda r: (r.topic, r.partition_id))
        assert checkpoint.entries == tuple(
            OffsetEntry(r.topic, r.partition_id, r.log.high_watermark) for r in replicas)
        for replica in replicas:
            directory = broker_dir / partition_dir_name(replica.topic, replica.partition_id)
            epochs = read_checkpoint(directory / LEADER_EPOCH_CHECKPOINT,
                                     LEADER_EPOCH_CHECKPOINT)
            assert epochs.error is None
            assert epochs.entries == tuple(EpochEntry(e, s) for e, s in replica.log.epoch_starts)
            epochs_seen = max(epochs_seen, len(epochs.entries))
            assert read_partition_metadata(directory / PARTITION_METADATA) == \
                PartitionMetadata(0, replica.topic_id)
    assert epochs_seen >= 2  # the new leader's epoch started in the log
