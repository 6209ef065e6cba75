"""The case of Kafka's ``kafka.server.ReplicaFetchTest``.

Kafka's test runs two brokers, creates two topics replicated on both, sends
four records to each and waits until both brokers' logs of each partition end
at the same offset. kraftsim's brokers are those of a
:class:`tests.broker.replica_cell.Cell` (metadata written by hand), the
records are produced in-process at the leader, and the followers' fetcher is
the replica manager's own (one fetch per leader broker, with fetch sessions).
Beyond Kafka's check of the log end offsets, the follower's records are
compared whole. No Kafka test method is left out.
"""

from __future__ import annotations

from broker.replica_manager import ProduceResult
from metadata.schema import PartitionRecord, TopicRecord
from tests.broker.replica_cell import Cell

TOPICS = {"foo": "Zm9vAAAAAAAAAAAAAAAAAA", "bar": "YmFyAAAAAAAAAAAAAAAAAA"}


def test_replica_fetcher_thread() -> None:
    """testReplicaFetcherThread."""
    cell = Cell(brokers=(1, 2))
    for name, topic_id in TOPICS.items():
        cell.publish(TopicRecord(name, topic_id),
                     PartitionRecord(0, topic_id, (1, 2), (1, 2), leader=1, leader_epoch=0,
                                     partition_epoch=0))
    messages = {"foo": ["test1", "test2", "test3", "test4"],
                "bar": ["test5", "test6", "test7", "test8"]}
    answers: list[ProduceResult] = []
    for name, values in messages.items():
        for value in values:
            cell.managers[1].produce(name, 0, [value], 1, answers.append)
    assert [a.error for a in answers] == ["NONE"] * 8

    def logs_match() -> bool:
        ends = [[cell.managers[b].replicas[topic_id, 0].log.end_offset for b in (1, 2)]
                for topic_id in TOPICS.values()]
        return all(end[0] > 0 and end[0] == end[1] for end in ends)

    for _ in range(20):
        if logs_match():
            break
        cell.step(50)
    assert logs_match()
    for name, topic_id in TOPICS.items():
        leader = cell.managers[1].replicas[topic_id, 0].log.entries
        follower = cell.managers[2].replicas[topic_id, 0].log.entries
        assert list(follower) == list(leader)
        assert [e.value for e in follower] == messages[name]
