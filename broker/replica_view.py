"""A replica manager's replicas as a read-only mapping of Replica objects.

The manager keeps a compact follower (an empty log, nothing of its own) as
its registration alone; reading it through the view makes its Replica.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView

from broker.compact_leader import CompactLeader
from broker.replica import Replica
from metadata.delta import SHARED_REGISTRATIONS
from metadata.image import PartitionRegistration

Held = Replica | PartitionRegistration | CompactLeader
"""What the manager holds per key: a Replica, a compact follower's registration or a
compact leader."""


Key = tuple[str, int]
"""(topic id, partition)."""


class ReplicaView(Mapping[Key, Replica]):
    """``held`` as Replica objects: a compact entry is made a Replica by ``materialize``
    (which replaces it in ``held``) when read."""

    __slots__ = ("_held", "_materialize")

    def __init__(self, held: dict[Key, Held], materialize: Callable[[Key], Replica]) -> None:
        self._held = held
        self._materialize = materialize

    def __getitem__(self, key: Key) -> Replica:
        return self._materialize(key)

    def __iter__(self) -> Iterator[Key]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, key: object) -> bool:
        return key in self._held

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


_SHARED_KEYS = SHARED_REGISTRATIONS
"""Keys remembered by :func:`key_sharer`: as many as registrations, for the same reason."""
_keys: dict[tuple[str, int], tuple[str, int]] = {}


def key_sharer() -> Callable[[Key, Key], Key]:
    """A function that returns its (topic id, partition) ``key``, or the equal key made
    shortly before: call it as ``share(key, key)`` for each key of one loop.

    Every broker hosts a replica of the same partitions, made within a few
    events of each other: the key of each is one tuple rather than one per
    broker (a bounded identity cache, emptied when full; it changes no value).
    The function is the cache's setdefault, so a loop pays no Python call per
    key; the cache is emptied, when full, before the loop rather than within it
    (it may exceed its bound by one loop's keys).
    """
    if len(_keys) >= _SHARED_KEYS:
        _keys.clear()
    return _keys.setdefault
