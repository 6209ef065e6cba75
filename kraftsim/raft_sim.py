"""``kraftsim raft-sim``: a raft-only simulation with the replicated counter."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from raft.mutations import Mutation
from sim.faults import parse_faults
from sim.raft_sim import RaftSimConfig, format_summary, result_to_json, run_raft_sim


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "raft-sim", help="run a raft-only simulation (replicated counter) under faults",
        description="Run N voters and M observers replicating a counter, apply faults, "
                    "check every raft invariant after every event, and print a summary.",
    )
    p.add_argument("--seed", type=int, default=0,
                   help="the run's seed (default 0)")
    p.add_argument("--voters", type=int, default=3,
                   help="number of voters, 1-9 (default 3)")
    p.add_argument("--observers", type=int, default=0,
                   help="number of observers, 0-50 (default 0)")
    p.add_argument("--duration", type=int, default=10_000, metavar="MS",
                   help="simulated milliseconds to run, at most 2592000000 (30 days; "
                        "default 10000)")
    p.add_argument("--faults", action="append", default=[], metavar="SPEC",
                   help="faults, e.g. 'crash:leader@3000;restart:1@6000' (repeatable; "
                        "kinds: crash shutdown restart wipe pause partition isolate block heal; "
                        "times at most 2592000000 ms)")
    p.add_argument("--random-faults", type=int, default=0, metavar="N",
                   help="also draw N faults from the seed, 0-1000")
    p.add_argument("--randomize", action="store_true",
                   help="draw the configuration (sizes, network, faults) from the seed")
    p.add_argument("--trace", metavar="FILE", help="write the JSON-lines trace to FILE")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--mutation", action="append", default=[],
                   choices=[m.value for m in Mutation], help=argparse.SUPPRESS)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the simulation; exit 0 when every invariant held, 2 otherwise (1: no trace file)."""
    config = RaftSimConfig(
        seed=args.seed, voters=args.voters, observers=args.observers,
        duration_ms=args.duration, faults=parse_faults(args.faults),
        random_faults=args.random_faults, randomize=args.randomize,
        mutations=frozenset(Mutation(m) for m in args.mutation),
    ).validate()
    if args.trace:
        try:
            out = open(args.trace, "wb")  # noqa: SIM115 - closed below
        except OSError as exc:
            print(f"kraftsim: error: cannot write trace {args.trace}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 1
        with out:
            result = run_raft_sim(config, out)
    else:
        result = run_raft_sim(config)
    if args.json:
        print(json.dumps(result_to_json(result), sort_keys=True))
    else:
        print(format_summary(result))
    return 0 if result.violation is None else 2
