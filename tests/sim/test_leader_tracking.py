"""The leader a simulation reports between events is the one a full scan finds."""

from __future__ import annotations

from raft import Role
from sim.faults import parse_faults
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import NodeSlot, NodeStatus, Simulation

FAULTS = parse_faults(["crash:leader@3000;restart:0@5000;restart:1@5000;restart:2@5000;"
                       "pause:leader@7000+1500;partition:0|1,2,3@9000;heal@10500;"
                       "shutdown:leader@12000;restart:0@13000;restart:1@13000;"
                       "restart:2@13000"])


def _scanned_leader(sim: Simulation) -> NodeSlot | None:
    """The running leader of the highest epoch, by looking at every node."""
    best: NodeSlot | None = None
    for slot in sim.slots.values():
        raft = slot.raft
        if raft is not None and slot.status is NodeStatus.RUNNING and raft.role is Role.LEADER \
                and (best is None or best.raft is None or raft.epoch > best.raft.epoch):
            best = slot
    return best


def test_leader_slot_follows_crashes_pauses_partitions_and_shutdowns() -> None:
    leaders_seen = set()
    for seed in range(3):
        config = RaftSimConfig(seed=seed, voters=3, observers=1, duration_ms=15_000,
                               faults=FAULTS, random_faults=3)
        sim, _ = build_raft_sim(config)
        while sim.queue.peek_time() is not None and sim.now <= config.duration_ms \
                and sim.step():
            leader = sim.leader_slot()
            assert leader is _scanned_leader(sim), (seed, sim.events)
            if leader is not None:
                leaders_seen.add((seed, leader.node_id))
        assert sim.violation is None
    assert len(leaders_seen) >= 4  # the faults moved the leadership around
