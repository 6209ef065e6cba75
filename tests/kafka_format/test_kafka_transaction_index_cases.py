"""The abort index, following the cases of Kafka's ``TransactionIndexTest``
(storage/src/test/java/org/apache/kafka/storage/internals/log/).

Kafka's ``TransactionIndex`` is two things in kraftsim: the ``.txnindex`` file format
(:func:`~kafka_format.data_log.encode_txn_index` and
:func:`~kafka_format.data_log.decode_txn_index`, entries
:class:`~kafka_format.data_log.AbortedTxnEntry`), and a partition log's list of aborted
transactions (:class:`~broker.txn.log_state.TxnLogState`'s ``aborted``, read by a fetch
through ``aborted_between``, rebuilt from the entries when the log is truncated). kraftsim
keeps one list per partition log, not one index per segment, and writes a ``.txnindex``
whole (it is not appended to in place).

Fixed while porting (each failed on the old code): the writer refuses an entry whose last
offset is not above the one before it, in the words of Kafka's ``TransactionIndex.append``
(kraftsim wrote any order); the reader refuses only an entry version *above* Kafka's
``AbortedTxn.CURRENT_VERSION`` (0), in Kafka's words, and reads a negative one as Kafka does
(kraftsim refused every version but 0).

Not ported:

- ``testSanityCheck``: Kafka's check, at segment load, that no entry's last offset is below
  the segment's base offset. kraftsim loads no partition log from its files (a ``.txnindex``
  is only written, and read by ``kraftsim dump-log``, which, like Kafka's DumpLogSegments,
  prints the entries unchecked).
- The ``isComplete`` half of ``testCollectAbortedTransactions``: whether the search must go
  on into the next segment; kraftsim's list spans the whole partition log.
- ``testRenameIndex``, ``testUpdateParentDir``, ``testFlush``, ``testDeleteIfExists``: an
  open index file's renames, parent directory, flushes and deletion; kraftsim holds no
  open index files.
"""

from __future__ import annotations

import struct

import pytest

from broker.partition_log import PartitionLog
from broker.txn.log_state import AbortedTxn, TxnLogState
from kafka_format.data_log import (
    TXN_INDEX_VERSION,
    AbortedTxnEntry,
    decode_txn_index,
    encode_txn_index,
)
from kafka_format.errors import EncodeError

FOUR = [AbortedTxnEntry(0, 0, 10, 11), AbortedTxnEntry(1, 5, 15, 13),
        AbortedTxnEntry(2, 18, 35, 25), AbortedTxnEntry(3, 32, 50, 40)]
"""The aborted transactions of Kafka's test: (producer id, first, last, LSO)."""


def test_an_index_read_back_and_appended_to_holds_every_entry() -> None:
    """testPositionSetCorrectlyWhenOpened: an index read back holds its four entries, and
    one appended after them (its bytes after the others') is read as the fifth."""
    data = encode_txn_index(FOUR)
    assert decode_txn_index(data).entries == tuple(FOUR)
    another = AbortedTxnEntry(3, 50, 60, 55)
    appended = decode_txn_index(data + encode_txn_index([another]))
    assert appended.error is None
    assert appended.entries == (*FOUR, another)
    assert encode_txn_index([*FOUR, another]) == data + encode_txn_index([another])


@pytest.mark.parametrize("last_offset", [15, 10], ids=["same", "lower"])
def test_the_last_offset_of_an_entry_must_increase(last_offset: int) -> None:
    """testLastOffsetMustIncrease (an entry ending where the one before it ends) and
    testLastOffsetCannotDecrease (one ending below it): refused, in Kafka's words."""
    with pytest.raises(EncodeError) as refused:
        encode_txn_index([AbortedTxnEntry(1, 5, 15, 13), AbortedTxnEntry(0, 0, last_offset, 11)],
                         "00000000000000000000.txnindex")
    assert str(refused.value) == (
        f"The last offset of appended transactions must increase sequentially, but "
        f"{last_offset} is not greater than current last offset 15 of index "
        f"00000000000000000000.txnindex")


def test_a_later_entry_version_is_refused_and_an_earlier_one_read() -> None:
    """Kafka's reader (TransactionIndex's iterator) refuses an entry whose version is above
    AbortedTxn.CURRENT_VERSION, in its words, keeping the entries before it; a negative
    version is not above it and is read."""
    good = encode_txn_index([FOUR[0]])
    later = decode_txn_index(good + struct.pack(">hqqqq", 1, 7, 3, 60, 61), "x.txnindex")
    assert later.entries == (FOUR[0],)
    assert later.error is not None and later.error.kind == "unsupported"
    assert later.error.message == ("Unexpected aborted transaction version 1 in transaction "
                                   "index x.txnindex, current version is 0")
    earlier = decode_txn_index(struct.pack(">hqqqq", -1, 7, 3, 6, 7))
    assert earlier.error is None
    assert earlier.entries == (AbortedTxnEntry(7, 3, 6, 7, version=-1),)


def test_aborted_transactions_overlapping_a_fetch_range() -> None:
    """testCollectAbortedTransactions: a fetch from ``fetch`` up to (not including)
    ``upper`` is told of every aborted transaction that ends at or after ``fetch`` and
    starts before ``upper``."""
    txns = TxnLogState()
    txns.aborted = [AbortedTxn(e.producer_id, e.first_offset, e.last_offset,
                               e.last_stable_offset) for e in FOUR]
    named = [(e.producer_id, e.first_offset) for e in FOUR]
    assert txns.aborted_between(0, 100) == named
    assert txns.aborted_between(0, 32) == named[:3]
    assert txns.aborted_between(0, 35) == named
    assert txns.aborted_between(10, 35) == named
    assert txns.aborted_between(11, 35) == named[1:]
    assert txns.aborted_between(20, 41) == named[2:]


def _aborted_log() -> PartitionLog:
    """Three producers' interleaved transactions, each aborted: 0 at 0..2, 1 at 1..4,
    2 at 3..5 (the ABORT markers at 2, 4 and 5)."""
    log = PartitionLog()

    def data(pid: int) -> None:
        assert log.check_batch(pid, 0, 0, 1, True) is None
        log.append_as_leader([f"{pid}"], 0, pid, 0, 0, True)

    data(0)
    data(1)
    log.append_marker(0, 0, 0, False, 0)
    data(2)
    log.append_marker(0, 1, 0, False, 0)
    log.append_marker(0, 2, 0, False, 0)
    return log


def test_truncation_drops_the_aborted_transactions_ending_at_or_after_it() -> None:
    """testTruncate: truncating the log just past the last ABORT marker keeps every
    aborted transaction; truncating at that marker drops its transaction; truncating to
    the start (Kafka's reset) drops them all."""
    log = _aborted_log()
    every = [AbortedTxn(0, 0, 2, 1), AbortedTxn(1, 1, 4, 3), AbortedTxn(2, 3, 5, 6)]
    assert log.txns.aborted == every
    log.truncate_to(6)
    assert log.txns.aborted == every
    log.truncate_to(5)
    assert log.txns.aborted == every[:2]
    log.truncate_to(0)
    assert log.txns.aborted == []


def test_an_entry_holds_its_fields_at_the_current_version() -> None:
    """testAbortedTxnSerde: an entry is at the current version (0) and keeps its producer
    id, first offset, last offset and last stable offset, through its 34 bytes too."""
    entry = AbortedTxnEntry(983493, 137, 299, 200)
    assert entry.version == TXN_INDEX_VERSION == 0
    assert (entry.producer_id, entry.first_offset, entry.last_offset,
            entry.last_stable_offset) == (983493, 137, 299, 200)
    data = encode_txn_index([entry])
    assert data == struct.pack(">hqqqq", 0, 983493, 137, 299, 200)
    assert decode_txn_index(data).entries == (entry,)
