"""The replicated log of one node: batches, flush point, epoch cache, snapshot.

Offsets are integers; a batch of N records takes N offsets. ``start_offset``
is the first offset still held (the end of the latest snapshot, or 0),
``end_offset`` the exclusive end, ``flushed_end`` the end of what survives a
crash. The epoch cache maps each epoch to its first offset so that the leader
can answer "where does epoch E end?" for the divergence check.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from enum import Enum

from raft.batch import Batch
from raft.messages import OffsetAndEpoch
from raft.snapshot import Snapshot


class RaftLogError(Exception):
    """A request the log cannot satisfy without breaking its own structure."""


class Validation(Enum):
    """Outcome of checking a follower's (fetch offset, last fetched epoch)."""

    VALID = "VALID"
    DIVERGING = "DIVERGING"
    SNAPSHOT = "SNAPSHOT"


_VALID, _SNAPSHOT, _DIVERGING = Validation.VALID, Validation.SNAPSHOT, Validation.DIVERGING
"""As module constants: read on every fetch (see raft.node)."""


class RaftLog:
    """An in-memory log that plays the part of Kafka's KafkaMetadataLog."""

    def __init__(self) -> None:
        self._batches: list[Batch] = []
        self._bases: list[int] = []
        self._epochs: list[tuple[int, int]] = []  # (epoch, first offset), ascending
        self.start_offset = 0
        self.end_offset = 0
        self.flushed_end = 0
        self.snapshot: Snapshot | None = None

    # -- reading -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._batches)

    @property
    def batches(self) -> Sequence[Batch]:
        """Every batch held, oldest first (read-only view)."""
        return self._batches

    @property
    def last_epoch(self) -> int:
        """Epoch of the last batch, else of the snapshot, else 0."""
        if self._batches:
            return self._batches[-1].epoch
        if self.snapshot is not None:
            return self.snapshot.snapshot_id.epoch
        return 0

    def end_offset_and_epoch(self) -> OffsetAndEpoch:
        """The log end with the epoch of its last record (used in votes and fetches)."""
        return OffsetAndEpoch(self.end_offset, self.last_epoch)

    def index_of(self, offset: int) -> int:
        """Index of the batch that starts at ``offset``; raises RaftLogError otherwise."""
        i = bisect.bisect_left(self._bases, offset)
        if i == len(self._bases) or self._bases[i] != offset:
            raise RaftLogError(f"no batch starts at offset {offset}")
        return i

    def read(self, from_offset: int, upto: int, max_records: int) -> tuple[Batch, ...]:
        """Batches from the one holding ``from_offset`` on, ending at or before ``upto``.

        At most ``max_records`` records, but always at least one batch when one
        fits below ``upto`` (as Kafka's fetch size never starves a fetch). An offset
        inside a batch reads that whole batch (Kafka's log reads whole batches); one
        below the log start is a RaftLogError, one at or past the end reads nothing.
        """
        if from_offset >= upto or from_offset >= self.end_offset:
            return ()
        i = bisect.bisect_right(self._bases, from_offset) - 1  # the batch holding it
        if i < 0:
            raise RaftLogError(f"offset {from_offset} is below the log start {self.start_offset}")
        from_offset = self._bases[i]
        batches = self._batches
        # The batches are contiguous: those below ``upto`` end at most at the end of the
        # last one starting below it; all of them are read when they fit the limit.
        k = bisect.bisect_left(self._bases, upto, i)
        if k > i:
            last = batches[k - 1]
            end = last.base_offset + (len(last.records) or len(last.control_records))
            if end > upto:
                k -= 1
                end = last.base_offset
            if k > i and end - from_offset <= max_records:
                return tuple(batches[i:k])
        out: list[Batch] = []
        taken = 0
        for j in range(i, len(batches)):  # no copy of the log's tail
            batch = batches[j]
            count = len(batch.records) or len(batch.control_records)
            if batch.base_offset + count > upto or (out and taken + count > max_records):
                break
            out.append(batch)
            taken += count
        return tuple(out)

    def epoch_at(self, offset: int) -> int:
        """Epoch of the record at ``offset`` (from the epoch cache or the snapshot)."""
        if self.snapshot is not None and offset < self.start_offset:
            return self.snapshot.snapshot_id.epoch
        i = bisect.bisect_right([start for _, start in self._epochs], offset) - 1
        return self._epochs[i][0] if i >= 0 else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """Where the largest epoch <= ``epoch`` ends in this log (Kafka's endOffsetForEpoch)."""
        snap = self.snapshot
        if snap is not None and epoch < snap.snapshot_id.epoch:
            return OffsetAndEpoch(snap.snapshot_id.end_offset, snap.snapshot_id.epoch)
        i = bisect.bisect_right([e for e, _ in self._epochs], epoch) - 1
        if i < 0:
            if snap is not None:
                return OffsetAndEpoch(snap.snapshot_id.end_offset, snap.snapshot_id.epoch)
            if self._epochs and epoch >= 0:  # Kafka's cache: where the first epoch starts
                return OffsetAndEpoch(self._epochs[0][1], epoch)
            return OffsetAndEpoch(0, 0)
        found_epoch = self._epochs[i][0]
        end = self._epochs[i + 1][1] if i + 1 < len(self._epochs) else self.end_offset
        return OffsetAndEpoch(end, found_epoch)

    def validate_offset_and_epoch(
        self, offset: int, epoch: int
    ) -> tuple[Validation, OffsetAndEpoch]:
        """Kafka's validateOffsetAndEpoch for a fetch at ``offset`` after ``epoch``."""
        if self.start_offset == 0 and offset == 0:
            return _VALID, OffsetAndEpoch(0, 0)
        snap = self.snapshot
        if snap is not None and (
            offset < self.start_offset
            or (offset == self.start_offset and epoch != snap.snapshot_id.epoch)
            or epoch < snap.snapshot_id.epoch
        ):
            return _SNAPSHOT, OffsetAndEpoch(
                snap.snapshot_id.end_offset, snap.snapshot_id.epoch
            )
        epochs = self._epochs
        if epochs and epochs[-1][0] == epoch:  # a follower in the newest epoch (the usual case)
            if offset <= self.end_offset:
                return _VALID, OffsetAndEpoch(offset, epoch)
            return _DIVERGING, OffsetAndEpoch(self.end_offset, epoch)
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.offset < offset:
            return _DIVERGING, end
        return _VALID, OffsetAndEpoch(offset, epoch)

    # -- writing -------------------------------------------------------------
    def append(self, batch: Batch, *, flushed: bool) -> None:
        """Append at the end; the batch must start exactly at ``end_offset`` and hold at
        least one record (Kafka's log refuses an empty append: a batch of no records would
        share its base offset with the next batch)."""
        base, epoch = batch.base_offset, batch.epoch
        if not batch.records and not batch.control_records:
            raise RaftLogError(f"batch at {base} holds no records")
        if base != self.end_offset:
            raise RaftLogError(
                f"batch at {base} does not start at the log end {self.end_offset}"
            )
        epochs = self._epochs
        last_epoch = epochs[-1][0] if epochs else self.last_epoch  # the cache ends with it
        if epoch < last_epoch:
            raise RaftLogError(f"batch epoch {epoch} is below the log's {last_epoch}")
        if not epochs or epochs[-1][0] != epoch:
            epochs.append((epoch, base))
        self._batches.append(batch)
        self._bases.append(base)
        self.end_offset = end = base + (len(batch.records) or len(batch.control_records))
        if flushed:
            self.flushed_end = end

    def flush(self) -> None:
        """Make everything appended so far durable."""
        self.flushed_end = self.end_offset

    def truncate_to(self, offset: int) -> None:
        """Drop every batch holding an offset at or after ``offset``.

        An offset inside a batch drops that whole batch (Kafka's log truncates at batch
        granularity: a batch whose last offset is at or past the cut goes), so the log
        then ends at that batch's base offset.
        """
        if offset >= self.end_offset:
            return
        if offset < self.start_offset:
            raise RaftLogError(
                f"cannot truncate to {offset} below the log start {self.start_offset}"
            )
        i = bisect.bisect_right(self._bases, offset) - 1  # the batch holding ``offset``
        offset = self._bases[i]
        del self._batches[i:]
        del self._bases[i:]
        while self._epochs and self._epochs[-1][1] >= offset:
            self._epochs.pop()
        self.end_offset = offset
        self.flushed_end = min(self.flushed_end, offset)

    def lose_unflushed(self) -> None:
        """What a hard crash does: everything after ``flushed_end`` is gone."""
        if self.flushed_end < self.end_offset:
            self.truncate_to(self.flushed_end)

    def truncate_to_end_offset(self, diverging: OffsetAndEpoch) -> int:
        """Kafka's truncateToEndOffset: cut where the leader's epoch ends; returns the new end."""
        if diverging.epoch == 0:
            target = min(diverging.offset, self.end_offset)
        else:
            local = self.end_offset_for_epoch(diverging.epoch)
            target = (
                min(local.offset, diverging.offset) if local.epoch == diverging.epoch
                else local.offset
            )
        target = max(target, self.start_offset)
        self.truncate_to(target)
        return self.end_offset

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """Keep a snapshot made locally at a committed offset; the log before it is deleted.

        Its id must agree with the log as a fetch position would (Kafka's
        createNewSnapshot): an epoch the log does not hold up to that end, or one other
        than the held snapshot's at the log start, is a RaftLogError and changes nothing.
        """
        end, epoch = snapshot.snapshot_id.end_offset, snapshot.snapshot_id.epoch
        if end > self.end_offset or end < self.start_offset:
            raise RaftLogError(
                f"snapshot end {end} outside the log [{self.start_offset}, {self.end_offset})"
            )
        kind, answer = self.validate_offset_and_epoch(end, epoch)
        if kind is not _VALID:
            raise RaftLogError(
                f"snapshot (end offset {end}, epoch {epoch}) contradicts the log: a fetch "
                f"there is {kind.value.lower()}, the log answers end offset {answer.offset}, "
                f"epoch {answer.epoch}"
            )
        i = self.index_of(end) if end != self.end_offset else len(self._batches)
        del self._batches[:i]
        del self._bases[:i]
        keep = [e for e in self._epochs if e[1] >= end]
        if self._batches and (not keep or keep[0][1] != end):
            keep.insert(0, (self._batches[0].epoch, end))
        self._epochs = keep
        self.start_offset = end
        self.snapshot = snapshot

    def install_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the whole log by a snapshot fetched from the leader."""
        self._batches.clear()
        self._bases.clear()
        self._epochs.clear()
        end = snapshot.snapshot_id.end_offset
        self.start_offset = self.end_offset = self.flushed_end = end
        self.snapshot = snapshot
