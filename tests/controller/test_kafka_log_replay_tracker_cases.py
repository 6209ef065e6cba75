"""Kafka's LogReplayTrackerTest (metadata/src/test/java/org/apache/kafka/controller/).

Kafka's controller keeps a LogReplayTracker: empty until the first metadata record is
replayed, from the log or from a snapshot; a controller that activates while it is
empty writes the bootstrap records. kraftsim's is ``QuorumController.replayed_any``,
read at activation. The cases run on a single-voter quorum, whose node leads at once,
so its controller activates over whatever its disk held.
"""

from __future__ import annotations

import random

from controller import QuorumController
from metadata.schema import FeatureLevelRecord, NoOpRecord
from raft import Batch, ElectionState, RaftNode, RaftStorage, Snapshot, SnapshotId


def _activate(storage: RaftStorage) -> tuple[QuorumController, list[Batch]]:
    """A controller on the only voter of a quorum, over ``storage``; the batches it wrote
    in its new epoch once its linger has passed."""
    raft = RaftNode(0, (0,), storage, random.Random(0), 0)
    controller = QuorumController(0, raft, random.Random(0), lambda: 0)
    raft.poll(raft.config.append_linger_ms)
    assert controller.active and controller.fault is None
    return controller, [b for b in raft.log.batches if b.epoch == raft.epoch]


def _wrote_bootstrap(batches: list[Batch]) -> bool:
    return any(isinstance(r, FeatureLevelRecord) for b in batches for r in b.records)


def test_empty_until_a_record_is_replayed() -> None:
    """testEmpty: a new controller has replayed nothing; replaying a NoOpRecord (a committed
    one, from the log) makes it non-empty, so its activation writes no bootstrap."""
    storage = RaftStorage()
    storage.log.append(Batch(0, 1, (NoOpRecord(),)), flushed=True)
    storage.write_election(ElectionState(1, None, None))
    standby = QuorumController(9, RaftNode(9, (0,), RaftStorage(), random.Random(0), 0),
                               random.Random(0), lambda: 0)
    assert not standby.replayed_any
    controller, written = _activate(storage)
    assert controller.replayed_any and not _wrote_bootstrap(written)


def test_an_empty_log_activates_with_the_bootstrap_records() -> None:
    """testEmpty, the other side: a log of control records only (the first leader's
    LeaderChange) replays no metadata record; the controller stays empty and writes the
    bootstrap records when it activates."""
    controller, written = _activate(RaftStorage())
    assert _wrote_bootstrap(written)
    assert controller.committed_image().metadata_version > 0


def test_a_snapshot_of_no_records_leaves_the_log_empty() -> None:
    """testEmpty through a snapshot: Kafka's tracker turns non-empty only by replaying a
    record, so a snapshot that holds none (a bootstrap checkpoint without metadata
    records) leaves it empty, and the bootstrap records are written; a snapshot that holds
    records makes it non-empty. (kraftsim counted any loaded snapshot as replayed, and its
    controller then activated with no metadata.version.)"""
    storage = RaftStorage()
    storage.log.install_snapshot(Snapshot(SnapshotId(5, 1), ()))
    storage.write_election(ElectionState(1, None, None))
    controller, written = _activate(storage)
    assert _wrote_bootstrap(written)
    assert controller.committed_image().metadata_version > 0

    storage = RaftStorage()
    storage.log.install_snapshot(Snapshot(SnapshotId(5, 1), (FeatureLevelRecord(
        "metadata.version", 22),)))
    storage.write_election(ElectionState(1, None, None))
    controller, written = _activate(storage)
    assert controller.replayed_any and not _wrote_bootstrap(written)
