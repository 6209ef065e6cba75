"""``kraftsim cache info|clean``: what kraftsim keeps in ``~/.cache/kraftsim`` and its removal.

The cache holds one Spark class-data archive per environment that ran
``kraftsim experiment`` (``experiments/cache_dir.py`` says what each file is).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from experiments import cache_dir

CHECKOUT = Path(__file__).resolve().parent.parent
"""The folder holding this kraftsim's packages (the checkout, for an editable install)."""


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser("cache", help="list or remove what kraftsim keeps in ~/.cache/kraftsim",
                       description="kraftsim experiment keeps one Spark class-data archive "
                                   "(about 190 MB; faster Spark starts) per environment in "
                                   "$XDG_CACHE_HOME/kraftsim (default ~/.cache/kraftsim). "
                                   "info lists it by environment with sizes; clean removes "
                                   "it.")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    info = actions.add_parser("info", help="list the cache's files by environment, with sizes")
    info.add_argument("--json", action="store_true",
                      help="print one JSON object per file instead of text")
    info.set_defaults(handler=run_info)
    clean = actions.add_parser("clean", help="remove the cache (or one checkout's entries)")
    clean.add_argument("--checkout", nargs="?", const=str(CHECKOUT), default=None,
                       metavar="DIR",
                       help="remove only the entries of environments inside DIR (default "
                            f"DIR: this checkout, {CHECKOUT}) and partial files of killed runs")
    clean.set_defaults(handler=run_clean)


def run_info(args: argparse.Namespace) -> int:
    """Print the cache's folder and files."""
    if args.json:
        for entry in cache_dir.entries():
            sys.stdout.write(json.dumps({"path": str(entry.path), "bytes": entry.size,
                                         "kind": entry.kind,
                                         "environment": entry.environment}) + "\n")
        return 0
    print(cache_dir.info_text(current=sys.prefix))
    return 0


def run_clean(args: argparse.Namespace) -> int:
    """Remove the cache (or a checkout's entries) and say what went."""
    checkout = Path(args.checkout) if args.checkout else None
    removed = cache_dir.clean(checkout)
    scope = f" of environments in {checkout}" if checkout else ""
    print(f"removed {len(removed)} file(s){scope}, "
          f"{cache_dir.size_text(sum(e.size for e in removed))}, from {cache_dir.cache_dir()}")
    return 0
