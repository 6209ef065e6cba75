"""Replica placement over the unfenced brokers, and leader/ISR changes when brokers come and go."""

from __future__ import annotations

import random
from collections.abc import Iterator

from controller.errors import ApiError
from metadata.image import NO_LEADER, MetadataImage, PartitionRegistration
from metadata.schema import PartitionChangeRecord


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
    return (tuple(brokers[(start + first_partition + p + j) % n]
                  for j in range(replication_factor)) for p in range(partitions))


def broker_leaving(topic_id: str, partition_id: int, reg: PartitionRegistration,
                   broker_id: int, usable: set[int]) -> PartitionChangeRecord | None:
    """The change when ``broker_id`` is fenced or leaves: out of the ISR, a new leader."""
    if broker_id not in reg.isr and reg.leader != broker_id:
        return None
    isr = tuple(r for r in reg.isr if r != broker_id) or reg.isr
    leader = reg.leader
    if leader in (broker_id, NO_LEADER):
        candidates = [r for r in isr if r in usable and r != broker_id]
        leader = candidates[0] if candidates else NO_LEADER
    if isr == reg.isr and leader == reg.leader:
        return None
    return PartitionChangeRecord(
        partition_id=partition_id, topic_id=topic_id, isr=None if isr == reg.isr else isr,
        leader=leader if leader != reg.leader else -2)


def broker_returning(topic_id: str, partition_id: int, reg: PartitionRegistration,
                     broker_id: int) -> PartitionChangeRecord | None:
    """The change when ``broker_id`` is unfenced: it leads leaderless partitions it is in."""
    if reg.leader == NO_LEADER and broker_id in reg.isr:
        return PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id,
                                     leader=broker_id)
    return None
