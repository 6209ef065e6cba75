"""Benchmarks of the raft layer and the simulator; each prints figures, asserts nothing.

Speed goals live here, never in unit tests (the machines are shared and noisy).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.floors import empty_event_ns
from sim.counter import ReplicatedCounter
from sim.raft_sim import RaftSimConfig, build_raft_sim

Report = Callable[[str], None]


ROUNDS = 3


def _real_time_ratio(voters: int, observers: int, append_every_ms: int, simulated_s: int,
                     seed: int) -> tuple[float, float, int]:
    """Best of ROUNDS runs of ``kraftsim raft-sim``'s quorum (every raft invariant after
    every event, trace fingerprint, no trace file): (simulated ms per CPU ms, the same per
    wall ms, events)."""
    best_cpu = best_wall = float("inf")
    events = 0
    for _ in range(ROUNDS):
        config = RaftSimConfig(seed=seed, voters=voters, observers=observers,
                               duration_ms=simulated_s * 1000, append_every_ms=append_every_ms)
        wall_started, cpu_started = time.perf_counter(), time.process_time()
        sim, _ = build_raft_sim(config)
        sim.run_until(config.duration_ms)
        best_cpu = min(best_cpu, time.process_time() - cpu_started)
        best_wall = min(best_wall, time.perf_counter() - wall_started)
        events = sim.events
    return simulated_s / best_cpu, simulated_s / best_wall, events


def _quorum_line(what: str, voters: int, observers: int, append_every_ms: int,
                 simulated_s: int, seed: int, goal: float) -> tuple[float, str]:
    """The figure of one quorum and its line beside the goal and the empty-loop floor."""
    ratio, wall_ratio, events = _real_time_ratio(voters, observers, append_every_ms,
                                                 simulated_s, seed)
    floor_us = empty_event_ns() / 1000
    events_per_s = events / simulated_s
    floor_ratio = 1e6 / (events_per_s * floor_us)
    line = (f"{what}, {voters} voters + {observers} observers: {ratio:,.0f}x real time "
            f"(simulated ms per CPU ms; {wall_ratio:,.0f}x per wall ms), goal >= {goal:,.0f}x; "
            f"{events_per_s:,.0f} events per simulated s, {1e6 / (events_per_s * ratio):.1f} "
            f"us per event; floor: an empty event loop ({floor_us:.2f} us per event) would "
            f"run these events at {floor_ratio:,.0f}x")
    return ratio, line


def bench_idle_quorum(report: Report, simulated_s: int = 600) -> float:
    """An idle quorum of 7 voters and 3 observers: simulated ms per CPU ms (goal >= 1,000)."""
    ratio, line = _quorum_line("idle quorum", 7, 3, 10**9, simulated_s, 1, 1000)
    report(line)
    return ratio


def bench_append_quorum(report: Report, simulated_s: int = 60) -> float:
    """A quorum with a counter append every 10 ms: simulated ms per CPU ms (goal >= 200).

    The figure is the default ``kraftsim raft-sim`` quorum (3 voters); the same load on 7
    voters and 3 observers (about 3x the events) is printed beside it.
    """
    ratio, line = _quorum_line("append every 10 ms", 3, 0, 10, simulated_s, 1, 200)
    report(line)
    report(_quorum_line("append every 10 ms", 7, 3, 10, simulated_s // 2, 1, 200)[1])
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

