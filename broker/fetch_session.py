"""The two sides of an incremental fetch session (KIP-227) between replica managers.

A leader keeps a :class:`FetchSession` per follower broker and holds a
follower's fetch that found nothing new (:class:`HeldFetch`, Kafka's
DelayedFetch); a follower keeps a :class:`FetchSessionHandler` per leader
broker. :class:`~broker.replica_manager.ReplicaManager` drives both.
"""

from __future__ import annotations

import msgspec

from broker.fetch_messages import FetchPartition, ReplicaFetchRequest
from broker.replica import FetchClock


class HeldFetch(msgspec.Struct):
    """A follower's fetch that found nothing new, held until records or its deadline."""

    request: ReplicaFetchRequest
    deadline: int


class FetchSession(msgspec.Struct):
    """The leader's side of one follower's fetch session (Kafka's FetchSession)."""

    session_id: int
    epoch: int  # the epoch its next incremental fetch must carry
    partitions: dict[tuple[str, int], FetchPartition]  # the follower's last positions
    pending: dict[tuple[str, int], None]  # to read at its next fetch (not idle)
    clock: FetchClock


class FetchSessionHandler(msgspec.Struct):
    """The follower's side of its session with one leader (Kafka's FetchSessionHandler)."""

    session_id: int = 0  # 0: none yet, the next fetch is a full one
    epoch: int = 0
    changed: dict[tuple[str, int], None] = msgspec.field(default_factory=dict)
