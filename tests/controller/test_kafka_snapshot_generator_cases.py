"""Cases of Kafka's SnapshotGeneratorTest and SnapshotEmitterTest
(metadata/src/test/java/org/apache/kafka/image/publisher/), in kraftsim's terms.

Kafka's SnapshotGenerator is a publisher of each node's loader: it counts the bytes
of published images and has the SnapshotEmitter write one once enough have passed.
kraftsim's controllers take their own snapshots (``snapshot_every_records``, a count
of committed records standing in for bytes) from the state at the last stable offset;
brokers take none. What carries over: no snapshot before the threshold, one after it
and the count starts again; none of a state that is not a whole committed batch
(Kafka: not batch-aligned; here: a transaction open in the committed log), and one
again once the state is whole; none when disabled; the snapshot id is the offset after
the last contained record with that record's epoch, and the same id is not written
twice. Not applicable: time-based snapshots (kraftsim has no
``metadata.log.max.snapshot.interval.ms``), an emitter that fails to write (the
simulated disk does not fail a write), the emitter's metrics, and images queued
behind a slow emitter (snapshots are taken synchronously).
"""

from __future__ import annotations

import pytest

from controller import QuorumController
from controller.operations import CreateTopics, NewTopic
from metadata.schema import BeginTransactionRecord, EndTransactionRecord
from metadata.snapshot import image_from_records
from raft import SnapshotId
from sim.cluster import KRaftCluster
from tests.controller.conftest import cluster


def _active(c: KRaftCluster) -> QuorumController:
    active = c.active_controller()
    assert active is not None
    return active


def _snapshots_seen(c: KRaftCluster) -> set[tuple[int, SnapshotId]]:
    """Every controller's current snapshot, as (node, id)."""
    seen = set()
    for node in c.config.controller_ids:
        slot = c.sim.slots[node]
        snapshot = slot.storage.log.snapshot
        if snapshot is not None and snapshot.snapshot_id.end_offset > 0:
            seen.add((node, snapshot.snapshot_id))
    return seen


def _run_watching(c: KRaftCluster, until: object, timeout_ms: int,
                  seen: set[tuple[int, SnapshotId]]) -> bool:
    """Run until ``until()``, adding every snapshot taken on the way to ``seen``."""
    assert callable(until)

    def check() -> bool:
        seen.update(_snapshots_seen(c))
        return bool(until())

    return c.run_until(check, timeout_ms)


def test_a_snapshot_comes_once_enough_records_commit_and_the_count_starts_again() -> None:
    """testCreateSnapshot (and testTimeBasedSnapshots' reset of the count)."""
    c = cluster(seed=61, batch=100, snapshot_every=60, noop_ms=0)
    active = _active(c)
    assert active.raft.log.snapshot is None and active.records_since_snapshot < 60
    assert c.wait(c.submit(CreateTopics((NewTopic("a", 20, 3),))))
    assert c.run_until(c.idle, 10_000)
    assert active.records_since_snapshot < 60 and active.raft.log.snapshot is None
    assert c.wait(c.submit(CreateTopics((NewTopic("b", 40, 3),))))
    assert c.run_until(c.idle, 10_000)
    snapshot = active.raft.log.snapshot
    assert snapshot is not None
    assert snapshot.snapshot_id.end_offset == active.offsets.last_stable_offset + 1
    assert active.records_since_snapshot == 0
    assert c.wait(c.submit(CreateTopics((NewTopic("c", 9, 3),))))
    assert c.run_until(c.idle, 10_000)
    assert active.raft.log.snapshot is snapshot  # 10 records since: not yet


def test_no_snapshot_of_a_partial_transaction_and_one_again_after_its_end() -> None:
    """testNoSnapshotCreatedWhenLastOffsetIsNotBatchAligned and
    testSnapshotsCreatedAgainWhenLastOffsetIsAligned: past the threshold inside an open
    transaction no controller takes a snapshot; once the End commits, they do."""
    c = cluster(seed=62, batch=10, fetch=10, snapshot_every=10, noop_ms=0)
    seen: set[tuple[int, SnapshotId]] = set()
    handle = c.submit(CreateTopics((NewTopic("t", 116, 3),)))
    assert handle.transactional and handle.batch_count == 12
    held_back = []

    def done() -> bool:
        for node in c.config.controller_ids:  # past the threshold, a transaction open
            ctl = c.controller(node)
            if ctl is not None and ctl.records_since_snapshot >= 10 and \
                    ctl.offsets.last_stable_offset < ctl.offsets.last_committed_offset:
                held_back.append(node)
        return handle.done and c.idle()

    assert _run_watching(c, done, 30_000, seen), c.sim.violation
    assert set(held_back) == set(c.config.controller_ids)
    begin, end = handle.first_offset, handle.last_offset
    first, closing = c.history.get(begin), c.history.batch_containing(end)
    assert first is not None and isinstance(first.records[0], BeginTransactionRecord)
    assert closing is not None and isinstance(closing.records[-1], EndTransactionRecord)
    inside = [s for _, s in seen if begin <= s.last_contained_offset < end]
    assert inside == []
    after = {node for node, s in seen if s.last_contained_offset >= end}
    assert after == set(c.config.controller_ids)


@pytest.mark.parametrize("every", [0])
def test_no_snapshot_when_disabled(every: int) -> None:
    """testSnapshotsDisabled: ``snapshot_every_records = 0``."""
    c = cluster(seed=63, batch=10, fetch=10, snapshot_every=every, noop_ms=0)
    assert c.wait(c.submit(CreateTopics((NewTopic("t", 50, 3),))))
    assert c.run_until(c.idle, 10_000)
    assert _snapshots_seen(c) == set()


def test_a_snapshot_is_named_by_its_end_and_last_epoch_and_not_written_twice() -> None:
    """SnapshotEmitterTest.testEmit: the id is (last contained offset + 1, its epoch); the
    records rebuild the committed state there; a second snapshot with that id is refused."""
    c = cluster(seed=64, batch=100, snapshot_every=30, noop_ms=0)
    assert c.wait(c.submit(CreateTopics((NewTopic("t", 40, 3),))))
    assert c.run_until(c.idle, 10_000)
    active = _active(c)
    snapshot = active.raft.log.snapshot
    assert snapshot is not None
    last = snapshot.snapshot_id.last_contained_offset
    assert snapshot.snapshot_id.end_offset == last + 1
    batch = c.history.batch_containing(last)
    assert batch is not None and snapshot.snapshot_id.epoch == batch.epoch
    rebuilt = image_from_records(snapshot.records, last, snapshot.snapshot_id.epoch)
    expected = c.txn_invariants.reference.image_at(last)
    assert expected is not None and rebuilt.same_content(expected)
    with pytest.raises(ValueError, match="not past the log start"):
        active.raft.create_snapshot(snapshot.snapshot_id.end_offset, snapshot.records, 0)
    assert active.raft.log.snapshot is snapshot
