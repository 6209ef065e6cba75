"""Command lines of the raft interaction tests: words, ``key=value`` options, message filters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from raft import Envelope
from tests.raft import render


class CommandError(Exception):
    """A command that cannot run as written."""


@dataclass
class Args:
    """A command line split into its name, positional arguments and ``key=value`` options."""

    name: str
    positional: list[str]
    options: dict[str, str]

    @classmethod
    def parse(cls, line: str) -> Args:
        """Split ``line``; raises CommandError on an empty line."""
        words = line.split()
        if not words:
            raise CommandError("empty command")
        positional: list[str] = []
        options: dict[str, str] = {}
        for word in words[1:]:
            key, eq, value = word.partition("=")
            if eq:
                options[key] = value
            else:
                positional.append(word)
        return cls(words[0], positional, options)

    def int_option(self, key: str, default: int | None = None) -> int | None:
        """An integer option (``default`` when absent)."""
        if key not in self.options:
            return default
        return parse_int(self.options[key], key)

    def ids_option(self, key: str) -> tuple[int, ...] | None:
        """A comma-separated list of node ids, or None when absent."""
        if key not in self.options:
            return None
        return parse_ids(self.options[key])

    def check_options(self, allowed: Iterable[str]) -> None:
        """Raise CommandError for an option the command does not know."""
        unknown = sorted(set(self.options) - set(allowed))
        if unknown:
            raise CommandError(f"{self.name}: unknown option {unknown[0]}")


def parse_int(text: str, what: str) -> int:
    """``text`` as an integer; raises CommandError naming ``what`` otherwise."""
    try:
        return int(text)
    except ValueError:
        raise CommandError(f"{what}: not an integer: {text!r}") from None


def parse_ids(text: str) -> tuple[int, ...]:
    """Comma-separated node ids."""
    return tuple(parse_int(part, "node id") for part in text.split(",") if part)


@dataclass
class Filter:
    """Which queued messages a ``deliver`` or ``drop`` takes."""

    src: int | None = None
    dst: int | None = None
    kind: str | None = None
    count: int | None = None

    @classmethod
    def parse(cls, args: Args) -> Filter:
        """From ``SRC->DST`` (either side may be empty), ``type=`` and ``count=``."""
        args.check_options(("type", "count"))
        found = cls(kind=args.options.get("type"), count=args.int_option("count"))
        for word in args.positional:
            src, arrow, dst = word.partition("->")
            if not arrow:
                raise CommandError(f"{args.name}: expected SRC->DST, got {word!r}")
            found.src = parse_int(src, "source") if src else None
            found.dst = parse_int(dst, "destination") if dst else None
        return found

    def matches(self, env: Envelope) -> bool:
        """True when ``env`` is one of the messages this filter names."""
        return (self.src in (None, env.src) and self.dst in (None, env.dst)
                and self.kind in (None, render.message_kind(env)))
