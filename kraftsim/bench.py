"""``kraftsim bench``: the speed and memory benchmarks; they print figures, assert nothing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from bench import kafka_format as file_bench
from bench.broker_fence import bench_fence_one_broker
from bench.floors import floors_line
from bench.metadata import (
    bench_controller_apply,
    bench_million_partitions,
    bench_publish_small_change,
    bench_rollback,
    bench_snapshot_load,
)
from bench.raft import bench_append_quorum, bench_commit_throughput, bench_idle_quorum

SUITES: dict[str, list[Callable[[Callable[[str], None]], object]]] = {
    "raft": [bench_idle_quorum, bench_append_quorum, bench_commit_throughput],
    "controller": [bench_controller_apply, bench_rollback],
    "broker": [bench_publish_small_change, bench_snapshot_load, bench_million_partitions,
               bench_fence_one_broker],
}
"""Benchmark functions by layer (``files`` runs the Kafka file codec benchmark)."""


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser("bench", help="run the speed and memory benchmarks (prints figures)",
                       description="Run benchmarks and print their figures and goals. Figures "
                                   "vary with the machine's load; nothing is asserted.")
    p.add_argument("suites", nargs="*", metavar="SUITE",
                   help="raft, controller, broker, files or all (default all)")
    p.add_argument("--data", metavar="DIR",
                   help="the real Kafka files for the files suite (default $KRAFTSIM_KAFKA_DATA)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the chosen suites."""
    chosen = args.suites or ["all"]
    unknown = [s for s in chosen if s not in (*SUITES, "files", "all")]
    if unknown:
        print(f"kraftsim bench: unknown suite {unknown[0]!r}; choose from "
              f"{', '.join([*SUITES, 'files', 'all'])}", file=sys.stderr)
        return 2
    if "all" in chosen:
        chosen = [*SUITES, "files"]
    for suite in chosen:
        print(f"== {suite} ==", flush=True)
        print(floors_line(), flush=True)
        if suite == "files":
            data = ["--data", args.data] if args.data else []
            if file_bench.main(["--repeat", "5", *data]) != 0:
                return 1
            continue
        for bench in SUITES[suite]:
            bench(lambda line: print(line, flush=True))
    return 0
