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

from collections.abc import Callable

from broker.partition_log import PartitionLog


class LogDir:
    """The partition logs of one broker, by (topic id, partition)."""

    def __init__(self) -> None:
        self.logs: dict[tuple[str, int], PartitionLog] = {}

    def log(self, key: tuple[str, int], create: Callable[[], PartitionLog]) -> PartitionLog:
        """The log of ``key``, created by ``create`` if this disk holds none."""
        found = self.logs.get(key)
        if found is None:
            found = self.logs[key] = create()
        return found

    def delete(self, key: tuple[str, int]) -> None:
        """Remove the log of ``key`` (no longer a replica here)."""
        self.logs.pop(key, None)

    def replica_keys(self) -> list[tuple[str, int]]:
        """Every (topic id, partition) with a log here, sorted."""
        return sorted(self.logs)
