"""Automatic preferred leader elections (Kafka's ``auto.leader.rebalance.enable``).

A partition is imbalanced while its leader is not its first replica (no leader
counts too). The active controller notices after a write that moved a leader off
its preferred replica, or when it becomes active, and checks the partitions
``leader.imbalance.check.interval.seconds`` later (300 s by default): a
preferred election (:mod:`controller.operations.elections`) for each imbalanced
partition, at most 1,000 at a time, written without markers. While some stay
imbalanced (their preferred replica is down or out of the ISR) it checks again
after the same interval, or 10 ms later when it stopped at 1,000 (Kafka's
QuorumController.maybeScheduleNextBalancePartitionLeaders and
ReplicationControlManager.maybeBalancePartitionLeaders; like KRaft, it ignores
``leader.imbalance.per.broker.percentage``). Partitions are visited in topic
id and partition order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from controller.operations.elections import preferred_change
from controller.periodic_elections import MAX_ELECTIONS_PER_IMBALANCE, PeriodicElections
from metadata.image import NO_LEADER_CHANGE, MetadataImage, PartitionRegistration
from metadata.schema import MetadataRecord, PartitionChangeRecord


def imbalanced(image: MetadataImage) -> Iterator[tuple[str, int, PartitionRegistration]]:
    """Every partition whose leader is not its first replica, by topic id and partition."""
    for topic_id in sorted(image.topics_by_id):
        partitions = image.topics_by_id[topic_id].partitions
        for pid in sorted(partitions):
            reg = partitions[pid]
            if reg.replicas and reg.leader != reg.replicas[0]:
                yield topic_id, pid, reg


def moved_off_preferred(image: MetadataImage, records: Iterable[MetadataRecord]) -> bool:
    """Whether one of ``records`` (now replayed into ``image``) left a partition led by
    another replica than its first."""
    for record in records:
        if type(record) is PartitionChangeRecord and record.leader != NO_LEADER_CHANGE:
            topic = image.topics_by_id.get(record.topic_id)
            reg = topic.partitions.get(record.partition_id) if topic is not None else None
            if reg is not None and reg.replicas and reg.leader != reg.replicas[0]:
                return True
    return False


def balance_records(image: MetadataImage) -> tuple[list[PartitionChangeRecord], bool]:
    """The preferred elections of one check, and whether partitions stay imbalanced."""
    records: list[PartitionChangeRecord] = []
    remaining = False
    for topic_id, pid, reg in imbalanced(image):
        if len(records) >= MAX_ELECTIONS_PER_IMBALANCE:
            return records, True
        change = preferred_change(image, topic_id, pid, reg)
        if change is not None:
            records.append(change)
        if change is None or change.leader != reg.replicas[0]:
            remaining = True
    return records, remaining


class LeaderBalancer(PeriodicElections):
    """The leader imbalance check: when it is due, and its preferred elections."""

    def has_work(self, image: MetadataImage) -> bool:
        """Whether a partition is imbalanced (in any order: only whether one is)."""
        return any(reg.replicas and reg.leader != reg.replicas[0]
                   for topic in image.topics_by_id.values()
                   for reg in topic.partitions.values())

    def triggered_by(self, image: MetadataImage, records: Iterable[MetadataRecord]) -> bool:
        """Whether a record moved a leader off its preferred replica."""
        return moved_off_preferred(image, records)

    def elections(self, image: MetadataImage) -> tuple[list[PartitionChangeRecord], bool]:
        """:func:`balance_records`."""
        return balance_records(image)
