"""Transactional batches, markers, LSO, the abort index and the read_committed filter."""

from __future__ import annotations

from broker.partition_log import LogEntry, PartitionLog, SequenceError
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from broker.txn.log_state import AbortedTxn


def _txn(log: PartitionLog, pid: int, values: list[str], seq: int, epoch: int = 0) -> None:
    log.append_as_leader(values, 1, pid, epoch, seq, transactional=True)


def _values(log: PartitionLog) -> list[str]:
    result = fetch_log(log, 0, 100, READ_COMMITTED)
    return [e.value for e in filter_committed(result.entries, result.aborted_transactions)]


def test_lso_stops_at_the_first_open_transaction_until_its_marker_is_replicated() -> None:
    log = PartitionLog()
    log.append_as_leader(["plain"], 1)
    _txn(log, 7, ["a", "b"], 0)                     # offsets 1, 2
    log.update_high_watermark(log.end_offset)
    assert log.txns.first_unstable_offset(log.high_watermark) == 1
    assert log.txns.last_stable_offset(log.high_watermark) == 1
    assert _values(log) == ["plain"]
    marker = log.append_marker(1, 7, 0, commit=True, coordinator_epoch=0)
    assert marker == 3
    assert log.txns.last_stable_offset(log.high_watermark) == 1   # marker above the HW
    log.update_high_watermark(log.end_offset)
    assert log.txns.last_stable_offset(log.high_watermark) == 4
    assert _values(log) == ["plain", "a", "b"]


def test_an_aborted_transaction_gets_an_index_entry_and_is_filtered() -> None:
    log = PartitionLog()
    _txn(log, 7, ["a1"], 0)          # 0
    _txn(log, 8, ["b1"], 0)          # 1
    _txn(log, 7, ["a2"], 1)          # 2
    log.append_marker(1, 7, 0, commit=False, coordinator_epoch=0)   # 3
    log.append_marker(1, 8, 0, commit=True, coordinator_epoch=0)    # 4
    log.update_high_watermark(log.end_offset)
    # LSO at the abort: the first offset of the other producer's open txn
    assert log.txns.aborted == [AbortedTxn(7, 0, 3, 1)]
    result = fetch_log(log, 0, 100, READ_COMMITTED)
    assert result.aborted_transactions == ((7, 0),)
    assert _values(log) == ["b1"]
    # a fetch starting after the abort marker gets no aborted transactions
    assert fetch_log(log, 4, 100, READ_COMMITTED).aborted_transactions == ()
    # read_uncommitted returns everything below the HW, markers included
    assert len(fetch_log(log, 0, 100).entries) == 5


def test_commits_and_empty_transactions_write_no_index_entry() -> None:
    log = PartitionLog()
    log.append_marker(1, 9, 0, commit=False, coordinator_epoch=0)   # no data: empty txn
    _txn(log, 7, ["a"], 0)
    log.append_marker(1, 7, 0, commit=True, coordinator_epoch=0)
    assert log.txns.aborted == []


def test_a_producer_whose_next_transaction_commits_is_not_filtered() -> None:
    log = PartitionLog()
    _txn(log, 7, ["x"], 0)
    log.append_marker(1, 7, 0, commit=False, coordinator_epoch=0)
    _txn(log, 7, ["y"], 1)
    log.append_marker(1, 7, 0, commit=True, coordinator_epoch=0)
    log.update_high_watermark(log.end_offset)
    assert _values(log) == ["y"]


def test_markers_are_fenced_by_producer_and_coordinator_epoch() -> None:
    log = PartitionLog()
    _txn(log, 7, ["a"], 0, epoch=3)
    log.append_marker(1, 7, 4, commit=False, coordinator_epoch=2)   # a fence abort at E+1
    for args, code in (((7, 3, 2), "INVALID_PRODUCER_EPOCH"),
                       ((7, 4, 1), "TRANSACTION_COORDINATOR_FENCED")):
        try:
            log.check_marker(*args)
        except SequenceError as exc:
            assert exc.code == code
        else:
            raise AssertionError(code)
    # the zombie at epoch 3 can no longer write data
    try:
        log.check_batch(7, 3, 1, 1)
    except SequenceError as exc:
        assert exc.code == "INVALID_PRODUCER_EPOCH"
    else:
        raise AssertionError("zombie write accepted")


def test_truncation_rebuilds_the_transaction_state() -> None:
    log = PartitionLog()
    _txn(log, 7, ["a"], 0)
    log.append_marker(1, 7, 0, commit=False, coordinator_epoch=0)
    log.truncate_to(1)
    assert log.txns.aborted == [] and log.txns.ongoing == {7: 0}


def test_the_lso_never_passes_the_high_watermark() -> None:
    """An open transaction whose first record is not yet replicated still leaves the LSO
    at the high watermark, never above it."""
    log = PartitionLog()
    log.append_as_leader(["p0", "p1"], 1)
    log.update_high_watermark(1)
    _txn(log, 7, ["a"], 0)                           # offset 2, above the HW
    assert log.txns.last_stable_offset(log.high_watermark) == 1
    assert fetch_log(log, 0, 100, READ_COMMITTED).last_stable_offset == 1


def test_aborted_transactions_overlap_the_fetched_range_inclusively() -> None:
    """Kafka's collectAbortedTxns: an aborted transaction is listed when its ABORT marker is
    at or after the fetch offset and its first offset is below the end of what is returned;
    so one starting at the last returned record is listed, one ending before the fetch
    offset is not."""
    log = PartitionLog()
    _txn(log, 7, ["a"], 0)                                          # 0
    log.append_marker(1, 7, 0, commit=False, coordinator_epoch=0)   # 1
    log.append_as_leader(["plain"], 1)                              # 2
    _txn(log, 8, ["b"], 0)                                          # 3
    log.append_marker(1, 8, 0, commit=False, coordinator_epoch=0)   # 4
    log.update_high_watermark(log.end_offset)
    assert log.txns.aborted_between(1, 2) == [(7, 0)]   # the fetch starts at the marker
    assert log.txns.aborted_between(2, 3) == []         # [2, 3): 8's starts at 3
    assert fetch_log(log, 2, 2, READ_COMMITTED).aborted_transactions == ((8, 3),)
    assert fetch_log(log, 2, 1, READ_COMMITTED).aborted_transactions == ()


def test_the_consumer_filter_skips_only_transactional_records_of_an_aborted_producer() -> None:
    """CompletedFetch skips a batch only when it is transactional and its producer is in an
    aborted transaction; a non-transactional record of the same producer id is returned."""
    entries = [LogEntry(0, 1, "t", 7, 0, 0, 0, transactional=True),
               LogEntry(1, 1, "plain", 7, 0, 1, 1),
               LogEntry(2, 1, "ABORT", 7, 0, transactional=True, control=0)]
    assert [e.value for e in filter_committed(entries, [(7, 0)])] == ["plain"]


def test_read_uncommitted_stops_at_the_high_watermark() -> None:
    log = PartitionLog()
    log.append_as_leader(["a", "b", "c"], 1)
    log.update_high_watermark(2)
    result = fetch_log(log, 0, 100)
    assert [e.value for e in result.entries] == ["a", "b"] and result.high_watermark == 2
