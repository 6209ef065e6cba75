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


def test_a_leader_counts_its_epoch_before_writing_in_it() -> None:
    """Beyond Kafka's cases: Kafka's leader enters its epoch in its cache when the epoch
    begins. Epoch 0 writes offsets 0-4, epoch 1 offsets 5-7, epoch 2 (the same leader)
    nothing yet: epoch 0 ends where 1 starts, 1 and 2 end at the log end, an epoch above
    2 and the undefined epoch (-1) are undefined."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1)
    cell.produce(1, [f"v{i}" for i in range(5)])
    cell.change(leader=1)
    cell.produce(1, [f"w{i}" for i in range(3)])
    assert cell.change(leader=1).leader_epoch == 2
    manager = cell.managers[1]
    assert [manager.last_offset_for_leader_epoch(TOPIC, 0, epoch) for epoch in range(-1, 4)] \
        == [EpochEndOffset("NONE", -1, -1), EpochEndOffset("NONE", 0, 5),
            EpochEndOffset("NONE", 1, 8), EpochEndOffset("NONE", 2, 8),
            EpochEndOffset("NONE", -1, -1)]


def test_an_empty_leaders_cache_holds_its_epoch_alone() -> None:
    """Beyond Kafka's cases: a leader of epoch 3 that has written nothing answers epoch 3
    with its log end, an epoch below it with where epoch 3 starts, above it and the
    undefined epoch (-1) undefined."""
    cell = Cell(brokers=(1,))
    cell.create(replicas=(1,), leader=1, leader_epoch=3)
    manager = cell.managers[1]
    assert [manager.last_offset_for_leader_epoch(TOPIC, 0, epoch) for epoch in (-1, 2, 3, 4)] \
        == [EpochEndOffset("NONE", -1, -1), EpochEndOffset("NONE", 2, 0),
            EpochEndOffset("NONE", 3, 0), EpochEndOffset("NONE", -1, -1)]


def test_a_followers_cache_has_only_the_epochs_of_its_records() -> None:
    """Beyond Kafka's cases: a follower's leader-epoch cache is filled by the records it
    fetches, so the leader's new epoch, in which nothing is written yet, is above the
    latest epoch the follower knows."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(1, 2), leader=1)
    cell.produce(1, ["a", "b"])
    cell.step()
    assert cell.replica(2).log.end_offset == 2
    cell.change(leader=1)
    cell.step()
    follower = cell.replica(2)
    assert (follower.leader_epoch, follower.is_leader) == (1, False)
    assert follower.end_offset_for_epoch(0) == (0, 2)
    assert follower.end_offset_for_epoch(1) == (-1, -1)
    assert cell.replica(1).end_offset_for_epoch(1) == (1, 2)
