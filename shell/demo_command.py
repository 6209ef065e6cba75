"""``kraftsim demo``: the quick look at one run (a leader crash and its consequences)."""

from __future__ import annotations

import argparse
from typing import Any

from sim.faults import parse_faults
from sim.raft_sim import RaftSimConfig, format_summary, run_raft_sim


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser("demo", help="run the failover demo",
                       description="Run 3 voters, crash the leader, and show the re-election.")
    p.add_argument("--seed", type=int, default=7, help="the run's seed (default 7)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when every invariant held."""
    config = RaftSimConfig(seed=args.seed, duration_ms=15_000, faults=parse_faults(
        ["crash:leader@5000;restart:0@9000;restart:1@9000;restart:2@9000"]))
    result = run_raft_sim(config)
    print(format_summary(result))
    return 0 if result.violation is None else 2
