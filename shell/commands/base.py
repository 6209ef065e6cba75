"""What every shell command is: a name, its usage, a man page and a handler.

Arguments are words; lab options are ``key=value`` words in any order after
the positional ones. Parsing problems are :class:`CommandError` s whose one
line ends with the usage, and an unknown option gets a "did you mean".
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shell.errors import CommandError
from sim.settings import SettingError, parse_int

if TYPE_CHECKING:
    from shell.session import Session

Handler = Callable[["Session", list[str]], None]
"""Runs a command with its argument words; writes through the session; raises CommandError."""
Converter = Callable[[str, str], Any]
"""Turns an option's text into its value, given (key, text); raises CommandError."""


@dataclass(frozen=True)
class Command:
    """One command of the shell and the lab language."""

    name: str
    synopsis: str
    summary: str
    man: str
    run: Handler
    completes: str = ""
    """What a word completes to: ``path``, ``node``, ``command``, ``producer`` (the first
    argument: a producer's name) or nothing."""
    words: tuple[str, ...] = ()
    """Fixed first words offered by completion (e.g. ``leader idle open-txn``)."""
    verbs: tuple[str, ...] = ()
    """Words offered by completion after the first argument (``producer NAME init``)."""
    options: tuple[str, ...] = field(default=())
    """Option keys offered by completion (``partitions``, ...)."""

    def usage(self) -> str:
        """``usage: SYNOPSIS``."""
        return f"usage: {self.synopsis}"


def integer(minimum: int | None = None, maximum: int | None = None) -> Converter:
    """An integer option within bounds (checked before it is converted, however long)."""
    def convert(key: str, text: str) -> int:
        try:
            return parse_int(key, text, minimum, maximum)
        except SettingError as exc:
            raise CommandError(exc.line()) from None
    return convert


def choice(*options: str) -> Converter:
    """One of fixed words."""
    def convert(key: str, text: str) -> str:
        if text not in options:
            close = difflib.get_close_matches(text, options, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise CommandError(f"{key} must be one of {', '.join(options)}, got "
                               f"{text!r}{hint}")
        return text
    return convert


def parse_args(command: Command, words: Sequence[str], positional: Sequence[str] = (),
               optional: Sequence[str] = (), options: dict[str, Converter] | None = None,
               rest: bool = False, free_pairs: bool = False) -> tuple[list[str], dict[str, Any]]:
    """Split ``words`` into positional values and converted ``key=value`` options.

    ``positional`` names the required words, ``optional`` the words that may
    follow them; with ``rest`` any further plain words are kept too, and with
    ``free_pairs`` a ``key=value`` word whose key is no option is a plain word.
    """
    options = options or {}
    values: list[str] = []
    found: dict[str, Any] = {}
    for word in words:
        key, eq, text = word.partition("=")
        if eq and key in options:
            if key in found:
                raise CommandError(f"{key} given twice ({command.usage()})")
            found[key] = options[key](key, text)
        elif eq and not free_pairs:
            raise CommandError(unknown_option(command, key, options))
        else:
            values.append(word)
    if len(values) < len(positional):
        missing = positional[len(values)]
        raise CommandError(f"missing {missing} ({command.usage()})")
    if not rest and len(values) > len(positional) + len(optional):
        extra = values[len(positional) + len(optional)]
        raise CommandError(f"unexpected argument {extra!r} ({command.usage()})")
    return values, found


def unknown_option(command: Command, key: str, options: Mapping[str, object]) -> str:
    """The error for an option ``command`` does not take, with a "did you mean"."""
    if not options:
        return f"{command.name} takes no key=value options ({command.usage()})"
    close = difflib.get_close_matches(key, list(options), n=1)
    hint = f"did you mean {close[0]}=?" if close else \
        f"options: {', '.join(k + '=' for k in options)}"
    return f"unknown option {key!r} ({hint})"
