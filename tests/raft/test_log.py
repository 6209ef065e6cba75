"""The replicated log: appends, truncation, the epoch cache, fetch validation, snapshots."""

import pytest

from raft import Batch, OffsetAndEpoch, RaftLog, RaftLogError, Snapshot, SnapshotId, Validation


def log_with(*epochs_and_sizes: tuple[int, int]) -> RaftLog:
    log = RaftLog()
    for epoch, size in epochs_and_sizes:
        log.append(Batch(log.end_offset, epoch, tuple(range(size))), flushed=True)
    return log


def test_append_must_continue_at_the_log_end() -> None:
    log = log_with((1, 3))
    with pytest.raises(RaftLogError):
        log.append(Batch(5, 1, (1,)), flushed=True)
    with pytest.raises(RaftLogError):
        log.append(Batch(3, 0, (1,)), flushed=True)  # epoch going backwards
    log.append(Batch(3, 4, (1,)), flushed=True)
    with pytest.raises(RaftLogError, match="below the log's 4"):
        log.append(Batch(4, 2, (1,)), flushed=True)  # between the first epoch and the last
    assert (log.end_offset, log.last_epoch) == (4, 4)


def test_end_offset_for_epoch_and_validation() -> None:
    log = log_with((1, 3), (1, 2), (3, 4))  # epoch 1: [0,5), epoch 3: [5,9)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(5, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(5, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(9, 3)
    assert log.validate_offset_and_epoch(5, 1)[0] is Validation.VALID
    assert log.validate_offset_and_epoch(7, 3)[0] is Validation.VALID
    kind, where = log.validate_offset_and_epoch(7, 2)  # follower has an epoch-2 tail
    assert kind is Validation.DIVERGING and where == OffsetAndEpoch(5, 1)
    kind, where = log.validate_offset_and_epoch(12, 3)  # follower ahead in epoch 3
    assert kind is Validation.DIVERGING and where == OffsetAndEpoch(9, 3)


def test_an_epoch_older_than_the_whole_log_ends_where_the_first_epoch_starts() -> None:
    """Kafka's epoch cache: an epoch below every cached one (and no snapshot) ends where the
    first cached epoch starts, so a follower whose tail is of such an epoch diverges there
    and truncates it, whatever later epochs the leader's log has."""
    log = log_with((2, 3), (4, 2), (5, 2))  # epoch 2: [0,3), epoch 4: [3,5), epoch 5: [5,7)
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(0, 1)
    kind, where = log.validate_offset_and_epoch(4, 1)  # a follower with 4 records of epoch 1
    assert kind is Validation.DIVERGING and where == OffsetAndEpoch(0, 1)
    follower = log_with((1, 4))
    assert follower.truncate_to_end_offset(where) == 0


def test_truncate_to_end_offset_cuts_where_the_leader_epoch_ends() -> None:
    follower = log_with((1, 5), (2, 4))  # epoch 2 [5,9) never committed
    assert follower.truncate_to_end_offset(OffsetAndEpoch(5, 1)) == 5
    assert follower.last_epoch == 1


def test_a_truncated_epoch_leaves_the_epoch_cache() -> None:
    """Truncating a divergent tail drops its epochs from the epoch cache too: the log then
    answers for them where its last epoch ends, and takes the leader's batches of a lower
    epoch than the one truncated."""
    follower = log_with((1, 5), (3, 4))  # epoch 3 [5,9) never committed
    assert follower.truncate_to_end_offset(OffsetAndEpoch(5, 1)) == 5
    assert follower.end_offset_for_epoch(3) == OffsetAndEpoch(5, 1)
    follower.append(Batch(5, 2, (0, 1)), flushed=True)  # the leader's epoch 2
    assert follower.last_epoch == 2 and follower.end_offset_for_epoch(2) == OffsetAndEpoch(7, 2)


def test_lose_unflushed() -> None:
    log = log_with((1, 2))
    log.append(Batch(2, 1, (7, 8)), flushed=False)
    assert (log.end_offset, log.flushed_end) == (4, 2)
    log.lose_unflushed()
    assert log.end_offset == 2


def test_snapshot_truncates_the_prefix_and_answers_lagging_fetches() -> None:
    log = log_with((1, 3), (2, 3), (2, 3))
    log.set_snapshot(Snapshot(SnapshotId(6, 2), (5,)))
    assert (log.start_offset, log.end_offset, len(log)) == (6, 9, 1)
    assert log.validate_offset_and_epoch(3, 1)[0] is Validation.SNAPSHOT
    assert log.validate_offset_and_epoch(6, 2)[0] is Validation.VALID
    assert log.epoch_at(7) == 2
    assert log.epoch_at(2) == 2  # below the start: the snapshot's epoch
    with pytest.raises(RaftLogError):
        log.truncate_to(3)


def test_read_is_bounded_but_never_starves() -> None:
    log = log_with((1, 5), (1, 5), (1, 5))
    assert [b.base_offset for b in log.read(0, 15, 7)] == [0]
    assert [b.base_offset for b in log.read(0, 15, 10)] == [0, 5]
    assert [b.base_offset for b in log.read(0, 10, 100)] == [0, 5]
    assert log.read(0, 3, 100) == ()
    assert log.read(15, 20, 100) == ()  # at the log end: nothing yet, whatever the bound


def test_truncation_and_snapshots_stay_within_the_log() -> None:
    """The log refuses to truncate below its start or to take a snapshot outside
    [start, end]: nothing changes then."""
    log = log_with((1, 10), (1, 10), (2, 10))
    log.set_snapshot(Snapshot(SnapshotId(10, 1), ()))
    with pytest.raises(RaftLogError, match="below the log start"):
        log.truncate_to(5)
    with pytest.raises(RaftLogError, match="outside the log"):
        log.set_snapshot(Snapshot(SnapshotId(0, 1), ()))
    with pytest.raises(RaftLogError, match="outside the log"):
        log.set_snapshot(Snapshot(SnapshotId(40, 2), ()))
    assert (log.start_offset, log.end_offset) == (10, 30)
    assert log.snapshot is not None and log.snapshot.snapshot_id == SnapshotId(10, 1)
    again = Snapshot(SnapshotId(10, 1), ("state",))  # at the start: inside, taken
    log.set_snapshot(again)
    assert log.snapshot is again and (log.start_offset, log.end_offset, len(log)) == (10, 30, 2)


def test_truncating_at_or_past_the_log_end_changes_nothing() -> None:
    """A cut at the end (or beyond it, e.g. a leader's diverging end offset past this
    follower's log) drops nothing and never moves the end forward."""
    log = log_with((1, 3), (2, 3))
    log.truncate_to(6)
    log.truncate_to(9)
    assert (log.end_offset, log.flushed_end, len(log)) == (6, 6, 2)
    assert log.truncate_to_end_offset(OffsetAndEpoch(8, 0)) == 6
    assert (log.end_offset, log.last_epoch) == (6, 2)
