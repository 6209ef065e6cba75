"""Benchmarks of the raft layer and the simulator; each prints figures, asserts nothing.

Speed goals live here, never in unit tests (the machines are shared and noisy).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sim.counter import ReplicatedCounter
from sim.raft_sim import RaftSimConfig, build_raft_sim

Report = Callable[[str], None]


def bench_idle_quorum(report: Report, simulated_s: int = 600) -> float:
    """An idle 3-voter quorum: simulated seconds per wall second (goal >= 1,000)."""
    config = RaftSimConfig(seed=1, duration_ms=simulated_s * 1000, append_every_ms=10**9)
    started = time.perf_counter()
    sim, _ = build_raft_sim(config)
    sim.run_until(config.duration_ms)
    wall = time.perf_counter() - started
    ratio = simulated_s / wall
    report(f"idle 3-voter quorum: {simulated_s} simulated s in {wall:.2f} wall s = "
           f"{ratio:,.0f} simulated s per wall s (goal >= 1,000); {sim.events:,} events, "
           f"{wall / sim.events * 1e6:.1f} us per event")
    return ratio


def bench_commit_throughput(report: Report, records: int = 1_000_000,
                            batch: int = 1_000) -> float:
    """3 voters commit ``records`` counter values in batches of ``batch``: records/s."""
    config = RaftSimConfig(seed=2, duration_ms=10**9, append_every_ms=10**9, snapshot_every=0)
    sim, _ = build_raft_sim(config)
    sim.run_until_true(lambda: sim.leader_slot() is not None, 60_000)
    leader = sim.leader_slot()
    assert leader is not None
    sim.run_for(100)  # let the new leader claim its epoch
    counter = next(a for a in leader.apps if isinstance(a, ReplicatedCounter))
    events_before = sim.events
    started = time.perf_counter()
    def append_all() -> None:
        for _ in range(records // batch):
            counter.increment(sim.now, batch)

    sim.act("append", append_all)
    target = leader.raft.log.end_offset if leader.raft else 0

    def all_committed() -> bool:
        return all(s.raft is not None and (s.raft.high_watermark or 0) >= target
                   for s in sim.slots.values())

    sim.run_until_true(all_committed, 10**9)
    wall = time.perf_counter() - started
    events = sim.events - events_before
    rate = records / wall
    report(f"commit throughput: {records:,} records in batches of {batch:,} through 3 voters "
           f"in {wall:.2f} s = {rate:,.0f} records/s (goal >= 500,000); {events:,} events, "
           f"{wall / max(events, 1) * 1e6:.1f} us per event")
    return rate

