"""Replica placement over the unfenced brokers (leadership changes: ``leadership.py``)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from controller.errors import ApiError
from metadata.image import MetadataImage


def usable_brokers(image: MetadataImage) -> list[int]:
    """Registered, unfenced brokers not in controlled shutdown, by id."""
    return sorted(b.broker_id for b in image.brokers.values()
                  if not b.fenced and not b.in_controlled_shutdown)


def place_replicas(image: MetadataImage, rng: random.Random, partitions: int,
                   replication_factor: int, first_partition: int = 0
                   ) -> Iterator[tuple[int, ...]]:
    """Replica lists for ``partitions`` new partitions, striped over the usable brokers.

    Lazy, so that an operation's bounded record list can stop a huge request
    early; the checks (and the draw from ``rng``) happen at the call. Raises
    INVALID_REPLICATION_FACTOR when there are not enough usable brokers.
    """
    brokers = usable_brokers(image)
    if replication_factor < 1:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"Replication factor must be larger than 0, got {replication_factor}")
    if len(brokers) < replication_factor:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"Unable to replicate the partition {replication_factor} time(s): The "
                       f"target replication factor of {replication_factor} cannot be reached "
                       f"because only {len(brokers)} broker(s) are registered.")
    n = len(brokers)
    start = rng.randrange(n)
    # n brokers give n distinct striped lists: partition p takes rotation (start + p) % n,
    # one tuple shared by every partition that takes it
    rotations = [tuple(brokers[(k + j) % n] for j in range(replication_factor))
                 for k in range(n)]
    offset = start + first_partition
    return (rotations[(offset + p) % n] for p in range(partitions))
