"""Paths in the shell's tree: ``.``/``..``, relative paths and globs.

A glob component may hold ``*`` (any run of characters), ``?`` (one
character) and ``{a,b}`` (one of the alternatives, which may themselves hold
globs); ``\\`` makes the next character literal. Globs never cross a ``/``.
Matches come out in natural order; a pattern that matches nothing is an
error naming the first component that found nothing. Matching is linear in
the name (see :mod:`shell.glob`), so no pattern can make the shell hang.
"""

from __future__ import annotations

import difflib

from shell.glob import Glob, GlobError, is_glob, unescape
from shell.tree import Dir, Node

Path = tuple[str, ...]
"""An absolute path as its components (``()`` is the root)."""


class PathError(Exception):
    """A path that names nothing (or the wrong kind of node); the message is one line."""


def render(path: Path) -> str:
    """``/a/b`` (``/`` for the root)."""
    return "/" + "/".join(path)


def _split(text: str) -> list[str]:
    """Components split on ``/``, keeping escaped characters escaped."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if ch == "/":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def glob_matcher(component: str) -> Glob:
    """The compiled glob a component stands for; raises PathError if malformed."""
    try:
        return Glob(component)
    except GlobError as exc:
        raise PathError(str(exc)) from None


def normalize(cwd: Path, text: str) -> Path:
    """The absolute path ``text`` names from ``cwd`` (no globs; ``..`` stops at the root)."""
    parts = _split(text)
    path = [] if text.startswith("/") else list(cwd)
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if path:
                path.pop()
            continue
        path.append(unescape(part))
    return tuple(path)


def lookup(root: Dir, path: Path) -> Node | None:
    """The node at ``path``, if any."""
    node: Node = root
    for name in path:
        if not isinstance(node, Dir):
            return None
        found = node.child(name)
        if found is None:
            return None
        node = found
    return node


def suggestion(parent: Dir, name: str) -> str | None:
    """The child name of ``parent`` closest to ``name``, if one is close."""
    if name.isdigit():  # a partition or broker id: a "close" number is no hint
        return None
    names = parent.names()
    if len(names) > 5000:  # a huge directory: don't scan it for a hint
        return None
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _missing(text: str, parent: Dir | None, parent_path: Path, name: str) -> PathError:
    hint = suggestion(parent, name) if parent is not None else None
    if hint is not None:
        return PathError(f"{text}: no such file or directory (did you mean "
                         f"{render((*parent_path, hint))}?)")
    return PathError(f"{text}: no such file or directory")


def expand(root: Dir, cwd: Path, text: str) -> list[tuple[Path, Node]]:
    """Every node ``text`` names (globs expanded), in natural order.

    Raises PathError (``TEXT: no such file or directory``, with a "did you
    mean" hint when a name is close to an existing one) when nothing matches.
    """
    parts = _split(text)
    current: list[tuple[Path, Node]] = [((), root)] if text.startswith("/") else \
        [(cwd, _must(root, cwd, text))]
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            current = _dedupe([(p[:-1], _must(root, p[:-1], text)) for p, _ in current])
            continue
        following: list[tuple[Path, Node]] = []
        glob = glob_matcher(part) if is_glob(part) else None
        for path, node in current:
            if not isinstance(node, Dir):
                continue
            if glob is not None:
                following.extend(((*path, name), child) for name in node.names()
                                 if glob.matches(name)
                                 and (child := node.child(name)) is not None)
            else:
                name = unescape(part)
                child = node.child(name)
                if child is not None:
                    following.append(((*path, name), child))
        if not following:
            if len(current) == 1 and isinstance(current[0][1], Dir) and glob is None:
                raise _missing(text, current[0][1], current[0][0], unescape(part))
            if len(current) == 1 and not isinstance(current[0][1], Dir):
                raise PathError(f"{text}: {render(current[0][0])} is not a directory")
            raise PathError(f"{text}: no such file or directory")
        current = following
    return current


def _must(root: Dir, path: Path, text: str) -> Node:
    node = lookup(root, path)
    if node is None:
        raise PathError(f"{text}: no such file or directory")
    return node


def _dedupe(items: list[tuple[Path, Node]]) -> list[tuple[Path, Node]]:
    seen: set[Path] = set()
    out = []
    for path, node in items:
        if path not in seen:
            seen.add(path)
            out.append((path, node))
    return out
