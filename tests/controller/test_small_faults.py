"""Snapshot-load faults and revert-point upkeep (issue 'Trustworthy verdicts', item 8)."""

from __future__ import annotations

import pytest

from controller import ControllerFault, OffsetControlManager, RevertPoint
from metadata.schema import AbortTransactionRecord, EndTransactionRecord, FeatureLevelRecord
from raft import Snapshot, SnapshotId
from tests.controller.conftest import cluster
from tests.controller.test_offset_control import image_at


def test_ending_a_snapshot_load_that_never_began_is_refused() -> None:
    manager = OffsetControlManager()
    with pytest.raises(ControllerFault, match="no snapshot is being loaded"):
        manager.end_load_snapshot(10, 1, image_at(10))
    assert manager.last_committed_offset == -1


def test_revert_points_at_or_below_the_stable_offset_go_as_it_advances() -> None:
    manager = OffsetControlManager()
    for offset in range(0, 100, 10):
        manager.add_point(offset, RevertPoint(image_at(offset), -1))
        manager.handle_commit_batch(offset, 1)
        assert list(manager.registry) == [offset]  # only the point to revert to
    manager.activate(100)
    manager.handle_schedule_append(109, RevertPoint(image_at(109), -1))
    manager.handle_schedule_append(119, RevertPoint(image_at(119), -1))
    assert list(manager.registry) == [90, 109, 119]
    manager.handle_commit_batch(109, 1)
    assert list(manager.registry) == [109, 119]
    assert manager.deactivate(manager.last_committed_offset).image.offset == 109


def test_an_open_transaction_keeps_the_point_before_its_begin() -> None:
    manager = OffsetControlManager()
    manager.add_point(9, RevertPoint(image_at(9), -1))
    manager.handle_commit_batch(9, 1)
    manager.replay_begin(10)
    for offset in (19, 29, 39):
        manager.add_point(offset, RevertPoint(image_at(offset), 10))
        manager.handle_commit_batch(offset, 1)
        # Begin-1 (an Abort's target) and the committed state; earlier batches go.
        assert list(manager.registry) == [9, offset]
    assert manager.last_stable_offset == 9
    assert manager.replay_abort(40).image.offset == 9


def test_an_active_controller_keeps_its_uncommitted_points_inside_a_transaction() -> None:
    manager = OffsetControlManager()
    manager.add_point(9, RevertPoint(image_at(9), -1))
    manager.handle_commit_batch(9, 1)
    manager.activate(10)
    manager.replay_begin(10)
    for offset in (19, 29, 39, 49):
        manager.handle_schedule_append(offset, RevertPoint(image_at(offset), 10))
    manager.handle_commit_batch(19, 1)
    manager.handle_commit_batch(29, 1)
    assert list(manager.registry) == [9, 29, 39, 49]
    assert manager.deactivate(manager.last_committed_offset).image.offset == 29
    assert list(manager.registry) == [9, 29]


@pytest.mark.parametrize("marker", [EndTransactionRecord(), AbortTransactionRecord("x")])
def test_a_marker_in_a_snapshot_is_reported_by_its_own_type(marker: object) -> None:
    c = cluster(seed=2, brokers=1)
    active = c.active_controller()
    assert active is not None
    standby = next(c.controller(n) for n in c.config.controller_ids if n != active.node_id)
    assert standby is not None
    bad = Snapshot(SnapshotId(5, 1), (FeatureLevelRecord("metadata.version", 22), marker))
    c.sim.act("load a bad snapshot", lambda: standby.handle_load_snapshot(bad))
    assert standby.fault is not None
    name = type(marker).__name__
    assert f"{name} cannot appear within a snapshot" in str(standby.fault)
    assert "BeginTransactionRecord" not in str(standby.fault)


def test_a_commit_that_moves_the_lso_into_a_transaction_drops_its_earlier_batches() -> None:
    """One commit that covers Begin and two batches of the open transaction keeps only
    Begin-1 (an Abort's target) and the committed state, not the batch in between."""
    manager = OffsetControlManager()
    manager.add_point(9, RevertPoint(image_at(9), -1))
    manager.replay_begin(10)
    manager.add_point(19, RevertPoint(image_at(19), 10))
    manager.add_point(29, RevertPoint(image_at(29), 10))
    assert manager.handle_commit_batch(29, 1)
    assert manager.last_stable_offset == 9
    assert list(manager.registry) == [9, 29]
