"""DescribeProducers as one partition answers it, and what an expired producer takes
with it.

:meth:`broker.partition_log.PartitionLog.active_producers` is Kafka's
``UnifiedLog.activeProducers``: for each producer the partition knows, its epoch, the
last sequence of its latest batch (``lastSeq``: -1, NO_SEQUENCE, with no batch at the
current epoch), the time of its last batch or marker (-1, NO_TIMESTAMP, when unknown),
the coordinator epoch of its last marker (-1 before any) and the first offset of its
transaction open here (-1 for none). Producer-id expiration
(:meth:`~broker.partition_log.PartitionLog.remove_expired_producers`) removes Kafka's
whole ProducerStateEntry, the coordinator epoch included.
"""

from __future__ import annotations

import pytest

from broker.partition_log import ActiveProducer, LogEntry, PartitionLog, SequenceError

EXPIRATION_MS = 60_000


def test_an_idempotent_producer_is_described_by_its_latest_batch() -> None:
    log = PartitionLog()
    log.append_as_leader(["a", "b"], 1, 7, 3, 0, timestamp=10)
    log.append_as_leader(["c", "d", "e"], 1, 7, 3, 2, timestamp=20)
    assert log.active_producers() == [ActiveProducer(producer_id=7, producer_epoch=3,
                                                     last_sequence=4, last_timestamp=20,
                                                     coordinator_epoch=-1,
                                                     current_txn_start_offset=-1)]


def test_a_transactional_producer_shows_its_open_transaction_then_its_marker() -> None:
    log = PartitionLog()
    log.append_as_leader(["plain"], 1)
    log.append_as_leader(["t0", "t1"], 1, 7, 0, 0, transactional=True, timestamp=5)
    assert log.active_producers() == [ActiveProducer(7, 0, 1, 5, -1, 1)]
    log.append_marker(1, 7, 0, True, 4, timestamp=9)
    assert log.active_producers() == [ActiveProducer(7, 0, 1, 9, 4, -1)]


def test_a_producer_known_by_a_marker_only_has_no_last_sequence() -> None:
    """An abort marker at an epoch the partition has no batch of (as after a fenced
    producer's bump): the producer is known, with NO_SEQUENCE."""
    log = PartitionLog()
    log.append_as_leader(["t0"], 1, 7, 0, 0, transactional=True, timestamp=5)
    log.append_marker(1, 7, 1, False, 2, timestamp=8)
    log.append_marker(1, 8, 0, False, 2, timestamp=9)
    assert log.active_producers() == [ActiveProducer(7, 1, -1, 8, 2, -1),
                                      ActiveProducer(8, 0, -1, 9, 2, -1)]


def test_entries_without_an_append_time_leave_no_timestamp() -> None:
    """A batch or marker appended with no time (a replica's copy of an entry that had
    none, or a direct append) leaves the producer's last time at NO_TIMESTAMP."""
    log = PartitionLog()
    log.append_entries([LogEntry(0, 1, "r", 7, 0, 0, 0, 1)])
    log.append_as_leader(["a"], 1, 8, 0, 0)
    log.append_marker(1, 9, 0, False, 0)
    assert [(p.producer_id, p.last_timestamp) for p in log.active_producers()] == [
        (7, -1), (8, -1), (9, -1)]


def test_an_expired_producer_takes_its_coordinator_epoch_with_it() -> None:
    """Before expiration a marker from an older coordinator epoch is fenced; once the
    producer is forgotten, the partition takes it as from a producer it never saw."""
    log = PartitionLog()
    log.append_as_leader(["t0"], 1, 7, 0, 0, transactional=True, timestamp=0)
    log.append_marker(1, 7, 0, True, 5, timestamp=1)
    with pytest.raises(SequenceError) as fenced:
        log.check_marker(7, 0, 3)
    assert fenced.value.code == "TRANSACTION_COORDINATOR_FENCED"
    assert log.remove_expired_producers(1 + EXPIRATION_MS, EXPIRATION_MS) == [7]
    log.check_marker(7, 0, 3)
    log.append_marker(1, 7, 0, False, 3, timestamp=2 + EXPIRATION_MS)
    assert log.active_producers() == [ActiveProducer(7, 0, -1, 2 + EXPIRATION_MS, 3, -1)]
