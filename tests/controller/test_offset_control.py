"""OffsetControlManager: committed offset, LSO, transactions and revert points.

Behaviours taken from Kafka's OffsetControlManagerTest.
"""

from __future__ import annotations

import pytest

from controller import ControllerFault, OffsetControlManager, RevertPoint
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import FeatureLevelRecord


def image_at(offset: int, level: int = 1) -> MetadataImage:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(FeatureLevelRecord("metadata.version", level))
    return delta.apply(offset, 1)


def test_fresh_state() -> None:
    manager = OffsetControlManager()
    assert (manager.last_committed_offset, manager.last_committed_epoch,
            manager.last_stable_offset, manager.transaction_start_offset) == (-1, -1, -1, -1)
    assert len(manager.registry) == 1
    assert not manager.active


def test_standby_commit_moves_committed_and_lso() -> None:
    manager = OffsetControlManager()
    manager.add_point(1000, RevertPoint(image_at(1000), -1))
    assert manager.handle_commit_batch(1000, 3)
    assert manager.last_committed_offset == manager.last_stable_offset == 1000
    assert manager.last_committed_epoch == 3


def test_active_append_keeps_the_lso_until_the_commit() -> None:
    manager = OffsetControlManager()
    manager.activate(0)
    manager.handle_schedule_append(2000, RevertPoint(image_at(2000), -1))
    assert manager.next_write_offset == 2001
    assert manager.last_stable_offset == -1
    manager.handle_commit_batch(2000, 1)
    assert manager.last_stable_offset == 2000


def _with_open_transaction() -> OffsetControlManager:
    manager = OffsetControlManager()
    manager.add_point(1000, RevertPoint(image_at(1000, 13), -1))
    manager.handle_commit_batch(1000, 1)
    manager.add_point(1499, RevertPoint(image_at(1499, 13), -1))
    manager.replay_begin(1500)
    manager.add_point(1550, RevertPoint(image_at(1550, 14), 1500))
    manager.handle_commit_batch(1550, 1)
    return manager


def test_lso_stops_before_an_open_transaction_and_jumps_after_its_end() -> None:
    manager = _with_open_transaction()
    assert manager.last_stable_offset == 1499
    manager.replay_end(1600)
    manager.add_point(1600, RevertPoint(image_at(1600, 14), -1))
    assert manager.last_stable_offset == 1499  # End replayed: nothing moves until a commit
    assert not manager.handle_commit_batch(1580, 1)  # End not committed yet
    assert manager.last_stable_offset == 1499
    assert manager.handle_commit_batch(1600, 1)
    assert manager.last_stable_offset == 1600


def test_abort_reverts_to_begin_minus_one() -> None:
    manager = _with_open_transaction()
    point = manager.replay_abort(1600)
    assert point.image.offset == 1499
    assert point.image.metadata_version == 13
    assert manager.transaction_start_offset == -1


def test_abort_skips_the_point_of_a_begin_batch_of_two_records() -> None:
    """An active controller's Begin batch of two records ends at Begin + 1: its point holds
    the transaction's first record, which an Abort drops with the rest."""
    manager = OffsetControlManager()
    manager.activate(0)
    manager.handle_schedule_append(1499, RevertPoint(image_at(1499, 13), -1))
    manager.replay_begin(1500)
    manager.handle_schedule_append(1501, RevertPoint(image_at(1501, 14), 1500))
    manager.handle_schedule_append(1510, RevertPoint(image_at(1510, 15), 1500))
    point = manager.replay_abort(1511)
    assert (point.image.offset, point.image.metadata_version) == (1499, 13)


def test_snapshot_load_in_a_transaction_clears_it() -> None:
    manager = _with_open_transaction()
    manager.begin_load_snapshot()
    assert manager.transaction_start_offset == -1
    with pytest.raises(ControllerFault, match="cannot appear within a snapshot"):
        manager.replay_begin(3000)
    manager.end_load_snapshot(2999, 4, image_at(2999))
    assert manager.last_committed_offset == manager.last_stable_offset == 2999
    assert manager.transaction_start_offset == -1


def test_markers_out_of_place_are_faults_with_offsets() -> None:
    manager = _with_open_transaction()
    with pytest.raises(ControllerFault, match="at 1700 because the transaction at 1500") as e:
        manager.replay_begin(1700)
    assert e.value.offset == 1700
    fresh = OffsetControlManager()
    with pytest.raises(ControllerFault, match="EndTransactionRecord at 5 because there is no"):
        fresh.replay_end(5)
    with pytest.raises(ControllerFault, match="AbortTransactionRecord at 6"):
        fresh.replay_abort(6)


def test_deactivate_reverts_to_the_last_committed_state() -> None:
    manager = _with_open_transaction()
    manager.activate(1551)
    manager.replay_end(1600)
    manager.handle_schedule_append(1600, RevertPoint(image_at(1600, 15), -1))
    point = manager.deactivate(manager.last_committed_offset)
    assert point.image.offset == 1550
    assert manager.transaction_start_offset == 1500  # the committed log still has it open
    assert max(manager.registry) == 1550


def test_after_a_snapshot_load_transactions_and_loads_go_on() -> None:
    """Ending a snapshot load ends the load: the next transaction's markers replay as usual
    and another snapshot can be loaded later (Kafka's endLoadSnapshot clears the flag)."""
    manager = OffsetControlManager()
    manager.begin_load_snapshot()
    manager.end_load_snapshot(99, 2, image_at(99))
    manager.replay_begin(100)
    assert manager.transaction_start_offset == 100
    manager.replay_end(105)
    manager.begin_load_snapshot()
    manager.end_load_snapshot(199, 3, image_at(199))
    assert manager.last_committed_offset == manager.last_stable_offset == 199


def test_losing_leadership_right_after_a_snapshot_load_leaves_no_transaction_open() -> None:
    """A snapshot holds no open transaction: a leader that loses its uncommitted writes
    before anything commits past the snapshot reverts to it with none open, and its next
    transaction begins as usual."""
    manager = OffsetControlManager()
    manager.begin_load_snapshot()
    manager.end_load_snapshot(99, 2, image_at(99))
    manager.activate(100)
    manager.handle_schedule_append(109, RevertPoint(image_at(109), -1))
    point = manager.deactivate(manager.last_committed_offset)
    assert (point.image.offset, point.transaction_start) == (99, -1)
    assert manager.transaction_start_offset == -1
    manager.replay_begin(100)
    assert manager.transaction_start_offset == 100


def test_a_marker_read_from_a_snapshot_outside_a_load_is_a_fault() -> None:
    """A transaction marker said to come from a snapshot while no snapshot is being loaded
    is a fault (the caller's bug), as is one inside a load."""
    manager = OffsetControlManager()
    with pytest.raises(ControllerFault, match="while none is being loaded"):
        manager.replay_marker_in_snapshot("BeginTransactionRecord", 7)
    manager.begin_load_snapshot()
    with pytest.raises(ControllerFault, match="cannot appear within a snapshot"):
        manager.replay_marker_in_snapshot("BeginTransactionRecord", 7)


def test_activating_twice_is_a_fault() -> None:
    """A controller is activated once per leadership: a second activation without a
    deactivation in between is a fault, and the first write offset stays."""
    manager = OffsetControlManager()
    manager.activate(10)
    with pytest.raises(ControllerFault, match="already active"):
        manager.activate(20)
    assert manager.next_write_offset == 10


def test_a_leader_that_loses_its_first_uncommitted_transaction_has_none_open() -> None:
    """A first leader writes the bootstrap transaction and loses the leadership before
    anything commits: it goes back to the empty state before the log, where no transaction
    is open, so that it (or another) can write the bootstrap records again."""
    manager = OffsetControlManager()
    manager.activate(0)
    manager.replay_begin(0)
    manager.handle_schedule_append(3, RevertPoint(image_at(3), 0))
    point = manager.deactivate(manager.last_committed_offset)
    assert point.image is MetadataImage.EMPTY and point.transaction_start == -1
    assert manager.transaction_start_offset == -1
    manager.activate(0)
    manager.replay_begin(0)  # the bootstrap transaction again: no fault
    assert manager.transaction_start_offset == 0


def test_a_revert_point_shows_its_offset_and_transaction_start() -> None:
    assert repr(RevertPoint(image_at(5), 3)) == "RevertPoint(offset=5, transaction_start=3)"


def test_activating_at_a_negative_offset_is_a_fault() -> None:
    """testActivateFailsIfNewNextWriteOffsetIsNegative: nothing changes."""
    manager = OffsetControlManager()
    with pytest.raises(ControllerFault, match="negative offset -2"):
        manager.activate(-2)
    assert not manager.active and manager.next_write_offset == -1


def test_deactivating_a_controller_that_is_not_active_is_a_fault() -> None:
    """testDeactivateFailsIfNotActive, and after a deactivation too."""
    manager = OffsetControlManager()
    with pytest.raises(ControllerFault, match="not active"):
        manager.deactivate(-1)
    manager.activate(0)
    manager.deactivate(-1)
    with pytest.raises(ControllerFault, match="not active"):
        manager.deactivate(-1)


def test_ending_a_snapshot_load_that_never_began_is_a_fault() -> None:
    """testEndLoadSnapshotFailsWhenNotInSnapshot: the committed offset stays."""
    manager = OffsetControlManager()
    with pytest.raises(ControllerFault, match="no snapshot is being loaded"):
        manager.end_load_snapshot(99, 2, image_at(99))
    assert manager.last_committed_offset == -1
