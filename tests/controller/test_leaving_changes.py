"""A leaving broker's partition changes: the topic-by-topic walk of the broker index gives
exactly the change of every partition the broker is a replica of, in (topic id, partition)
order, whatever the mix of fenced brokers, ISRs and unclean-election configs."""

from __future__ import annotations

import random

import pytest

from controller.operations.leadership import (
    UNCLEAN_LEADER_ELECTION,
    leaving_change,
    leaving_changes,
    unclean_allowed,
)
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.uuids import random_uuid


def _random_image(seed: int, brokers: int = 7, topics: int = 12,
                  other_configs: int = 0) -> MetadataImage:
    rng = random.Random(seed)
    records: list[MetadataRecord] = [
        RegisterBrokerRecord(b, random_uuid(rng), broker_epoch=b + 1, fenced=rng.random() < 0.3,
                             in_controlled_shutdown=rng.random() < 0.1)
        for b in range(brokers)]
    if rng.random() < 0.5:
        records.append(ConfigRecord(BROKER_RESOURCE, "", UNCLEAN_LEADER_ELECTION, "true"))
    for t in range(topics):
        topic_id = random_uuid(rng)
        records.append(TopicRecord(f"topic-{t}", topic_id))
        if rng.random() < 0.3:
            records.append(ConfigRecord(TOPIC_RESOURCE, f"topic-{t}", UNCLEAN_LEADER_ELECTION,
                                        rng.choice(("true", "false"))))
        for p in range(rng.randint(1, 6)):
            replicas = tuple(rng.sample(range(brokers), 3))
            isr = tuple(r for r in replicas if rng.random() < 0.7)
            leader = rng.choice(isr) if isr and rng.random() < 0.8 else NO_LEADER
            records.append(PartitionRecord(partition_id=p, topic_id=topic_id, replicas=replicas,
                                           isr=isr or replicas[:1], leader=leader,
                                           leader_epoch=0, partition_epoch=0))
    records += [ConfigRecord(TOPIC_RESOURCE, f"other-{k}", "retention.ms", "1")
                for k in range(other_configs)]  # configs of topics that do not exist (yet)
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(len(records) - 1, 1)


def _each_partition(image: MetadataImage, broker_id: int) -> list[PartitionChangeRecord]:
    """The definition: leaving_change of every partition holding the broker, sorted."""
    out = []
    for topic_id in sorted(image.topics_by_id):
        topic = image.topics_by_id[topic_id]
        for pid in sorted(topic.partitions):
            reg = topic.partitions[pid]
            if broker_id not in reg.replicas:
                continue
            change = leaving_change(image, topic_id, pid, reg, broker_id,
                                    unclean_allowed(image, topic.name))
            if change is not None:
                out.append(change)
    return out


@pytest.mark.parametrize("other_configs", [0, 40], ids=["few configs", "many configs"])
@pytest.mark.parametrize("seed", range(40))
def test_leaving_changes_are_those_of_each_partition(seed: int, other_configs: int) -> None:
    # few configs: the topics' settings are read in one pass; many: looked up per topic
    image = _random_image(seed, other_configs=other_configs)
    changes = 0
    for broker_id in range(8):  # broker 7 has no partitions
        expected = _each_partition(image, broker_id)
        assert list(leaving_changes(image, broker_id)) == expected
        changes += len(expected)
    assert changes > 0
