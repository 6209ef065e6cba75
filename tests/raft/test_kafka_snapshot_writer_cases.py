"""Cases of Kafka's NotifyingRawSnapshotWriterTest (raft/.../snapshot), on RaftNode.

Kafka's log hands out a snapshot writer that tells the log when the snapshot is frozen
(so the log may move its start past it), and tells it nothing when the freeze fails or
the writer is closed unfrozen. kraftsim makes a snapshot in one call,
``RaftNode.create_snapshot``: it is whole (frozen) when the call returns, and the log
takes it at once (its start moves to the snapshot's end); a refused snapshot changes
nothing. The cases run on a leader driven by tests/raft/kafka_context.py.

Not ported: testCloseWithoutFreeze (kraftsim has no writer that can be dropped half
written; a snapshot file never renamed from ``.part`` is never read:
tests/kafka_format/test_kafka_snapshot_file_cases.py).

Whole classes of this port that kraftsim does not model, with the reason:

- KafkaRaftClientDriverTest (testShutdown, testUncaughtException): the thread that polls
  a KafkaRaftClient and hands its uncaught exceptions to a fault handler. A kraftsim node
  is stepped by the simulation's event loop, with no thread of its own; a fault in a
  controller's state machine is QuorumController's fatal fault, tested in
  tests/controller/test_fatal_replay_on_active.py.
- RaftUtilTest (testErrorResponse and the ``testSingleton*ForAllVersion`` cases of
  Fetch, FetchSnapshot, Vote, BeginQuorumEpoch, EndQuorumEpoch and DescribeQuorum):
  building the raft RPCs' wire messages at each API version. kraftsim's raft RPCs are
  in-process Structs (raft/messages.py) with no wire encoding or versions (DescribeQuorum's
  answer too: raft/quorum_info.py).
- VoterSetHistoryTest and KRaftControlRecordStateMachineTest (all cases), and the KIP-853
  parts of VoterSetTest and KafkaRaftClientReconfigTest: dynamic voters, not modelled
  (see test_kafka_raft_reconfig_cases.py).

VoterSetHistoryTest's cases, left out above: testStaticVoterSet, TestNoStaticVoterSet,
testAddAt, testBootstrapAddAt, testAddAtNonOverlapping,
testNonoverlappingFromStaticVoterSet, testTruncateTo, testTrimPrefixTo, testClear;
KRaftControlRecordStateMachineTest's: testEmptyPartition,
testEmptyPartitionWithNoStaticVoters, testUpdateWithoutSnapshot,
testUpdateWithEmptySnapshot, testUpdateWithSnapshot,
testUpdateWithSnapshotAndLogOverride, testTruncateTo, testTrimPrefixTo.
"""

from __future__ import annotations

import pytest

from raft import RaftLogError, SnapshotId
from tests.raft.kafka_context import Context


def _committed_leader() -> Context:
    """A leader of (1, 2) over a log of two batches (epoch 1), all of it committed."""
    ctx = Context(1, (1, 2), epoch=1, log=[(1, ["a", "b"]), (1, ["c"])])
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, ctx.log.end_offset, epoch))
    assert ctx.node.high_watermark == ctx.log.end_offset == 4
    ctx.drain()
    return ctx


def test_a_frozen_snapshot_is_taken_by_the_log_at_once() -> None:
    """testFreezeClose: once the snapshot is whole, the log is told, with the snapshot's
    own id: it holds the snapshot and its start moves to the snapshot's end."""
    ctx = _committed_leader()
    snapshot = ctx.node.create_snapshot(3, ("state@3",), ctx.now)
    assert snapshot.snapshot_id == SnapshotId(3, 1)
    assert ctx.log.snapshot is snapshot and ctx.log.start_offset == 3
    assert [b.base_offset for b in ctx.log.batches] == [3]


def test_a_snapshot_that_cannot_be_made_tells_the_log_nothing() -> None:
    """testFailingFreeze: a snapshot that fails (here one ending inside a batch, which
    kraftsim's log refuses) leaves the log as it was: no snapshot, the same start, every
    batch kept."""
    ctx = _committed_leader()
    with pytest.raises(RaftLogError):
        ctx.node.create_snapshot(1, ("state@1",), ctx.now)
    assert ctx.log.snapshot is None and ctx.log.start_offset == 0
    assert [b.base_offset for b in ctx.log.batches] == [0, 2, 3]
