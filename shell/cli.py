"""The ``kraftsim`` console command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from raft.config import ConfigError
from shell import raft_sim_command

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kraftsim",
        description="A deterministic lab for KRaft metadata transactions (KIP-868).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    raft_sim_command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kraftsim`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except ConfigError as exc:
        print(f"kraftsim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kraftsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
