"""LogDir: a broker's partition logs on disk, which outlive its process.

Kafka keeps each replica's log in ``log.dirs``; a crash or restart of the
broker process leaves it there (the page cache survives a process crash), so a
restarted broker comes back with the records, leader-epoch cache and producer
state it had, and truncates only by the divergence check once it follows a
new leader. The simulation keeps one ``LogDir`` per broker node across
incarnations and replaces it when the node's disk is wiped. A log is deleted
when the broker's image no longer assigns the replica to it (Kafka's
StopReplica with delete; stray logs found at start-up go the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from broker.partition_log import PartitionLog


class HasLog(Protocol):
    """A live replica: it holds its log."""

    @property
    def log(self) -> PartitionLog:
        """The replica's log."""


class LogDir:
    """The partition logs of one broker, by (topic id, partition).

    The live replicas of the broker's current process hold their logs (the
    replica manager attaches its replicas: a log costs no entry of its own
    here); the logs no live replica holds (those of a previous process,
    until the next one takes them over) are kept here.
    """

    def __init__(self) -> None:
        self._held: dict[tuple[str, int], PartitionLog] = {}
        self._replicas: Mapping[tuple[str, int], HasLog] = {}

    def attach(self, replicas: Mapping[tuple[str, int], HasLog]) -> None:
        """A new process's replicas: the previous process's logs are held here until taken."""
        for key, replica in self._replicas.items():
            self._held[key] = replica.log
        self._replicas = replicas

    @property
    def logs(self) -> dict[tuple[str, int], PartitionLog]:
        """Every log on this disk (a copy)."""
        found = dict(self._held)
        found.update((key, replica.log) for key, replica in self._replicas.items())
        return found

    def log(self, key: tuple[str, int], create: Callable[[], PartitionLog]) -> PartitionLog:
        """The log of ``key`` for a replica about to be attached: the one a previous
        process left, else a new one from ``create``."""
        found = self._held.pop(key, None)
        return found if found is not None else create()

    def delete(self, key: tuple[str, int]) -> None:
        """Remove the log of ``key`` (no longer a replica here; its replica is gone)."""
        self._held.pop(key, None)

    def replica_keys(self) -> list[tuple[str, int]]:
        """Every (topic id, partition) with a log here, sorted."""
        return sorted(self._held.keys() | self._replicas.keys())
