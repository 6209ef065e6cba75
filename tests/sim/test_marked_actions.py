"""An action that marks the nodes it changes is looked at only through them, and the run is
the one an action looked at through every node gives (only the trace line differs)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from sim.counter import ReplicatedCounter
from sim.faults import parse_faults
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import Simulation

FAULTS = parse_faults(["crash:leader@2000;restart:0@3500;restart:1@3500;restart:2@3500;"
                       "partition:0|1,2@5000;heal@6500"])


def _run(seed: int) -> tuple[list[dict[str, Any]], list[int]]:
    config = RaftSimConfig(seed=seed, voters=3, observers=1, duration_ms=8_000,
                           append_every_ms=10, faults=FAULTS, random_faults=2)
    out = io.BytesIO()
    sim, _ = build_raft_sim(config, out)
    sim.run_until(config.duration_ms)
    assert sim.violation is None
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    committed = [app.committed for slot in sim.slots.values() for app in slot.apps
                 if isinstance(app, ReplicatedCounter)]
    return lines, committed


@pytest.mark.parametrize("seed", [1, 7])
def test_appends_marking_the_leader_run_as_appends_looking_at_every_node(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    marked_lines, marked_committed = _run(seed)
    schedule = Simulation.schedule

    def unmarked(sim: Simulation, at_ms: int, action: Any, label: str,
                 marks_touched: bool = False) -> None:
        schedule(sim, at_ms, action, label)

    monkeypatch.setattr(Simulation, "schedule", unmarked)
    lines, committed = _run(seed)
    assert committed == marked_committed and max(committed) > 300
    appends = [line for line in marked_lines if line.get("what") == "append"]
    # An append's line names the state of the one node it changed, the leader.
    assert appends and all(set(line["state"]) >= {"role", "epoch"} for line in appends
                           if "state" in line)
    assert sum("state" in line for line in appends) > len(appends) // 2  # not leaderless
    for line in marked_lines:
        if line.get("what") == "append":
            line.pop("state", None)
    assert marked_lines == lines
