"""What a replica manager holds per partition, and a read-only view of it as Replicas.

The manager keeps a compact follower (an empty log, nothing of its own) as
its registration alone; reading it through the view makes its Replica.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView

from broker.compact_leader import CompactLeader
from broker.replica import Replica
from metadata.image import PartitionRegistration

Held = Replica | PartitionRegistration | CompactLeader
"""What the manager holds per key: a Replica, a compact follower's registration or a
compact leader."""


Key = tuple[str, int]
"""(topic id, partition)."""


class HeldReplicas:
    """What a replica manager holds, by topic id and then partition (a dict-like API by
    (topic id, partition) keys over ``by_topic``).

    Two levels rather than one map keyed by (topic id, partition): a look-up
    touches the outer map of topics (a few, and hot) and one topic's map, not a
    table of every partition the broker holds (at 1,000,000 partitions a look-up
    in the one table waits on memory: ~2x the time). A topic's partitions keep
    the order they were made in; hot loops read ``by_topic`` directly.
    """

    __slots__ = ("by_topic",)

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[int, Held]] = {}

    def get(self, key: Key) -> Held | None:
        """The entry of ``key``, or None."""
        topic = self.by_topic.get(key[0])
        return None if topic is None else topic.get(key[1])

    def __getitem__(self, key: Key) -> Held:
        return self.by_topic[key[0]][key[1]]

    def __setitem__(self, key: Key, held: Held) -> None:
        topic = self.by_topic.get(key[0])
        if topic is None:
            topic = self.by_topic[key[0]] = {}
        topic[key[1]] = held

    def pop(self, key: Key) -> Held | None:
        """Remove the entry of ``key`` and return it (None if none)."""
        topic = self.by_topic.get(key[0])
        if topic is None:
            return None
        held = topic.pop(key[1], None)
        if not topic:
            del self.by_topic[key[0]]
        return held

    def __contains__(self, key: Key) -> bool:
        topic = self.by_topic.get(key[0])
        return topic is not None and key[1] in topic

    def __len__(self) -> int:
        return sum(len(topic) for topic in self.by_topic.values())

    def __iter__(self) -> Iterator[Key]:
        for topic_id, topic in self.by_topic.items():
            for pid in topic:
                yield topic_id, pid

    def keys(self) -> Iterator[Key]:
        """Every key, topic by topic."""
        return iter(self)

    def items(self) -> Iterator[tuple[Key, Held]]:
        """Every (key, entry), topic by topic."""
        for topic_id, topic in self.by_topic.items():
            for pid, held in topic.items():
                yield (topic_id, pid), held


class ReplicaView(Mapping[Key, Replica]):
    """``held`` as Replica objects: a compact entry is made a Replica by ``materialize``
    (which replaces it in ``held``) when read."""

    __slots__ = ("_held", "_materialize")

    def __init__(self, held: HeldReplicas, materialize: Callable[[Key], Replica]) -> None:
        self._held = held
        self._materialize = materialize

    def __getitem__(self, key: Key) -> Replica:
        return self._materialize(key)

    def __iter__(self) -> Iterator[Key]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and key in self._held

    def items(self) -> ItemsView[Key, Replica]:
        """As Mapping's, in one pass over the held entries."""
        return _Items(self)

    def values(self) -> ValuesView[Replica]:
        """As Mapping's, in one pass over the held entries."""
        return _Values(self)

    def _pairs(self) -> Iterator[tuple[Key, Replica]]:
        materialize = self._materialize
        for key, held in list(self._held.items()):  # materializing replaces entries
            yield key, held if type(held) is Replica else materialize(key)


class _Items(ItemsView[Key, Replica]):
    _mapping: ReplicaView

    def __iter__(self) -> Iterator[tuple[Key, Replica]]:
        return self._mapping._pairs()


class _Values(ValuesView[Replica]):
    _mapping: ReplicaView

    def __iter__(self) -> Iterator[Replica]:
        for _, replica in self._mapping._pairs():
            yield replica
