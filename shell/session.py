"""A shell session: the state commands share, and the one place commands are run.

The same :class:`Session` serves the interactive REPL, ``-c`` commands,
scripts and transcripts. It holds what is being looked at (a simulated
:class:`Lab` or a :class:`FileSource` of real Kafka files), the working
directory, the history and the output format. :meth:`Session.execute` runs
one line: an unknown command, a bad argument or any failure prints one line
and marks the session failed; nothing escapes as a traceback. After each
command the lab reports operations whose outcome became known, and the first
invariant violation is reported once.

With ``--format json`` every output line is one JSON value: what a command
prints as JSON (``cat``, ``ls``, ``find``, ``status``, ...) passes as it is,
and its text lines (and the reports that follow it) are gathered into one
object ``{"command": LINE, "output": [TEXT, ...]}`` printed after them.
Errors stay one text line each on the error stream.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from importlib import metadata

from shell.commands import COMMANDS
from shell.errors import CommandError
from shell.file_source import FileSource
from shell.image_tree import image_dir
from shell.lab import Lab
from shell.paths import Path
from shell.transactions_tree import transactions_dir
from shell.tree import Dir, Node, static_dir, text_file

Sink = Callable[[str, bool], None]
"""Receives each output line and whether it is an error line."""

EXIT_OK, EXIT_FAILED, EXIT_VIOLATION = 0, 1, 2
"""Exit codes: all went well; a command failed; an invariant was violated."""


def kraftsim_version() -> str:
    """The installed kraftsim version."""
    try:
        return metadata.version("kraftsim")
    except metadata.PackageNotFoundError:
        return "unknown"


_BLANKS = " \t\r\n"
_QUOTES = "'\""


def split_words(line: str) -> list[str]:
    """Words of a command line: blanks separate, quotes group, backslashes stay (globs).

    POSIX-shell quoting without escapes: a quoted run (``'...'`` or
    ``"..."``) joins the word it touches, ``''`` is an empty word, and a
    backslash is an ordinary character, left for the glob matcher. Linear in
    the line (``shlex`` grows each word one character at a time, which is
    quadratic). Raises CommandError when a quote is never closed or the line
    holds a lone surrogate (an undecodable byte of the command line).
    """
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as exc:  # bytes that were not UTF-8 (surrogateescape)
            raise CommandError(f"cannot parse the line: character {exc.start + 1} is not "
                               f"valid UTF-8") from None
    words: list[str] = []
    parts: list[str] = []
    in_word = False
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in _BLANKS:
            if in_word:
                words.append("".join(parts))
                parts, in_word = [], False
            i += 1
        elif ch in _QUOTES:
            close = line.find(ch, i + 1)
            if close < 0:
                raise CommandError("cannot parse the line: no closing quotation")
            parts.append(line[i + 1:close])
            in_word = True
            i = close + 1
        else:
            start = i
            while i < n and line[i] not in _BLANKS and line[i] not in _QUOTES:
                i += 1
            parts.append(line[start:i])
            in_word = True
    if in_word:
        words.append("".join(parts))
    return words


def _is_json(text: str) -> bool:
    """Whether ``text`` is one JSON object or array on one line (a command's JSON output)."""
    if not text.startswith(("{", "[")) or "\n" in text:
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class Session:
    """State shared by the commands; see the module docs."""

    def __init__(self, sink: Sink, *, output_format: str = "text", width: int | None = None,
                 history: list[str] | None = None, interactive: bool = False,
                 redact: bool = True) -> None:
        self.sink = sink
        self.format = output_format
        self.redact = redact
        """Print SCRAM and delegation token secrets as ``[redacted]``."""
        self.width = width
        """The terminal's width for ``ls`` columns; None when the output is not a terminal
        (one name per line, as Kafka's shell prints outside its interactive mode)."""
        self.history: list[str] = list(history or [])
        self.interactive = interactive
        self.lab: Lab | None = None
        self.files: FileSource | None = None
        self.cwd: Path = ()
        self.failed = False
        self.violation_reported = False
        self.exit_requested = False
        self._text: list[str] = []  # --format json: the running command's text lines

    # ------------------------------------------------------------------ output
    def out(self, text: str = "") -> None:
        """Print lines of output (with ``--format json``: see the module docs)."""
        if self.format == "json":
            if _is_json(text):
                self.sink(text, False)
            else:
                self._text.extend(text.split("\n"))
            return
        for line in text.split("\n"):
            self.sink(line, False)

    def flush_text(self, command: str) -> None:
        """With ``--format json``: print the text lines gathered so far as one object."""
        if self._text:
            lines, self._text = self._text, []
            self.sink(json.dumps({"command": command, "output": lines}, ensure_ascii=False),
                      False)

    def error(self, text: str) -> None:
        """Print one error line and mark the session failed."""
        self.failed = True
        self.sink(text, True)

    @property
    def exit_code(self) -> int:
        """2 after an invariant violation, else 1 after a failed command, else 0."""
        if self.violation_reported:
            return EXIT_VIOLATION
        return EXIT_FAILED if self.failed else EXIT_OK

    # ------------------------------------------------------------------ sources
    def require_lab(self) -> Lab:
        """The simulation; CommandError when there is none."""
        if self.lab is not None:
            return self.lab
        if self.files is not None:
            raise CommandError(f"there is no simulation: this shell shows the Kafka files "
                               f"{self.files.path} (start one with: cluster)")
        raise CommandError("there is no simulation yet: start one with 'cluster' (see man "
                           "cluster), or run 'kraftsim shell --demo'")

    def root(self) -> Dir:
        """``/``: ``image`` (what the viewed node published), ``local`` and, once the lab
        runs transaction coordinators, ``transactions`` (``__transaction_state``)."""
        children: dict[str, Node | Callable[[], Node]] = {"image": self._image_dir,
                                                          "local": self._local_dir}
        if self.lab is not None and self.lab.txn.txns is not None:
            lab = self.lab
            children["transactions"] = lambda: transactions_dir(lab)
        return static_dir(children)

    def _image_dir(self) -> Dir:
        if self.files is not None:
            return image_dir(self.files.image, self.files.time_of, redact=self.redact)
        lab = self.require_lab()
        return image_dir(lab.view_image(lab.view), lab.time_of, redact=self.redact)

    def view_description(self) -> str:
        """What ``/image`` shows, in words."""
        if self.files is not None:
            return self.files.describe()
        if self.lab is not None:
            return self.lab.view_label(self.lab.view)
        return "nothing: there is no simulation yet"

    def _local_dir(self) -> Dir:
        return static_dir({
            "version": text_file(f"kraftsim {kraftsim_version()}"),
            "node": text_file(self.view_description()),
        })

    # ------------------------------------------------------------------ running
    def execute(self, line: str) -> bool:
        """Run one command line; returns False when it failed."""
        text = line.strip()
        if not text or text.startswith("#"):
            return True
        self.history.append(text)
        failed_before, self.failed = self.failed, False
        try:
            self._dispatch(text)
        finally:
            self._after_command()
            self.flush_text(text)
            ok = not self.failed
            self.failed = failed_before or self.failed
        return ok

    def _dispatch(self, text: str) -> None:
        try:
            words = split_words(text)
        except CommandError as exc:
            self.error(str(exc))
            return
        if not words:
            return
        name, args = words[0], words[1:]
        command = COMMANDS.get(name)
        if command is None:
            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            self.error(f"{name}: unknown command{hint}; 'help' lists the commands")
            return
        try:
            command.run(self, args)
        except CommandError as exc:
            self.error(f"{name}: {exc}")
        except RecursionError:
            self.error(f"{name}: internal error: too deep")
        except Exception as exc:  # never a traceback in front of the user
            self.error(f"{name}: internal error: {type(exc).__name__}: {exc}")

    def _after_command(self) -> None:
        lab = self.lab
        if lab is None:
            return
        for report in lab.drain_reports():
            self.out(report)
        violation = lab.cluster.sim.violation
        if violation is not None and not self.violation_reported:
            self.violation_reported = True
            self.sink(f"INVARIANT VIOLATED at {lab.now} ms: {violation}", True)
