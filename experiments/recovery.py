"""RecoveryProbe: a monitor that times a failover, event by event.

Armed at the fault (``arm``), it records the simulated time at which:

- ``leader_at``: a raft leader of a newer epoch than the faulty one exists;
- ``hw_at``: the first batch of a newer epoch is committed (the new leader's
  high watermark first advances past its epoch start);
- ``available_at``: a controller of a newer epoch is active, everything it
  wrote when it took over (its epoch's LeaderChange, the Abort if any) is
  committed and no transaction is open: an operation appended from then on
  is acknowledged as soon as it commits;
- ``txn_closed_at``: the watched operation's transaction is closed in the
  committed log (by its End or by an Abort);
- ``recovered_at``: available, no transaction open, and every running node the
  active controller can reach has applied (controllers) or published
  (brokers) everything meaningful that is committed.

Before and after arming it counts log truncations: offsets cut from a node's
log, by a crash losing unflushed appends or by a follower dropping a
divergent suffix. Checks are O(1) per event until the watched times are known;
waiting for the nodes to catch up, a node found behind is asked again only
after an event touches it.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller import QuorumController
from raft import RaftLog
from sim.cluster import KRaftCluster
from sim.invariants.reference import Transaction
from sim.world import Monitor, NodeSlot, Simulation


class RecoveryProbe(Monitor):
    """Times a failover; see the module docs."""

    def __init__(self) -> None:
        self.cluster: KRaftCluster | None = None
        self.old_epoch: int | None = None
        self.fault_at: int | None = None
        self.leader_at: int | None = None
        self.hw_at: int | None = None
        self.available_at: int | None = None
        self.recovered_at: int | None = None
        self.txn_closed_at: int | None = None
        self.txn_begin: int | None = None
        self.txn: Transaction | None = None
        self.truncated_offsets = 0
        self._active_target: tuple[int, int] | None = None  # (node, offset) to reach
        self._log_end: dict[int, tuple[RaftLog, int]] = {}  # node -> (its log, end offset)
        self._lagging: tuple[QuorumController, int] | None = None  # (active, a node behind)

    def attach(self, cluster: KRaftCluster) -> None:
        """Watch ``cluster`` (called once the cluster exists)."""
        self.cluster = cluster

    def watch_transaction(self, begin_offset: int) -> None:
        """Record when the transaction begun at ``begin_offset`` closes."""
        self.txn_begin = begin_offset

    def arm(self, old_epoch: int, now: int) -> None:
        """The fault happens now, in a cluster led in ``old_epoch``."""
        self.old_epoch = old_epoch
        self.fault_at = now

    # ------------------------------------------------------------------ monitor
    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Count truncations, then look for the moments not yet seen."""
        ends = self._log_end
        for slot in touched:
            log = slot.storage.log
            seen = ends.get(slot.node_id)
            if seen is not None and seen[0] is log and log.end_offset < seen[1]:
                self.truncated_offsets += seen[1] - log.end_offset
            ends[slot.node_id] = (log, log.end_offset)
        cluster = self.cluster
        if cluster is None:
            return
        if self.txn_begin is not None and self.txn_closed_at is None:
            self._watch_txn(cluster, sim.now)
        if self.old_epoch is None or self.recovered_at is not None:
            return
        old = self.old_epoch
        if self.leader_at is None:
            leaders = cluster.raft_invariants.leader_log
            if leaders and leaders[-1][0] > old:
                self.leader_at = leaders[-1][2]
        if self.hw_at is None:
            last = cluster.history.last
            if last is not None and last.epoch > old:
                self.hw_at = sim.now
        active = cluster.active_controller()
        if self.available_at is None:
            self._watch_available(active, sim.now)
        if self.available_at is not None and self._caught_up(cluster, active, touched):
            self.recovered_at = sim.now

    def _watch_txn(self, cluster: KRaftCluster, now: int) -> None:
        if self.txn is None:
            for txn in reversed(cluster.txn_invariants.reference.transactions):
                if txn.begin_offset == self.txn_begin:
                    self.txn = txn
                    break
                if txn.begin_offset < (self.txn_begin or 0):
                    break
        if self.txn is not None and self.txn.outcome != "open":
            self.txn_closed_at = now

    def _watch_available(self, active: QuorumController | None, now: int) -> None:
        assert self.old_epoch is not None
        if active is None or (active.claimed_epoch or 0) <= self.old_epoch:
            self._active_target = None
            return
        if self._active_target is None or self._active_target[0] != active.node_id:
            self._active_target = (active.node_id, active.raft.log.end_offset)
        hw = active.raft.high_watermark
        if hw is not None and hw >= self._active_target[1] and not active.transaction_open:
            self.available_at = now

    def _caught_up(self, cluster: KRaftCluster, active: QuorumController | None,
                   touched: Sequence[NodeSlot]) -> bool:
        """:meth:`KRaftCluster.caught_up`, asked again only once the node that lagged at
        the last asking has moved (see :meth:`KRaftCluster.lagging`), and then of that
        node first (:meth:`KRaftCluster.node_lags`)."""
        if active is None or active.transaction_open:
            return False
        lagging = self._lagging
        if lagging is not None and lagging[0] is active:
            for slot in touched:
                if slot.node_id == lagging[1]:
                    break
            else:
                return False  # the node that lagged did not move
            if cluster.node_lags(active, lagging[1]):
                return False  # it moved, and still lags: no need to look at the others
        node = cluster.lagging(active)
        self._lagging = None if node is None or node == active.node_id else (active, node)
        return node is None

    def since_fault(self, at: int | None) -> int | None:
        """Milliseconds from the fault to ``at`` (None stays None)."""
        if at is None or self.fault_at is None:
            return None
        return at - self.fault_at
