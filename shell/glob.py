"""Glob components matched in time linear in the name: no backtracking.

A component may hold ``*`` (any run of characters), ``?`` (one character)
and ``{a,b}`` (one of the alternatives, which may nest and hold globs);
``\\`` makes the next character literal; ``,`` and ``}`` outside braces are
literal. A regular expression built from such a pattern backtracks
exponentially (``*`` sixty times then ``x`` against ``version`` runs for
minutes), so :class:`Glob` instead runs the pattern as a nondeterministic
automaton whose states are positions in the pattern, advancing the set of
live positions one character of the name at a time. Sets of positions
already seen are kept with their transitions (a lazily built DFA), so a
directory of similar names costs little more than one name.

A pattern without braces takes a faster road: the runs between its ``*`` s
must occur in the name in order, and taking each at its leftmost place is
never wrong, so one forward scan (``str.find``) decides.

Matching a name of length ``n`` against a pattern of length ``m`` costs at
most O(n * m); compiling costs O(m).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LITERAL, _ANY_ONE, _ANY_RUN, _SPLIT, _JUMP, _ACCEPT = range(6)

_CACHE_LIMIT = 20_000
"""Transitions kept per pattern; beyond this the cache starts over (memory stays bounded)."""


class GlobError(ValueError):
    """A malformed glob (an unclosed ``{``); the message is one line."""


def is_glob(component: str) -> bool:
    """True when the component holds an unescaped ``*``, ``?`` or ``{``."""
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "*?{":
            return True
        i += 1
    return False


def unescape(component: str) -> str:
    """The component with each ``\\x`` replaced by ``x`` (a trailing ``\\`` stays)."""
    if "\\" not in component:
        return component
    out: list[str] = []
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "\\" and i + 1 < len(component):
            out.append(component[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class Glob:
    """One compiled glob component; :meth:`matches` tests a whole name.

    Raises :class:`GlobError` when a ``{`` is never closed.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._kind: list[int] = []
        self._char: list[str] = []
        self._next: list[tuple[int, ...]] = []
        self._compile(pattern)
        self._start = self._closure((0,))
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self._runs = self._star_runs()

    def _star_runs(self) -> list[_Run] | None:
        """The runs between ``*`` s (first and last may be empty); None with braces."""
        if _SPLIT in self._kind:
            return None
        runs: list[_Run] = []
        current: list[int] = []
        for state, kind in enumerate(self._kind):
            if kind in (_ANY_RUN, _ACCEPT):
                runs.append(_Run(self._char[s] if self._kind[s] == _LITERAL else None
                                 for s in current))
                current = []
            else:
                current.append(state)
        return runs

    # ------------------------------------------------------------------ compile
    def _add(self, kind: int, char: str = "") -> int:
        self._kind.append(kind)
        self._char.append(char)
        self._next.append(())
        return len(self._kind) - 1

    def _compile(self, pattern: str) -> None:
        """One state per pattern element; braces become split and jump states."""
        open_groups: list[tuple[int, list[int]]] = []  # (split state, jump states)
        previous_was_run = False
        i = 0
        while i < len(pattern):
            ch = pattern[i]
            if ch == "\\" and i + 1 < len(pattern):
                self._add(_LITERAL, pattern[i + 1])
                i += 2
                previous_was_run = False
                continue
            i += 1
            if ch == "*":
                if not previous_was_run:  # "**" matches what "*" matches
                    self._add(_ANY_RUN)
                previous_was_run = True
                continue
            previous_was_run = False
            if ch == "?":
                self._add(_ANY_ONE)
            elif ch == "{":
                split = self._add(_SPLIT)
                self._next[split] = (split + 1,)
                open_groups.append((split, []))
            elif ch == "," and open_groups:
                split, jumps = open_groups[-1]
                jumps.append(self._add(_JUMP))
                self._next[split] = (*self._next[split], len(self._kind))
            elif ch == "}" and open_groups:
                split, jumps = open_groups.pop()
                jumps.append(self._add(_JUMP))
                after = len(self._kind)
                for jump in jumps:
                    self._next[jump] = (after,)
            else:
                self._add(_LITERAL, ch)
        if open_groups:
            raise GlobError(f"unbalanced '{{' in {pattern!r}")
        self._add(_ACCEPT)
        for state, kind in enumerate(self._kind):
            if kind in (_LITERAL, _ANY_ONE, _ANY_RUN):
                self._next[state] = (state + 1,)

    # ------------------------------------------------------------------ match
    def _closure(self, states: tuple[int, ...] | list[int]) -> frozenset[int]:
        """The states reachable without reading a character."""
        seen: set[int] = set()
        stack = list(states)
        kind, following = self._kind, self._next
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            k = kind[state]
            if k in (_SPLIT, _JUMP):
                stack.extend(following[state])
            elif k == _ANY_RUN:
                stack.append(state + 1)
        return frozenset(s for s in seen if kind[s] not in (_SPLIT, _JUMP))

    def _step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        key = (states, ch)
        found = self._steps.get(key)
        if found is not None:
            return found
        kind, char = self._kind, self._char
        moved: list[int] = []
        for state in states:
            k = kind[state]
            if k == _ANY_RUN:
                moved.append(state)
            elif k == _ANY_ONE or (k == _LITERAL and char[state] == ch):
                moved.append(state + 1)
        result = self._closure(moved) if moved else frozenset()
        if len(self._steps) >= _CACHE_LIMIT:
            self._steps.clear()
        self._steps[key] = result
        return result

    def matches(self, name: str) -> bool:
        """True when the whole of ``name`` matches the pattern."""
        if self._runs is not None:
            return _match_runs(self._runs, name)
        states = self._start
        for ch in name:
            states = self._step(states, ch)
            if not states:
                return False
        accept = len(self._kind) - 1
        return accept in states


class _Run:
    """A piece of pattern between two ``*`` s: literal characters and ``?`` (None)."""

    def __init__(self, chars: Iterable[str | None]) -> None:
        items = list(chars)
        self.length = len(items)
        self.text: str | None = None
        self.regex: re.Pattern[str] | None = None
        if None in items:
            self.regex = re.compile("".join("." if c is None else re.escape(c) for c in items),
                                    re.DOTALL)
        else:
            self.text = "".join(c for c in items if c is not None)

    def find(self, name: str, start: int, end: int) -> int:
        """Leftmost place at or after ``start`` where the run fits before ``end``; -1 if none."""
        if self.text is not None:
            return name.find(self.text, start, end)
        assert self.regex is not None
        found = self.regex.search(name, start, end)
        return -1 if found is None else found.start()

    def fits_at(self, name: str, at: int) -> bool:
        """True when the run matches ``name`` exactly at ``at``."""
        if self.text is not None:
            return name.startswith(self.text, at)
        assert self.regex is not None
        return self.regex.match(name, at, at + self.length) is not None


def _match_runs(runs: list[_Run], name: str) -> bool:
    """Match a brace-free pattern given as its runs between ``*`` s."""
    first, last = runs[0], runs[-1]
    if len(runs) == 1:
        return len(name) == first.length and first.fits_at(name, 0)
    tail = len(name) - last.length
    if tail < first.length or not first.fits_at(name, 0) or not last.fits_at(name, tail):
        return False
    position = first.length
    for run in runs[1:-1]:
        found = run.find(name, position, tail)
        if found < 0:
            return False
        position = found + run.length
    return True
