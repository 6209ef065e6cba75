"""What the quorum has committed, as the monitors observe it: the reference history."""

from __future__ import annotations

import bisect

from raft import Batch


class CommittedLog:
    """Every committed batch by base offset, fed by the first node to deliver it.

    Batches are shared objects, so "the same batch" is identity (with equality
    as a fallback for batches that were rebuilt, e.g. decoded from files).
    """

    def __init__(self) -> None:
        self.batches: dict[int, Batch] = {}
        self.bases: list[int] = []
        self.end = 0
        self.last: Batch | None = None

    def get(self, base_offset: int) -> Batch | None:
        """The committed batch starting at ``base_offset``, if known."""
        return self.batches.get(base_offset)

    def batch_containing(self, offset: int) -> Batch | None:
        """The committed batch that holds ``offset``, if known."""
        i = bisect.bisect_right(self.bases, offset) - 1
        if i < 0:
            return None
        batch = self.batches[self.bases[i]]
        return batch if offset < batch.end_offset else None

    def observe(self, batch: Batch) -> str | None:
        """Record a committed batch; a description of the conflict if it disagrees."""
        known = self.batches.get(batch.base_offset)
        if known is None:
            if batch.base_offset < self.end:
                return f"batch at {batch.base_offset} overlaps committed data below {self.end}"
            self.batches[batch.base_offset] = batch
            bases = self.bases
            if not bases or batch.base_offset > bases[-1]:
                bases.append(batch.base_offset)  # the usual case: the next batch
            else:
                bisect.insort(bases, batch.base_offset)
            end = batch.end_offset
            if end > self.end:
                self.end = end
                self.last = batch
            return None
        if known is batch or known == batch:
            return None
        return (f"batch at {batch.base_offset} (epoch {batch.epoch}) differs from the "
                f"committed batch (epoch {known.epoch})")
