"""Transcript files of the raft interaction tests: commands with their expected output.

The layout is the one the shell's golden transcripts use (etcd's datadriven
layout): a command on one line, ``----``, its output, then a blank line.
Lines starting with ``#`` (and blank lines) before a command are comments and
survive a rewrite. The interpreter never prints a blank line, so an output
ends at the first blank line.

    campaign 1
    ----
    t=1000 1 Prospective epoch=0 leader=- voted=- log=0@e0 hw=-
      1->2 PreVote epoch=0 candidate=1 log=0@e0
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

SEPARATOR = "----"


@dataclass
class Case:
    """One command with the comment lines before it and its outputs."""

    command: str
    line: int
    comments: list[str] = field(default_factory=list)
    expected: list[str] | None = None
    actual: list[str] | None = None


@dataclass
class Script:
    """A parsed transcript; ``trailer`` holds comment lines after the last command."""

    cases: list[Case]
    trailer: list[str] = field(default_factory=list)


def parse(text: str) -> Script:
    """Cases of a transcript; a command without ``----`` has no expected output."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cases: list[Case] = []
    comments: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.startswith("#"):
            comments.append(line)
            continue
        case = Case(line.strip(), i, comments)
        comments = []
        if i < len(lines) and lines[i] == SEPARATOR:
            i += 1
            output: list[str] = []
            while i < len(lines) and lines[i].strip():
                output.append(lines[i])
                i += 1
            case.expected = output
        cases.append(case)
    return Script(cases, comments)


def render(script: Script) -> str:
    """The transcript text with each case's actual output (its expected one if not run)."""
    out: list[str] = []
    for case in script.cases:
        comments = list(case.comments)
        if out and (not comments or comments[0].strip()):
            out.append("")
        out.extend(comments)
        output = case.actual if case.actual is not None else case.expected
        out.append(case.command)
        out.append(SEPARATOR)
        out.extend(output or [])
    trailer = list(script.trailer)
    while trailer and not trailer[-1].strip():
        trailer.pop()
    out.extend(trailer)
    return "\n".join(out) + "\n"


def run(script: Script, execute: Callable[[str], list[str]]) -> None:
    """Run every command in order, storing what it printed in ``actual``."""
    for case in script.cases:
        case.actual = execute(case.command)


def differences(name: str, script: Script) -> list[str]:
    """A unified diff for each case whose output is not the expected one."""
    out: list[str] = []
    for case in script.cases:
        if case.expected == case.actual:
            continue
        out.append(f"{name}:{case.line}: {case.command}")
        out.extend(difflib.unified_diff(case.expected or [], case.actual or [],
                                        "expected", "actual", lineterm="", n=3))
    return out
