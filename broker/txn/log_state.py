"""TxnLogState: a data partition's open and completed transactions, LSO and abort index.

Kafka's ``ProducerStateManager`` transaction bookkeeping, rebuilt from the
log by every replica:

- ``ongoing``: producer id -> first offset of its transaction whose data is
  written and whose marker is not;
- ``unreplicated``: transactions whose marker is written but not yet below
  the high watermark (first offset, producer id, marker offset);
- ``aborted``: the abort index (Kafka's ``.txnindex`` entries): producer id,
  first offset, the ABORT marker's offset and the LSO when it was appended
  (the first offset of the earliest other ongoing transaction, else the
  marker's offset + 1). A commit, or a transaction without data, writes no
  entry.

The first unstable offset is the smallest first offset over ``ongoing`` and
``unreplicated``; the LSO is that offset when below the HW, else the HW.
"""

from __future__ import annotations

import msgspec


class AbortedTxn(msgspec.Struct, frozen=True, gc=False):
    """One abort index entry (Kafka's AbortedTxn, 34 bytes on disk)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnLogState:
    """See the module docs. ``ignore_open`` is the lso-ignores-open-txn mutation."""

    def __init__(self, ignore_open: bool = False) -> None:
        self.ongoing: dict[int, int] = {}
        self.unreplicated: list[tuple[int, int, int]] = []
        self.aborted: list[AbortedTxn] = []
        self.ignore_open = ignore_open

    def on_data(self, producer_id: int, offset: int) -> None:
        """A transactional record of ``producer_id`` at ``offset``."""
        self.ongoing.setdefault(producer_id, offset)

    def on_marker(self, producer_id: int, offset: int, commit: bool) -> None:
        """A COMMIT/ABORT marker of ``producer_id`` at ``offset`` completes its transaction."""
        first = self.ongoing.pop(producer_id, None)
        if first is None:
            return  # no data: nothing to complete, no index entry
        self.unreplicated.append((first, producer_id, offset))
        if not commit:
            lso = min(self.ongoing.values(), default=offset + 1)
            self.aborted.append(AbortedTxn(producer_id, first, offset, lso))

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """The first offset of the earliest incomplete (or unreplicated) transaction."""
        unreplicated = self.unreplicated
        if unreplicated and unreplicated[0][2] < high_watermark:
            # markers come in log order: the replicated ones are a prefix
            self.unreplicated = unreplicated = [t for t in unreplicated
                                                if t[2] >= high_watermark]
        if self.ignore_open:
            return None
        first = min(self.ongoing.values(), default=None)
        for earlier, _, _ in unreplicated:
            if first is None or earlier < first:
                first = earlier
        return first

    def last_stable_offset(self, high_watermark: int) -> int:
        """The LSO: read_committed consumers read below it."""
        first = self.first_unstable_offset(high_watermark)
        return high_watermark if first is None else min(first, high_watermark)

    def aborted_between(self, fetch_offset: int, upper: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of every aborted txn a fetch [fetch_offset, upper) sees."""
        return [(a.producer_id, a.first_offset) for a in self.aborted
                if a.last_offset >= fetch_offset and a.first_offset < upper]
