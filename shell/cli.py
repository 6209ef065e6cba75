"""The ``kraftsim`` console command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from raft.config import ConfigError
from shell import (
    bench_command,
    demo_command,
    dump_log,
    experiment_command,
    raft_sim_command,
    run_command,
    shell_command,
)

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kraftsim",
        description="A deterministic lab for KRaft metadata transactions (KIP-868).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    demo_command.register(sub)
    raft_sim_command.register(sub)
    shell_command.register(sub)
    run_command.register(sub)
    experiment_command.register(sub)
    bench_command.register(sub)
    sub.add_parser("dump-log", help="print Kafka KRaft metadata files (like kafka-dump-log)",
                   add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kraftsim`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "dump-log":
        return dump_log.main(argv[1:])
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
