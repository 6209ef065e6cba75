"""Periodic unclean leader elections (Kafka's maybeElectUncleanLeaders task).

A partition can stay leaderless with active replicas: its last ISR member is
gone and its topic did not allow unclean elections when that happened. When
``unclean.leader.election.enable`` becomes true later (the topic's config, else
the active controller's own node config, else the cluster default), no broker
event elects a leader any more, so the active controller checks the leaderless
partitions every ``unclean.leader.election.interval.ms`` (5 minutes by default)
while there are some: an UNCLEAN election (:func:`controller.operations.elections.unclean_election`)
for each one whose topic allows it, at most 1,000 at a time, written without
markers (Kafka's QuorumController.maybeScheduleNextElectUncleanLeaders and
ReplicationControlManager.maybeElectUncleanLeaders). Kafka schedules the check
after any write while a partition is leaderless; here it is scheduled when a
write leaves a partition leaderless and again after each check while one
stays so, which with the periodic NoOpRecords comes to the same times within a
NoOp interval. Partitions are visited in topic id and partition order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from controller.operations.elections import unclean_election
from controller.operations.leadership import unclean_allowed
from controller.periodic_elections import MAX_ELECTIONS_PER_IMBALANCE, PeriodicElections
from metadata.image import NO_LEADER, MetadataImage, PartitionRegistration
from metadata.schema import MetadataRecord, PartitionChangeRecord


def leaderless(image: MetadataImage) -> Iterator[tuple[str, int, PartitionRegistration]]:
    """Every partition without a leader, by topic id and partition (from the image's
    index of them)."""
    index = image.leaderless_partitions
    for topic_id in sorted(index):
        partitions = image.topics_by_id[topic_id].partitions
        for pid in index[topic_id]:
            yield topic_id, pid, partitions[pid]


def left_leaderless(image: MetadataImage, records: Iterable[MetadataRecord]) -> bool:
    """Whether one of ``records`` (now replayed into ``image``) left a partition without
    a leader (only a change can: a new partition always has one)."""
    for record in records:
        if type(record) is PartitionChangeRecord and record.leader == NO_LEADER:
            topic = image.topics_by_id.get(record.topic_id)
            reg = topic.partitions.get(record.partition_id) if topic is not None else None
            if reg is not None and reg.leader == NO_LEADER:
                return True
    return False


def unclean_records(image: MetadataImage, node_id: int | None = None
                    ) -> tuple[list[PartitionChangeRecord], bool]:
    """The unclean elections of one check by the controller ``node_id`` (its own
    unclean.leader.election.enable applies where a topic has none), and whether
    partitions stay leaderless."""
    records: list[PartitionChangeRecord] = []
    remaining = False
    allowed: dict[str, bool] = {}
    for topic_id, pid, reg in leaderless(image):
        if len(records) >= MAX_ELECTIONS_PER_IMBALANCE:
            return records, True
        name = image.topics_by_id[topic_id].name
        if name not in allowed:
            allowed[name] = unclean_allowed(image, name, node_id)
        change = unclean_election(image, topic_id, pid, reg) if allowed[name] else None
        if change is None:
            remaining = True
        else:
            records.append(change)
    return records, remaining


class UncleanElector(PeriodicElections):
    """The unclean election check of the controller ``node_id``: when it is due, and its
    elections."""

    def __init__(self, interval_ms: int, node_id: int | None = None) -> None:
        super().__init__(interval_ms)
        self.node_id = node_id

    def has_work(self, image: MetadataImage) -> bool:
        """Whether a partition is leaderless."""
        return bool(image.leaderless_partitions)

    def triggered_by(self, image: MetadataImage, records: Iterable[MetadataRecord]) -> bool:
        """Whether a record left a partition leaderless."""
        return left_leaderless(image, records)

    def elections(self, image: MetadataImage) -> tuple[list[PartitionChangeRecord], bool]:
        """:func:`unclean_records`."""
        return unclean_records(image, self.node_id)
