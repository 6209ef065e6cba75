"""Without pre-vote, a voter with a stale log must not block elections for good."""

from __future__ import annotations

import pytest

from raft import RaftConfig
from sim.faults import parse_fault
from sim.raft_sim import RaftSimConfig, build_raft_sim


@pytest.mark.parametrize("seed", range(6))
def test_a_stale_voter_rejoining_without_pre_vote_lets_a_leader_be_elected(seed: int) -> None:
    config = RaftSimConfig(seed=seed, voters=3, duration_ms=120_000, append_every_ms=100,
                           snapshot_every=0, raft=RaftConfig(pre_vote=False))
    sim, _ = build_raft_sim(config)
    assert sim.run_until_true(lambda: sim.leader_id() is not None, 10_000)
    leader = sim.leader_id()
    stale = next(n for n in (0, 1, 2) if n != leader)
    sim.apply_fault(parse_fault(f"isolate:{stale}@0"))
    sim.run_for(4_000)  # the isolated voter times out again and again, bumping its epoch
    sim.apply_fault(parse_fault("heal@0"))
    sim.run_for(10_000)
    assert sim.violation is None, sim.violation
    # a leader exists, and every voter follows it in its epoch
    assert sim.run_until_true(lambda: sim.leader_id() is not None, 30_000), "no leader"
    slot = sim.leader_slot()
    assert slot is not None and slot.raft is not None
    assert slot.node_id != stale  # its log is behind: it cannot win
    epoch = slot.raft.epoch
    end = slot.raft.log.end_offset
    assert sim.run_until_true(
        lambda: all(s.raft is not None and s.raft.epoch == epoch
                    and (s.raft.high_watermark or 0) >= end for s in sim.slots.values()),
        30_000)
