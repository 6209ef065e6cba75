"""The run-cost benchmarks run and report both boot modes (no figure is asserted)."""

from __future__ import annotations

import re

from bench.experiments import (
    BOOTS_OF,
    bench_forked_runs,
    bench_run_cost,
    failover_specs,
    idle_sample,
)


def test_idle_sample_counts_events_of_the_runs_own_cluster() -> None:
    cpu, events = idle_sample(failover_specs(1, seed=5)[0], seconds=2)
    assert events > 0
    assert cpu >= 0


def test_run_cost_reports_each_boot_mode_against_interleaved_idle_samples() -> None:
    lines: list[str] = []
    per_run_ms = bench_run_cost(lines.append, runs=4, rounds=2)
    assert per_run_ms > 0
    assert len(lines) == 3
    assert "booting every run" in lines[0] and "forking one boot" in lines[1]
    for line in lines[:2]:
        assert "in 2 samples between the runs" in line
        assert re.search(r": \d+\.\d\dx \(goal <= 1\.5x", line)


def test_forked_runs_report_both_ways_with_the_same_rows() -> None:
    lines: list[str] = []
    ratios = bench_forked_runs(lines.append, rounds=1, sizes=(("visibility", 3), ("eos", 2)))
    assert set(ratios) == {"visibility", "eos"} and all(r > 0 for r in ratios.values())
    assert len(lines) == 2
    for line in lines:
        assert "booting every run" in line and "forking one boot" in line
        assert "(rows the same)" in line
    assert all(boots.reuse for boots in BOOTS_OF.values())  # forking is on again
