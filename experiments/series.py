"""One representative run per grid cell, rerun on the driver, as series over simulated time.

The first run of each cell (run index 0) is rerun with its trace kept in
memory; the trace's notes (:class:`sim.timeline.TraceNotes`) give each
broker's published metadata offset, the controller leader's epoch, the spans
with no leader, and the faults. The time-series plot draws them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from experiments.grid import Axes
from experiments.model import Experiment, RunSpec
from experiments.runs import run_label
from sim.gc_policy import simulation_gc

LEADER = "Leader"
"""The raft role of a leader in a trace's node notes."""


@dataclass
class Series:
    """What one run did over simulated time (ms)."""

    label: str
    published: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """Per broker: (time, published metadata offset)."""
    epochs: list[tuple[int, int]] = field(default_factory=list)
    """(time, the leader's epoch) whenever a new leader is seen."""
    leaderless: list[tuple[int, int]] = field(default_factory=list)
    """Spans (start, end) with no running leader, after the first election."""
    faults: list[tuple[int, str]] = field(default_factory=list)
    start_ms: int = 0
    end_ms: int = 0


def series_of(label: str, notes: list[dict[str, object]], end_ms: int) -> Series:
    """A run's series from its trace notes (in trace order)."""
    series = Series(label, end_ms=end_ms)
    nodes: dict[int, tuple[str, str, int]] = {}
    without: int | None = None
    leader_seen = False
    last_epoch = -1
    first_publish: int | None = None
    for note in notes:
        at = int(str(note["t"]))
        kind = note.get("note")
        if kind == "publish":
            broker = int(str(note["node"]))
            series.published.setdefault(broker, []).append((at, int(str(note["offset"]))))
            first_publish = at if first_publish is None else first_publish
        elif kind == "fault":
            series.faults.append((at, str(note.get("what", ""))))
        elif kind == "node":
            nodes[int(str(note["node"]))] = (str(note["status"]), str(note["role"]),
                                             int(str(note["epoch"])))
            leaders = [epoch for status, role, epoch in nodes.values()
                       if role == LEADER and status == "running"]
            if leaders:
                leader_seen = True
                if without is not None and at > without:
                    series.leaderless.append((without, at))
                without = None
                if max(leaders) != last_epoch:
                    last_epoch = max(leaders)
                    series.epochs.append((at, last_epoch))
            elif leader_seen and without is None:
                without = at
    if without is not None and end_ms > without:
        series.leaderless.append((without, end_ms))
    if series.epochs:
        series.epochs.append((end_ms, series.epochs[-1][1]))
    for points in series.published.values():
        points.append((end_ms, points[-1][1]))
    starts = [t for t, _ in series.faults[:1]] + ([first_publish] if first_publish else [])
    series.start_ms = max(0, min(starts) - 200) if starts else 0
    return series


def representative_runs(experiment: Experiment, specs: list[RunSpec], axes: Axes,
                        limit: int, stop: Callable[[], bool] | None = None) -> list[Series]:
    """Rerun the first run of each cell (at most ``limit`` cells) and return its series;
    ``stop()`` true before a rerun ends them there."""
    chosen = [s for s in specs if s.index == 0][:limit]
    result = []
    for spec in chosen:
        if stop is not None and stop():
            break
        buffer = io.BytesIO()
        with simulation_gc():
            row = experiment.run(spec, buffer)
        notes = [json.loads(line) for line in buffer.getvalue().splitlines()
                 if b'"note":' in line]
        verdict = "" if row["valid"] == "true" else f" [{row['valid']}]"
        label = f"{run_label(experiment, axes, spec.params)}{verdict}"
        result.append(series_of(label, notes, int(row["simulated_ms"])))
    return result
