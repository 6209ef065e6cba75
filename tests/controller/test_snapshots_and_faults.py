"""Controller snapshots (committed, whole, no markers) and replay faults that stop it."""

from __future__ import annotations

import random

import pytest

from controller import ControllerConfig, QuorumController
from controller.operations import CreateTopics, NewTopic
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
    NoOpRecord,
    UnknownRecord,
    is_marker,
)
from metadata.snapshot import image_from_records
from raft import Batch, RaftNode, RaftStorage, Snapshot, SnapshotId
from sim.cluster import KRaftCluster
from tests.controller.conftest import cluster


def test_snapshots_hold_committed_state_without_markers_and_lagging_nodes_load_them() -> None:
    c = cluster(seed=31, batch=10, fetch=10, snapshot_every=20)
    broker = 0
    c.sim.crash(broker)
    for i in range(4):
        assert c.wait(c.submit(CreateTopics((NewTopic(f"t{i}", 25, 3),))))
    assert c.run_until(c.idle, 20_000)
    leader = c.active_controller()
    assert leader is not None
    snapshot = leader.raft.log.snapshot
    assert snapshot is not None and leader.raft.log.start_offset > 0
    assert not any(is_marker(r) for r in snapshot.records)
    end = snapshot.snapshot_id.last_contained_offset
    rebuilt = image_from_records(snapshot.records, end, snapshot.snapshot_id.epoch)
    expected = c.txn_invariants.reference.image_at(end)
    assert expected is not None and rebuilt.same_content(expected)
    c.sim.restart(broker)  # its log ends before the leader's log start: it gets the snapshot
    assert c.run_until(c.idle, 30_000), c.sim.violation
    assert c.sim.slots[broker].storage.log.snapshot is not None  # fetched from the leader
    loader = c.loader(broker)
    assert loader is not None and loader.published is not None
    assert all(loader.published.topic(f"t{i}") is not None for i in range(4))


def _standby_fed_an_unknown_record(seed: int) -> tuple[KRaftCluster, QuorumController, int]:
    """A cluster whose standby was handed a committed batch of an unknown record (at the
    offset returned), which stops it."""
    c = cluster(seed=seed)
    standby = next(c.controller(n) for n in c.config.controller_ids
                   if c.controller(n) is not c.active_controller())
    assert standby is not None
    offset = standby.offsets.last_committed_offset + 100
    standby.handle_commit([Batch(offset, 9, (UnknownRecord(api_key=99, version=0,
                                                           payload=b"\x00"),))], offset + 1)
    return c, standby, offset


def test_an_unknown_record_in_the_log_stops_a_standby_with_its_offset() -> None:
    c, standby, offset = _standby_fed_an_unknown_record(32)
    assert standby.fault is not None and standby.fault.offset == offset
    assert "UNKNOWN" in str(standby.fault) or "unknown" in str(standby.fault)
    assert c.controller_faults and c.controller_faults[0][0] == standby.node_id


@pytest.mark.parametrize(("records", "at"), [
    ((NoOpRecord(), EndTransactionRecord()), 1),
    ((NoOpRecord(), NoOpRecord(), AbortTransactionRecord()), 2),
    ((BeginTransactionRecord("a"), NoOpRecord(), BeginTransactionRecord("b")), 2),
], ids=["end-without-begin", "abort-without-begin", "begin-inside-a-transaction"])
def test_a_marker_out_of_place_inside_a_batch_stops_a_standby_at_its_own_offset(
        records: tuple[MetadataRecord, ...], at: int) -> None:
    """A transaction marker that cannot apply is a fault named by its own offset (the
    batch's base plus its place in the batch), wherever it is in the batch."""
    raft = RaftNode(0, (0, 1, 2), RaftStorage(), random.Random(0), 0)
    standby = QuorumController(0, raft, random.Random(0), lambda: 0, ControllerConfig())
    standby.handle_commit([Batch(100, 1, records)], 100 + len(records))
    assert standby.fault is not None and standby.fault.offset == 100 + at, standby.fault
    assert f"at {100 + at} " in str(standby.fault)


def test_an_active_controller_asked_to_load_a_snapshot_stops_and_keeps_its_state() -> None:
    """Kafka's QuorumController refuses a snapshot load while it is the active controller
    (its own state is the newest there is): it stops with a fault that says so, its state
    is not replaced, and it is no longer active."""
    c = cluster(seed=33)
    active = c.active_controller()
    assert active is not None
    before = active.image
    active.handle_load_snapshot(Snapshot(SnapshotId(5, 1), ()))
    assert active.fault is not None and "active controller" in str(active.fault)
    assert active.image is before
    assert not active.active and active.describe()["epoch"] is None


def test_a_stopped_standby_ignores_every_later_commit() -> None:
    """A controller stopped by a replay fault takes no further input (Kafka's process has
    exited): later committed batches move neither its committed offset nor its state."""
    _, standby, offset = _standby_fed_an_unknown_record(35)
    fault, committed, state = standby.fault, standby.offsets.last_committed_offset, \
        standby.image
    assert fault is not None
    later = Batch(offset + 1, 9, (NoOpRecord(),))
    standby.handle_commit([later], later.end_offset)
    assert standby.fault is fault
    assert standby.offsets.last_committed_offset == committed
    assert standby.image is state
    refused = standby.submit(CreateTopics((NewTopic("late", 1, 3),)))
    assert refused.outcome() == "UNKNOWN_SERVER_ERROR"  # stopped, not merely a standby
    assert "stopped" in str(refused.error)
