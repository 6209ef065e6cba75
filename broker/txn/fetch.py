"""Consumer fetches by isolation level, and the consumer's aborted-transaction filter.

- read_uncommitted: every record below the high watermark;
- read_committed: records below the last stable offset (LSO), with the
  aborted transactions the fetched range overlaps (Kafka's
  ``FetchResponse.AbortedTransactions``);
- either way, an offset past the log end offset (or below the log start, 0)
  is OFFSET_OUT_OF_RANGE, as Kafka's log read checks before it bounds the
  read by the isolation level; at the log end the answer is empty;
- an empty read_committed answer (the fetch offset at or past the LSO) names
  no aborted transactions, as Kafka's ``LocalLog.read`` answers such a fetch
  with an empty list without looking at the abort index.

:func:`filter_committed` is the consumer side (Kafka's
``CompletedFetch.nextFetchedRecord``): aborted transactions in a min-heap by
first offset; before each record of a producer, every aborted transaction
starting at or before it moves into the set of aborted producers; an ABORT
marker takes its producer out of the set; a transactional record of a
producer in the set is skipped; control records are never returned. Here a
record stands for a batch of one.

:func:`consume_fetch` is the whole of a consumer's work on one answer
(Kafka's ``CompletedFetch``): the records the application gets at its
isolation level (never a control record, at read_uncommitted either) and the
consumer's next position, past every entry of the answer, the skipped ones
(markers, aborted records) included.
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
    if not entries:
        return TxnFetchResult("NONE", (), hw, lso)
    return TxnFetchResult("NONE", entries, hw, lso,
                          tuple(log.txns.aborted_between(offset, entries[-1].offset + 1)))


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


class ConsumedFetch(msgspec.Struct, frozen=True):
    """One fetch answer as a consumer's poll takes it: the application's records and the
    next fetch position."""

    records: tuple[LogEntry, ...]
    next_offset: int


def consume_fetch(result: TxnFetchResult, fetch_offset: int,
                  isolation: str = READ_UNCOMMITTED) -> ConsumedFetch:
    """What a consumer at ``isolation`` makes of ``result``, fetched at ``fetch_offset``.

    Kafka's ``CompletedFetch``: read_committed drops the records of aborted
    transactions (:func:`filter_committed`); control records are never returned;
    entries below the fetch offset are not returned either (Kafka's broker may answer
    with the whole batch holding the fetch offset). The next position follows the
    answer's last entry, whether returned or skipped, so a consumer does not fetch
    markers and aborted records again; an empty or failed answer leaves it at
    ``fetch_offset``.
    """
    entries = result.entries
    if result.error != "NONE" or not entries:
        return ConsumedFetch((), fetch_offset)
    if isolation == READ_COMMITTED:
        kept = filter_committed(entries, result.aborted_transactions)
    else:
        kept = [entry for entry in entries if entry.control < 0]
    return ConsumedFetch(tuple(entry for entry in kept if entry.offset >= fetch_offset),
                         max(fetch_offset, entries[-1].offset + 1))
