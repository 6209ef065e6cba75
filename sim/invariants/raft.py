"""Raft invariants: SingleLeader, MonotonicEpoch, MonotonicHighWatermark,
MajorityReachedHighWatermark, LogMatching, LeaderCompleteness,
ConsistentCommittedData, CommittedDurable, SnapshotAtLogStart and
LeaderNeverLoadSnapshot.

Each is checked after every event, incrementally: only the nodes the event
touched, plus O(1) global state. Sources are the Raft paper (Ongaro and
Ousterhout, 2014, §5.2-§5.4) and Kafka's ``RaftEventSimulationTest``.
"""

from __future__ import annotations

from collections.abc import Sequence

from raft import Batch, LeaderAndEpoch, RaftLog, RaftLogError, Role, Snapshot, Validation
from sim.invariants.history import CommittedLog
from sim.world import InvariantViolation, Monitor, NodeSlot, Simulation

RAFT_INVARIANTS: dict[str, str] = {
    "SingleLeader": "at most one leader per epoch (Raft §5.2 Election Safety; "
                    "Kafka RaftEventSimulationTest.SingleLeader)",
    "MonotonicEpoch": "a node's persisted epoch never decreases and equals its in-memory "
                      "epoch (Kafka RaftEventSimulationTest.MonotonicEpoch)",
    "MonotonicHighWatermark": "the leader's high watermark never decreases "
                              "(Kafka RaftEventSimulationTest.MonotonicHighWatermark)",
    "MajorityReachedHighWatermark": "a majority of voters hold (flushed) every offset below "
                                    "the leader's high watermark (Kafka "
                                    "RaftEventSimulationTest.MajorityReachedHighWatermark)",
    "LogMatching": "logs agree on everything below their high watermarks (Raft §5.3 "
                   "Log Matching)",
    "LeaderCompleteness": "a leader's log holds every committed batch (Raft §5.4 Leader "
                          "Completeness)",
    "ConsistentCommittedData": "every listener receives the committed batches in order, "
                               "exactly once, identical on every node (Kafka "
                               "RaftEventSimulationTest.ConsistentCommittedData)",
    "CommittedDurable": "a committed batch survives crashes of a minority, including the "
                        "loss of unflushed writes (Raft §5.4; KIP-595 durability)",
    "SnapshotAtLogStart": "a log that starts after offset 0 starts at its snapshot's end, and "
                          "the snapshot's id is a valid fetch position of that log (Kafka "
                          "RaftEventSimulationTest.SnapshotAtLogStart)",
    "LeaderNeverLoadSnapshot": "a state machine told that its node leads is never asked to "
                               "load a snapshot until the leadership changes (Kafka "
                               "RaftEventSimulationTest.LeaderNeverLoadSnapshot)",
}
"""Every raft invariant with its source."""


class CommitAuditor:
    """A raft listener on every node that checks what its state machines are told."""

    def __init__(self, node_id: int, history: CommittedLog) -> None:
        self.node_id = node_id
        self.history = history
        self.next_offset = 0
        self.leads = False  # the last leader change named this node

    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Check order, exactly-once delivery and agreement with the committed history."""
        for batch in batches:
            if batch.base_offset != self.next_offset:
                raise InvariantViolation(
                    "ConsistentCommittedData",
                    f"node {self.node_id} got batch {batch.base_offset} while expecting "
                    f"offset {self.next_offset}")
            end = batch.end_offset
            if end > high_watermark:
                raise InvariantViolation(
                    "ConsistentCommittedData",
                    f"node {self.node_id} got batch {batch.base_offset}-{batch.last_offset} "
                    f"above its high watermark {high_watermark}")
            conflict = self.history.observe(batch)
            if conflict is not None:
                raise InvariantViolation("LogMatching", f"node {self.node_id}: {conflict}")
            self.next_offset = end

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Continue after the snapshot's end; a leader's state machine never loads one (it
        holds every committed record already: its log is the one snapshots are cut from)."""
        if self.leads:
            raise InvariantViolation(
                "LeaderNeverLoadSnapshot",
                f"node {self.node_id} leads but was asked to load snapshot "
                f"{snapshot.snapshot_id.end_offset}-{snapshot.snapshot_id.epoch}")
        self.next_offset = snapshot.snapshot_id.end_offset

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """Remember whether this node is the one that leads now."""
        self.leads = leader.leader_id == self.node_id


class RaftInvariants(Monitor):
    """Checks the raft invariants after every event; ``disabled`` names ones to skip."""

    def __init__(self, history: CommittedLog | None = None,
                 disabled: frozenset[str] = frozenset()) -> None:
        unknown = disabled - RAFT_INVARIANTS.keys()
        if unknown:
            raise ValueError(f"unknown invariants: {sorted(unknown)}")
        self.history = history or CommittedLog()
        self.disabled = disabled
        self.leaders: dict[int, int] = {}
        self.epochs: dict[int, int] = {}
        self.max_leader_hw = -1
        self.completeness_checked: set[tuple[int, int]] = set()
        self.leader_log: list[tuple[int, int, int]] = []  # (epoch, leader, time)
        self._disk_seen: dict[int, tuple[RaftLog, int]] = {}  # (log, flushed end)
        self._wipes_seen: dict[int, int] = {}
        self.newest_leader_epoch = 0
        self.committed_in_epoch: dict[int, int] = {}  # leader epoch -> HW it reached
        self._durable_checked: Batch | None = None
        self._majority_checked = -1  # the high watermark last checked on the voters' disks
        self._node_seen: dict[int, tuple[object, ...]] = {}  # what _check_node last saw
        self._leader_seen: tuple[object, ...] | None = None  # the leader checked last
        self._snapshot_seen: dict[int, tuple[object, ...]] = {}  # (log, snapshot, log start)

    def on_boot(self, sim: Simulation, slot: NodeSlot) -> None:
        """Attach a CommitAuditor to the new process."""
        assert slot.raft is not None
        slot.raft.register_listener(CommitAuditor(slot.node_id, self.history))

    def _fail(self, name: str, message: str) -> None:
        if name not in self.disabled:
            raise InvariantViolation(name, message)

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Run every enabled invariant over what the last event may have changed."""
        # The disk checks below are functions of the committed batch or high watermark
        # and of the voters' disks, and a disk that only grew (its log flushed further,
        # or cut below a snapshot) keeps every holder it had: they run again only when
        # the batch or high watermark changed or a disk lost something (its flush point
        # moved back, a truncation, or it is another log, a wipe).
        disks_shrank = False
        node_seen, disk_seen = self._node_seen, self._disk_seen
        for slot in touched:
            node = slot.node_id
            storage = slot.storage
            raft = slot.raft
            # The node checks are functions of these (and of state that only grows).
            node_state: tuple[object, ...] = (raft, storage.election, slot.wipe_count) \
                if raft is None else (raft, storage.election, slot.wipe_count, raft.role,
                                      raft.epoch)
            if node_seen.get(node) != node_state:
                node_seen[node] = node_state
                self._check_node(sim, slot)
            log = storage.log
            snapshot_state = (log, log.snapshot, log.start_offset)
            if self._snapshot_seen.get(node) != snapshot_state:
                self._snapshot_seen[node] = snapshot_state
                self._check_snapshot_at_log_start(node, log)
            flushed = log.flushed_end
            disk = disk_seen.get(node)
            if disk is None or disk[0] is not log or disk[1] != flushed:
                if disk is None or disk[0] is not log or flushed < disk[1]:
                    disks_shrank = True
                disk_seen[node] = (log, flushed)
        leader = sim.leader_slot()
        raft = leader.raft if leader is not None else None
        # A deposed leader that has not heard of the newer epoch yet is legal in Raft;
        # the high watermark rules speak of the leader of the newest epoch. They are
        # functions of the leader, its epoch and high watermark (and the disks).
        seen = (raft, raft.epoch, raft.high_watermark) if raft is not None else None
        if leader is not None and raft is not None and (
                seen != self._leader_seen or disks_shrank) \
                and raft.epoch >= self.newest_leader_epoch:
            self._leader_seen = seen
            self.newest_leader_epoch = raft.epoch
            hw = raft.high_watermark
            if hw is not None:
                epoch = raft.epoch
                self.committed_in_epoch[epoch] = max(self.committed_in_epoch.get(epoch, 0), hw)
                if hw < self.max_leader_hw:
                    self._fail("MonotonicHighWatermark",
                               f"leader {leader.node_id} has high watermark {hw}, below "
                               f"{self.max_leader_hw} seen before")
                self.max_leader_hw = max(self.max_leader_hw, hw)
                if sim.wipes == 0 and (hw != self._majority_checked or disks_shrank):
                    self._majority_checked = hw
                    self._check_majority(sim, hw, "MajorityReachedHighWatermark")
        last = self.history.last
        if sim.wipes == 0 and last is not None and (
                last is not self._durable_checked or disks_shrank):
            self._durable_checked = last
            self._check_durable(sim, last)

    def _check_node(self, sim: Simulation, slot: NodeSlot) -> None:
        node = slot.node_id
        persisted = slot.storage.election
        raft = slot.raft
        if self._wipes_seen.get(node, 0) != slot.wipe_count:
            self._wipes_seen[node] = slot.wipe_count  # a wiped disk starts over at epoch 0
            self.epochs.pop(node, None)
        last = self.epochs.get(node, 0)
        if persisted.epoch < last:
            self._fail("MonotonicEpoch",
                       f"node {node} persisted epoch {persisted.epoch} after {last}")
        self.epochs[node] = max(last, persisted.epoch)
        if raft is None:
            return
        if raft.epoch != persisted.epoch:
            self._fail("MonotonicEpoch", f"node {node} runs in epoch {raft.epoch} but persisted "
                                         f"epoch {persisted.epoch}")
        leader_id = node if raft.role is Role.LEADER else persisted.leader_id
        if leader_id is not None:
            known = self.leaders.setdefault(persisted.epoch, leader_id)
            if known != leader_id:
                self._fail("SingleLeader", f"epoch {persisted.epoch} has leaders {known} and "
                                           f"{leader_id}")
        if raft.role is Role.LEADER and (node, raft.epoch) not in self.completeness_checked:
            self.completeness_checked.add((node, raft.epoch))
            self.leader_log.append((raft.epoch, node, sim.now))
            self._check_completeness(slot, raft.epoch)

    def _check_snapshot_at_log_start(self, node: int, log: RaftLog) -> None:
        """Kafka's SnapshotAtLogStart, for kraftsim's log, which keeps one snapshot."""
        start, snapshot = log.start_offset, log.snapshot
        if snapshot is None:
            if start > 0:
                self._fail("SnapshotAtLogStart",
                           f"node {node} log starts at {start} without a snapshot")
            return
        snapshot_id = snapshot.snapshot_id
        if start > snapshot_id.end_offset or (start > 0 and start != snapshot_id.end_offset):
            self._fail("SnapshotAtLogStart",
                       f"node {node} log starts at {start}, its snapshot ends at "
                       f"{snapshot_id.end_offset}")
            return
        kind, _ = log.validate_offset_and_epoch(snapshot_id.end_offset, snapshot_id.epoch)
        if kind is not Validation.VALID:
            self._fail("SnapshotAtLogStart",
                       f"node {node} snapshot {snapshot_id.end_offset}-{snapshot_id.epoch} is "
                       f"not a valid position of its log ({kind.name})")

    def _check_completeness(self, slot: NodeSlot, epoch: int) -> None:
        """Raft §5.4: whatever leaders of earlier epochs committed is in this leader's log."""
        log = slot.storage.log
        end = max((hw for e, hw in self.committed_in_epoch.items() if e < epoch), default=0)
        if log.end_offset < end:
            self._fail("LeaderCompleteness",
                       f"leader {slot.node_id} log ends at {log.end_offset}, before the "
                       f"committed end {end}")
            return
        for batch in log.batches:
            if batch.base_offset >= end:
                break
            known = self.history.get(batch.base_offset)
            if known is not None and known is not batch and known != batch:
                self._fail("LeaderCompleteness",
                           f"leader {slot.node_id} holds a different batch at "
                           f"{batch.base_offset} than the committed one")

    def _check_durable(self, sim: Simulation, batch: Batch) -> None:
        holders = 0
        end = batch.end_offset
        for voter in sim.voter_ids:
            log = sim.slots[voter].storage.log
            if log.start_offset >= end:
                holders += 1
            elif log.flushed_end >= end and log.start_offset <= batch.base_offset:
                try:
                    held = log.batches[log.index_of(batch.base_offset)]
                except RaftLogError:
                    continue
                holders += held is batch or held == batch
        if holders < len(sim.voter_ids) // 2 + 1:
            self._fail("CommittedDurable",
                       f"committed batch {batch.base_offset}-{batch.last_offset} is on the "
                       f"disk of only {holders} of {len(sim.voter_ids)} voters")

    def _check_majority(self, sim: Simulation, offset: int, name: str) -> None:
        holders = 0
        for voter in sim.voter_ids:
            if sim.slots[voter].storage.log.flushed_end >= offset:
                holders += 1
        if holders < len(sim.voter_ids) // 2 + 1:
            self._fail(name, f"only {holders} of {len(sim.voter_ids)} voters hold offset "
                             f"{offset - 1} on disk")
