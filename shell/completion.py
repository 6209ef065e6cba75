"""Tab completion: command names, paths of the tree, node ids, options.

:func:`candidates` is pure (text before the cursor in, candidates out) so it
can be tested without a terminal; :class:`ShellCompleter` adapts it to
prompt_toolkit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from shell.commands import COMMANDS
from shell.errors import CommandError
from shell.paths import PathError, lookup, normalize
from shell.tree import Dir

if TYPE_CHECKING:
    from shell.session import Session

MAX_CANDIDATES = 2000
"""Paths in a huge directory are offered only up to this many."""


def _paths(session: Session, word: str) -> list[str]:
    head, slash, prefix = word.rpartition("/")
    directory = head + slash
    try:
        node = lookup(session.root(), normalize(session.cwd, directory or "."))
    except (CommandError, PathError):
        return []
    if not isinstance(node, Dir):
        return []
    out = []
    try:
        for name in node.names():
            if name.startswith(prefix):
                child = node.child(name)
                out.append(directory + name + ("/" if child is not None and child.is_dir
                                               else ""))
                if len(out) >= MAX_CANDIDATES:
                    break
    except CommandError:
        return []
    return out


def _nodes(session: Session, word: str) -> list[str]:
    cut = max(word.rfind(","), word.rfind("|")) + 1
    head, prefix = word[:cut], word[cut:]
    ids = [str(n) for n in sorted(session.lab.cluster.sim.slots)] if session.lab else []
    return [head + n for n in ("leader", *ids) if n.startswith(prefix)]


def candidates(session: Session, before_cursor: str) -> list[str]:
    """Replacements for the word being typed (the text after the last blank)."""
    words = before_cursor.split()
    if before_cursor.endswith((" ", "\t")) or not words:
        words.append("")
    word = words[-1]
    if len(words) == 1:
        return sorted(name for name in COMMANDS if name.startswith(word))
    command = COMMANDS.get(words[0])
    if command is None:
        return []
    out: list[str] = []
    if len(words) == 2:
        out.extend(w for w in command.words if w.startswith(word))
    if len(words) == 3:
        out.extend(w for w in command.verbs if w.startswith(word))
    given = {w.partition("=")[0] for w in words[1:-1] if "=" in w}
    out.extend(f"{key}=" for key in command.options
               if key not in given and f"{key}=".startswith(word) and word)
    if command.completes == "path":
        out.extend(_paths(session, word))
    elif command.completes == "node":
        out.extend(_nodes(session, word))
    elif command.completes == "producer" and len(words) == 2 and session.lab is not None:
        out.extend(sorted(n for n in session.lab.txn.producers if n.startswith(word)))
    elif command.completes == "command":
        out.extend(sorted(name for name in COMMANDS if name.startswith(word)))
    return out


class ShellCompleter(Completer):
    """prompt_toolkit's view of :func:`candidates`."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        """Completions of the word before the cursor."""
        before = document.text_before_cursor
        words = before.split()
        typed = "" if not words or before.endswith((" ", "\t")) else words[-1]
        try:
            found = candidates(self.session, before)
        except Exception:  # a completion problem must never break the prompt
            return
        for candidate in found:
            shown = candidate.rstrip("/").rpartition("/")[2] + \
                ("/" if candidate.endswith("/") else "")
            yield Completion(candidate, start_position=-len(typed), display=shown)
