"""The simulated network: per-link latency, loss, duplication, reordering, partitions.

Every random choice comes from the ``random.Random`` the simulation hands in,
in the order messages are sent, so a seed fixes every delivery time. A
partition is checked when a message would arrive: whatever is in flight when
a partition starts is lost, as on a cut link.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from raft.config import ConfigError


class LinkConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How one directed link behaves. Delays are simulated milliseconds."""

    latency_ms: int = 1
    """Base one-way delay."""
    jitter_ms: int = 2
    """Random extra delay in [0, jitter]."""
    drop_rate: float = 0.0
    """Probability that a message is lost."""
    duplicate_rate: float = 0.0
    """Probability that a message is delivered twice."""
    reorder_rate: float = 0.0
    """Probability that a message takes an extra delay of up to ``reorder_ms``."""
    reorder_ms: int = 50
    """The largest extra delay of a reordered message."""

    def validate(self, prefix: str = "network") -> LinkConfig:
        """Return self, or raise ConfigError naming the bad field."""
        for name in ("latency_ms", "jitter_ms", "reorder_ms"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{prefix}.{name}", "must not be negative")
        for name in ("drop_rate", "duplicate_rate", "reorder_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{prefix}.{name}", f"must be within [0, 1], got {value}")
        return self


class Network:
    """Decides when (and whether) each message arrives."""

    def __init__(self, rng: random.Random, default: LinkConfig) -> None:
        self.rng = rng
        self.default = default.validate()
        self.links: dict[tuple[int, int], LinkConfig] = {}
        self.blocked: set[tuple[int, int]] = set()

    def set_link(self, src: int, dst: int, config: LinkConfig) -> None:
        """Give the directed link src -> dst its own behaviour."""
        self.links[(src, dst)] = config.validate(f"link {src}->{dst}")

    def transmit(self, src: int, dst: int, now: int) -> list[int]:
        """Arrival times of one message sent now (empty: lost; two: duplicated)."""
        link = self.links.get((src, dst), self.default) if self.links else self.default
        rng = self.rng
        if link.drop_rate and rng.random() < link.drop_rate:
            return []
        if link.duplicate_rate and rng.random() < link.duplicate_rate:
            return [now + self._delay(link), now + self._delay(link)]
        if link.reorder_rate:
            return [now + self._delay(link)]
        jitter = link.jitter_ms  # _delay, inline: one copy, no reordering (the usual case)
        return [now + link.latency_ms + rng._randbelow(jitter + 1)  # type: ignore[attr-defined]
                if jitter else now + link.latency_ms]

    def _delay(self, link: LinkConfig) -> int:
        """One copy's delay. ``_randbelow(n + 1)`` is what ``randint(0, n)`` draws, without
        its argument checks (the same numbers from the same state)."""
        rng = self.rng
        delay = link.latency_ms
        if link.jitter_ms:
            delay += rng._randbelow(link.jitter_ms + 1)  # type: ignore[attr-defined]
        if link.reorder_rate and rng.random() < link.reorder_rate:
            delay += 1 + rng._randbelow(max(1, link.reorder_ms))  # type: ignore[attr-defined]
        return delay

    def can_deliver(self, src: int, dst: int) -> bool:
        """False while a partition cuts src -> dst."""
        return (src, dst) not in self.blocked

    def connected(self, a: int, b: int) -> bool:
        """Both ways: no partition cuts a -> b nor b -> a."""
        blocked = self.blocked
        return (a, b) not in blocked and (b, a) not in blocked

    def partition(self, groups: Iterable[Iterable[int]], all_nodes: Iterable[int]) -> None:
        """Cut every link between different groups; nodes in no group form one more group."""
        group_of: dict[int, int] = {}
        listed = [sorted(set(g)) for g in groups]
        for index, group in enumerate(listed):
            for node in group:
                group_of[node] = index
        nodes = sorted(set(all_nodes))
        for node in nodes:
            group_of.setdefault(node, len(listed))
        for a in nodes:
            for b in nodes:
                if group_of[a] != group_of[b]:
                    self.blocked.add((a, b))

    def isolate(self, node: int, all_nodes: Iterable[int]) -> None:
        """Cut every link to and from ``node``."""
        for other in all_nodes:
            if other != node:
                self.blocked.add((node, other))
                self.blocked.add((other, node))

    def block(self, src: int, dst: int) -> None:
        """Cut the one-way link src -> dst."""
        self.blocked.add((src, dst))

    def heal(self) -> None:
        """Restore every link."""
        self.blocked.clear()
