"""Partitions placed by hand (CreateTopics' and CreatePartitions' replica assignments),
following the cases of Kafka's ReplicationControlManagerTest: the checks of one
assignment, an assignment on fenced brokers only, and growing a topic by assignment."""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.operations import CreatePartitions, CreateTopics, NewTopic
from controller.operations.topics import validate_manual_assignment
from metadata.image import MetadataImage, PartitionRegistration
from metadata.schema import PartitionRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run


def _create(*assignments: tuple[int, ...], name: str = "foo") -> CreateTopics:
    return CreateTopics((NewTopic(name, -1, -1, assignments=assignments),))


def _partition(image: MetadataImage, pid: int, name: str = "foo") -> PartitionRegistration:
    topic = image.topic(name)
    assert topic is not None
    return topic.partitions[pid]


@pytest.mark.parametrize(("replicas", "factor"), [
    ((1,), 1), ((1,), None), ((1, 2, 3), 3), ((1, 2, 3), None)])
def test_an_assignment_of_distinct_registered_brokers_is_valid(
        replicas: tuple[int, ...], factor: int | None) -> None:
    """testValidateGoodManualPartitionAssignments."""
    validate_manual_assignment(image_of(brokers(1, 2, 3)), replicas, factor)


@pytest.mark.parametrize(("replicas", "factor", "message"), [
    ((), None, "The manual partition assignment includes an empty replica list."),
    ((1, 2, 3), None, "The manual partition assignment includes broker 3, but no such "
                      "broker is registered."),
    ((1, 2, 2), None, "The manual partition assignment includes the broker 2 more than once."),
    ((1, 2), 3, "The manual partition assignment includes a partition with 2 replica(s), but "
                "this is not consistent with previous partitions, which have 3 replica(s)."),
])
def test_an_empty_unknown_repeated_or_uneven_assignment_is_invalid(
        replicas: tuple[int, ...], factor: int | None, message: str) -> None:
    """testValidateBadManualPartitionAssignments: brokers 1 and 2 registered."""
    with pytest.raises(ApiError) as raised:
        validate_manual_assignment(image_of(brokers(1, 2)), replicas, factor)
    assert (raised.value.code, raised.value.message) == ("INVALID_REPLICA_ASSIGNMENT", message)


def test_an_assigned_topic_is_led_by_its_first_active_replica() -> None:
    """Kafka's createTestTopic: the partitions are as assigned, each ISR its active
    replicas in replica order, led by the first; the answer counts the partitions and
    the replicas of the first."""
    image = image_of(brokers(0, 1, 2, 3, fenced=[2]))
    image, records, response = run(_create((2, 0, 1), (1, 2, 3)), image)
    assert isinstance(records[0], TopicRecord)
    assert [type(r) for r in records[1:]] == [PartitionRecord, PartitionRecord]
    p0, p1 = _partition(image, 0), _partition(image, 1)
    assert (p0.replicas, p0.isr, p0.leader) == ((2, 0, 1), (0, 1), 0)
    assert (p1.replicas, p1.isr, p1.leader) == ((1, 2, 3), (1, 3), 1)
    topic = response["topics"][0]  # type: ignore[index]
    assert (topic["numPartitions"], topic["replicationFactor"]) == (2, 3)


def test_an_assignment_needs_minus_one_partitions_and_replication_factor() -> None:
    """CreateTopicsRequestTest.testInvalidCreateTopicsRequests: an assignment beside a
    partition count or replication factor other than -1 is INVALID_REQUEST, validate-only
    too (Kafka's case: 10 partitions and replication factor 3)."""
    image = image_of(brokers(0, 1, 2))
    for partitions, factor, what in ((-1, 3, "replication factor"), (1, -1, "numPartitions"),
                                     (10, 3, "replication factor")):
        topic = NewTopic("foo", partitions, factor, assignments=((0, 1, 2),))
        for validate_only in (False, True):
            refused = refusal(CreateTopics((topic,), validate_only), image)
            assert (refused.code, refused.message) == (
                "INVALID_REQUEST",
                f"A manual partition assignment was specified, but {what} was not set to "
                f"-1.")


def test_an_assignment_on_fenced_brokers_only_is_refused() -> None:
    """testManualPartitionAssignmentOnAllFencedBrokers: brokers 0-3 registered, none
    unfenced: a partition on 0, 1 and 2 would have no leader."""
    image = image_of(brokers(0, 1, 2, 3, fenced=[0, 1, 2, 3]))
    refused = refusal(_create((0, 1, 2)), image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICA_ASSIGNMENT", "All brokers specified in the manual partition "
        "assignment for partition 0 are fenced or in controlled shutdown.")


def test_a_topic_grown_by_assignment_needs_an_active_broker_in_each_new_partition() -> None:
    """testCreatePartitionsFailsWithManualAssignmentWithAllFenced: brokers 0-5, only 0-2
    unfenced; a new partition on 3, 4 and 5 is refused, one on 2, 4 and 5 is written with
    the ISR (2,), led by 2."""
    image = image_of(brokers(0, 1, 2, 3, 4, 5, fenced=[3, 4, 5]))
    image, _, _ = run(_create((0, 1, 2)), image)
    refused = refusal(CreatePartitions("foo", 2, assignments=((3, 4, 5),)), image)
    assert (refused.code, refused.message) == (
        "INVALID_REPLICA_ASSIGNMENT", "All brokers specified in the manual partition "
        "assignment for partition 1 are fenced or in controlled shutdown.")
    image, _, _ = run(CreatePartitions("foo", 2, assignments=((2, 4, 5),)), image, offset=200)
    reg = _partition(image, 1)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_epoch, reg.partition_epoch) == \
        ((2, 4, 5), (2,), 2, 0, 0)


def test_growing_by_assignment_checks_the_count_the_brokers_and_the_replicas() -> None:
    """testCreatePartitions, its second request: brokers 0, 1 and 3; foo (2 replicas) grows
    by one assigned partition; bar would get 1 replica where its partitions have 2; quux
    is given one assignment for two new partitions; foo2 names broker 2, not registered."""
    image = image_of(brokers(0, 1, 3))
    for name, count in (("foo", 3), ("bar", 4), ("quux", 2), ("foo2", 2)):
        image, _, _ = run(CreateTopics((NewTopic(name, count, 2),)), image,
                          offset=image.offset + 1)
    image, _, _ = run(CreatePartitions("foo", 4, assignments=((1, 3),)), image, offset=200)
    assert _partition(image, 3).replicas == (1, 3)
    for op, message in (
            (CreatePartitions("bar", 5, assignments=((1,),)),
             "The manual partition assignment includes a partition with 1 replica(s), but "
             "this is not consistent with previous partitions, which have 2 replica(s)."),
            (CreatePartitions("quux", 4, assignments=((1, 0),)),
             "Attempted to add 2 additional partition(s), but only 1 assignment(s) were "
             "specified."),
            (CreatePartitions("foo2", 3, assignments=((2, 0),)),
             "The manual partition assignment includes broker 2, but no such broker is "
             "registered.")):
        refused = refusal(op, image)
        assert (refused.code, refused.message) == ("INVALID_REPLICA_ASSIGNMENT", message)
