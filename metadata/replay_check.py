"""ReplayCheck: a MetadataDelta that checks records without building their state.

A standby controller replays each committed record at once, so that a record
that cannot apply is reported at the offset where it was read (Kafka's
standby replays into its timeline structures immediately). Inside an open
transaction the records need not be *applied* yet: they are applied together
at the End, and an Abort throws them away. ReplayCheck raises exactly the
ReplayErrors a :class:`~metadata.delta.MetadataDelta` would raise on the same
records, but keeps only what later checks read: the topics, brokers,
features and configs the records touch (a handful of objects per topic or
broker) and, per topic, which partition ids the records created, as a run of
consecutive ids (Kafka's partition ids are dense: 0..n-1) plus a set of any
others. It makes no PartitionRegistration, so what an Abort discards is
O(topics), not O(partitions).

A ReplayCheck cannot be applied: :meth:`apply` raises TypeError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metadata.batch_shape import PartitionRun
from metadata.delta import (
    REPLAY_HANDLERS,
    MetadataDelta,
    ReplayError,
    directories_mismatch,
    invalid_partition_recovery_state,
    invalid_recovery_state,
)
from metadata.image import LEADER_RECOVERY_STATES, MetadataImage
from metadata.schema import (
    ClearElrRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)


class PartitionIds:
    """A set of partition ids: one run ``[low, high)`` and a set of any others."""

    __slots__ = ("high", "low", "others")

    def __init__(self) -> None:
        self.low = 0
        self.high = 0
        self.others: set[int] | None = None

    def add(self, partition_id: int) -> None:
        """Add ``partition_id`` (O(1); no object per id while the ids come in order)."""
        if partition_id == self.high:
            if self.low == self.high:
                self.low = partition_id
            self.high = partition_id + 1
        elif self.low == self.high:
            self.low, self.high = partition_id, partition_id + 1
        elif not self.low <= partition_id < self.high:
            if self.others is None:
                self.others = set()
            self.others.add(partition_id)

    def add_range(self, low: int, high: int) -> None:
        """Add ``low, low + 1, ..., high - 1`` in this order (O(1) when they extend the run)."""
        if self.low == self.high:
            self.low, self.high = low, high
        elif low == self.high:
            self.high = high
        else:
            for partition_id in range(low, high):
                self.add(partition_id)

    def __contains__(self, partition_id: object) -> bool:
        if isinstance(partition_id, int) and self.low <= partition_id < self.high:
            return True
        return self.others is not None and partition_id in self.others


class ReplayCheck(MetadataDelta):
    """Checks records on top of ``image`` as a MetadataDelta replays them; see the module."""

    def __init__(self, image: MetadataImage) -> None:
        super().__init__(image)
        self._created: dict[str, PartitionIds] = {}

    def _check_topic(self, record: TopicRecord) -> None:
        MetadataDelta._replay_topic(self, record)
        self._created.pop(record.topic_id, None)

    def _check_partition(self, record: PartitionRecord) -> None:
        change = self._change_for(record.topic_id)
        if change is None:
            raise ReplayError(f"PartitionRecord {record.partition_id} for unknown topic id "
                              f"{record.topic_id}")
        if record.leader_recovery_state not in LEADER_RECOVERY_STATES:
            raise invalid_partition_recovery_state(change.name, record)
        mismatch = directories_mismatch(change.name, record)
        if mismatch is not None:
            raise mismatch
        created = self._created.get(record.topic_id)
        if created is None:
            created = self._created[record.topic_id] = PartitionIds()
        created.add(record.partition_id)

    def _replay_run(self, run: PartitionRun) -> bool:
        """Check a run of PartitionRecords of one topic at once (as :meth:`_check_partition`
        one by one); False when the topic is unknown."""
        if self._change_for(run.topic_id) is None:
            return False
        created = self._created.get(run.topic_id)
        if created is None:
            created = self._created[run.topic_id] = PartitionIds()
        if run.consecutive:
            created.add_range(run.first_id, run.first_id + len(run))
        else:
            for partition_id in run.partition_ids():
                created.add(partition_id)
        self.records += len(run)
        return True

    def _check_partition_change(self, record: PartitionChangeRecord) -> None:
        change = self._change_for(record.topic_id)
        if change is None:
            raise ReplayError(f"PartitionChangeRecord {record.partition_id} for unknown topic "
                              f"id {record.topic_id}")
        created = self._created.get(record.topic_id)
        if not ((created is not None and record.partition_id in created) or
                (change.base is not None and record.partition_id in change.base.partitions)):
            raise ReplayError(f"PartitionChangeRecord for unknown partition "
                              f"{change.name}-{record.partition_id}")
        if not -1 <= record.leader_recovery_state <= 1:
            raise invalid_recovery_state(change.name, record)
        mismatch = directories_mismatch(change.name, record)
        if mismatch is not None:
            raise mismatch

    def _check_clear_elr(self, record: ClearElrRecord) -> None:
        if record.topic_name and self.topic_id(record.topic_name) is None:
            raise ReplayError(f"Unable to clear elr for topic with name {record.topic_name}: "
                              f"no such topic found.")

    def _check_remove_topic(self, record: RemoveTopicRecord) -> None:
        MetadataDelta._replay_remove_topic(self, record)
        self._created.pop(record.topic_id, None)

    def apply(self, offset: int, epoch: int) -> MetadataImage:
        """Raises TypeError: a ReplayCheck holds no registrations to apply."""
        raise TypeError("a ReplayCheck checks records; replay them into a MetadataDelta "
                        "to apply them")


_CHECKS: dict[type[MetadataRecord], Callable[[Any, Any], None]] = {
    **REPLAY_HANDLERS,
    TopicRecord: ReplayCheck._check_topic,
    PartitionRecord: ReplayCheck._check_partition,
    PartitionChangeRecord: ReplayCheck._check_partition_change,
    RemoveTopicRecord: ReplayCheck._check_remove_topic,
    ClearElrRecord: ReplayCheck._check_clear_elr,
}
ReplayCheck._handlers = _CHECKS
