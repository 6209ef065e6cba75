"""Controller behaviours the other controller tests leave open: when an operation without
records completes, when a controller may take a snapshot (never inside an open
transaction; counted from the last snapshot, loaded ones included), what a controller that
loses the leadership keeps, and from which metadata.version the periodic NoOpRecord is
written."""

from __future__ import annotations

import random

from controller import ControllerConfig, QuorumController, WriteMode
from controller.handle import OperationStatus
from controller.operations import CreateTopics, FenceBroker, NewTopic, UnfenceBroker
from metadata.schema import (
    BeginTransactionRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionRecord,
    TopicRecord,
)
from metadata.versions import LEVELS
from raft import Batch, ElectionState, RaftNode, RaftStorage, Snapshot, SnapshotId
from raft.messages import (
    Envelope,
    Errors,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
)
from sim.faults import parse_fault
from tests.controller.conftest import cluster


def test_an_operation_without_records_completes_after_the_writes_pending_before_it() -> None:
    """An operation that writes nothing (unfencing an unfenced broker) is answered only once
    everything the controller wrote before it is committed (Kafka completes such a write
    event at the last offset written so far), never ahead of it."""
    c = cluster(seed=34)
    first = c.submit(CreateTopics((NewTopic("t", 3, 3),)))
    second = c.submit(UnfenceBroker(c.config.broker_ids[0]))
    assert not first.done and not second.done
    assert c.wait(second)
    assert first.status is OperationStatus.COMMITTED
    assert second.status is OperationStatus.COMMITTED
    assert first.completed_at is not None and second.completed_at is not None
    assert second.completed_at >= first.completed_at


def _follower_controller(batches: list[Batch]) -> tuple[QuorumController, RaftNode]:
    """A standby controller on a follower (of node 1, epoch 1) whose log holds ``batches``,
    not yet committed; every committed record counts towards a snapshot."""
    storage = RaftStorage()
    for batch in batches:
        storage.log.append(batch, flushed=True)
    storage.write_election(ElectionState(1, None, 1))
    raft = RaftNode(0, (0, 1, 2), storage, random.Random(0), 0)
    controller = QuorumController(0, raft, random.Random(0), lambda: 0,
                                  config=ControllerConfig(snapshot_every_records=1))
    return controller, raft


def _commit_up_to(raft: RaftNode, high_watermark: int) -> None:
    """The leader's answer to the follower's outstanding fetch, with ``high_watermark``."""
    [fetch] = [e.message for e in raft.drain_outbox() if isinstance(e.message, FetchRequest)]
    raft.handle(Envelope(1, 0, FetchResponse(fetch.correlation_id, 1, 1, Errors.NONE,
                                             fetch.fetch_offset, high_watermark)), 1)


def test_no_snapshot_is_taken_while_the_committed_log_has_an_open_transaction() -> None:
    """Snapshots hold only whole, committed state: while the committed log ends inside a
    transaction, a controller takes none (even when one is due); the first commit after
    the transaction's End takes it."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAg"
    before = Batch(0, 1, (NoOpRecord(),))
    opened = Batch(1, 1, (BeginTransactionRecord("t"), TopicRecord("t", topic_id),
                          PartitionRecord(partition_id=0, topic_id=topic_id, replicas=(0,),
                                          isr=(0,), leader=0)))
    closed = Batch(4, 1, (EndTransactionRecord(),))
    controller, raft = _follower_controller([before, opened, closed])
    _commit_up_to(raft, opened.end_offset)
    assert controller.fault is None and controller.transaction_open
    assert controller.offsets.last_committed_offset == opened.last_offset
    assert raft.log.snapshot is None
    _commit_up_to(raft, closed.end_offset)
    assert controller.fault is None and not controller.transaction_open
    snapshot = raft.log.snapshot
    assert snapshot is not None and snapshot.snapshot_id.end_offset == closed.end_offset
    assert TopicRecord("t", topic_id) in snapshot.records


def test_a_loaded_snapshot_restarts_the_count_towards_the_next_one() -> None:
    """Records committed before a snapshot is loaded do not count towards the controller's
    next snapshot: after loading the leader's snapshot, a snapshot is due only once enough
    records are committed after it."""
    config = ControllerConfig(snapshot_every_records=3)
    storage = RaftStorage()
    storage.log.append(Batch(0, 1, (NoOpRecord(), NoOpRecord())), flushed=True)
    storage.write_election(ElectionState(1, None, 1))
    raft = RaftNode(0, (0, 1, 2), storage, random.Random(0), 0)
    controller = QuorumController(0, raft, random.Random(0), lambda: 0, config=config)
    _commit_up_to(raft, 2)  # two records: below the three a snapshot needs
    assert raft.log.snapshot is None
    [fetch] = [e.message for e in raft.drain_outbox() if isinstance(e.message, FetchRequest)]
    leader_snapshot = Snapshot(SnapshotId(10, 1), (FeatureLevelRecord("metadata.version", 22),))
    raft.handle(Envelope(1, 0, FetchResponse(fetch.correlation_id, 1, 1, Errors.NONE,
                                             fetch.fetch_offset, 10,
                                             snapshot_id=leader_snapshot.snapshot_id)), 1)
    [request] = [e.message for e in raft.drain_outbox()
                 if isinstance(e.message, FetchSnapshotRequest)]
    raft.handle(Envelope(1, 0, FetchSnapshotResponse(request.correlation_id, 1, 1, Errors.NONE,
                                                     leader_snapshot)), 1)
    assert raft.log.snapshot is leader_snapshot and controller.fault is None
    [fetch] = [e.message for e in raft.drain_outbox() if isinstance(e.message, FetchRequest)]
    raft.handle(Envelope(1, 0, FetchResponse(fetch.correlation_id, 1, 1, Errors.NONE,
                                             fetch.fetch_offset, 11,
                                             (Batch(10, 1, (NoOpRecord(),)),))), 1)
    assert controller.offsets.last_committed_offset == 10
    assert raft.log.snapshot is leader_snapshot  # one record since the load: none due


def test_a_controller_that_loses_leadership_drops_its_uncommitted_records() -> None:
    """The active controller applies its records before they commit; when it loses the
    leadership (here cut off from the quorum) its state goes back to the committed log:
    the uncommitted topic is gone from it, and the operation fails NOT_CONTROLLER."""
    c = cluster(seed=12, noop_ms=0)
    old = c.active_controller()
    assert old is not None
    c.sim.apply_fault(parse_fault(f"isolate:{old.node_id}@0"))
    handle = c.submit(CreateTopics((NewTopic("t", 3, 3),)), node_id=old.node_id)
    assert old.image.topic("t") is not None  # applied at once, not committed
    assert c.run_until(lambda: not old.active, 30_000)
    assert handle.outcome() == "NOT_CONTROLLER"
    assert old.image.topic("t") is None
    assert old.image.same_content(old.committed_state().image)


def _noops_written(metadata_version: int) -> int:
    c = cluster(seed=13, metadata_version=metadata_version, noop_ms=100)
    c.sim.run_for(1_000)
    active = c.active_controller()
    assert active is not None
    return sum(isinstance(r, NoOpRecord) for b in active.raft.log.batches for r in b.records)


def test_the_periodic_noop_record_starts_at_metadata_version_3_3_iv1() -> None:
    """The active controller writes a NoOpRecord every metadata.max.idle.interval.ms from
    metadata.version 3.3-IV1 on (the version that brought the record), none before."""
    assert _noops_written(LEVELS["3.3-IV1"]) >= 5
    assert _noops_written(LEVELS["3.3-IV0"]) == 0


def test_a_controller_whose_raft_node_resigns_stops_being_active_at_once() -> None:
    """When its raft node gives up the leadership (no leader known any more), the active
    controller renounces at once: it is no longer active and its pending operations fail
    NOT_CONTROLLER, before any other leader is elected."""
    c = cluster(seed=14, noop_ms=0)
    old = c.active_controller()
    assert old is not None
    handle = c.submit(CreateTopics((NewTopic("t", 3, 3),)), node_id=old.node_id)
    assert not handle.done
    c.sim.act("resign", lambda: old.raft.resign(c.sim.now))
    assert old.raft.leader_id is None
    assert not old.active
    assert handle.outcome() == "NOT_CONTROLLER"


def test_a_large_fence_is_written_over_several_batches_even_in_atomic_mode() -> None:
    """Kafka writes a fence as a non-atomic result: in atomic mode (Kafka as built) a fence
    whose partition changes need more than one batch is split over batches, not refused."""
    c = cluster(seed=15, batch=5, mode=WriteMode.ATOMIC, noop_ms=0)
    for i in range(6):  # each topic fits one atomic batch
        assert c.wait(c.submit(CreateTopics((NewTopic(f"t{i}", 1, 3),))))
    broker = c.config.broker_ids[0]
    handle = c.submit(FenceBroker(broker), mode=WriteMode.ATOMIC)
    assert c.wait(handle)
    assert handle.status is OperationStatus.COMMITTED
    assert handle.record_count > 5 and handle.batch_count > 1
