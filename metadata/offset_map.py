"""Values by log offset, kept in offset order: the revert points of a controller and of
the checkers' reference replay.

Points are added at growing offsets (an append) and dropped from either end
or just above the stable offset; a look-up asks for the newest point at or
before an offset. A list of offsets and a dict of values do all of that, and
a forked cluster copies them as the plain containers they are (pickle, in C:
a ``sortedcontainers.SortedDict`` was rebuilt through its ``__init__`` in
Python, ~10 us each, four per fork of a failover cluster).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

V = TypeVar("V")


class OffsetMap(Generic[V]):
    """A mapping of offsets to values, iterated in offset order, with positional access."""

    __slots__ = ("_offsets", "_values")

    def __init__(self, items: Iterable[tuple[int, V]] = ()) -> None:
        self._offsets: list[int] = []
        self._values: dict[int, V] = {}
        for offset, value in items:
            self[offset] = value

    def __len__(self) -> int:
        return len(self._offsets)

    def __iter__(self) -> Iterator[int]:
        return iter(self._offsets)

    def __contains__(self, offset: object) -> bool:
        return offset in self._values

    def __getitem__(self, offset: int) -> V:
        return self._values[offset]

    def __setitem__(self, offset: int, value: V) -> None:
        offsets = self._offsets
        if offset not in self._values:
            if not offsets or offset > offsets[-1]:
                offsets.append(offset)
            else:
                insort(offsets, offset)
        self._values[offset] = value

    def __repr__(self) -> str:
        return f"OffsetMap({[(o, self._values[o]) for o in self._offsets]!r})"

    def get(self, offset: int) -> V | None:
        """The value at exactly ``offset``, or None."""
        return self._values.get(offset)

    def bisect_right(self, offset: int) -> int:
        """The position of the first offset greater than ``offset``."""
        return bisect_right(self._offsets, offset)

    def peekitem(self, index: int = -1) -> tuple[int, V]:
        """(offset, value) at position ``index`` (negative counts from the end)."""
        offset = self._offsets[index]
        return offset, self._values[offset]

    def popitem(self, index: int = -1) -> tuple[int, V]:
        """Remove and return (offset, value) at position ``index``."""
        offset = self._offsets.pop(index)
        return offset, self._values.pop(offset)

    def clear(self) -> None:
        """Remove every offset."""
        self._offsets.clear()
        self._values.clear()
