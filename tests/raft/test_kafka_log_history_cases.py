"""Cases of Kafka's TreeMapLogHistoryTest and ValidOffsetAndEpochTest, on RaftLog.

Kafka's TreeMapLogHistory keeps a value per log offset (the voter set and kraft.version
as the log and snapshots set them) and answers "the value at or before this offset";
new entries are cut when the log is truncated, old ones when its start moves, keeping
the one that still covers the start. kraftsim's voter set is static, so it keeps no such
history; the one offset-keyed history raft/ keeps is RaftLog's epoch cache (the epoch
that starts at each offset), which follows the same rules through the log's own
operations: an append that starts an epoch adds an entry, ``truncate_to`` cuts the new
ones, ``set_snapshot`` the old ones, ``install_snapshot`` clears it. The cases run there.

Kafka's ValidOffsetAndEpoch is the answer to a fetch position: a kind (VALID, DIVERGING,
SNAPSHOT) and an offset and epoch. kraftsim's is the pair ``(Validation, OffsetAndEpoch)``
that ``RaftLog.validate_offset_and_epoch`` returns.

Where kraftsim differs on purpose:

- The log works in whole batches, so a cut inside a batch drops the whole batch (and an
  epoch entry starting inside it cannot exist): the cases use batches that start where
  Kafka's entries are added.
- Below the log start the epoch cache answers the snapshot's epoch (Kafka's trimmed
  history answers nothing there): the snapshot is the log below its start.

Not ported:

- TreeMapLogHistoryTest.testAddAt's refusal of an entry at a negative offset: a log has
  no offset below 0 to start an epoch at.
- ValidOffsetAndEpochTest.testValidWithoutSpecifyingOffsetAndEpoch: Kafka's VALID
  without a position ((-1, -1)); kraftsim's VALID always carries the position asked
  about.
"""

from __future__ import annotations

import pytest

from raft import Batch, OffsetAndEpoch, RaftLog, RaftLogError, Snapshot, SnapshotId, Validation


def _append(log: RaftLog, epoch: int, count: int) -> None:
    log.append(Batch(log.end_offset, epoch, tuple(range(count))), flushed=True)


def _history() -> RaftLog:
    """Epoch 1 from 0, epoch 2 from 100, epoch 3 from 200 (the end is 202); epochs 2 and 3
    each start with a one-record batch, so that 101 and 201 are batch boundaries."""
    log = RaftLog()
    _append(log, 1, 100)
    _append(log, 2, 1)
    _append(log, 2, 99)
    _append(log, 3, 1)
    _append(log, 3, 1)
    return log


def test_an_empty_history_has_no_entry() -> None:
    """TreeMapLogHistoryTest.testEmpty: an empty log knows no epoch anywhere (kraftsim's
    "none" is epoch 0, what a fetch from an empty log carries)."""
    log = RaftLog()
    assert [log.epoch_at(offset) for offset in (0, 100)] == [0, 0]
    assert log.last_epoch == 0 and log.end_offset_for_epoch(5) == OffsetAndEpoch(0, 0)


def test_the_value_at_or_before_an_offset_is_the_newest_entry_not_after_it() -> None:
    """TreeMapLogHistoryTest.testAddAt: each offset answers the entry added at or before
    it; the last entry is the newest."""
    log = _history()
    assert [log.epoch_at(offset) for offset in (0, 99, 100, 101, 199, 200, 201)] == [
        1, 1, 2, 2, 2, 3, 3]
    assert log.last_epoch == 3
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(202, 3)


def test_an_entry_is_added_only_after_the_last_one() -> None:
    """TreeMapLogHistoryTest.testAddAt (its refusals): an entry at or before the last one's
    offset is refused; for the log, a batch must start at the end and may not go back to an
    older epoch, and a refused append leaves the history as it was."""
    log = _history()
    with pytest.raises(RaftLogError):
        log.append(Batch(200, 4, ("x",)), flushed=True)
    with pytest.raises(RaftLogError):
        log.append(Batch(202, 2, ("x",)), flushed=True)
    assert [log.epoch_at(o) for o in (99, 100, 200)] == [1, 2, 3] and log.end_offset == 202


def test_truncation_drops_the_entries_at_or_after_the_cut() -> None:
    """TreeMapLogHistoryTest.testTruncateTo: a cut past an entry keeps it; a cut at an
    entry's offset drops it, and the one before is the last again; a cut at the first
    entry leaves nothing."""
    log = _history()
    log.truncate_to(201)
    assert (log.last_epoch, log.end_offset_for_epoch(3)) == (3, OffsetAndEpoch(201, 3))
    log.truncate_to(200)
    assert (log.last_epoch, log.end_offset_for_epoch(3)) == (2, OffsetAndEpoch(200, 2))
    log.truncate_to(101)
    assert (log.last_epoch, log.epoch_at(100)) == (2, 2)
    log.truncate_to(100)
    assert (log.last_epoch, log.end_offset_for_epoch(2)) == (1, OffsetAndEpoch(100, 1))
    log.truncate_to(0)
    assert (log.last_epoch, log.end_offset, log.end_offset_for_epoch(1)) == (
        0, 0, OffsetAndEpoch(0, 0))


def test_trimming_the_prefix_keeps_the_entry_that_covers_the_new_start() -> None:
    """TreeMapLogHistoryTest.testTrimPrefixTo: moving the start (a snapshot) drops the
    entries before it but keeps the one in force at the start, so the start and the
    offsets after it answer as before; the start at an entry's own offset keeps that
    entry."""
    log = _history()
    log.set_snapshot(Snapshot(SnapshotId(100, 1), ()))
    assert [log.epoch_at(o) for o in (100, 101, 200)] == [2, 2, 3]
    log.set_snapshot(Snapshot(SnapshotId(101, 2), ()))
    assert [log.epoch_at(o) for o in (101, 199, 200)] == [2, 2, 3]
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(200, 2)
    log.set_snapshot(Snapshot(SnapshotId(200, 2), ()))
    assert [log.epoch_at(o) for o in (200, 201)] == [3, 3]
    assert log.epoch_at(199) == 2  # below the start: the snapshot's epoch


def test_clearing_leaves_no_entry_past_the_snapshot() -> None:
    """TreeMapLogHistoryTest.testClear: a snapshot installed over the whole log clears the
    history; the snapshot's end and epoch are all the log knows."""
    log = _history()
    log.install_snapshot(Snapshot(SnapshotId(300, 5), ()))
    assert len(log) == 0 and log.last_epoch == 5
    assert log.end_offset_for_epoch(7) == OffsetAndEpoch(300, 5)


# ---------------------------------------------------------------------- ValidOffsetAndEpoch


def test_a_valid_position_carries_the_position_asked_about() -> None:
    """ValidOffsetAndEpochTest.valid: VALID, with the fetch's own offset and epoch."""
    assert _history().validate_offset_and_epoch(150, 2) == (
        Validation.VALID, OffsetAndEpoch(150, 2))


def test_a_diverging_position_carries_where_its_epoch_ends() -> None:
    """ValidOffsetAndEpochTest.diverging: DIVERGING, with the end of the largest epoch at
    or below the fetch's in this log, to truncate to."""
    assert _history().validate_offset_and_epoch(250, 2) == (
        Validation.DIVERGING, OffsetAndEpoch(200, 2))


def test_a_snapshot_position_carries_the_snapshot_id() -> None:
    """ValidOffsetAndEpochTest.snapshot: SNAPSHOT, with the snapshot's end and epoch, for a
    position below the log start."""
    log = _history()
    log.set_snapshot(Snapshot(SnapshotId(200, 2), ()))
    assert log.validate_offset_and_epoch(50, 1) == (
        Validation.SNAPSHOT, OffsetAndEpoch(200, 2))
