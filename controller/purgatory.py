"""Purgatory: what the active controller's writes wait for before they are answered.

Kafka's ``DeferredEventQueue`` (``ControllerPurgatory`` before 3.5): each write
waits, by the offset of its last record, until the last stable offset reaches
it; entries are kept in offset order, and one whose offset is below the
highest pending one is refused. An operation that writes nothing waits for the
highest pending offset, because its answer was read from a state that may hold
uncommitted records.

The controller's own writes (activation records, periodic NoOps, preferred
and unclean elections) are held here too, without an operation: in Kafka they
are write events like any other, so a read submitted behind them waits for
them. ``len()`` counts only the operations waiting.
"""

from __future__ import annotations

from collections import deque

from controller.errors import ApiError
from controller.handle import OperationHandle


class Purgatory:
    """Writes waiting for the last stable offset, in offset order; see the module docs."""

    __slots__ = ("_entries", "_operations")

    def __init__(self) -> None:
        self._entries: deque[tuple[int, OperationHandle | None]] = deque()
        self._operations = 0

    def add(self, offset: int, handle: OperationHandle | None = None) -> None:
        """Hold ``handle`` (None: a write of the controller's own) until ``offset`` is
        stable. Raises ValueError if ``offset`` is below the highest pending offset."""
        if self._entries and offset < self._entries[-1][0]:
            raise ValueError(f"There is already a write pending at offset "
                             f"{self._entries[-1][0]}; one at offset {offset}, lower than "
                             f"that, cannot be added")
        self._entries.append((offset, handle))
        if handle is not None:
            self._operations += 1

    @property
    def highest_pending_offset(self) -> int | None:
        """The offset of the newest pending write, or None when nothing is pending."""
        return self._entries[-1][0] if self._entries else None

    def complete_up_to(self, offset: int, now: int) -> int:
        """Commit every operation waiting at or below ``offset`` (the last stable offset);
        returns how many were committed."""
        entries = self._entries
        completed = 0
        while entries and entries[0][0] <= offset:
            handle = entries.popleft()[1]
            if handle is not None:
                self._operations -= 1
                completed += 1
                handle.commit(now)
        return completed

    def fail_all(self, error: ApiError, now: int) -> None:
        """Fail every pending operation with ``error`` (leadership lost, a fault, a stop)
        and forget the controller's own pending writes."""
        entries, self._entries = self._entries, deque()
        self._operations = 0
        for _, handle in entries:
            if handle is not None:
                handle.fail(error, now)

    def __len__(self) -> int:
        """How many operations are pending (the controller's own writes not counted)."""
        return self._operations
