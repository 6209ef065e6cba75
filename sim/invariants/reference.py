"""The reference replay: what the committed log means, computed independently of any node.

It consumes the committed history batch by batch and keeps the metadata state
after every batch end and before every Begin, the transactions with their
outcome, and the offsets where they open and close. On an Abort it goes back
to the image it saved at Begin-1 (its own copy, not a controller's revert
point). It is the oracle the transaction invariants compare nodes with.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import msgspec

from metadata.batch_shape import shape_of
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.offset_map import OffsetMap
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    MetadataRecord,
    NoOpRecord,
)
from raft import Batch
from sim.invariants.history import CommittedLog


class Transaction(msgspec.Struct):
    """A metadata transaction of the committed log."""

    begin_offset: int
    name: str | None
    close_offset: int | None = None
    outcome: str = "open"  # "open", "committed", "aborted"
    records: int = 0


class ReferenceReplay:
    """Replays the committed history in offset order; see the module docs."""

    def __init__(self, history: CommittedLog) -> None:
        self.history = history
        self.next_offset = 0
        self.image = MetadataImage.EMPTY
        self.points: OffsetMap[MetadataImage] = OffsetMap([(-1, MetadataImage.EMPTY)])
        self.transactions: list[Transaction] = []
        self.open: Transaction | None = None
        self._before_open: MetadataImage | None = None
        self.last_data_epoch = -1
        self.last_meaningful_offset = -1
        self.boundaries: list[tuple[int, str]] = []  # (offset, "end" | "abort")
        self.gap = False

    def start_from(self, image: MetadataImage) -> None:
        """Begin from a snapshot ending at offset 0 (a bootstrap snapshot): its state
        comes before every record of the log. Only before anything was replayed."""
        if self.next_offset != 0:
            raise ValueError("the reference already replayed part of the log")
        self.image = image
        self.points[-1] = image

    def advance(self) -> list[tuple[str, str]]:
        """Consume newly committed batches; returns violations as (invariant, message)."""
        problems: list[tuple[str, str]] = []
        while True:
            batch = self.history.get(self.next_offset)
            if batch is None:
                if self.history.end > self.next_offset:
                    self.gap = True  # a node installed a snapshot nobody replayed to
                return problems
            problems.extend(self._replay(batch))
            self.next_offset = batch.end_offset

    def _replay(self, batch: Batch) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if batch.is_control:
            return problems
        if batch.epoch > self.last_data_epoch:
            if self.open is not None and not (
                    len(batch.records) == 1 and isinstance(batch.records[0],
                                                            AbortTransactionRecord)):
                problems.append((
                    "FailoverAbortsInflight",
                    f"the first batch of epoch {batch.epoch} (offset {batch.base_offset}) is "
                    f"not a lone AbortTransactionRecord although the transaction begun at "
                    f"{self.open.begin_offset} is open"))
            self.last_data_epoch = batch.epoch
        delta = MetadataDelta(self.image)
        records = batch.records
        start = 0
        for index in (*shape_of(records).markers, len(records)):
            if start < index:
                self._replay_data(delta, records, start, index, batch.base_offset, problems)
            start = index + 1
            if index == len(records):
                break
            record, offset = records[index], batch.base_offset + index
            if isinstance(record, BeginTransactionRecord):
                if self.open is not None:
                    problems.append(("TxnWellFormed", f"Begin at {offset} inside the "
                                     f"transaction begun at {self.open.begin_offset}"))
                    continue
                self.image = delta.apply(offset - 1, batch.epoch)
                self.points[offset - 1] = self.image
                self._before_open = self.image
                self.open = Transaction(offset, record.name)
                self.transactions.append(self.open)
                delta = MetadataDelta(self.image)
            else:  # End or Abort
                if self.open is None or self._before_open is None:
                    problems.append(("TxnWellFormed", f"{type(record).__name__} at {offset} "
                                                      f"without an open transaction"))
                    continue
                aborted = isinstance(record, AbortTransactionRecord)
                self.open.close_offset = offset
                self.open.outcome = "aborted" if aborted else "committed"
                self.boundaries.append((offset, "abort" if aborted else "end"))
                if aborted:
                    delta = MetadataDelta(self._before_open)
                self.open = self._before_open = None
                self.last_meaningful_offset = offset
        self.image = delta.apply(batch.last_offset, batch.epoch)
        self.points[batch.last_offset] = self.image
        return problems

    def _replay_data(self, delta: MetadataDelta, records: Sequence[MetadataRecord],
                     start: int, stop: int, base_offset: int,
                     problems: list[tuple[str, str]]) -> None:
        """Replay ``records[start:stop]``, none of them a transaction marker, at once
        (:meth:`MetadataDelta.replay_past_errors`); a record that cannot apply is a problem
        and is skipped."""
        if self.open is not None:
            self.open.records += stop - start
        last = stop - 1
        while last >= start and isinstance(records[last], NoOpRecord):
            last -= 1
        if last >= start:
            self.last_meaningful_offset = base_offset + last
        delta.replay_past_errors(records, start, stop, lambda index, error: problems.append(
            ("TxnWellFormed", f"record at {base_offset + index} cannot apply: {error}")))

    # ------------------------------------------------------------------ queries
    def image_at(self, offset: int) -> MetadataImage | None:
        """The committed state after ``offset``; None if not (yet) known."""
        if offset >= self.next_offset or self.gap:
            return None
        index = self.points.bisect_right(offset) - 1
        image: MetadataImage = self.points.peekitem(index)[1]
        return image

    def inside_transaction(self, offset: int) -> Transaction | None:
        """The transaction that is open just after ``offset`` (Begin <= offset < close)."""
        for txn in reversed(self.transactions):
            if txn.begin_offset <= offset:
                if txn.close_offset is None or offset < txn.close_offset:
                    return txn
                return None
        return None

    def last_boundary_before(self, offset: int) -> str | None:
        """"end" or "abort": how the last transaction closed at or before ``offset``."""
        i = bisect.bisect_right(self.boundaries, (offset, "~")) - 1
        return self.boundaries[i][1] if i >= 0 else None
