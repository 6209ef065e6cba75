"""The two sides of an incremental fetch session (KIP-227) between replica managers.

A leader keeps a :class:`FetchSession` per follower broker and holds a
follower's fetch that found nothing new (:class:`HeldFetch`, Kafka's
DelayedFetch); a follower keeps a :class:`FetchSessionHandler` per leader
broker. :class:`~broker.replica_manager.ReplicaManager` drives both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from broker.fetch_messages import FetchPartition, ReplicaFetchRequest
from broker.replica import FetchClock
from broker.replica_view import Key


class HeldFetch(msgspec.Struct):
    """A follower's fetch that found nothing new, held until records or its deadline.

    ``caught_up``: the partitions of compact leaders read when it arrived, in order, whose
    follower went idle then; its answer names them without reading them again (unless
    something woke them since, which puts them back among the session's pending ones).
    """

    request: ReplicaFetchRequest
    deadline: int
    caught_up: list[Key] = msgspec.field(default_factory=list)


class FetchSession(msgspec.Struct):
    """The leader's side of one follower's fetch session (Kafka's FetchSession)."""

    session_id: int
    epoch: int  # the epoch its next incremental fetch must carry
    # the follower's last positions, by topic id then partition (as the replicas are
    # held: a look-up touches one topic's map, not one of every partition)
    partitions: dict[str, dict[int, FetchPartition]]
    pending: dict[tuple[str, int], None]  # to read at its next fetch (not idle)
    clock: FetchClock

    def add(self, parts: Sequence[FetchPartition]) -> None:
        """The follower names ``parts`` (new positions): each is read at its next fetch."""
        partitions, pending = self.partitions, self.pending
        topic_id, topic = "", None
        for part in parts:
            if part.topic_id != topic_id or topic is None:  # positions come by topic
                topic_id = part.topic_id
                topic = partitions.get(topic_id)
                if topic is None:
                    topic = partitions[topic_id] = {}
            topic[part.partition_id] = part
            pending[(topic_id, part.partition_id)] = None

    def holds(self, key: Key) -> bool:
        """Whether the follower fetches ``key`` in this session."""
        topic = self.partitions.get(key[0])
        return topic is not None and key[1] in topic


class FetchSessionHandler(msgspec.Struct):
    """The follower's side of its session with one leader (Kafka's FetchSessionHandler)."""

    session_id: int = 0  # 0: none yet, the next fetch is a full one
    epoch: int = 0
    # the partitions to name in the next incremental fetch (a new position, or no longer
    # fetched here), by topic id then partition, each an insertion-ordered set
    changed: dict[str, dict[int, None]] = msgspec.field(default_factory=dict)

    def mark(self, key: Key) -> None:
        """Name ``key`` in the next incremental fetch."""
        topic = self.changed.get(key[0])
        if topic is None:
            self.changed[key[0]] = {key[1]: None}
        else:
            topic[key[1]] = None

    def mark_all(self, topic_id: str, partition_ids: Iterable[int]) -> None:
        """Name each of the topic's ``partition_ids`` in the next incremental fetch."""
        self.changed.setdefault(topic_id, {}).update(dict.fromkeys(partition_ids))


class FetchSessionCache:
    """A leader's fetch sessions, one per follower broker (Kafka's FetchSessionCache)."""

    def __init__(self) -> None:
        self.by_follower: dict[int, FetchSession] = {}
        self._last_id = 0

    def open(self, msg: ReplicaFetchRequest,
             forget: Callable[[Key], None]) -> FetchSession | str:
        """The follower's session after ``msg``, or the session error to answer.

        A full fetch (session epoch 0) opens a new session in place of the old
        one; an incremental one must name the session and carry its next epoch: it
        updates the positions it names, then drops the partitions it forgets (one
        named and forgotten in the same fetch is gone), calling ``forget`` for each.
        """
        follower = msg.replica_id
        if msg.session_epoch == 0:
            self._last_id += 1
            session = FetchSession(self._last_id, 1, {}, {}, FetchClock())
            session.add(msg.partitions)
            self.by_follower[follower] = session
            return session
        found = self.by_follower.get(follower)
        if found is None or found.session_id != msg.session_id:
            return "FETCH_SESSION_ID_NOT_FOUND"
        if msg.session_epoch != found.epoch:
            return "INVALID_FETCH_SESSION_EPOCH"
        found.epoch += 1
        found.add(msg.partitions)  # then the forgotten ones go, as in Kafka's FetchSession
        partitions = found.partitions
        for key in msg.forgotten:
            topic = partitions.get(key[0])
            if topic is not None and topic.pop(key[1], None) is not None:
                if not topic:
                    del partitions[key[0]]
                forget(key)  # no longer fetched here: its fetch times stop
            found.pending.pop(key, None)
        return found
