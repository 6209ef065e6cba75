"""The interactive shell: prompt_toolkit line editing, completion and a persistent history.

The history file is ``--history-file``, else ``$KRAFTSIM_HISTORY``, else
``$XDG_STATE_HOME/kraftsim/history`` (``~/.local/state/kraftsim/history``).
Ctrl-C abandons the line being typed (or interrupts a long run); Ctrl-D and
``exit`` leave. Errors are one line; the shell never exits on an error.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from shell.completion import ShellCompleter
from shell.paths import render
from shell.session import Session

BANNER = ("kraftsim metadata shell: 'help' lists the commands, 'man COMMAND' explains one, "
          "Tab completes, 'exit' or Ctrl-D leaves.")


def default_history_path() -> Path:
    """Where the history persists when no option or variable says otherwise."""
    explicit = os.environ.get("KRAFTSIM_HISTORY")
    if explicit:
        return Path(explicit)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kraftsim" / "history"


def open_history(path: Path | None) -> History:
    """A file history at ``path`` (created if needed), or an in-memory one if it cannot be."""
    target = path or default_history_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch(exist_ok=True)
    except OSError as exc:
        print(f"kraftsim shell: warning: no persistent history ({target}: {exc.strerror})",
              file=sys.stderr)
        return InMemoryHistory()
    return FileHistory(str(target))


def _prompt(session: Session) -> str:
    where = "no cluster"
    if session.files is not None:
        where = "files"
    elif session.lab is not None:
        where = session.lab.node_name(session.lab.view)
    return f"[{where}] {render(session.cwd)} >> "


def run_repl(session: Session, history_path: Path | None) -> int:
    """Read, run, repeat until ``exit`` or end of input; returns 0."""
    history = open_history(history_path)
    session.history = list(reversed(list(history.load_history_strings())))
    prompt: PromptSession[str] = PromptSession(
        history=history, completer=ShellCompleter(session), complete_while_typing=False)
    print(BANNER)
    while not session.exit_requested:
        session.width = shutil.get_terminal_size((80, 24)).columns
        try:
            line = prompt.prompt(_prompt(session))
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        try:
            session.execute(line)
        except KeyboardInterrupt:
            print("interrupted: the simulation may have stopped in the middle of an event; "
                  "start a new cluster if it misbehaves", file=sys.stderr)
    return 0
