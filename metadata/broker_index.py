"""The partitions of each broker: an index kept beside the topics, in the image.

Kafka's controller keeps ``BrokersToIsrs`` (broker -> topic -> partitions) so
that fencing a broker touches only that broker's partitions. kraftsim keeps
the same shape in the image, by replica assignment (a superset of the ISR and
of the leader, and far more stable): ``broker -> topic id -> sorted partition
ids``. It is a persistent map, so the controller's revert points carry it for
free, and updating it costs O(changed assignments), not O(partitions).

The index is derived: it is not part of an image's digest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import immutables

from metadata.image import PartitionRegistration, TopicImage

BrokerIndex = immutables.Map[int, immutables.Map[str, tuple[int, ...]]]
"""broker id -> topic id -> sorted partition ids the broker is a replica of."""

EMPTY_INDEX: BrokerIndex = immutables.Map()

_NO_PARTITIONS: dict[int, PartitionRegistration] = {}
"""A new topic's partitions before it (read only)."""


def update_index(index: BrokerIndex, removed: Sequence[TopicImage],
                 changed: Sequence[tuple[str, TopicImage | None,
                                         Mapping[int, PartitionRegistration]]]) -> BrokerIndex:
    """The index after removing ``removed`` topics and applying partition changes.

    ``changed`` holds (topic id, the topic as it was or None, new registrations
    by partition id); only partitions whose replica list changed cost anything.
    """
    if not removed and len(changed) == 1:
        appended = _one_topic_appended(index, *changed[0])
        if appended is not None:
            return appended
    adds: dict[tuple[int, str], set[int]] = {}
    drops: dict[tuple[int, str], set[int]] = {}
    gone: set[tuple[int, str]] = set()
    for topic in removed:
        for reg in topic.partitions.values():
            for broker in reg.replicas:
                gone.add((broker, topic.topic_id))
    for topic_id, base, partitions in changed:
        # partitions new to the topic, grouped by their replica list (a handful of
        # lists cover a topic: one look-up per partition, not one per replica)
        fresh: dict[tuple[int, ...], list[int]] = {}
        # a new topic: every replica is an addition; else only partitions whose
        # replicas changed cost anything
        old_parts: Mapping[int, PartitionRegistration] = \
            base.partitions if base is not None else _NO_PARTITIONS
        for pid, reg in partitions.items():
            old = old_parts.get(pid)
            if old is None:
                group = fresh.get(reg.replicas)
                if group is None:
                    fresh[reg.replicas] = [pid]
                else:
                    group.append(pid)
                continue
            old_replicas = old.replicas
            if old_replicas == reg.replicas:
                continue
            for broker in reg.replicas:
                if broker not in old_replicas:
                    adds.setdefault((broker, topic_id), set()).add(pid)
            for broker in old_replicas:
                if broker not in reg.replicas:
                    drops.setdefault((broker, topic_id), set()).add(pid)
        for replicas, group in fresh.items():
            for broker in replicas:
                have = adds.get((broker, topic_id))
                if have is None:
                    adds[(broker, topic_id)] = set(group)
                else:
                    have.update(group)
    if not adds and not drops and not gone:
        return index
    by_broker: dict[int, list[tuple[str, set[int], set[int], bool]]] = {}
    for key in sorted(adds.keys() | drops.keys() | gone):
        broker, topic_id = key
        by_broker.setdefault(broker, []).append(
            (topic_id, adds.get(key, set()), drops.get(key, set()), key in gone))
    out = index.mutate()
    for broker, entries in by_broker.items():
        topics = out.get(broker, immutables.Map()).mutate()
        for topic_id, added, dropped, removed_topic in entries:
            current = () if removed_topic else topics.get(topic_id, ())
            if added and not dropped and (not current or min(added) > current[-1]):
                # New partitions after the last one (a topic created over many
                # batches): appended, O(added) rather than O(the topic's size).
                topics[topic_id] = _appended(current, tuple(sorted(added)))
                continue
            pids = (set(current) | added) - dropped
            if pids:
                topics[topic_id] = tuple(sorted(pids))
            elif topic_id in topics:
                del topics[topic_id]
        finished = topics.finish()
        if len(finished):
            out[broker] = finished
        elif broker in out:
            del out[broker]
    return out.finish()


def _one_topic_appended(index: BrokerIndex, topic_id: str, base: TopicImage | None,
                        partitions: Mapping[int, PartitionRegistration]) -> BrokerIndex | None:
    """:func:`update_index` for the commonest change: partitions new to one topic, in
    ascending order, each after those its brokers already hold (a topic created over one
    batch or many). None for any other change (the general path takes it).

    Each replica's broker gets the partitions appended to its tuple for the topic,
    with one persistent-map set per broker rather than a mutation of the whole index.
    """
    old_parts = base.partitions if base is not None else _NO_PARTITIONS
    last = -1
    per_broker: dict[int, list[int]] = {}
    for pid, reg in partitions.items():
        if pid <= last or pid in old_parts:
            return None
        last = pid
        for broker in reg.replicas:
            pids = per_broker.get(broker)
            if pids is None:
                per_broker[broker] = [pid]
            else:
                pids.append(pid)
    out = index
    for broker in sorted(per_broker):
        topics = out.get(broker)
        if topics is None:
            out = out.set(broker, immutables.Map({topic_id: tuple(per_broker[broker])}))
            continue
        current = topics.get(topic_id, ())
        added = tuple(per_broker[broker])
        if current and added[0] <= current[-1]:
            return None  # a new partition falls before one this broker holds: not appended
        out = out.set(broker, topics.set(topic_id, _appended(current, added)))
    return out


_SHARED_INDEXES = 4096
"""How many recently made indexes are remembered for sharing: as many as topics (see
:data:`metadata.delta._SHARED_TOPICS`), whose sharing this one follows."""
_indexes: dict[tuple[object, ...], tuple[BrokerIndex, list[object], BrokerIndex]] = {}


def shared_update(index: BrokerIndex, removed: Sequence[TopicImage],
                  changed: Sequence[tuple[str, TopicImage | None,
                                          Mapping[int, PartitionRegistration]]],
                  made: Sequence[TopicImage]) -> BrokerIndex:
    """:func:`update_index`, shared by every node that makes the same change.

    ``made`` holds each changed topic as it is now. The index after a change depends
    only on the index
    before, the removed topics and each changed topic before and after (a
    partition whose registration is the same object in both changed nothing):
    a node that applies, to the same index, the same topics by identity (see
    :func:`metadata.delta.partition_from_record`) gets the index another node
    made a moment before (a failover run's small changes too: 2-3% of its CPU).
    A bounded identity cache, emptied when full; it changes no value.
    """
    key: tuple[object, ...]
    held: list[object]
    if not removed and len(changed) == 1:  # the common change: one topic
        topic_id, base, _ = changed[0]
        key, held = (id(index), topic_id, id(base), id(made[0])), [base, made[0]]
    else:
        key = (id(index), *(id(t) for t in removed),
               *(x for (tid, base, _), topic in zip(changed, made, strict=True)
                 for x in (tid, id(base), id(topic))))
        held = [*removed, *(x for (_, base, _), topic in zip(changed, made, strict=True)
                            for x in (base, topic))]
    hit = _indexes.get(key)
    if hit is not None and hit[0] is index and len(hit[1]) == len(held) and \
            all(a is b for a, b in zip(hit[1], held, strict=True)):
        return hit[2]
    out = update_index(index, removed, changed)
    if len(_indexes) >= _SHARED_INDEXES:
        _indexes.clear()
    _indexes[key] = (index, held, out)
    return out


_SHARED_APPENDS = 1 << 12
_appends: dict[tuple[int, tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def _appended(current: tuple[int, ...], added: tuple[int, ...]) -> tuple[int, ...]:
    """``current + added``, shared by every node that makes it from the same ``current``.

    Every node's image indexes the same partitions: the first node to append a
    batch's partitions makes the tuple, the others get that one (a bounded
    identity cache, emptied when full; it changes no value).
    """
    key = (id(current), added)
    hit = _appends.get(key)
    if hit is not None and hit[0] is current:
        return hit[1]
    joined = current + added
    if len(_appends) >= _SHARED_APPENDS:
        _appends.clear()
    _appends[key] = (current, joined)
    return joined


def clear_shared_appends() -> None:
    """Empty the identity caches of appended tuples and of indexes (what they alone hold
    is freed now)."""
    _appends.clear()
    _indexes.clear()


def partitions_of(index: BrokerIndex, broker_id: int) -> Iterator[tuple[str, int]]:
    """(topic id, partition id) of every replica of ``broker_id``, sorted."""
    topics = index.get(broker_id)
    if topics is None:
        return
    for topic_id in sorted(topics):
        for pid in topics[topic_id]:
            yield topic_id, pid
