"""Kafka's ReplicatedCounter: the state machine of raft-only runs.

The leader appends the next integer; every node checks that the committed
values are consecutive (ConsistentCommittedData at the state-machine level)
and snapshots its value every ``snapshot_every`` committed records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from raft import Batch, LeaderAndEpoch, NotLeaderError, RaftNode, Snapshot
from sim.world import InvariantViolation, NodeSlot, Simulation


class ReplicatedCounter:
    """A counter replicated through raft; see the module docs."""

    has_timers: ClassVar[bool] = False
    """:meth:`next_deadline` is always None (the world need not ask it)."""

    def __init__(self, sim: Simulation, slot: NodeSlot, snapshot_every: int = 0) -> None:
        assert slot.raft is not None
        self.sim = sim
        self.node_id = slot.node_id
        self.raft: RaftNode = slot.raft
        self.snapshot_every = snapshot_every
        self.committed = 0
        self.committed_end = 0
        self.uncommitted = 0
        self.claimed_epoch: int | None = None
        self.last_snapshot_value = 0
        self.raft.register_listener(self)

    # -- listener --------------------------------------------------------------
    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Check that committed values continue the sequence; maybe snapshot."""
        for batch in batches:
            for value in batch.records:
                if value != self.committed + 1:
                    raise InvariantViolation(
                        "ConsistentCommittedData",
                        f"node {self.node_id} committed value {value} after {self.committed}")
                self.committed = value
            self.committed_end = batch.end_offset
        if self.claimed_epoch is None:
            self.uncommitted = self.committed
        due = self.snapshot_every and self.committed - self.last_snapshot_value >= \
            self.snapshot_every
        if due and self.committed_end > self.raft.log.start_offset:
            self.raft.create_snapshot(self.committed_end, (self.committed,), self.sim.now)
            self.last_snapshot_value = self.committed

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Take the snapshot's value."""
        self.committed = self.uncommitted = self.last_snapshot_value = snapshot.records[0]
        self.committed_end = snapshot.snapshot_id.end_offset

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """Claim the leadership once it is ours (every earlier record is applied by now)."""
        if leader.leader_id == self.node_id:
            self.claimed_epoch = leader.epoch
            self.uncommitted = self.committed
        else:
            self.claimed_epoch = None
            self.uncommitted = self.committed

    # -- workload --------------------------------------------------------------
    def increment(self, now: int, count: int = 1) -> bool:
        """As leader, append the next ``count`` values as one batch; False if not leader."""
        if self.claimed_epoch is None:
            return False
        values = range(self.uncommitted + 1, self.uncommitted + 1 + count)
        try:
            self.raft.append(values, self.claimed_epoch, now)
        except NotLeaderError:
            return False
        self.uncommitted += count
        return True

    # -- app timers ------------------------------------------------------------
    def next_deadline(self) -> int | None:
        """The counter has no timers of its own."""
        return None

    def poll(self, now: int) -> None:
        """Nothing to do."""

    def close(self, now: int) -> None:
        """Nothing waits on the counter."""
