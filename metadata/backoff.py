"""Kafka's ExponentialBackoff: a retry's pause grows by a factor per failed attempt
(the broker's lifecycle manager and the controller's registration manager use it).

The pause after ``attempts`` failures is ``initial * multiplier ** attempts``,
the exponent capped where the pause reaches ``maximum``, scaled by a factor
drawn uniformly from ``[1 - jitter, 1 + jitter)`` and truncated to whole
milliseconds, and never above ``maximum``. The factor comes from the seeded
``random.Random`` the caller hands in (Kafka draws it from the thread's own
generator), so a seed fixes every pause.
"""

from __future__ import annotations

import math
import random

import msgspec


class ExponentialBackoff(msgspec.Struct, frozen=True):
    """Pauses of ``initial`` ms, times ``multiplier`` per failed attempt, up to ``maximum`` ms,
    each spread by ``jitter`` (a fraction) either way."""

    initial: int
    multiplier: int
    maximum: int
    jitter: float

    def backoff(self, attempts: int, rng: random.Random) -> int:
        """The pause in ms after ``attempts`` failed attempts in a row (0: the first retry)."""
        initial = min(self.initial, self.maximum)
        if self.maximum <= initial:
            return initial
        cap = math.log(self.maximum / max(initial, 1)) / math.log(self.multiplier)
        term = initial * self.multiplier ** min(attempts, cap)
        factor = 1 - self.jitter + 2 * self.jitter * rng.random() if self.jitter > 0 else 1.0
        return min(int(factor * term), self.maximum)
