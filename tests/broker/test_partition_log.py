"""A replica's log on its own: the leader-epoch cache, the high watermark, truncation and
the producer state that deduplicates and orders idempotent batches.

The cases follow Kafka's LeaderEpochFileCacheTest and ProducerStateManagerTest.
"""

from __future__ import annotations

import pytest

from broker.partition_log import (
    LogEntry,
    PartitionLog,
    SequenceError,
)

PID = 1000


def _log(epochs: list[int]) -> PartitionLog:
    """A log with one plain record per entry of ``epochs`` (each its leader epoch)."""
    log = PartitionLog()
    for epoch in epochs:
        log.append_as_leader([f"v{log.end_offset}"], epoch)
    return log


def _send(log: PartitionLog, first_sequence: int, count: int = 1, epoch: int = 0,
          leader_epoch: int = 1) -> tuple[int, int]:
    """An idempotent batch as the leader takes it: checked, then appended unless it is a
    duplicate (whose original offsets come back)."""
    duplicate = log.check_batch(PID, epoch, first_sequence, count)
    if duplicate is not None:
        return duplicate
    return log.append_as_leader([f"s{first_sequence + i}" for i in range(count)], leader_epoch,
                                PID, epoch, first_sequence)


def test_the_epoch_cache_keeps_each_epochs_first_offset() -> None:
    log = _log([1, 1, 1, 1, 3, 3, 5])
    assert list(log.epoch_starts) == [(1, 0), (3, 4), (5, 6)]
    assert log.last_epoch == 5


@pytest.mark.parametrize(("asked", "answer"), [
    (-1, (-1, -1)),  # UNDEFINED_EPOCH
    (0, (0, 0)),  # before every epoch the log knows: where the first one starts (Kafka)
    (1, (1, 4)),  # an epoch ends where the next one starts
    (2, (1, 4)),  # an epoch never led here: the largest one below it
    (3, (3, 6)),
    (4, (3, 6)),
    (5, (5, 7)),  # the latest epoch ends at the log end offset
    (9, (5, 7)),
])
def test_end_offset_for_epoch_answers_a_followers_divergence_check(
        asked: int, answer: tuple[int, int]) -> None:
    assert _log([1, 1, 1, 1, 3, 3, 5]).end_offset_for_epoch(asked) == answer


def test_an_empty_log_knows_no_epoch() -> None:
    log = PartitionLog()
    assert log.end_offset_for_epoch(0) == (-1, -1)
    assert log.last_epoch == -1 and log.end_offset == 0


def test_truncation_drops_the_epochs_that_start_at_or_after_it() -> None:
    log = _log([1, 1, 1, 1, 3, 3, 5])
    log.truncate_to(6)
    assert list(log.epoch_starts) == [(1, 0), (3, 4)]
    assert log.end_offset_for_epoch(5) == (3, 6)
    log.truncate_to(4)
    assert list(log.epoch_starts) == [(1, 0)] and log.last_epoch == 1
    assert log.truncations == 2
    log.truncate_to(9)  # past the end: nothing to drop
    assert log.end_offset == 4 and log.truncations == 2
    log.truncate_to(4)  # at the end: no truncation either (Kafka's truncateTo: false)
    assert log.end_offset == 4 and log.truncations == 2


def test_the_high_watermark_goes_down_only_with_a_truncation_below_it() -> None:
    """UnifiedLogTest.testHighWatermarkMaintenance: an update never lowers the HW nor
    moves it past the log end; a truncation below it brings it down to the new end."""
    log = _log([1, 1, 1])
    log.update_high_watermark(9)
    assert log.high_watermark == 3
    log.update_high_watermark(1)
    assert log.high_watermark == 3
    log.append_as_leader(["x", "y"], 2)
    log.truncate_to(4)  # above the HW: the HW stays
    assert (log.end_offset, log.high_watermark) == (4, 3)
    log.truncate_to(1)
    assert (log.end_offset, log.high_watermark) == (1, 1)
    assert list(log.epoch_starts) == [(1, 0)]


def test_entries_must_continue_the_log() -> None:
    log = _log([1])
    follower = PartitionLog()
    with pytest.raises(ValueError, match="does not follow LEO 0"):
        follower.append_entries([LogEntry(offset=1, leader_epoch=1, value="gap")])
    follower.append_entries(log.read(0, 10))
    assert follower.entries == log.entries and list(follower.epoch_starts) == [(1, 0)]


def test_a_plain_record_has_no_producer() -> None:
    log = _log([1])
    entry = log.entries[0]
    assert (entry.producer_id, entry.producer_epoch, entry.base_sequence, entry.sequence) == \
        (-1, -1, -1, -1)
    assert not log.producers


def test_a_retried_batch_among_the_last_five_is_a_duplicate_with_its_offsets() -> None:
    """Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: five batches per producer, not
    more (written out, not read from the module, so that the number itself is pinned)."""
    log = PartitionLog()
    offsets = [_send(log, 2 * n, 2) for n in range(6)]
    assert offsets[1] == (2, 3)
    end = log.end_offset
    for n in range(1, 6):  # the last five
        assert _send(log, 2 * n, 2) == offsets[n]
    assert log.end_offset == end  # nothing written
    with pytest.raises(SequenceError) as evicted:  # the oldest is no longer known
        _send(log, 0, 2)
    assert evicted.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    with pytest.raises(SequenceError):  # a different batch at a known first sequence
        _send(log, 2, 1)


@pytest.mark.parametrize(("first_sequence", "epoch", "code"), [
    (7, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER"),  # a gap after sequence 3
    (3, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER"),  # overlaps the last batch
    (1, 1, "OUT_OF_ORDER_SEQUENCE_NUMBER"),  # a new epoch starts at sequence 0
    (4, -1, "INVALID_PRODUCER_EPOCH"),  # an older epoch is fenced
])
def test_sequences_must_follow_within_an_epoch(first_sequence: int, epoch: int,
                                                code: str) -> None:
    log = PartitionLog()
    _send(log, 0, 4)
    with pytest.raises(SequenceError) as refused:
        _send(log, first_sequence, epoch=epoch)
    assert refused.value.code == code
    assert log.end_offset == 4


def test_a_producer_without_state_starts_anywhere_and_a_new_epoch_resets_the_sequence() -> None:
    """Kafka's checkSequence takes any first sequence of a producer it knows no epoch of
    (since KIP-360 no UNKNOWN_PRODUCER_ID); the sequence then follows from there."""
    log = PartitionLog()
    assert _send(log, 5) == (0, 0)
    with pytest.raises(SequenceError) as gap:
        _send(log, 0, 3)
    assert gap.value.code == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    _send(log, 6, 3)
    _send(log, 0, 2, epoch=1)
    assert log.producers[PID].epoch == 1
    assert _send(log, 2, epoch=1) == (6, 6)
    with pytest.raises(SequenceError) as fenced:
        _send(log, 3, epoch=0)
    assert fenced.value.code == "INVALID_PRODUCER_EPOCH"


def test_unchecked_logs_take_any_sequence() -> None:
    log = PartitionLog(check_sequences=False)
    assert log.check_batch(PID, 0, 9, 1) is None


def test_a_batch_without_sequence_checks_only_the_epoch() -> None:
    """A TxnOffsetCommit's records carry no sequence (-1): only the epoch is checked, and
    a newer epoch is learnt."""
    log = PartitionLog()
    assert log.check_batch(PID, 0, -1, 1) is None
    _send(log, 0, 2, epoch=2)
    log.append_as_leader(["offsets"], 1, PID, 2, -1)  # the same epoch keeps the batches
    assert _send(log, 0, 2, epoch=2) == (0, 1)
    log.append_as_leader(["offsets"], 1, PID, 3, -1)
    assert log.producers[PID].epoch == 3 and log.producers[PID].batches == []
    with pytest.raises(SequenceError) as fenced:
        log.check_batch(PID, 2, -1, 1)
    assert fenced.value.code == "INVALID_PRODUCER_EPOCH"


def test_markers_are_fenced_by_producer_epoch_then_coordinator_epoch() -> None:
    log = PartitionLog()
    _send(log, 0, 2, epoch=3)
    log.check_marker(PID, 3, 0)
    log.append_marker(1, PID, 4, commit=True, coordinator_epoch=2)  # a bumped epoch (TV2)
    assert log.producers[PID].epoch == 4 and log.coordinator_epochs[PID] == 2
    assert _send(log, 0, epoch=4) == (3, 3)  # the bumped epoch starts at sequence 0
    for epoch, coordinator, code in ((3, 2, "INVALID_PRODUCER_EPOCH"),
                                     (4, 1, "TRANSACTION_COORDINATOR_FENCED")):
        with pytest.raises(SequenceError) as refused:
            log.check_marker(PID, epoch, coordinator)
        assert refused.value.code == code
    log.check_marker(PID, 4, 2)


def test_truncation_rebuilds_the_producer_state_from_what_is_left() -> None:
    log = PartitionLog()
    _send(log, 0, 2)
    _send(log, 2, 2)
    log.truncate_to(2)
    assert [(b.first_sequence, b.last_sequence) for b in log.producers[PID].batches] == \
        [(0, 1)]
    assert _send(log, 2, 2) == (2, 3)  # written again, not taken for a duplicate
    assert log.end_offset == 4
    log.truncate_to(0)
    assert not log.producers


def test_a_new_producer_epoch_at_sequence_zero_is_a_new_batch_not_a_duplicate() -> None:
    """Duplicates are looked for in the producer's current epoch only: after an epoch bump
    the batch at sequence 0 is new even though the old epoch had the same sequences."""
    assert _send(PartitionLog(), 0) == (0, 0)
    log = PartitionLog()
    assert _send(log, 0, epoch=0) == (0, 0)
    assert _send(log, 0, epoch=1) == (1, 1)
    assert log.end_offset == 2
    assert _send(log, 0, epoch=1) == (1, 1)  # the retry in the new epoch is the duplicate


def test_truncation_forgets_the_coordinator_epoch_of_a_truncated_marker() -> None:
    """Producer state is rebuilt from what the log keeps: a marker removed by truncation no
    longer fences markers of an older coordinator epoch."""
    log = PartitionLog()
    log.append_as_leader(["t"], 1, PID, 0, 0, transactional=True)
    log.update_high_watermark(1)
    log.append_marker(1, PID, 0, commit=False, coordinator_epoch=5)
    with pytest.raises(SequenceError, match="TRANSACTION_COORDINATOR_FENCED"):
        log.check_marker(PID, 0, 3)
    log.truncate_to(1)
    log.check_marker(PID, 0, 3)
    assert PID in log.txns.ongoing


def test_a_read_returns_at_most_max_records() -> None:
    log = _log([1, 1, 1, 1])
    assert [e.offset for e in log.read(1, 2)] == [1, 2]
    assert [e.offset for e in log.read(1, 10, up_to=3)] == [1, 2]
