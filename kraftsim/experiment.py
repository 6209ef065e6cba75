"""``kraftsim experiment``: sweeps on Spark, kept runs compared and replayed.

Only the options live here; the work is in ``experiments/`` (imported when the
command runs, so the other commands never load pandas or pyspark).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

USAGE = """kraftsim experiment EXPERIMENT [--runs N] [--seed S] [--param NAME=V1[,V2...]]...
                          [--master URL] [--driver-host HOST] [--conf KEY=VALUE]...
                          [--rows PATH_OR_URI] [--out DIR] [--json]
       kraftsim experiment EXPERIMENT --replay INDEX --param NAME=V... [--trace FILE]
       kraftsim experiment compare RUN_A RUN_B [--json]
       kraftsim experiment replay RUN_DIR INDEX [--trace FILE] [--timeline FILE]"""

EPILOG = """Each sweep is kept in its own folder DIR/RUN_ID (DIR defaults to out/EXPERIMENT; the
run id is the UTC start time plus four random hex digits) holding runs/ (Parquet),
report.md, the plots, summary.json, cells.json and manifest.json (kraftsim version and
commit, every parameter, runs, seed, master, start, end and wall time, Spark and Python
versions). DIR/latest points at the newest run.

examples:
  kraftsim experiment failover --runs 640
  kraftsim experiment compare out/failover/20261123T101500.000Z-1a2b out/failover/latest
  kraftsim experiment replay out/failover/latest 17"""


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "experiment", help="sweep seeded failover, visibility, swarm, broker-failover or eos "
                           "runs on Spark; compare and replay kept runs",
        usage=USAGE, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Run a grid of seeded simulations as Spark tasks, write the rows as Parquet, "
            "aggregate them with Spark SQL and write report.md with plots, in a new run "
            "folder. 'compare RUN_A RUN_B' prints the cells whose figures differ between two "
            "kept runs; 'replay RUN_DIR INDEX' reruns run INDEX of a kept run without Spark "
            "(parameters from its manifest) and writes its trace and timeline.html into the "
            "run folder. With --replay, rerun one row given by --param values.", 88))
    p.add_argument("experiment", metavar="EXPERIMENT",
                   help="failover, visibility, swarm, broker-failover or eos (a "
                        "consume-transform-produce loop under failures, exactly-once vs "
                        "idempotence only, classic vs pre-registration protocol); or "
                        "compare, replay")
    p.add_argument("operands", nargs="*", metavar="OPERAND",
                   help="compare: RUN_A RUN_B (run folders, or a DIR whose latest run is "
                        "meant); replay: RUN_DIR INDEX (INDEX: the run's number in the "
                        "sweep, 0 to runs - 1, as the report's replay commands give it)")
    p.add_argument("--runs", type=int, default=None,
                   help="runs in the sweep, dealt over the grid's cells (default: 640 "
                        "failover, 360 visibility, 300 swarm, 120 broker-failover, 160 eos)")
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
                        "default RUN_DIR/runs on the driver (enough for local masters and "
                        "one-machine clusters)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="the folder that keeps the runs: each sweep writes DIR/RUN_ID and "
                        "points DIR/latest at it (default out/EXPERIMENT)")
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object (compare: one object per "
                        "changed figure)")
    p.add_argument("--replay", type=int, default=None, metavar="INDEX",
                   help="rerun run INDEX of the cell given by --param, without Spark")
    p.add_argument("--trace", default=None, metavar="FILE",
                   help="replays: where to write the trace (JSON lines; default "
                        "RUN_DIR/replay-INDEX/trace.jsonl for replay RUN_DIR INDEX)")
    p.add_argument("--timeline", default=None, metavar="FILE",
                   help="replays: where to write the run's timeline page (default "
                        "timeline.html beside the trace); self-contained HTML")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the sweep, the replay or the comparison; exit 0 when every run is valid (compare:
    always), 1 otherwise, 2 on bad input."""
    from experiments.model import ExperimentError
    from experiments.sweep import run_command

    try:
        return run_command(args.experiment, runs=args.runs, seed=args.seed, params=args.param,
                           master=args.master, out=args.out, as_json=args.json,
                           replay=args.replay, trace=args.trace,
                           timeline=args.timeline, operands=args.operands,
                           driver_host=args.driver_host, conf=args.conf, rows=args.rows)
    except ExperimentError as exc:
        print(f"kraftsim: error: {exc}", file=sys.stderr)
        return 2
