"""A sweep's failed runs, grouped by invariant and grid cell, each group with one replay.

The Spark query ``failure_groups`` counts the runs that are not valid per
(verdict, invariant, cell); here each group gets the sweep-wide number of its
first run and a short command that reruns it from the kept run folder:
``kraftsim experiment replay RUN_DIR INDEX``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from experiments.grid import Axes, cells
from experiments.model import Experiment
from experiments.runs import display_path, run_label, sweep_index

QUERY = """
    SELECT valid, coalesce(invariant, 'unknown') AS invariant, params, count(*) AS runs,
           min(run_index) AS first_index, min_by(message, run_index) AS message
    FROM runs WHERE valid <> 'true'
    GROUP BY valid, invariant, params ORDER BY valid, invariant, params"""
"""Spark SQL over the rows: one line per (verdict, invariant, cell)."""

SWARM_QUERY = """
    SELECT CASE verdict WHEN 'violation' THEN 'false' ELSE 'unknown' END AS valid,
           coalesce(invariant, verdict) AS invariant, params, count(*) AS runs,
           min(run_index) AS first_index, min_by(message, run_index) AS message
    FROM runs WHERE verdict IN ('violation', 'non_terminating')
    GROUP BY verdict, invariant, params ORDER BY verdict, invariant, params"""
"""The same for swarm rows (outside-the-model runs are not failures)."""

SHOWN = 20
"""Groups listed at the end of the command's output (the report lists them all)."""


def replay_reference(run: Path, index: int) -> str:
    """The short command that reruns run ``index`` of the kept run folder ``run``."""
    return shlex.join(["kraftsim", "experiment", "replay", display_path(run), str(index)])


def failure_groups(frame: Any, experiment: Experiment, axes: Axes,
                   run: Path) -> list[dict[str, Any]]:
    """The groups as JSON-friendly dicts: invariant, verdict, cell, runs, message, index
    (the sweep-wide number of the group's first run) and replay (its command)."""
    grid = cells(experiment, axes)
    groups: list[dict[str, Any]] = []
    for _, row in frame.iterrows():
        params = json.loads(str(row["params"]))
        ordered = {p.name: params[p.name] for p in experiment.params if p.name in params}
        index = sweep_index(grid, ordered, int(row["first_index"]))
        message = row["message"]
        groups.append({
            "invariant": str(row["invariant"]) if row["valid"] == "false" else "unknown",
            "valid": str(row["valid"]),
            "cell": run_label(experiment, axes, ordered),
            "runs": int(row["runs"]),
            "message": message if isinstance(message, str) else "",
            "index": index,
            "replay": replay_reference(run, index),
        })
    groups.sort(key=lambda g: (str(g["valid"]), str(g["invariant"]), -int(g["runs"]),
                               str(g["cell"])))
    return groups


def markdown(groups: list[dict[str, Any]]) -> list[str]:
    """The report's section on failed runs."""
    lines = ["## Runs that are not valid", ""]
    if not groups:
        return [*lines, "None.", ""]
    total = sum(g["runs"] for g in groups)
    lines += [f"{total:,} run(s) in {len(groups)} group(s) of (invariant, cell). Each replay "
              f"command (run from the folder the sweep ran in) reruns the group's first run "
              f"without Spark and writes its trace and timeline.html into the run folder.", "",
              "| invariant | cell | runs | first message | replay |", "|---|---|---|---|---|"]
    for g in groups:
        message = g["message"].replace("|", "\\|")
        if len(message) > 120:
            message = message[:117] + "..."
        lines.append(f"| {g['invariant']} | {g['cell']} | {g['runs']:,} | {message} | "
                     f"`{g['replay']}` |")
    return [*lines, ""]


def text(groups: list[dict[str, Any]]) -> list[str]:
    """The lines the command prints after its summary."""
    if not groups:
        return []
    total = sum(g["runs"] for g in groups)
    lines = [f"not valid: {total:,} run(s) in {len(groups)} group(s) of (invariant, cell):"]
    width = max(len(f"{g['invariant']} {g['cell']}") for g in groups[:SHOWN])
    for g in groups[:SHOWN]:
        label = f"{g['invariant']} {g['cell']}"
        lines.append(f"  {label:<{width}}  {g['runs']:>5,} run(s)  {g['replay']}")
    if len(groups) > SHOWN:
        lines.append(f"  ... {len(groups) - SHOWN} more group(s) in report.md")
    return lines
