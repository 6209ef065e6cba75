"""Kafka's metadata shell commands over the tree: ls, cd, pwd, cat, find, tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.commands.base import Command, parse_args
from shell.errors import CommandError
from shell.formatting import columns, to_json
from shell.paths import Path, PathError, expand, render
from shell.tree import Dir, File, Node

if TYPE_CHECKING:
    from shell.session import Session


def _expand(session: Session, target: str) -> list[tuple[Path, Node]]:
    try:
        return expand(session.root(), session.cwd, target)
    except PathError as exc:
        raise CommandError(str(exc)) from None


def _targets(session: Session, command: Command, args: list[str], default: str | None
             ) -> list[tuple[str, list[tuple[Path, Node]]]]:
    """Each target word with what it expands to.

    Every target is tried; all but the last bad one are reported on the spot and
    the last one is raised, so the command fails after doing nothing.
    """
    words = args or ([default] if default is not None else [])
    out: list[tuple[str, list[tuple[Path, Node]]]] = []
    errors: list[str] = []
    for word in words:
        try:
            out.append((word, _expand(session, word)))
        except CommandError as exc:
            errors.append(str(exc))
    for message in errors[:-1]:
        session.error(f"{command.name}: {message}")
    if errors:
        raise CommandError(errors[-1])
    return out


def run_ls(session: Session, args: list[str]) -> None:
    """``ls [PATH...]``."""
    parse_args(LS, args, rest=True, free_pairs=True)
    targets = _targets(session, LS, args, ".")
    expanded = [m for _, matches in targets for m in matches]
    file_paths = [p for p, node in expanded if not node.is_dir]
    file_names = [_last_component(path) for path in file_paths]
    dirs = [(p, node) for p, node in expanded if isinstance(node, Dir)]
    if session.format == "json":
        listing: dict[str, list[str] | None] = {render(p): None for p in file_paths}
        listing.update({render(p): d.names() for p, d in dirs})
        session.out(to_json(listing))
        return
    chunks: list[list[str]] = []
    if file_paths:
        chunks.append(columns(file_names, session.width))
    for path, node in dirs:
        lines = columns(node.names(), session.width)
        if len(expanded) > 1:
            lines = [f"{_last_component(path)}:", *lines]
        chunks.append(lines)
    first = True
    for chunk in chunks:
        if not first:
            session.out("")
        first = False
        for line in chunk:
            session.out(line)


def _last_component(path: Path) -> str:
    """What Kafka's ``ls`` names a target by: its last path component (``/`` for the root)."""
    return path[-1] if path else "/"


def run_cd(session: Session, args: list[str]) -> None:
    """``cd [PATH]``."""
    values, _ = parse_args(CD, args, optional=("PATH",), free_pairs=True)
    target = values[0] if values else "/"
    matches = _expand(session, target)
    if len(matches) > 1:
        raise CommandError(f"{target}: names {len(matches)} nodes; cd needs exactly one")
    path, node = matches[0]
    if not node.is_dir:
        raise CommandError(f"{target}: not a directory")
    session.cwd = path


def run_pwd(session: Session, args: list[str]) -> None:
    """``pwd``."""
    parse_args(PWD, args)
    session.out(render(session.cwd))


def run_cat(session: Session, args: list[str]) -> None:
    """``cat PATH...``."""
    parse_args(CAT, args, positional=("PATH",), rest=True, free_pairs=True)
    values: dict[str, object] = {}
    problems: list[str] = []
    for word, matches in _targets(session, CAT, args, None):
        for path, node in matches:
            if isinstance(node, File):
                if session.format == "json":
                    values[render(path)] = node.json()
                else:
                    session.out(node.text())
            else:
                problems.append(f"{word if len(matches) == 1 else render(path)}: "
                                f"is a directory")
    if session.format == "json" and values:
        session.out(to_json(values))
    for message in problems[:-1]:
        session.error(f"cat: {message}")
    if problems:
        raise CommandError(problems[-1])


def _walk(path: Path, node: Node) -> list[Path]:
    out = [path]
    if isinstance(node, Dir):
        for name in node.names():
            child = node.child(name)
            if child is not None:
                out.extend(_walk((*path, name), child))
    return out


def run_find(session: Session, args: list[str]) -> None:
    """``find [PATH...]``."""
    parse_args(FIND, args, rest=True, free_pairs=True)
    found = [render(p) for _, matches in _targets(session, FIND, args, ".")
             for path, node in matches for p in _walk(path, node)]
    if session.format == "json":
        session.out(to_json(found))
        return
    for line in found:
        session.out(line)


def _tree_lines(name: str, node: Node, depth: int) -> list[str]:
    pad = "  " * depth
    if isinstance(node, File):
        return [f"{pad}{name}: {node.text()}"]
    assert isinstance(node, Dir)
    lines = [f"{pad}{name}/"]
    for child_name in node.names():
        child = node.child(child_name)
        if child is not None:
            lines.extend(_tree_lines(child_name, child, depth + 1))
    return lines


def run_tree(session: Session, args: list[str]) -> None:
    """``tree [PATH...]``."""
    parse_args(TREE, args, rest=True, free_pairs=True)
    for _, matches in _targets(session, TREE, args, "."):
        for path, node in matches:
            for line in _tree_lines(render(path), node, 0):
                session.out(line)


LS = Command(
    "ls", "ls [PATH...]", "list a directory (or name a file)",
    "Lists the entries of each directory PATH names, in columns, in natural order "
    "(2 before 10). A PATH that names a file prints the file's name. With several "
    "targets each directory gets a 'PATH:' header. PATH defaults to the working "
    "directory and may use globs: * ? {a,b} (\\ escapes). With --format json: one object "
    "mapping each path to its entries (null for a file).\n\n"
    "Example: ls /image/topics/byName", run_ls, completes="path")
CD = Command(
    "cd", "cd [PATH]", "change the working directory",
    "Makes PATH (default /) the working directory. PATH must name exactly one "
    "directory; '..' goes up, '.' stays.\n\nExample: cd /image/topics/byName", run_cd,
    completes="path")
PWD = Command("pwd", "pwd", "print the working directory",
              "Prints the absolute path of the working directory.", run_pwd)
CAT = Command(
    "cat", "cat PATH...", "print files",
    "Prints each file PATH names: a partition registration, a topic id, a config "
    "value, the image provenance, ... Globs are allowed. A directory is an error. With "
    "--format json: one object mapping each path to its value, with Kafka's field "
    "names.\n\nExample: cat /image/topics/byName/orders/0", run_cat, completes="path")
FIND = Command(
    "find", "find [PATH...]", "list every path below PATH, recursively",
    "Prints PATH and every path below it, one per line, in natural order (default: the "
    "working directory). With --format json: one array of paths.\n\n"
    "Example: find /image/configs", run_find, completes="path")
TREE = Command(
    "tree", "tree [PATH...]", "print a subtree with its files' contents",
    "Prints each PATH and everything below it, indented by two spaces per level: "
    "directories end in '/', files show 'name: content'.\n\nExample: tree /image/features",
    run_tree, completes="path")

NAVIGATION = (LS, CD, PWD, CAT, FIND, TREE)
"""The tree commands."""
