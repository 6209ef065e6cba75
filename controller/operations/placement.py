"""Replica placement over the registered brokers (leadership changes: ``leadership.py``).

Kafka's StripedReplicaPlacer (KIP-660's striping, rack-aware): the usable
brokers are grouped by rack (a broker without a rack is in the unnamed rack,
which sorts first), each rack's unfenced and fenced brokers apart, each list
sorted and given a random starting offset, the rack names a random starting
rack. Each partition's leader is the next unfenced broker of the next rack that
has one; its followers go round the racks, one replica per rack in turn, each
rack giving an unfenced broker before a fenced one. After as many partitions as
there are unfenced brokers, the rack names and every rack's lists are shuffled,
so that a broker's followers spread over every other broker. Fenced brokers are
used only when the unfenced ones are too few (or, across racks, to reach
another rack), and never lead. Brokers in controlled shutdown are not used at
all (Kafka's heartbeat manager no longer offers them). The random draws come
from the controller's seeded stream, not Java's Random, so the lists are
Kafka's in shape and distribution, not in value.

A kept difference: Kafka asks the active controller's heartbeat manager, which learns
of a controlled shutdown from the broker's heartbeat, not from its registration; a
controller that has not yet heard such a heartbeat (one just activated, or the
test context of Kafka's testCreateTopicsISRInvariants) may place replicas on the
broker, out of the ISR. kraftsim reads the registration, the committed record of the
shutdown, whichever controller is active.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import TypeVar

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


def in_sync(image: MetadataImage) -> frozenset[int]:
    """The brokers a new partition's ISR may hold (Kafka's ``isActive``): registered,
    unfenced and not in controlled shutdown. A new partition's ISR is its replicas that
    are among them, in order."""
    return frozenset(usable_brokers(image))


def place_replicas(image: MetadataImage, rng: random.Random, partitions: int,
                   replication_factor: int) -> Iterator[tuple[int, ...]]:
    """Replica lists for ``partitions`` new partitions, as Kafka's StripedReplicaPlacer
    places them (see the module); equal lists are one shared tuple.

    Lazy, so that an operation's bounded record list can stop a huge request
    early; the checks (and the first draws from ``rng``) happen at the call. Raises
    INVALID_REPLICATION_FACTOR, in Kafka's order and words (StripedReplicaPlacer.place,
    prefixed as ReplicationControlManager does): for a factor below 1; when no broker
    is unfenced, none registered included ("All brokers are currently fenced.", or
    "... fenced or in controlled shutdown." when an unfenced one is shutting down, the
    words of Kafka's ReplicationControlManager when the replicas it placed have no
    active one); or when fewer brokers are registered (and not shutting down) than the
    factor.
    """
    usable = [b for b in image.brokers.values() if not b.in_controlled_shutdown]
    unfenced = sum(not b.fenced for b in usable)
    prefix = f"Unable to replicate the partition {replication_factor} time(s): "
    if replication_factor < 1:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}Invalid replication factor {replication_factor}: the "
                       f"replication factor must be positive.")
    if not unfenced:
        shutting = any(b.in_controlled_shutdown and not b.fenced
                       for b in image.brokers.values())
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}All brokers are currently fenced or in controlled shutdown."
                       if shutting else f"{prefix}All brokers are currently fenced.")
    if len(usable) < replication_factor:
        raise ApiError("INVALID_REPLICATION_FACTOR",
                       f"{prefix}The target replication factor of {replication_factor} cannot "
                       f"be reached because only {len(usable)} broker(s) are registered.")
    racks = RackList(rng, [(b.broker_id, b.rack, b.fenced) for b in usable])
    return racks.lists(partitions, replication_factor)


T = TypeVar("T")

_PERMUTATIONS: dict[int, list[tuple[int, ...]]] = {
    n: list(itertools.permutations(range(n))) for n in range(2, 7)}
"""Every order of two to six items: a shuffle of so few picks one (see :class:`RackList`)."""


class BrokerList:
    """One rack's unfenced (or fenced) brokers, striped (Kafka's
    ``StripedReplicaPlacer.BrokerList``): each epoch (partition) starts one place further
    round the list and gives each broker at most once."""

    __slots__ = ("epoch", "ids", "index", "offset")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: random.Random) -> None:
        """Sort the brokers and draw where the first epoch starts."""
        if self.ids:
            self.ids.sort()
            self.offset = rng.randrange(len(self.ids))

    def next(self, epoch: int) -> int:
        """The next broker for the partition of ``epoch``; -1 once each was given."""
        ids = self.ids
        if not ids:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(ids)
        if self.index >= len(ids):
            return -1
        broker = ids[(self.index + self.offset) % len(ids)]
        self.index += 1
        return broker


class Rack:
    """One rack's brokers: unfenced ones first, fenced ones as a last resort."""

    __slots__ = ("fenced", "unfenced")

    def __init__(self) -> None:
        self.unfenced = BrokerList()
        self.fenced = BrokerList()

    def next(self, epoch: int) -> int:
        """The rack's next unfenced broker, else its next fenced one, else -1."""
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


class RackList:
    """Every usable broker by rack, placing one partition after another (Kafka's
    ``StripedReplicaPlacer.RackList``); see the module."""

    def __init__(self, rng: random.Random,
                 brokers: list[tuple[int, str | None, bool]]) -> None:
        self.rng = rng
        racks: dict[str | None, Rack] = {}
        for broker_id, rack_name, fenced in brokers:
            rack = racks.get(rack_name)
            if rack is None:
                rack = racks[rack_name] = Rack()
            (rack.fenced if fenced else rack.unfenced).ids.append(broker_id)
        # the unnamed rack first, then by name (Kafka's OptionalStringComparator)
        self.names: list[str | None] = sorted(racks, key=lambda n: (n is not None, n or ""))
        self.racks = racks
        self.by_name = [racks[name] for name in self.names]  # a fixed order, for draws
        for rack in self.by_name:
            rack.fenced.initialize(rng)
            rack.unfenced.initialize(rng)
        self.unfenced = sum(len(rack.unfenced.ids) for rack in self.by_name)
        self.epoch = 0
        self.offset = rng.randrange(len(self.names))
        self._shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._banks: dict[int, list[int]] = {}

    def draw(self, below: int) -> int:
        """A uniform draw in ``[0, below)``: one digit of a number of base-``below`` digits
        drawn from the stream at once (about 60 bits' worth), so a shuffle of a few
        brokers costs a division, not a draw from the stream."""
        bank = self._banks.get(below)
        if bank is None or not bank[1]:
            digits = max(1, 60 // below.bit_length())
            bank = self._banks[below] = [self.rng.randrange(below ** digits), digits]
        value = bank[0]
        bank[0], bank[1] = value // below, bank[1] - 1
        return value % below

    def shuffle(self, items: list[T]) -> None:
        """Put ``items`` in a uniformly random order, in place: one of the orders of up to
        six items by :meth:`draw`, else the stream's own shuffle."""
        if len(items) < 2:
            return
        orders = _PERMUTATIONS.get(len(items))
        if orders is None:
            self.rng.shuffle(items)
            return
        old = items[:]
        items[:] = [old[source] for source in orders[self.draw(len(orders))]]

    def _shuffle(self) -> None:
        self.shuffle(self.names)
        for rack in self.by_name:
            self.shuffle(rack.fenced.ids)
            self.shuffle(rack.unfenced.ids)

    def place(self, replication_factor: int) -> tuple[int, ...]:
        """The next partition's replicas (the factor was checked: enough brokers, one of
        them unfenced)."""
        if self.epoch == self.unfenced and self.unfenced > 1:
            self._shuffle()
            self.epoch = 0
        names, racks, epoch = self.names, self.racks, self.epoch
        if self.offset == len(names):
            self.offset = 0
        first = self.offset
        while True:  # the leader: the next unfenced broker of the next rack that has one
            leader = racks[names[first]].unfenced.next(epoch)
            if leader >= 0:
                break
            first = (first + 1) % len(names)
        replicas = [leader]
        index = self.offset
        while len(replicas) < replication_factor:  # then one per rack in turn
            broker = -1
            if index == first:
                first = -1  # the leader's rack gave its replica: pass it once
            else:
                broker = racks[names[index]].next(epoch)
            index = (index + 1) % len(names)
            if broker >= 0:
                replicas.append(broker)
        self.epoch += 1
        self.offset += 1
        made = tuple(replicas)
        return self._shared.setdefault(made, made)

    def lists(self, partitions: int, replication_factor: int) -> Iterator[tuple[int, ...]]:
        """:meth:`place` for ``partitions`` partitions, lazily; the common case (brokers
        without racks, two to six of them unfenced, enough for every replica) takes a
        shortcut that gives the same lists a round at a time."""
        if len(self.names) == 1 and self.epoch == 0:
            rack = self.by_name[0]
            n = len(rack.unfenced.ids)
            if len(rack.fenced.ids) < 2 and replication_factor <= n and n in _PERMUTATIONS \
                    and rack.unfenced.epoch == 0:
                return itertools.chain.from_iterable(
                    self._rounds(partitions, replication_factor))
        return (self.place(replication_factor) for _ in range(partitions))

    def _rounds(self, partitions: int, replication_factor: int
                ) -> Iterator[list[tuple[int, ...]]]:
        """:meth:`place` for one rack, from a fresh list of two to six unfenced brokers that
        fill every partition (no fenced one to shuffle or place): every round starts at the same
        place round the unfenced list (a round's n partitions each start one place further
        than the one before, and the next round's first one place further again), so a
        round's lists are the rotations of its order from that place, and a round moves
        the order by one permutation drawn as :meth:`shuffle` draws it. The lists' state
        is not kept (``place`` must not follow)."""
        unfenced = self.by_name[0].unfenced
        n = len(unfenced.ids)
        orders = _PERMUTATIONS[n]  # the current order: an index here, over the sorted ids
        ids, start, shared = unfenced.ids, unfenced.offset, self._shared
        choices = len(orders)
        chunks: list[list[tuple[int, ...]] | None] = [None] * choices
        moved: dict[int, int] = {}  # current * choices + pick -> the order after the shuffle
        draw, banks = self.draw, self._banks
        current, left = 0, partitions  # the identity: ids as sorted
        while left > 0:
            chunk = chunks[current]
            if chunk is None:
                doubled = tuple(ids[source] for source in orders[current]) * 3
                chunk = chunks[current] = [
                    shared.setdefault(doubled[k:k + replication_factor],
                                      doubled[k:k + replication_factor])
                    for k in range(start, start + n)]
            if left < n:
                yield chunk[:left]
                return
            yield chunk
            left -= n
            if not left:
                return
            # the shuffle before the next round (one rack: no name to shuffle), its digit
            # taken from draw()'s bank inline while the bank has one
            bank = banks.get(choices)
            if bank is None or not bank[1]:
                pick = draw(choices)
            else:
                value = bank[0]
                bank[0], bank[1] = value // choices, bank[1] - 1
                pick = value % choices
            key = current * choices + pick
            after = moved.get(key)
            if after is None:  # the shuffle puts the item at orders[pick][i] in place i
                now = orders[current]
                after = moved[key] = orders.index(tuple(now[i] for i in orders[pick]))
            current = after
