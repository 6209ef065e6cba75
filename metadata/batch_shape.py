"""The shape of a batch of records, found once and shared by every node that replays it.

Every node of a simulation replays the same batch objects (3 controllers, the
brokers, the checkers' reference). Most records of a large batch are
PartitionRecords of one topic in a row (a topic's creation writes them so);
a :class:`PartitionRun` is such a row. A delta replays a run at once: one
check that the topic exists, then one ``dict.update`` of the run's
registrations, which the first node to replay the run makes and the others
reuse (:meth:`metadata.delta.MetadataDelta.replay_many`). The shape also
lists where the batch's transaction markers are, so that a loop over a
batch goes from marker to marker rather than record by record.

Shapes are kept in a bounded identity cache (emptied when full); a shape
changes no value, only how often the same work is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from metadata.image import LEADER_RECOVERY_STATES, PartitionRegistration
from metadata.schema import TRANSACTION_MARKERS, MetadataRecord, PartitionRecord

MIN_RUN = 2
"""The fewest PartitionRecords of one topic in a row that make a run (a lone one is
replayed record by record). Small topics make short runs: a failover run's topics of a
few partitions took 2.4% fewer instructions with runs from 2 records than from 8."""
MIN_SHAPED = 2
"""The fewest records of a batch, or of a part of it, worth finding a shape for."""
SHARED_SHAPES = 512
"""How many batches' shapes are remembered. The followers' replays of a batch lie close
together; the active controller's, at write time, can lie the whole run ahead of them (it
writes all 1,000 batches of the 1,000,000-partition benchmark before the first commits):
keeping those too (2,048 or 4,096) was no faster there and held 10 MB more."""

_MARKER_TYPES = frozenset(TRANSACTION_MARKERS)


class PartitionRun:
    """``records[start:end]``: PartitionRecords of the topic ``topic_id``, in a row."""

    __slots__ = ("consecutive", "end", "first_id", "records", "registrations", "start",
                 "topic_id")

    def __init__(self, records: Sequence[MetadataRecord], start: int, end: int,
                 topic_id: str) -> None:
        self.records = records
        self.start = start
        self.end = end
        self.topic_id = topic_id
        ids = self.partition_ids()
        self.first_id = ids[0]
        self.consecutive = ids == list(range(ids[0], ids[0] + len(ids)))
        """Whether the partition ids are ``first_id, first_id + 1, ...``."""
        self.registrations: dict[int, PartitionRegistration] | None = None
        """partition id -> registration, made by the first delta that replays the run."""

    def __len__(self) -> int:
        return self.end - self.start

    def partition_records(self) -> Sequence[PartitionRecord]:
        """The run's records."""
        return cast("Sequence[PartitionRecord]", self.records[self.start:self.end])

    def partition_ids(self) -> list[int]:
        """The partition ids of the run's records, in order."""
        return [record.partition_id for record in self.partition_records()]


class BatchShape:
    """Where a batch's runs and transaction markers are."""

    __slots__ = ("markers", "runs")

    def __init__(self, records: Sequence[MetadataRecord]) -> None:
        self.runs: dict[int, PartitionRun] = {}
        """The runs by their first index."""
        markers: list[int] = []
        run_start = -1
        topic_id = ""
        for index, record in enumerate(records):
            kind = type(record)
            # a record with a leader recovery state no replay accepts, or directories that
            # do not pair up with its replicas, is left out of runs, so that it is
            # replayed, and refused, on its own
            if kind is PartitionRecord and \
                    record.leader_recovery_state in LEADER_RECOVERY_STATES and (  # type: ignore[attr-defined]
                        not record.directories  # type: ignore[attr-defined]
                        or len(record.directories) == len(record.replicas)):  # type: ignore[attr-defined]
                if run_start >= 0 and record.topic_id == topic_id:  # type: ignore[attr-defined]
                    continue
                self._close(records, run_start, index, topic_id)
                run_start, topic_id = index, record.topic_id  # type: ignore[attr-defined]
                continue
            self._close(records, run_start, index, topic_id)
            run_start = -1
            if kind in _MARKER_TYPES:
                markers.append(index)
        self._close(records, run_start, len(records), topic_id)
        self.markers = tuple(markers)
        """The indexes of the Begin, End and Abort records."""

    def _close(self, records: Sequence[MetadataRecord], start: int, end: int,
               topic_id: str) -> None:
        if start >= 0 and end - start >= MIN_RUN:
            self.runs[start] = PartitionRun(records, start, end, topic_id)


_NO_SHAPE = BatchShape(())
_shapes: dict[int, tuple[Sequence[MetadataRecord], BatchShape]] = {}


def shape_of(records: Sequence[MetadataRecord]) -> BatchShape:
    """The shape of ``records`` (shared: the same object's shape is found once)."""
    if len(records) < MIN_SHAPED:
        return _NO_SHAPE if not _has_marker(records) else BatchShape(records)
    hit = _shapes.get(id(records))
    if hit is not None and hit[0] is records:
        return hit[1]
    shape = BatchShape(records)
    if len(_shapes) >= SHARED_SHAPES:
        _shapes.clear()
    _shapes[id(records)] = (records, shape)
    return shape


def outside_runs(records: Sequence[MetadataRecord]) -> Sequence[MetadataRecord]:
    """The records of ``records`` that are in none of its runs, in order: a check that
    looks for other kinds of record skips the long rows of PartitionRecords."""
    runs = shape_of(records).runs
    if not runs:
        return records
    others: list[MetadataRecord] = []
    index = 0
    for start, run in runs.items():  # by their first index (made in that order)
        others += records[index:start]
        index = run.end
    others += records[index:]
    return others


def _has_marker(records: Sequence[MetadataRecord]) -> bool:
    return not _MARKER_TYPES.isdisjoint(map(type, records))


def clear_shapes() -> None:
    """Empty the cache of shapes (what it alone holds is freed now)."""
    _shapes.clear()
