"""Lab scripts and golden transcripts (etcd's datadriven layout).

A script is a sequence of commands, one per line; ``#`` lines and blank lines
are comments. In a transcript each command is followed by ``----`` and its
expected output, which ends at the first blank line::

    create-topic big partitions=2000
    ----
    op 1 (create-topic big): submitted to controller 3000: ...

Output that contains blank lines is fenced by two ``----`` lines on both
sides. Comments are kept when a transcript is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEPARATOR = "----"


@dataclass
class Entry:
    """One command, the comment lines before it and its expected output (None: none given)."""

    command: str
    line: int
    before: list[str] = field(default_factory=list)
    expected: list[str] | None = None
    actual: list[str] | None = None


@dataclass
class Transcript:
    """A parsed script or transcript."""

    entries: list[Entry]
    trailer: list[str]


def parse(text: str) -> Transcript:
    """Entries of a script or transcript (never fails: anything else is a command)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries: list[Entry] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            pending.append(line)
            i += 1
            continue
        entry = Entry(line.strip(), i + 1, pending)
        pending = []
        i += 1
        if i < len(lines) and lines[i] == SEPARATOR:
            i += 1
            out: list[str] = []
            if i < len(lines) and lines[i] == SEPARATOR:
                i += 1
                while i < len(lines) and not (lines[i] == SEPARATOR and i + 1 < len(lines)
                                              and lines[i + 1] == SEPARATOR):
                    out.append(lines[i])
                    i += 1
                i += 2
            else:
                while i < len(lines) and lines[i].strip():
                    out.append(lines[i])
                    i += 1
            entry.expected = out
        entries.append(entry)
    return Transcript(entries, pending)


def format_entry(command: str, output: list[str]) -> list[str]:
    """A command with its output, in the transcript layout (no trailing blank line)."""
    if any(not line.strip() for line in output):
        return [command, SEPARATOR, SEPARATOR, *output, SEPARATOR, SEPARATOR]
    return [command, SEPARATOR, *output]


def render(transcript: Transcript) -> str:
    """The transcript with each entry's actual output (or its expected one, if not run)."""
    lines: list[str] = []
    for entry in transcript.entries:
        if lines and not (entry.before and not entry.before[0].strip()):
            lines.append("")
        lines.extend(entry.before)
        output = entry.actual if entry.actual is not None else entry.expected
        lines.extend(format_entry(entry.command, output or []))
    trailer = list(transcript.trailer)
    while trailer and not trailer[-1].strip():
        trailer.pop()
    lines.extend(trailer)
    return "\n".join(lines) + "\n"
