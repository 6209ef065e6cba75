"""The cases of Kafka's ``kafka.server.epoch.OffsetsForLeaderEpochTest``.

Kafka's test builds a ReplicaManager around mocked logs and asks its
``lastOffsetForLeaderEpoch``. kraftsim's
:meth:`~broker.replica_manager.ReplicaManager.last_offset_for_leader_epoch`
answers the same question for one partition, in-process, from the replicas its
published image gives the broker (:class:`tests.broker.replica_cell.Cell`): the
mocked log becomes a real one that holds records of the epochs asked about, a
partition "created but with no replica" is one the image holds on other brokers
only, and "no partition" is a topic the image does not hold. No Kafka test
method is left out.
"""

from __future__ import annotations

from broker.replica_manager import EpochEndOffset
from tests.broker.replica_cell import TOPIC, Cell


def test_should_get_epochs_from_replica() -> None:
    """shouldGetEpochsFromReplica: the leader answers from its log's epochs; Kafka's mocked
    log ends epoch 5 at offset 42, here the leader writes 42 records in epochs up to 5 (the
    request names no current leader epoch)."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1, leader_epoch=3)
    cell.produce(1, [f"v{i}" for i in range(30)])
    cell.change(leader=1)  # a new epoch, 4 (the same leader)
    cell.change(leader=1)  # and 5
    assert cell.registration().leader_epoch == 5
    cell.produce(1, [f"w{i}" for i in range(12)])
    manager = cell.managers[1]
    assert manager.last_offset_for_leader_epoch(TOPIC, 0, 5) == EpochEndOffset("NONE", 5, 42)
    # epoch 4 wrote nothing: the largest epoch below it, 3, ends where 5 begins
    assert manager.last_offset_for_leader_epoch(TOPIC, 0, 4) == EpochEndOffset("NONE", 3, 30)


def test_should_return_no_leader_for_partition_if_thrown() -> None:
    """shouldReturnNoLeaderForPartitionIfThrown: a partition the broker's metadata holds
    but that it hosts no replica of is NOT_LEADER_OR_FOLLOWER, with the undefined epoch and
    offset."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(2,), leader=2)
    assert cell.managers[1].last_offset_for_leader_epoch(TOPIC, 0, 5) == \
        EpochEndOffset("NOT_LEADER_OR_FOLLOWER", -1, -1)


def test_should_return_unknown_topic_or_partition_if_thrown() -> None:
    """shouldReturnUnknownTopicOrPartitionIfThrown: no such partition in the metadata is
    UNKNOWN_TOPIC_OR_PARTITION, for an unknown topic and for a partition the topic does
    not have."""
    cell = Cell(brokers=(1,))
    manager = cell.managers[1]
    assert manager.last_offset_for_leader_epoch(TOPIC, 0, 5) == \
        EpochEndOffset("UNKNOWN_TOPIC_OR_PARTITION", -1, -1)
    cell.create(replicas=(1,), leader=1)
    assert manager.last_offset_for_leader_epoch(TOPIC, 1, 5) == \
        EpochEndOffset("UNKNOWN_TOPIC_OR_PARTITION", -1, -1)
