"""The ``kraftsim`` console command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from kraftsim import __version__, bench, cache, demo, dump_log, experiment, raft_sim, run, shell
from raft.config import ConfigError

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kraftsim",
        description="A deterministic lab for KRaft metadata transactions (KIP-868).",
    )
    parser.add_argument("--version", action="version", version=f"kraftsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    demo.register(sub)
    raft_sim.register(sub)
    shell.register(sub)
    run.register(sub)
    experiment.register(sub)
    bench.register(sub)
    cache.register(sub)
    sub.add_parser("dump-log", help="print Kafka KRaft metadata files (like kafka-dump-log)",
                   add_help=False)
    return parser


EXIT_BROKEN_PIPE = 1
"""The exit code when the reader of the output went away (``kraftsim ... | head``)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kraftsim`` command; returns the exit code.

    When the output's reader goes away (``| head``) the command stops
    quietly, as Unix tools do: no traceback, exit code 1.
    """
    try:
        code = _run(argv)
        sys.stdout.flush()  # a broken pipe shows here, not at interpreter exit
    except BrokenPipeError:
        _silence_output()
        return EXIT_BROKEN_PIPE
    return code


def _silence_output() -> None:
    """Point stdout and stderr at /dev/null, so that flushing them at exit cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # not a real file (captured in a test)
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _run(argv: Sequence[str] | None) -> int:
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
