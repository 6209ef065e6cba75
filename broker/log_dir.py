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

from collections.abc import Callable, Iterable
from typing import Protocol

from broker.partition_log import PartitionLog

Key = tuple[str, int]


class LiveReplicas(Protocol):
    """The replicas of a broker's current process, which hold their logs."""

    def replica_keys(self) -> Iterable[Key]:
        """Every replica."""

    def held_logs(self) -> Iterable[tuple[Key, PartitionLog]]:
        """The logs the replicas hold now (one that never held anything may have none)."""

    def all_logs(self) -> Iterable[tuple[Key, PartitionLog]]:
        """Every replica's log (made where there is none yet)."""


class _NoReplicas:
    def replica_keys(self) -> Iterable[Key]:
        return ()

    def held_logs(self) -> Iterable[tuple[Key, PartitionLog]]:
        return ()

    def all_logs(self) -> Iterable[tuple[Key, PartitionLog]]:
        return ()


class LogDir:
    """The partition logs of one broker, by (topic id, partition).

    The live replicas of the broker's current process hold their logs (the
    replica manager attaches them: a log costs no entry of its own here, and a
    replica that never held anything need not have a log object yet); the
    logs no live replica holds (those of a previous process, until the next
    one takes them over) are kept here.
    """

    def __init__(self) -> None:
        self._held: dict[Key, PartitionLog] = {}
        self._live: LiveReplicas = _NoReplicas()
        self._clean_shutdown_epoch: int | None = None

    def mark_clean_shutdown(self, broker_epoch: int) -> None:
        """The broker stopped cleanly at ``broker_epoch`` (Kafka's clean shutdown file,
        which its LogManager writes as it closes the logs of a graceful shutdown)."""
        self._clean_shutdown_epoch = broker_epoch

    def take_clean_shutdown_epoch(self) -> int:
        """The broker epoch of the last clean shutdown, -1 when the last stop was not clean
        (a crash writes no file); the mark is used up, as Kafka's broker deletes the file
        once it has read it at start-up, so that a later crash leaves none."""
        epoch, self._clean_shutdown_epoch = self._clean_shutdown_epoch, None
        return -1 if epoch is None else epoch

    def attach(self, live: LiveReplicas) -> None:
        """A new process's replicas: the previous process's logs are held here until taken."""
        self._held.update(self._live.held_logs())
        self._live = live

    @property
    def logs(self) -> dict[Key, PartitionLog]:
        """Every log on this disk (a copy of the index; the logs are the live ones)."""
        found = dict(self._held)
        found.update(self._live.all_logs())
        return found

    @property
    def leftover(self) -> bool:
        """True when logs a previous process left are held here (not yet taken)."""
        return bool(self._held)

    def take(self, key: Key) -> PartitionLog | None:
        """The log a previous process left for ``key``, for its new replica; None if none."""
        return self._held.pop(key, None)

    def log(self, key: Key, create: Callable[[], PartitionLog]) -> PartitionLog:
        """The log of ``key`` for a replica about to be attached: the one a previous
        process left, else a new one from ``create``."""
        found = self._held.pop(key, None)
        return found if found is not None else create()

    def delete(self, key: Key) -> None:
        """Remove the log of ``key`` (no longer a replica here; its replica is gone)."""
        self._held.pop(key, None)

    def replica_keys(self) -> list[Key]:
        """Every (topic id, partition) with a log here, sorted."""
        return sorted(self._held.keys() | set(self._live.replica_keys()))
