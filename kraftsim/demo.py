"""``kraftsim demo``: the quick look at one run, a leader crash mid-transaction."""

from __future__ import annotations

import argparse
import json
from typing import Any

import msgspec

from controller import WriteMode
from kraftsim.save_option import save_run
from sim.demo import format_demo, run_demo


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "demo", help="crash the controller leader mid-transaction and watch the abort",
        description="Run 3 controllers and 3 brokers, create a topic spanning more than ten "
                    "batches, crash the active controller after the transaction's first "
                    "batches commit and before its End does, and show what every node saw.")
    p.add_argument("--seed", type=int, default=7, help="the run's seed (default 7)")
    p.add_argument("--mode", choices=[m.value for m in WriteMode],
                   default=WriteMode.TRANSACTIONAL.value,
                   help="how the large operation is written (default transactional)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--save", metavar="DIR",
                   help="afterwards, write every node's log and snapshots in Kafka's layout "
                        "under DIR")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when every invariant held, 2 otherwise."""
    saved: list[bool] = []
    result = run_demo(args.seed, WriteMode(args.mode),
                      after=(lambda sim: saved.append(save_run(sim, args.save)))
                      if args.save else None)
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), sort_keys=True))
    else:
        print(format_demo(result))
    if result.invariant_violations:
        return 2
    return 1 if saved and not saved[0] else 0
