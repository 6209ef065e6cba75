"""The cases of Kafka's ``kafka.server.epoch.LeaderEpochIntegrationTest``.

Kafka runs brokers, bounces leaders and asks a leader for epoch end offsets
with an OffsetsForLeaderEpoch request sent as a follower's fetcher would.
kraftsim's brokers are those of a :class:`tests.broker.replica_cell.Cell`
(metadata written by hand), the request is
:meth:`~broker.replica_manager.ReplicaManager.last_offset_for_leader_epoch`, and
the records' leader epochs are read from the replicas' logs. Kafka's broker
ids 0 and 1 (100, 101 and 102) are 1 and 2 (1, 2 and 3) here. A bounce is what
the controller writes for it: the leader of a partition with another in-sync
replica moves to that one (one new epoch); the sole replica of a partition
leaves it leaderless and then leads it again when it is back (two new epochs).
The bounced broker's log is kept, as Kafka's is on disk. No Kafka test method
is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker.replica_manager import EpochEndOffset, ProduceResult
from metadata.schema import PartitionRecord, TopicRecord
from tests.broker.replica_cell import TOPIC, TOPIC_ID, Cell

TOPIC1, TOPIC1_ID = "topic1", "AAAAAAAAAAAAAAAAAAAAAg"
TOPIC2, TOPIC2_ID = "topic2", "AAAAAAAAAAAAAAAAAAAAAw"


def _topic(cell: Cell, name: str, topic_id: str, assignment: Sequence[Sequence[int]]) -> None:
    """Topic ``name`` with a partition per assignment, led by its first replica."""
    cell.publish(TopicRecord(name, topic_id), *[
        PartitionRecord(p, topic_id, tuple(replicas), tuple(replicas), leader=replicas[0],
                        leader_epoch=0, partition_epoch=0)
        for p, replicas in enumerate(assignment)])


def _send(cell: Cell, broker: int, topic: str, partition: int, count: int,
          value: str = "IHeartLogs") -> list[ProduceResult]:
    answers: list[ProduceResult] = []
    for _ in range(count):
        cell.managers[broker].produce(topic, partition, [value], -1, answers.append)
    return answers


def _epochs(cell: Cell, broker: int, topic_id: str) -> list[int]:
    """The leader epoch of each record of partition 0 of ``topic_id`` on ``broker``."""
    return [e.leader_epoch for e in cell.managers[broker].replicas[topic_id, 0].log.entries]


def test_should_add_current_leader_epoch_to_messages_as_they_are_written_to_leader() -> None:
    """shouldAddCurrentLeaderEpochToMessagesAsTheyAreWrittenToLeader: records written in
    epoch 0 carry it; after the leader's bounce the partitions are in epoch 1 and the next
    records, replicated back to the bounced broker, carry 1."""
    cell = Cell(brokers=(1, 2))
    _topic(cell, TOPIC1, TOPIC1_ID, [(1, 2)])
    _topic(cell, TOPIC2, TOPIC2_ID, [(1, 2)])
    for topic in (TOPIC1, TOPIC2):
        _send(cell, 1, topic, 0, 4)
    cell.run(500)
    assert _epochs(cell, 1, TOPIC1_ID) == _epochs(cell, 1, TOPIC2_ID) == [0] * 4
    cell.publish(*[PartitionRecord(0, topic_id, (1, 2), (2,), leader=2, leader_epoch=1,
                                   partition_epoch=1)
                   for topic_id in (TOPIC1_ID, TOPIC2_ID)])  # broker 1 goes down
    for topic_id in (TOPIC1_ID, TOPIC2_ID):
        assert cell.image.topics_by_id[topic_id].partitions[0].leader_epoch == 1
    cell.run(500)  # broker 1 is back, following broker 2
    answers = [a for topic in (TOPIC1, TOPIC2) for a in _send(cell, 2, topic, 0, 4)]
    cell.run(500)  # (the ISR expansions broker 2 asks for are left unanswered)
    assert all(a.error == "NONE" for a in answers)
    assert _epochs(cell, 1, TOPIC1_ID) == _epochs(cell, 1, TOPIC2_ID) == [0] * 4 + [1] * 4


def test_should_send_leader_epoch_request_and_get_a_response() -> None:
    """shouldSendLeaderEpochRequestAndGetAResponse: 10 records on topic1-0 (broker 1), 20
    on topic1-1 (broker 2), 30 on topic2-0 (broker 1); broker 3 asks broker 1 and then
    broker 2 for the end of epoch 0 of each partition (and of topic2-2, which does not
    exist)."""
    cell = Cell(brokers=(1, 2, 3))
    _topic(cell, TOPIC1, TOPIC1_ID, [(1,), (2,)])
    _topic(cell, TOPIC2, TOPIC2_ID, [(1,)])
    _send(cell, 1, TOPIC1, 0, 10)
    _send(cell, 2, TOPIC1, 1, 20, "OhAreThey")
    _send(cell, 1, TOPIC2, 0, 30, "IReallyDo")
    asked = [(TOPIC1, 0), (TOPIC1, 1), (TOPIC2, 0), (TOPIC2, 2)]

    def offsets_for(broker: int) -> dict[tuple[str, int], EpochEndOffset]:
        manager = cell.managers[broker]
        return {tp: manager.last_offset_for_leader_epoch(tp[0], tp[1], 0) for tp in asked}

    at_1 = offsets_for(1)
    assert at_1[TOPIC1, 0] == EpochEndOffset("NONE", 0, 10)
    assert at_1[TOPIC2, 0] == EpochEndOffset("NONE", 0, 30)
    assert at_1[TOPIC1, 1] == EpochEndOffset("NOT_LEADER_OR_FOLLOWER", -1, -1)
    assert at_1[TOPIC2, 2] == EpochEndOffset("UNKNOWN_TOPIC_OR_PARTITION", -1, -1)
    assert offsets_for(2)[TOPIC1, 1] == EpochEndOffset("NONE", 0, 20)


def test_should_increase_leader_epoch_between_leader_restarts() -> None:
    """shouldIncreaseLeaderEpochBetweenLeaderRestarts, with the end of it
    (shouldSupportRequestsForEpochsNotOnTheLeader): a sole replica bounced twice leads
    epochs 0, 2 and 4, one record in each; an epoch it did not write in ends where the
    next one it wrote in starts, an epoch above its own is undefined."""
    cell = Cell(brokers=(1, 2))
    cell.create(replicas=(2,), leader=2)
    manager = cell.managers[2]

    def leo() -> int:
        return cell.replica(2).log.end_offset

    def offsets_for(epoch: int) -> EpochEndOffset:
        return manager.last_offset_for_leader_epoch(TOPIC, 0, epoch)

    def bounce() -> None:
        cell.change(leader=-1)  # broker 2 goes down: no leader
        cell.change(leader=2)  # and comes back

    assert [a.error for a in cell.produce(2, ["IHeartLogs"])] == ["NONE"]
    assert offsets_for(0) == EpochEndOffset("NONE", 0, 1)
    assert leo() == 1

    bounce()
    assert [a.error for a in cell.produce(2, ["IHeartLogs"])] == ["NONE"]
    assert offsets_for(0) == EpochEndOffset("NONE", 0, 1)
    assert offsets_for(1) == EpochEndOffset("NONE", 0, 1)  # nothing written in epoch 1
    assert offsets_for(2) == EpochEndOffset("NONE", 2, 2)
    assert leo() == 2

    bounce()
    assert [a.error for a in cell.produce(2, ["IHeartLogs"])] == ["NONE"]
    assert offsets_for(0).end_offset == 1
    assert offsets_for(2).end_offset == 2
    assert offsets_for(4).end_offset == 3 == leo()
    assert cell.registration().leader_epoch == 4
    # shouldSupportRequestsForEpochsNotOnTheLeader
    assert offsets_for(1).end_offset == 1
    assert offsets_for(3).end_offset == 2
    assert offsets_for(5).end_offset == -1
    assert cell.managers[2].replicas[TOPIC_ID, 0].log.end_offset == 3
