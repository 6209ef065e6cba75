"""A swarm campaign without Spark: a process pool, rows as JSON lines, a summary.

For long campaigns on a small machine Spark's per-task and JVM costs buy
nothing; the rows are the same as a sweep's (each a pure function of its
spec). ``python -m experiments.campaign --runs-per-mode N --seed S --workers W
--out FILE`` writes one JSON row per line as runs finish (in grid order), then
prints the summary (:func:`experiments.swarm_report.summarize_rows`);
``--summarize FILE`` prints the summary of the rows in FILE (e.g. of a
campaign stopped early: the grid deals the modes in turn, so any prefix of
the rows is spread evenly over them).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from experiments.grid import build_grid, parse_params
from experiments.model import Row, RunSpec
from experiments.swarm import SWARM
from experiments.swarm_report import summarize_rows
from experiments.tasks import run_spec


def campaign_specs(runs_per_mode: int, seed: int, params: Iterable[str] = ()) -> list[RunSpec]:
    """``runs_per_mode`` runs of each write mode (the grid deals them in turn)."""
    axes = parse_params(SWARM, list(params))
    return build_grid(SWARM, axes, runs_per_mode * len(axes["mode"]), seed)


def run_campaign(specs: list[RunSpec], workers: int, out: Path,
                 stream: Any = None) -> dict[str, Any]:
    """Run ``specs`` on ``workers`` processes, appending rows to ``out``; the summary."""
    started = time.monotonic()
    rows: list[Row] = []
    with out.open("w") as sink, multiprocessing.get_context("fork").Pool(workers) as pool:
        for row in pool.imap(run_spec, specs, chunksize=8):
            rows.append(row)
            sink.write(json.dumps(row, sort_keys=True) + "\n")
            if stream is not None and len(rows) % 500 == 0:
                rate = len(rows) / (time.monotonic() - started)
                stream.write(f"{len(rows)}/{len(specs)} runs, {rate:.1f} runs/s\n")
                stream.flush()
    wall = time.monotonic() - started
    summary = summarize_rows(rows)
    summary["wall_s"] = round(wall, 1)
    summary["runs_per_s"] = round(len(rows) / wall, 2) if wall else None
    summary["workers"] = workers
    return summary


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docs."""
    parser = argparse.ArgumentParser(prog="python -m experiments.campaign")
    parser.add_argument("--runs-per-mode", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--out", default="out/swarm-campaign.jsonl")
    parser.add_argument("--summarize", metavar="FILE", default=None,
                        help="only print the summary of the rows already in FILE")
    args = parser.parse_args(argv)
    if args.summarize is not None:
        with open(args.summarize) as rows:
            summary = summarize_rows(json.loads(line) for line in rows if line.strip())
        sys.stdout.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    specs = campaign_specs(args.runs_per_mode, args.seed, args.param)
    summary = run_campaign(specs, args.workers, out, sys.stderr)
    sys.stdout.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
