"""The shell's own commands: help, man, history, exit."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from shell.commands.base import Command, integer, parse_args
from shell.errors import CommandError
from shell.formatting import table
from sim.bounds import INT64_MAX

if TYPE_CHECKING:
    from shell.session import Session

SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the metadata tree (Kafka's metadata shell)", ("ls", "cd", "pwd", "cat", "find", "tree")),
    ("the shell", ("help", "man", "history", "exit")),
    ("the lab: a simulated cluster", ("cluster", "seed", "status", "view", "log", "invariants",
                                              "describe-cluster")),
    ("the lab: operations", ("create-topic", "delete-topic", "alter-config",
                             "register-broker")),
    ("the lab: records (heartbeats=on)", ("produce", "consume", "producer")),
    ("the lab: time and faults", ("tick", "run-until", "crash", "shutdown", "restart",
                                  "partition", "heal")),
)
"""How ``help`` groups the commands."""


def run_help(session: Session, args: list[str]) -> None:
    """``help``."""
    from shell.commands import COMMANDS

    parse_args(HELP, args)
    for title, names in SECTIONS:
        session.out(f"{title}:")
        rows = [(f"  {n}", COMMANDS[n].summary) for n in names]
        for line in table(("", ""), rows)[1:]:
            session.out(line)
        session.out("")
    session.out("'man COMMAND' shows a command's arguments and explains it. NODE is a node id "
                "or 'leader'; paths take globs: * ? {a,b}.")


def run_man(session: Session, args: list[str]) -> None:
    """``man COMMAND``."""
    from shell.commands import COMMANDS

    values, _ = parse_args(MAN, args, positional=("COMMAND",))
    name = values[0]
    command = COMMANDS.get(name)
    if command is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise CommandError(f"no manual entry for {name!r}{hint}")
    session.out(f"NAME\n    {command.name} - {command.summary}\n")
    session.out(f"SYNOPSIS\n    {command.synopsis}\n")
    session.out("DESCRIPTION")
    for paragraph in command.man.split("\n"):
        session.out(f"    {paragraph}" if paragraph else "")


def run_history(session: Session, args: list[str]) -> None:
    """``history [N]``."""
    values, _ = parse_args(HISTORY, args, optional=("N",))
    entries = session.history
    first = 0
    if values:
        count = integer(1, INT64_MAX)("N", values[0])
        first = max(0, len(entries) - count)
    for number, line in enumerate(entries[first:], start=first + 1):
        session.out(f"{number:5d}  {line}")


def run_exit(session: Session, args: list[str]) -> None:
    """``exit``."""
    parse_args(EXIT, args)
    session.exit_requested = True


HELP = Command("help", "help", "list the commands", "Lists every command with its synopsis.",
               run_help)
MAN = Command(
    "man", "man COMMAND", "show a command's manual",
    "Prints the name, synopsis and description of COMMAND.\n\nExample: man run-until",
    run_man, completes="command")
HISTORY = Command(
    "history", "history [N]", "show the commands entered so far",
    "Prints the commands entered so far (the last N), numbered. In the interactive shell "
    "the history persists across sessions in the history file (--history-file, or "
    "$KRAFTSIM_HISTORY, default $XDG_STATE_HOME/kraftsim/history); the up arrow recalls "
    "entries and Ctrl-R searches them.", run_history)
EXIT = Command("exit", "exit", "leave the shell",
               "Leaves the shell (Ctrl-D does too). In a script, stops the script there.",
               run_exit)

META = (HELP, MAN, HISTORY, EXIT)
"""The shell's own commands."""
