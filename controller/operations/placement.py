"""Replica placement over the registered brokers (leadership changes: ``leadership.py``).

As Kafka's StripedReplicaPlacer: replicas go to unfenced brokers first, striped so
that partitions differ; fenced brokers are used only when there are not enough
unfenced ones, and never first (the leader). Brokers in controlled shutdown are
not used at all (Kafka's heartbeat manager no longer offers them).

A kept difference: Kafka asks the active controller's heartbeat manager, which learns
of a controlled shutdown from the broker's heartbeat, not from its registration; a
controller that has not yet heard such a heartbeat (one just activated, or the
test context of Kafka's testCreateTopicsISRInvariants) may place replicas on the
broker, out of the ISR. kraftsim reads the registration, the committed record of the
shutdown, whichever controller is active.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from controller.errors import ApiError
from metadata.image import MetadataImage


def usable_brokers(image: MetadataImage) -> list[int]:
    """Registered, unfenced brokers not in controlled shutdown, by id."""
    return sorted(b.broker_id for b in image.brokers.values()
                  if not b.fenced and not b.in_controlled_shutdown)


def fenced_brokers(image: MetadataImage) -> list[int]:
    """Registered, fenced brokers not in controlled shutdown, by id: placement's last
    resort."""
    return sorted(b.broker_id for b in image.brokers.values()
                  if b.fenced and not b.in_controlled_shutdown)


def in_sync_count(image: MetadataImage, replication_factor: int) -> int:
    """How many of the first replicas :func:`place_replicas` gives are unfenced: a new
    partition's ISR is that prefix of its replicas."""
    return min(replication_factor, len(usable_brokers(image)))


def place_replicas(image: MetadataImage, rng: random.Random, partitions: int,
                   replication_factor: int, first_partition: int = 0
                   ) -> Iterator[tuple[int, ...]]:
    """Replica lists for ``partitions`` new partitions, striped over the unfenced brokers,
    then filled with fenced ones when the unfenced are fewer than ``replication_factor``.

    Lazy, so that an operation's bounded record list can stop a huge request
    early; the checks (and the draw from ``rng``) happen at the call. Raises
    INVALID_REPLICATION_FACTOR, in Kafka's order and words (StripedReplicaPlacer.place,
    prefixed as ReplicationControlManager does): for a factor below 1; when no broker
    is unfenced, none registered included ("All brokers are currently fenced.", or
    "... fenced or in controlled shutdown." when an unfenced one is shutting down, the
    words of Kafka's ReplicationControlManager when the replicas it placed have no
    active one); or when fewer brokers are registered (and not shutting down) than the
    factor.
    """
    brokers = usable_brokers(image)
    fenced = fenced_brokers(image)
    total = len(brokers) + len(fenced)
    prefix = f"Unable to replicate the partition {replication_factor} time(s): "
    if replication_factor < 1:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}Invalid replication factor {replication_factor}: the "
                       f"replication factor must be positive.")
    if not brokers:
        shutting = any(b.in_controlled_shutdown and not b.fenced
                       for b in image.brokers.values())
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}All brokers are currently fenced or in controlled shutdown."
                       if shutting else f"{prefix}All brokers are currently fenced.")
    if total < replication_factor:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}The target replication factor of {replication_factor} cannot "
                       f"be reached because only {total} broker(s) are registered.")
    n = len(brokers)
    start = rng.randrange(n)
    live = min(replication_factor, n)
    # n brokers give n distinct striped lists: partition p takes rotation (start + p) % n,
    # one tuple shared by every partition that takes it
    rotations = [tuple(brokers[(k + j) % n] for j in range(live)) for k in range(n)]
    offset = start + first_partition
    if live == replication_factor:
        return (rotations[(offset + p) % n] for p in range(partitions))
    missing, m = replication_factor - live, len(fenced)
    return (rotations[(offset + p) % n]
            + tuple(fenced[(first_partition + p + j) % m] for j in range(missing))
            for p in range(partitions))
