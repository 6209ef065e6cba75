"""``kraftsim experiment``: sweeps of failover, visibility and swarm runs on Spark.

Only the options live here; the work is in ``experiments/`` (imported when the
command runs, so the other commands never load pandas or pyspark).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "experiment", help="sweep seeded failover, visibility, swarm or broker-failover runs "
                           "on Spark; Parquet, report.md and plots",
        description="Run a grid of seeded simulations as Spark tasks, write the rows as "
                    "Parquet, aggregate them with Spark SQL and write report.md with plots. "
                    "With --replay, rerun one row without Spark and write its trace and "
                    "timeline.html.")
    p.add_argument("experiment", metavar="EXPERIMENT",
                   help="failover, visibility, swarm or broker-failover")
    p.add_argument("--runs", type=int, default=None,
                   help="runs in the sweep, dealt over the grid's cells (default: 640 "
                        "failover, 360 visibility, 300 swarm, 120 broker-failover)")
    p.add_argument("--seed", type=int, default=1, help="the sweep's master seed (default 1)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=V1[,V2...]",
                   help="a parameter's value(s); several values make it an axis of the grid "
                        "(repeatable)")
    p.add_argument("--master", default="local[*]",
                   help="Spark master URL: local[*] (default), local[N] or spark://HOST:PORT")
    p.add_argument("--driver-host", default=None, metavar="HOST",
                   help="the address executors reach this driver at, for spark:// masters "
                        "on other machines (default: loopback when the master is on loopback, "
                        "else Spark's choice)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting passed through, e.g. spark.executor.memory=2g "
                        "(repeatable; applied last)")
    p.add_argument("--rows", default=None, metavar="PATH_OR_URI",
                   help="where the executors write the Parquet rows: a new path on a shared "
                        "filesystem or a URI Spark can write (file:///..., s3a://...); "
                        "default OUT/runs on the driver (enough for local masters and "
                        "one-machine clusters)")
    p.add_argument("--out", default=None, help="output folder (default out/EXPERIMENT)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--replay", type=int, default=None, metavar="INDEX",
                   help="rerun run INDEX of the cell given by --param, without Spark")
    p.add_argument("--trace", default=None, metavar="FILE",
                   help="with --replay: where to write the trace (JSON lines)")
    p.add_argument("--timeline", default=None, metavar="FILE",
                   help="with --replay: where to write the run's timeline page (default "
                        "timeline.html beside the trace); self-contained HTML")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the sweep or the replay; exit 0 when every run is valid, 1 otherwise, 2 on bad
    input."""
    from experiments.model import ExperimentError
    from experiments.sweep import run_command

    try:
        return run_command(args.experiment, runs=args.runs, seed=args.seed, params=args.param,
                           master=args.master, out=args.out, as_json=args.json,
                           replay=args.replay, trace=args.trace,
                           timeline=args.timeline, driver_host=args.driver_host,
                           conf=args.conf, rows=args.rows)
    except ExperimentError as exc:
        print(f"kraftsim: error: {exc}", file=sys.stderr)
        return 2
