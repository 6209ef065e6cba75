"""The virtual clock and the one event queue of a simulation.

Events are ordered by (simulated time in ms, insertion sequence): two events
at the same millisecond run in the order they were scheduled, so a run is a
function of its seed and inputs only.
"""

from __future__ import annotations

import heapq
from typing import Any


class EventQueue:
    """A min-heap of (time, sequence, event) with a clock that only moves forward."""

    def __init__(self) -> None:
        self.heap: list[tuple[int, int, Any]] = []
        """The heap itself (a hot loop may pop it inline, as :meth:`pop_due`); never
        replaced, only changed in place."""
        self._seq = 0
        self.now = 0

    def __len__(self) -> int:
        return len(self.heap)

    def schedule(self, time: int, event: Any) -> None:
        """Queue ``event`` at ``time`` (never before the current time)."""
        heapq.heappush(self.heap, (time if time > self.now else self.now, self._seq, event))
        self._seq += 1

    def peek_time(self) -> int | None:
        """Time of the next event, if any."""
        return self.heap[0][0] if self.heap else None

    def pop_due(self, time: int) -> tuple[int, Any] | None:
        """:meth:`pop` if the next event is at or before ``time``, else None."""
        heap = self.heap
        if not heap or heap[0][0] > time:
            return None
        at, _, event = heapq.heappop(heap)
        self.now = at
        return at, event

    def entries(self) -> list[tuple[int, int, Any]]:
        """Every queued (time, sequence, event), in no particular order."""
        return list(self.heap)

    def remove(self, entry: tuple[int, int, Any]) -> None:
        """Take one queued entry out."""
        self.heap.remove(entry)
        heapq.heapify(self.heap)

    def pop(self) -> tuple[int, Any]:
        """Remove the next event and advance the clock to its time."""
        time, _, event = heapq.heappop(self.heap)
        self.now = time
        return time, event
