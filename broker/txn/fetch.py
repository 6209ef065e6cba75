"""Consumer fetches by isolation level, and the consumer's aborted-transaction filter.

- read_uncommitted: every record below the high watermark;
- read_committed: records below the last stable offset (LSO), with the
  aborted transactions the fetched range overlaps (Kafka's
  ``FetchResponse.AbortedTransactions``);
- either way, an offset past the log end offset (or below the log start, 0)
  is OFFSET_OUT_OF_RANGE, as Kafka's log read checks before it bounds the
  read by the isolation level; at the log end the answer is empty.

:func:`filter_committed` is the consumer side (Kafka's
``CompletedFetch.nextFetchedRecord``): aborted transactions in a min-heap by
first offset; before each record of a producer, every aborted transaction
starting at or before it moves into the set of aborted producers; an ABORT
marker takes its producer out of the set; a transactional record of a
producer in the set is skipped; control records are never returned. Here a
record stands for a batch of one.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import msgspec

from broker.partition_log import LogEntry, PartitionLog

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"


class TxnFetchResult(msgspec.Struct, frozen=True):
    """A consumer fetch: records, HW, LSO and the aborted transactions to filter."""

    error: str
    entries: tuple[LogEntry, ...] = ()
    high_watermark: int = -1
    last_stable_offset: int = -1
    aborted_transactions: tuple[tuple[int, int], ...] = ()


def fetch_log(log: PartitionLog, offset: int, max_records: int,
              isolation: str = READ_UNCOMMITTED) -> TxnFetchResult:
    """Read ``log`` from ``offset`` as a leader answers a consumer at ``isolation``."""
    hw = log.high_watermark
    lso = log.txns.last_stable_offset(hw)
    if not 0 <= offset <= log.end_offset:
        return TxnFetchResult("OFFSET_OUT_OF_RANGE", (), hw, lso)
    if isolation == READ_UNCOMMITTED:
        return TxnFetchResult("NONE", tuple(log.read(offset, max_records, hw)), hw, lso)
    entries = tuple(log.read(offset, max_records, lso))
    upper = entries[-1].offset + 1 if entries else offset
    return TxnFetchResult("NONE", entries, hw, lso,
                          tuple(log.txns.aborted_between(offset, upper)))


def filter_committed(entries: Sequence[LogEntry],
                     aborted: Sequence[tuple[int, int]]) -> list[LogEntry]:
    """The records a read_committed consumer returns to the application."""
    heap = [(first, pid) for pid, first in aborted]
    heapq.heapify(heap)
    aborted_producers: set[int] = set()
    out: list[LogEntry] = []
    for entry in entries:
        if entry.producer_id >= 0:
            while heap and heap[0][0] <= entry.offset:
                aborted_producers.add(heapq.heappop(heap)[1])
        if entry.control >= 0:
            if entry.control == 0:
                aborted_producers.discard(entry.producer_id)
            continue
        if entry.transactional and entry.producer_id in aborted_producers:
            continue
        out.append(entry)
    return out
