"""The broker index, built batch by batch, is what the image's topics say."""

from __future__ import annotations

import random

import pytest

from metadata.broker_index import partitions_of
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)


def _records(seed: int, brokers: int = 5) -> list[MetadataRecord]:
    """Two topics whose partitions arrive out of order, with reassignments in between."""
    rng = random.Random(seed)
    records: list[MetadataRecord] = []
    topics = ["AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"]
    for i, topic_id in enumerate(topics):
        records.append(TopicRecord(f"t{i}", topic_id))
    pids = {t: list(range(40)) for t in topics}
    for t in topics:
        rng.shuffle(pids[t])
    for n in range(80):
        topic_id = topics[n % 2]
        replicas = tuple(rng.sample(range(brokers), 3))
        records.append(PartitionRecord(partition_id=pids[topic_id].pop(), topic_id=topic_id,
                                       replicas=replicas, isr=replicas, leader=replicas[0],
                                       leader_epoch=0, partition_epoch=0))
        if n % 7 == 6:
            moved = tuple(rng.sample(range(brokers), 3))
            records.append(PartitionChangeRecord(partition_id=0, topic_id=topic_id,
                                                 replicas=moved, isr=moved, leader=moved[0]))
        elif n % 5 == 4:  # no new replica list: the index stays as it is
            records.append(PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader=-1))
    return [r for r in records if not isinstance(r, PartitionChangeRecord)
            or any(isinstance(p, PartitionRecord) and p.partition_id == 0
                   and p.topic_id == r.topic_id
                   for p in records[:records.index(r)])]


def _index_of(image: MetadataImage) -> dict[int, dict[str, tuple[int, ...]]]:
    """The broker index derived from the image's topics, one replica at a time."""
    index: dict[int, dict[str, list[int]]] = {}
    for topic_id, topic in image.topics_by_id.items():
        for pid, reg in topic.partitions.items():
            for broker in reg.replicas:
                index.setdefault(broker, {}).setdefault(topic_id, []).append(pid)
    return {broker: {t: tuple(sorted(pids)) for t, pids in topics.items()}
            for broker, topics in index.items()}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("batch", [1, 3, 10, 1000])
@pytest.mark.parametrize("brokers", [5, 12])  # replica lists over few brokers, or many
def test_index_batch_by_batch_equals_index_of_the_topics(seed: int, batch: int,
                                                         brokers: int) -> None:
    records = _records(seed, brokers)
    image = MetadataImage.EMPTY
    for start in range(0, len(records), batch):
        delta = MetadataDelta(image)
        delta.replay_all(records[start:start + batch])
        image = delta.apply(start + batch - 1, 1)
        found = {broker: dict(topics) for broker, topics in image.partitions_by_broker.items()}
        assert found == _index_of(image)


def test_changes_without_a_new_replica_list_keep_the_index() -> None:
    records = _records(0)
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    image = delta.apply(len(records) - 1, 1)
    leaderless = MetadataDelta(image)
    leaderless.replay_all(PartitionChangeRecord(partition_id=0, topic_id=t, leader=-1)
                          for t in ("AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"))
    after = leaderless.apply(image.offset + 2, 1)
    assert after.partitions_by_broker is image.partitions_by_broker
    assert after.topics_by_id != image.topics_by_id


def test_a_replica_list_that_only_shrinks_and_a_topic_removed_alone_leave_the_index() -> None:
    """Changes with nothing to add: a broker leaves a partition's replicas (a reassignment
    completing), then the topic is removed, each in a delta of its own."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAA"
    image = MetadataImage.EMPTY
    steps: list[list[MetadataRecord]] = [
        [TopicRecord("t", topic_id), *(
            PartitionRecord(partition_id=p, topic_id=topic_id, replicas=(1, 2, 3), isr=(1, 2, 3),
                            leader=1, leader_epoch=0, partition_epoch=0) for p in range(2))],
        [PartitionChangeRecord(partition_id=1, topic_id=topic_id, replicas=(1, 2), isr=(1, 2))],
        [RemoveTopicRecord(topic_id)],
    ]
    expected = [{1: {topic_id: (0, 1)}, 2: {topic_id: (0, 1)}, 3: {topic_id: (0, 1)}},
                {1: {topic_id: (0, 1)}, 2: {topic_id: (0, 1)}, 3: {topic_id: (0,)}},
                {}]
    for records, index in zip(steps, expected, strict=True):
        delta = MetadataDelta(image)
        delta.replay_all(records)
        image = delta.apply(image.offset + len(records), 1)
        assert {broker: dict(topics) for broker, topics in image.partitions_by_broker.items()
                if topics} == index == _index_of(image)


def test_a_topic_growing_batch_by_batch_and_its_last_partition_moving_to_new_brokers() -> None:
    """Partitions appended after a topic's last (a topic created over many batches, on
    some brokers or new ones), then the last partition reassigned to brokers that hold
    nothing of the topic: its old brokers drop it."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAA"

    def partition(pid: int, replicas: tuple[int, ...]) -> PartitionRecord:
        return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=replicas,
                               isr=replicas, leader=replicas[0], leader_epoch=0,
                               partition_epoch=0)

    steps: list[list[MetadataRecord]] = [
        [TopicRecord("t", topic_id), partition(0, (1, 2)), partition(1, (2, 1))],
        [partition(2, (1, 2)), partition(3, (3, 1))],
        [PartitionChangeRecord(partition_id=3, topic_id=topic_id, replicas=(4, 5), isr=(4, 5),
                               leader=4)],
        [partition(5, (5, 4)), partition(4, (4, 1))],  # not in ascending order
    ]
    expected = [{1: (0, 1), 2: (0, 1)},
                {1: (0, 1, 2, 3), 2: (0, 1, 2), 3: (3,)},
                {1: (0, 1, 2), 2: (0, 1, 2), 4: (3,), 5: (3,)},
                {1: (0, 1, 2, 4), 2: (0, 1, 2), 4: (3, 4, 5), 5: (3, 5)}]
    image = MetadataImage.EMPTY
    for records, index in zip(steps, expected, strict=True):
        delta = MetadataDelta(image)
        delta.replay_all(records)
        image = delta.apply(image.offset + len(records), 1)
        assert {broker: dict(topics) for broker, topics in image.partitions_by_broker.items()
                if topics} == {b: {topic_id: pids} for b, pids in index.items()} \
            == _index_of(image)


def test_a_brokers_partitions_are_listed_in_topic_id_then_partition_order() -> None:
    """partitions_of walks a broker's replicas in (topic id, partition) order, whatever the
    index map's own order: what is generated from it (e.g. an unfence's leadership
    changes) is the same in every process."""
    ids = [f"{chr(ord('A') + k)}AAAAAAAAAAAAAAAAAAAAA" for k in range(8)]
    records: list[MetadataRecord] = []
    for topic_id in reversed(ids):
        records.append(TopicRecord(f"t-{topic_id[0]}", topic_id))
        records += [PartitionRecord(partition_id=p, topic_id=topic_id, replicas=(1, 2),
                                    isr=(1, 2), leader=1) for p in (1, 0)]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    image = delta.apply(len(records) - 1, 1)
    assert list(partitions_of(image.partitions_by_broker, 2)) == \
        [(topic_id, p) for topic_id in ids for p in (0, 1)]
