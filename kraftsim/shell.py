"""``kraftsim shell``: the metadata shell, interactive or not.

With ``-c CMD`` (repeatable), ``-f FILE`` or a script on standard input the
commands run in order, output on stdout and one-line errors on stderr; the
exit code is 0 when all went well, 1 when a command failed, 2 when an
invariant was violated. As with Kafka's ``kafka-metadata-shell --snapshot FILE
COMMAND...``, words after the options are one more command, run last.
Otherwise the interactive shell starts. ``--demo``
starts on the demo cluster; ``--log-dir``/``--snapshot`` open real Kafka files.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from shell.commands.cluster import start_cluster
from shell.errors import CommandError
from shell.file_source import open_files
from shell.session import EXIT_FAILED, Session
from sim.demo import DEMO_PARTITIONS, DEMO_TOPIC, demo_config

DEMO_HINT = (f"try: create-topic {DEMO_TOPIC} partitions={DEMO_PARTITIONS}; run-until open-txn; "
             f"ls /image/topics/byName; log leader 0 20; crash leader; run-until idle; status")


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "shell", help="the metadata shell over a simulated cluster or real Kafka files",
        description="Kafka's metadata shell commands (ls, cd, cat, find, tree, ...) over the "
                    "images nodes publish, plus the lab language (cluster, create-topic, "
                    "crash, run-until, ...). Interactive unless commands are given with -c, "
                    "-f or on standard input; then the exit code is 0 (all went well), 1 (a "
                    "command failed) or 2 (an invariant was violated).")
    p.add_argument("-c", "--command", action="append", default=[], metavar="CMD",
                   help="run CMD (repeatable; in order), then exit")
    p.add_argument("-f", "--file", metavar="FILE", help="run the commands in FILE, then exit")
    p.add_argument("--demo", action="store_true",
                   help="start on the demo cluster (3 controllers, 3 brokers, seed 7)")
    p.add_argument("--log-dir", metavar="DIR",
                   help="show a real Kafka __cluster_metadata-0 directory (or its node dir)")
    p.add_argument("--snapshot", metavar="FILE",
                   help="show a real Kafka snapshot (.checkpoint) or log segment (.log)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output of cat, ls, find and status (default text)")
    p.add_argument("--show-secrets", action="store_true",
                   help="print SCRAM salts, keys and iterations, delegation token "
                        "fields and sensitive configs (redacted by default)")
    p.add_argument("--history-file", metavar="PATH", type=Path,
                   help="the interactive history (default $KRAFTSIM_HISTORY, else "
                        "$XDG_STATE_HOME/kraftsim/history)")
    p.add_argument("words", nargs="*", metavar="COMMAND",
                   help="one command to run (after any -c/-f), then exit, as "
                        "kafka-metadata-shell takes it: kraftsim shell --snapshot FILE ls /image")
    p.set_defaults(handler=run)


def _print(line: str, is_error: bool) -> None:
    try:
        print(line, file=sys.stderr if is_error else sys.stdout, flush=is_error)
    except BrokenPipeError:  # the reader went away (e.g. | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(EXIT_FAILED) from None


def _read_script(path: str) -> list[str] | None:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        print(f"kraftsim shell: cannot read {path}: {reason}", file=sys.stderr)
        return None


def prepare(session: Session, args: argparse.Namespace) -> bool:
    """Open the files or start the demo the options ask for; False when that failed."""
    if args.demo and (args.log_dir or args.snapshot):
        print("kraftsim shell: --demo and --log-dir/--snapshot exclude each other",
              file=sys.stderr)
        return False
    if args.log_dir or args.snapshot:
        source = open_files(args.log_dir, args.snapshot)
        for warning in source.warnings:
            print(f"kraftsim shell: warning: {warning}", file=sys.stderr)
        for error in source.errors:
            print(f"kraftsim shell: error: {error}", file=sys.stderr)
        if source.errors:
            return False
        if not source.batches and source.warnings:
            print("kraftsim shell: nothing could be read", file=sys.stderr)
            return False
        session.files = source
    if args.demo:
        try:
            start_cluster(session, demo_config())
        except CommandError as exc:
            print(f"kraftsim shell: {exc}", file=sys.stderr)
            return False
        session.flush_text("--demo")
    return True


def run(args: argparse.Namespace) -> int:
    """Run the shell; see the module docs."""
    interactive = not args.command and not args.file and not args.words and sys.stdin.isatty()
    session = Session(_print, output_format=args.format, interactive=interactive,
                      redact=not args.show_secrets)
    if not prepare(session, args):
        return EXIT_FAILED
    if interactive:
        from shell.repl import run_repl

        if args.demo:
            print(DEMO_HINT)
        return run_repl(session, args.history_file)
    lines: list[str] = list(args.command)
    if args.file:
        script = _read_script(args.file)
        if script is None:
            return EXIT_FAILED
        lines.extend(script)
    elif not args.command and not args.words:
        lines.extend(sys.stdin.read().splitlines())
    if args.words:
        lines.append(shlex.join(args.words))
    for line in lines:
        session.execute(line)
        if session.exit_requested:
            break
    return session.exit_code
