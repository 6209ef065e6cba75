"""The records of a CreateTopics (Kafka's ReplicationControlManager.createTopic): a TopicRecord,
the topic's ConfigRecords, then one PartitionRecord per partition, in order, each led by
its first replica with the whole replica set in the ISR at leader and partition epoch 0."""

from __future__ import annotations

import random

import pytest

from controller.errors import ApiError
from controller.operations import (
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    NewTopic,
    OperationContext,
)
from controller.operations.topics import validate_topic_name
from metadata.delta import TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.uuids import random_uuid


def _brokers(count: int) -> MetadataImage:
    rng = random.Random(5)
    records: list[MetadataRecord] = [
        RegisterBrokerRecord(b, random_uuid(rng), broker_epoch=b + 1, fenced=False)
        for b in range(count)]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(len(records) - 1, 1)



def test_a_new_topics_configs_are_checked_whole_the_last_of_a_key_given_twice_counts() -> None:
    """Kafka's createTopic checks the configs as IncrementalAlterConfigs does (LogConfig);
    a key given twice keeps its last value, one ConfigRecord."""
    image = _brokers(1)

    def create(*configs: tuple[str, str]) -> list[MetadataRecord]:
        return list(CreateTopics((NewTopic("foo", 1, 1, configs),)).generate(
            OperationContext(image, random.Random(1), image.offset + 1, 0)).records)

    assert [r for r in create(("retention.ms", "5"), ("retention.ms", "7"))
            if isinstance(r, ConfigRecord)] == [
        ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", "7")]
    with pytest.raises(ApiError, match=r"conflict topic config setting min\.compaction\.lag"):
        create(("max.compaction.lag.ms", "10"), ("min.compaction.lag.ms", "11"))
    with pytest.raises(ApiError, match="Not a number of type INT"):
        create(("segment.bytes", "5000000000"))

def _with_topic(brokers: int, partitions: int, replication: int) -> MetadataImage:
    """``brokers`` brokers and topic "foo", created by a CreateTopics."""
    image = _brokers(brokers)
    records = CreateTopics((NewTopic("foo", partitions, replication),)).generate(
        OperationContext(image, random.Random(1), image.offset + 1, 0)).records
    delta = MetadataDelta(image)
    delta.replay_all(records)
    return delta.apply(image.offset + len(records), 1)


def test_a_new_topic_is_its_record_its_configs_then_its_partitions_at_epoch_0() -> None:
    image = _brokers(4)
    generated = CreateTopics((NewTopic("foo", 5, 3, (("retention.ms", "100"),)),)).generate(
        OperationContext(image, random.Random(1), image.offset + 1, 0))
    topic, config, *parts = generated.records
    assert isinstance(topic, TopicRecord) and topic.name == "foo"
    assert config == ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", "100")
    assert [p.partition_id for p in parts if isinstance(p, PartitionRecord)] == list(range(5))
    for part in parts:
        assert isinstance(part, PartitionRecord) and part.topic_id == topic.topic_id
        assert len(set(part.replicas)) == 3 and set(part.replicas) <= set(range(4))
        assert (part.leader, part.isr, part.leader_epoch, part.partition_epoch) == \
            (part.replicas[0], part.replicas, 0, 0)


def test_new_partitions_of_a_topic_start_at_epoch_0_after_the_last_one() -> None:
    image = _with_topic(4, 2, 2)
    added = CreatePartitions("foo", 5).generate(
        OperationContext(image, random.Random(2), image.offset + 1, 0)).records
    assert [p.partition_id for p in added if isinstance(p, PartitionRecord)] == [2, 3, 4]
    for part in added:
        assert isinstance(part, PartitionRecord) and len(part.replicas) == 2
        assert (part.leader, part.isr, part.leader_epoch, part.partition_epoch) == \
            (part.replicas[0], part.replicas, 0, 0)


def test_a_topic_name_may_have_249_characters_not_250() -> None:
    validate_topic_name("a" * 249)
    with pytest.raises(ApiError, match="longer than the max allowed length 249"):
        validate_topic_name("a" * 250)


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_an_empty_name_and_the_dot_names_are_illegal(name: str) -> None:
    with pytest.raises(ApiError, match="is not allowed"):
        validate_topic_name(name)
    validate_topic_name("..." if name else "a.b")  # dots alone are legal otherwise


def test_create_partitions_must_grow_the_topic() -> None:
    image = _with_topic(2, 3, 1)
    for count in (3, 2):
        with pytest.raises(ApiError) as refused:
            CreatePartitions("foo", count).generate(
                OperationContext(image, random.Random(2), image.offset + 1, 0))
        assert refused.value.code == "INVALID_PARTITIONS"


def test_the_topic_operations_describe_themselves_for_their_handles() -> None:
    """The operation's description names it in its handle and the trace."""
    assert CreateTopics((NewTopic("a", 2), NewTopic("b", 1))).describe() == \
        "CreateTopics(a: 2 partitions, b: 1 partitions)"
    assert DeleteTopics(("a", "b")).describe() == "DeleteTopics(a, b)"
    assert CreatePartitions("foo", 12).describe() == "CreatePartitions(foo -> 12)"
