"""An image kept up to date delta by delta holds the topics and configs the records say,
replayed the plain way, and its digest equals the digest of the same content built at once,
whatever mix of records and delta boundaries led there."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from metadata.delta import TOPIC_RESOURCE, MetadataDelta, partition_from_record
from metadata.image import ConfigKey, MetadataImage, PartitionRegistration
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from metadata.snapshot import image_from_records, image_to_records

TOPIC_IDS = [f"AAAAAAAAAAAAAAAAAAAA{c}w" for c in "ABCD"]


def _partition(topic_id: str, pid: int, rng: random.Random) -> PartitionRecord:
    replicas = tuple(rng.sample(range(1, 6), 3))
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=replicas,
                           isr=replicas, leader=replicas[0], leader_epoch=rng.randrange(3),
                           partition_epoch=rng.randrange(3))


def _change(topic_id: str, pid: int, rng: random.Random) -> PartitionChangeRecord:
    kind = rng.randrange(3)
    if kind == 0:
        return PartitionChangeRecord(partition_id=pid, topic_id=topic_id,
                                     isr=tuple(rng.sample(range(1, 6), 2)))
    if kind == 1:
        return PartitionChangeRecord(partition_id=pid, topic_id=topic_id,
                                     leader=rng.randrange(1, 6))
    return PartitionChangeRecord(partition_id=pid, topic_id=topic_id,
                                 replicas=tuple(rng.sample(range(1, 6), 3)))


def _records(rng: random.Random, count: int) -> list[MetadataRecord]:
    """Valid records: topics created, given partitions (new ones and replacements),
    changed and removed, with the same topic ids coming back."""
    live: dict[str, int] = {}  # topic id -> partitions
    records: list[MetadataRecord] = []
    for _ in range(count):
        topic_id = rng.choice(TOPIC_IDS)
        partitions = live.get(topic_id)
        roll = rng.random()
        if partitions is None:
            records.append(TopicRecord(f"t-{topic_id[-2]}", topic_id))
            live[topic_id] = 0
        elif roll < 0.1:
            records.append(RemoveTopicRecord(topic_id))
            del live[topic_id]
        elif roll < 0.2:
            records.append(ConfigRecord(TOPIC_RESOURCE, f"t-{topic_id[-2]}",
                                        rng.choice(("retention.ms", "cleanup.policy")),
                                        rng.choice(("1", "2", None))))
        elif roll < 0.45 or partitions == 0:
            pid = rng.randrange(partitions + 1)  # a new partition, or a replacement
            records.append(_partition(topic_id, pid, rng))
            live[topic_id] = max(partitions, pid + 1)
        else:
            records.append(_change(topic_id, rng.randrange(partitions), rng))
    return records


Topics = dict[str, tuple[str, dict[int, PartitionRegistration]]]
"""topic id -> (name, partitions)."""


def _model(records: list[MetadataRecord]) -> tuple[Topics, dict[ConfigKey, dict[str, str]]]:
    """The topics and configs the records leave, replayed the plain way."""
    topics: Topics = {}
    configs: dict[ConfigKey, dict[str, str]] = {}
    for record in records:
        if isinstance(record, TopicRecord):
            topics[record.topic_id] = (record.name, {})
        elif isinstance(record, RemoveTopicRecord):
            configs.pop((TOPIC_RESOURCE, topics.pop(record.topic_id)[0]), None)
        elif isinstance(record, ConfigRecord):
            key = (record.resource_type, record.resource_name)
            entries = configs.setdefault(key, {})
            if record.value is None:
                entries.pop(record.name, None)
            else:
                entries[record.name] = record.value
            if not entries:
                del configs[key]
        elif isinstance(record, PartitionRecord):
            topics[record.topic_id][1][record.partition_id] = partition_from_record(record)
        elif isinstance(record, PartitionChangeRecord):
            partitions = topics[record.topic_id][1]
            partitions[record.partition_id] = partitions[record.partition_id].merge(record)
    return topics, configs


def _index(topics: Topics) -> dict[int, dict[str, tuple[int, ...]]]:
    """broker -> topic id -> sorted ids of the partitions it is a replica of."""
    index: dict[int, dict[str, list[int]]] = {}
    for topic_id, (_, partitions) in topics.items():
        for pid, reg in partitions.items():
            for broker in reg.replicas:
                index.setdefault(broker, {}).setdefault(topic_id, []).append(pid)
    return {b: {t: tuple(sorted(pids)) for t, pids in by_topic.items()}
            for b, by_topic in index.items()}


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 120), st.lists(st.integers(1, 12), min_size=1))
def test_digest_delta_by_delta_equals_the_rebuilt_images(seed: int, count: int,
                                                        sizes: list[int]) -> None:
    records = _records(random.Random(seed), count)
    image, start, k = MetadataImage.EMPTY, 0, 0
    while start < len(records):
        stop = start + sizes[k % len(sizes)]
        delta = MetadataDelta(image)
        delta.replay_all(records[start:stop])
        image = delta.apply(image.offset + len(records[start:stop]), 1)
        rebuilt = image_from_records(image_to_records(image), image.offset, image.epoch)
        assert image.digest == rebuilt.digest, (start, stop)
        assert image.same_content(rebuilt)
        topics, configs = _model(records[:stop])
        assert {tid: (t.name, dict(t.partitions)) for tid, t in image.topics_by_id.items()} \
            == topics, (start, stop)
        assert dict(image.topics_by_name) == {name: tid for tid, (name, _) in topics.items()}
        assert {key: dict(entries) for key, entries in image.configs.items()} == configs
        assert {b: dict(by_topic) for b, by_topic in image.partitions_by_broker.items()} == \
            _index(topics)
        start, k = stop, k + 1
