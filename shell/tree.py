"""The shell's file system: directories and files that are computed when read.

A directory knows its child names and can look one child up; a file renders
itself as text (what ``cat`` prints) and as JSON (``--format json``, with
Kafka's field names). Nothing is materialised ahead of time, so a topic with a
million partitions costs nothing until someone lists it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting ``2`` before ``10`` (and numbers before words)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", name) if part)


class Node:
    """A directory or a file of the shell's tree."""

    is_dir = False


class File(Node):
    """A file: ``text()`` is what ``cat`` prints, ``json()`` its JSON value."""

    def __init__(self, text: Callable[[], str], value: Callable[[], Any] | None = None) -> None:
        self._text = text
        self._value = value

    def text(self) -> str:
        """The file's content as ``cat`` prints it."""
        return self._text()

    def json(self) -> Any:
        """The file's content as a JSON value."""
        return self._value() if self._value is not None else self._text()


def text_file(value: object) -> File:
    """A file holding ``str(value)`` (its JSON value is ``value`` itself)."""
    return File(lambda: str(value), lambda: value)


class Dir(Node):
    """A directory whose children are computed on demand."""

    is_dir = True

    def __init__(self, names: Callable[[], Iterable[str]],
                 child: Callable[[str], Node | None]) -> None:
        self._names = names
        self._child = child

    def names(self) -> list[str]:
        """Child names in natural order."""
        return sorted(self._names(), key=natural_key)

    def child(self, name: str) -> Node | None:
        """The child called ``name``, if there is one."""
        return self._child(name)


def static_dir(children: Mapping[str, Node | Callable[[], Node]]) -> Dir:
    """A directory with fixed child names; a child may be built lazily by a callable."""

    def child(name: str) -> Node | None:
        found = children.get(name)
        if found is None or isinstance(found, Node):
            return found
        return found()

    return Dir(lambda: children.keys(), child)


def mapped_dir(keys: Callable[[], Iterable[str]], build: Callable[[str], Node | None]) -> Dir:
    """A directory with one child per key; ``build`` returns None for an unknown key."""
    return Dir(keys, build)
