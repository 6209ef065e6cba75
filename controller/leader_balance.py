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
from metadata.image import NO_LEADER_CHANGE, MetadataImage, PartitionRegistration
from metadata.schema import MetadataRecord, PartitionChangeRecord

MAX_ELECTIONS_PER_IMBALANCE = 1000
"""Kafka's maxElectionsPerImbalance: preferred elections in one check."""
IMMEDIATE_MS = 10
"""The delay of the next check when the last one stopped at the most elections."""


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


class LeaderBalancer:
    """When the active controller's next check is due (None: not scheduled)."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms = interval_ms
        self.due_at: int | None = None
        self._deferred = True  # the next check waits the interval, not IMMEDIATE_MS

    def activate(self, image: MetadataImage, now: int) -> None:
        """The controller became active: check later if anything is imbalanced now."""
        self.due_at, self._deferred = None, True
        if self.interval_ms and next(imbalanced(image), None) is not None:
            self._schedule(now)

    def deactivate(self) -> None:
        """The controller is not active any more."""
        self.due_at, self._deferred = None, True

    def after_write(self, image: MetadataImage, records: Iterable[MetadataRecord],
                    now: int) -> None:
        """A write was replayed into ``image``: schedule a check if it imbalanced a
        partition and none is scheduled."""
        if self.interval_ms and self.due_at is None and moved_off_preferred(image, records):
            self._schedule(now)

    def take_due(self, image: MetadataImage, now: int) -> list[PartitionChangeRecord] | None:
        """The check's records when it is due (None otherwise); the next check is
        scheduled as the result says (before the records are written)."""
        if self.due_at is None or now < self.due_at:
            return None
        self.due_at = None
        records, remaining = balance_records(image)
        self._deferred = len(records) < MAX_ELECTIONS_PER_IMBALANCE
        if remaining:
            self._schedule(now)
        return records

    def _schedule(self, now: int) -> None:
        self.due_at = now + (self.interval_ms if self._deferred else IMMEDIATE_MS)
