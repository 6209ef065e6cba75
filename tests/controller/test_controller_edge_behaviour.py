"""Controller behaviours the other controller tests leave open: when an operation without
records completes, when a controller may take a snapshot (never inside an open
transaction; counted from the last snapshot, loaded ones included), what a controller that
loses the leadership keeps, and from which metadata.version the periodic NoOpRecord is
written."""

from __future__ import annotations

import random

from controller import ControllerConfig, QuorumController, WriteMode
from controller.handle import OperationStatus
from controller.operations import CreateTopics, DeleteTopics, FenceBroker, NewTopic, UnfenceBroker
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
    third = c.submit(UnfenceBroker(c.config.broker_ids[0]))  # nothing pending now
    assert third.status is OperationStatus.COMMITTED and third.completed_at == c.sim.now


def test_an_operation_without_records_waits_for_the_last_offset_written_so_far() -> None:
    """With two writes pending, an operation that writes nothing waits for the later one's
    last offset (Kafka: the last offset written so far), not the earlier one's."""
    c = cluster(seed=34)
    first = c.submit(CreateTopics((NewTopic("t", 3, 3),)))
    second = c.submit(CreateTopics((NewTopic("u", 3, 3),)))
    empty = c.submit(UnfenceBroker(c.config.broker_ids[0]))
    assert first.last_offset < second.last_offset
    assert empty.last_offset == second.last_offset and empty.record_count == 0
    assert c.wait(empty) and second.done
    assert empty.completed_at == second.completed_at


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


def test_the_first_snapshot_comes_when_exactly_the_threshold_of_records_commits() -> None:
    """A new controller has counted no records yet: with a threshold of 3, the commit that
    brings the third record takes the first snapshot, not a later one."""
    config = ControllerConfig(snapshot_every_records=3)
    storage = RaftStorage()
    storage.log.append(Batch(0, 1, (NoOpRecord(), NoOpRecord())), flushed=True)
    storage.log.append(Batch(2, 1, (NoOpRecord(),)), flushed=True)
    storage.write_election(ElectionState(1, None, 1))
    raft = RaftNode(0, (0, 1, 2), storage, random.Random(0), 0)
    controller = QuorumController(0, raft, random.Random(0), lambda: 0, config=config)
    _commit_up_to(raft, 2)
    assert raft.log.snapshot is None and controller.records_since_snapshot == 2
    _commit_up_to(raft, 3)
    snapshot = raft.log.snapshot
    assert snapshot is not None and snapshot.snapshot_id.end_offset == 3
    assert controller.records_since_snapshot == 0


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


def test_a_large_unfence_is_written_over_several_batches_even_in_atomic_mode() -> None:
    """Kafka writes a heartbeat's unfence, with the elections it allows, as a non-atomic
    result too: in atomic mode an unfence that gives more leaderless partitions a leader
    than one batch holds is split over batches, not refused (refused, the broker would
    stay fenced and its partitions leaderless for good; a swarm run found that)."""
    c = cluster(seed=15, batch=5, mode=WriteMode.ATOMIC, noop_ms=0)
    broker = c.config.broker_ids[0]
    for i in range(6):  # one replica each, on the broker: leaderless once it is fenced
        assert c.wait(c.submit(CreateTopics((NewTopic(f"t{i}", -1, -1,
                                                      assignments=((broker,),)),))))
    assert c.wait(c.submit(FenceBroker(broker), mode=WriteMode.ATOMIC))
    handle = c.submit(UnfenceBroker(broker), mode=WriteMode.ATOMIC)
    assert c.wait(handle)
    assert handle.status is OperationStatus.COMMITTED, handle.outcome()
    assert handle.record_count == 7 and handle.batch_count > 1
    active = c.active_controller()
    assert active is not None
    image = active.committed_image()
    assert not image.brokers[broker].fenced
    assert [image.topic(f"t{i}").partitions[0].leader  # type: ignore[union-attr]
            for i in range(6)] == [broker] * 6


def test_a_write_just_before_a_transaction_completes_when_its_own_batch_commits() -> None:
    """The last stable offset moves past a batch as soon as it commits, even when the
    controller has already written the Begin of a transaction right after it: the earlier
    operation is answered then, not held back until the transaction's End commits."""
    c = cluster(seed=5, batch=10, fetch=10, noop_ms=0)
    active = c.active_controller()
    assert active is not None
    before = c.submit(CreateTopics((NewTopic("a", 3, 3),)))
    txn = c.submit(CreateTopics((NewTopic("b", 30, 3),)))
    assert before.batch_count == 1 and txn.transactional and txn.batch_count == 4
    assert txn.first_offset == before.last_offset + 1  # the Begin follows at once
    offsets = active.offsets
    assert c.run_until(lambda: offsets.last_committed_offset >= before.last_offset, 10_000)
    assert offsets.last_committed_offset == before.last_offset  # the Begin not committed
    assert offsets.last_stable_offset == before.last_offset
    assert before.status is OperationStatus.COMMITTED and not txn.done
    assert c.wait(txn)


def test_each_operation_submitted_to_a_controller_gets_its_own_id() -> None:
    """Operation handles are numbered in submission order, refused ones included, so that
    two operations of one controller are never confused in a trace."""
    c = cluster(seed=6, noop_ms=0)
    handles = [c.submit(CreateTopics((NewTopic("t", 1, 3),))),
               c.submit(CreateTopics((NewTopic("t", 1, 3),))),
               c.submit(UnfenceBroker(c.config.broker_ids[0]))]
    ids = [h.op_id for h in handles]
    assert ids == sorted(set(ids)) and len(set(ids)) == 3


def test_an_operation_sent_to_a_standby_is_refused_at_once_and_writes_nothing() -> None:
    """A controller that is not the active one answers NOT_CONTROLLER, naming the active
    controller, at once: it generates no records, appends nothing and its state stays
    the committed one."""
    c = cluster(seed=15, noop_ms=0)
    active = c.active_controller()
    assert active is not None
    standby = next(ctl for n in c.config.controller_ids
                   if (ctl := c.controller(n)) is not None and ctl is not active)
    state, end = standby.image, standby.raft.log.end_offset
    handle = c.submit(CreateTopics((NewTopic("t", 3, 3),)), node_id=standby.node_id)
    assert handle.outcome() == "NOT_CONTROLLER"
    assert handle.error is not None and f"node {active.node_id}." in handle.error.message
    assert standby.image is state and standby.raft.log.end_offset == end
    assert handle.record_count == 0 and handle.first_offset == -1


def test_an_empty_request_is_answered_at_once_by_any_controller_without_a_write() -> None:
    """Kafka's controller answers a CreateTopics or DeleteTopics naming nothing at once,
    active or not, without queueing it behind pending writes or writing anything."""
    c = cluster(seed=16, noop_ms=0)
    active = c.active_controller()
    assert active is not None
    pending = c.submit(CreateTopics((NewTopic("t", 3, 3),)))
    for node in c.config.controller_ids:
        ctl = c.controller(node)
        assert ctl is not None
        end = ctl.raft.log.end_offset
        for op, response in ((CreateTopics(()), {"topics": []}),
                             (DeleteTopics(()), {"deleted": []})):
            handle = c.submit(op, node_id=node)
            assert handle.status is OperationStatus.COMMITTED and handle.response == response
            assert handle.completed_at == handle.submitted_at and handle.record_count == 0
        assert ctl.raft.log.end_offset == end
    assert not pending.done
