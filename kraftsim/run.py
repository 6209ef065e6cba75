"""``kraftsim run FILE``: run a lab script, or check / rewrite a golden transcript.

Without options each command is printed with its output, in the transcript
layout (so the output of a run is a transcript). ``--check`` compares every
command's output with the expected output stored in the file and prints a
diff for each difference (exit 1); ``--rewrite`` stores the actual outputs in
the file. An invariant violation makes the exit code 2 in every mode.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Any

from kraftsim.save_option import save_run
from shell import transcript
from shell.session import EXIT_FAILED, EXIT_OK, EXIT_VIOLATION, Session


def register(sub: Any) -> None:
    """Add the subcommand to the ``kraftsim`` parser."""
    p = sub.add_parser(
        "run", help="run a lab script; check or rewrite a golden transcript",
        description="Run the shell commands in FILE, printing each with its output. With "
                    "--check, compare with the expected output stored in FILE (command, "
                    "'----', output, blank line); with --rewrite, store the actual output.")
    p.add_argument("file", metavar="FILE", help="the script or transcript")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare with the expected output; exit 1 on any difference")
    mode.add_argument("--rewrite", action="store_true",
                      help="store the actual output in FILE")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output of cat, ls, find and status (default text)")
    p.add_argument("--save", metavar="DIR",
                   help="afterwards, write every node's log and snapshots in Kafka's layout "
                        "under DIR, and each running broker's partition replicas as "
                        "TOPIC-PARTITION directories (segments with transactional and "
                        "control batches, .txnindex) (readable by kafka-dump-log and "
                        "kraftsim dump-log)")
    p.set_defaults(handler=run)


def execute(script: transcript.Transcript, output_format: str = "text") -> Session:
    """Run every entry, storing its output (errors included, in order) in ``entry.actual``."""
    current: list[str] = []
    session = Session(lambda line, _is_error: current.append(line), output_format=output_format)
    for entry in script.entries:
        if session.exit_requested:
            break
        current = []
        session.execute(entry.command)
        entry.actual = current
    return session


def differences(path: str, script: transcript.Transcript) -> list[str]:
    """A diff for every entry whose output differs from its expected output."""
    out: list[str] = []
    for entry in script.entries:
        if entry.actual is None:
            out.append(f"{path}:{entry.line}: {entry.command}: not run (after exit)")
            continue
        if entry.expected is None:
            out.append(f"{path}:{entry.line}: {entry.command}: no expected output stored "
                       f"(kraftsim run --rewrite {path})")
            continue
        if entry.expected != entry.actual:
            out.append(f"{path}:{entry.line}: output of {entry.command!r} differs:")
            out.extend(difflib.unified_diff(entry.expected, entry.actual, "expected", "actual",
                                            lineterm="", n=2))
    return out


def run(args: argparse.Namespace) -> int:
    """Run, check or rewrite; see the module docs."""
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        print(f"kraftsim run: cannot read {args.file}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    script = transcript.parse(text)
    session = execute(script, args.format)
    violated = session.exit_code == EXIT_VIOLATION
    if args.save:
        if session.lab is None:
            print(f"kraftsim run: --save: {args.file} started no simulation", file=sys.stderr)
            return EXIT_FAILED
        if not save_run(session.lab.cluster.sim, args.save):
            return EXIT_FAILED
    if args.rewrite:
        path.write_text(transcript.render(script), encoding="utf-8")
        changed = sum(1 for e in script.entries if e.actual != e.expected)
        print(f"rewrote {args.file}: {len(script.entries)} commands, {changed} outputs changed")
        return EXIT_VIOLATION if violated else EXIT_OK
    if args.check:
        problems = differences(args.file, script)
        for line in problems:
            print(line)
        if problems:
            return EXIT_FAILED
        print(f"{args.file}: {len(script.entries)} commands, every output as expected")
        return EXIT_VIOLATION if violated else EXIT_OK
    first = True
    for entry in script.entries:
        if entry.actual is None:
            break
        if not first:
            print()
        first = False
        print("\n".join(transcript.format_entry(entry.command, entry.actual)))
    return session.exit_code
