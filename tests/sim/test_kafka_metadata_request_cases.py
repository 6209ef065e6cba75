"""Metadata requests answered by brokers, following Kafka's MetadataRequestTest
(core/src/test/scala/unit/kafka/server/), KRaft runs.

Kafka's test starts three brokers (each with ``broker.rack`` ``rack/<id>``) and sends
Metadata requests at several versions to them. Here a :class:`~sim.cluster.KRaftCluster` of
three controllers and three brokers, each broker's registration amended with its rack, and
each broker answers from its published image, as Kafka's KRaftMetadataCache does: the
topics with :func:`broker.metadata_cache.topic_metadata` (Metadata v0's filtering of
unavailable replicas is its ``error_unavailable_endpoints``), the brokers with the alive
brokers that :func:`broker.metadata_cache.describe_cluster` lists (the Metadata answer's
broker list is the same set: alive brokers with an endpoint on the client's listener). A
topic is created by :class:`~controller.operations.CreateTopics` (Kafka's createTopic
helper; its default of one partition, one replica).

Not ported:

- testClusterIdWithRequestVersion1, testClusterIdIsValid: a broker's image carries no
  cluster id.
- testControllerId, testAutoCreateOfCollidingTopics: ZooKeeper mode only.
- testAutoTopicCreation, testAutoCreateTopicWithInvalidReplicationFactor: brokers'
  auto-creation of topics (AutoTopicCreationManager) and Metadata request versions are not
  modelled (:func:`~broker.metadata_cache.topic_metadata` leaves an unknown topic to its
  caller).
"""

from __future__ import annotations

import random

from broker.metadata_cache import TopicMetadata, describe_cluster, topic_metadata
from controller.operations import CreateTopics, NewTopic, Operation
from metadata.image import MetadataImage
from sim.cluster import KRaftCluster
from tests.sim.harness import racked_cluster

WAIT_MS = 60_000
BROKERS = 3


def _cluster() -> KRaftCluster:
    """Three controllers and three brokers in their racks, every broker caught up."""
    return racked_cluster(13, BROKERS)


def _ok(cluster: KRaftCluster, operation: Operation) -> None:
    handle = cluster.submit(operation)
    assert cluster.wait(handle, WAIT_MS) and handle.error is None, handle.error


def _create_topic(cluster: KRaftCluster, name: str, partitions: int = 1,
                  replication_factor: int = 1,
                  assignment: tuple[tuple[int, ...], ...] = ()) -> None:
    """Kafka's createTopic / createTopicWithAssignment: created, and every broker knows
    every partition's leader."""
    topic = NewTopic(name, -1, -1, assignments=assignment) if assignment else \
        NewTopic(name, partitions, replication_factor)
    _ok(cluster, CreateTopics((topic,)))
    count = len(assignment) or partitions
    assert cluster.run_until(lambda: all(
        (t := _image(cluster, b).topic(name)) is not None and len(t.partitions) == count
        and all(p.leader >= 0 for p in t.partitions.values())
        for b in _running(cluster)), WAIT_MS)


def _running(cluster: KRaftCluster) -> list[int]:
    return [b for b in cluster.config.broker_ids if cluster.sim.slots[b].running]


def _image(cluster: KRaftCluster, broker: int) -> MetadataImage:
    loader = cluster.loader(broker)
    assert loader is not None and loader.published is not None
    return loader.published


def _all_topics(image: MetadataImage, *, v0: bool = False) -> list[TopicMetadata]:
    """A Metadata request for every topic (v0: an empty list; v1: null)."""
    return topic_metadata(image, sorted(image.topics_by_name), error_unavailable_endpoints=v0)


def _broker_ids(image: MetadataImage) -> list[int]:
    """The brokers a Metadata answer lists."""
    return [b.broker_id for b in describe_cluster(image, random.Random(0)).brokers]


def test_rack() -> None:
    """testRack: every broker listed carries its rack."""
    cluster = _cluster()
    answer = describe_cluster(_image(cluster, 0), random.Random(0))
    assert [b.broker_id for b in answer.brokers] == [0, 1, 2]
    for broker in answer.brokers:
        assert broker.rack == f"rack/{broker.broker_id}"


def test_is_internal() -> None:
    """testIsInternal: __consumer_offsets is internal, a topic of another name is not; the
    internal topics of the answer are just it."""
    cluster = _cluster()
    _create_topic(cluster, "__consumer_offsets", 3, 2)
    _create_topic(cluster, "notInternal", 3, 2)
    answer = {t.name: t for t in _all_topics(_image(cluster, 0))}
    assert all(t.error == "NONE" for t in answer.values())
    assert answer["__consumer_offsets"].is_internal
    assert not answer["notInternal"].is_internal
    assert {name for name, t in answer.items() if t.is_internal} == {"__consumer_offsets"}


def test_no_topics_request() -> None:
    """testNoTopicsRequest: an empty list of topics (v1) is answered with no topic."""
    cluster = _cluster()
    _create_topic(cluster, "t1", 3, 2)
    _create_topic(cluster, "t2", 3, 2)
    assert topic_metadata(_image(cluster, 0), []) == []


def test_all_topics_request() -> None:
    """testAllTopicsRequest: asking for every topic (v0's empty list, v1's null) answers
    both topics, without error."""
    cluster = _cluster()
    _create_topic(cluster, "t1", 3, 2)
    _create_topic(cluster, "t2", 3, 2)
    for v0 in (True, False):
        answer = _all_topics(_image(cluster, 0), v0=v0)
        assert [t.name for t in answer] == ["t1", "t2"]
        assert all(t.error == "NONE" for t in answer)
        assert all(p.error == "NONE" for t in answer for p in t.partitions)


def test_topic_ids_in_response() -> None:
    """testTopicIdsInResponse (versions from 10): each topic is answered with its id, not
    Kafka's zero Uuid (request versions are not modelled: no answer leaves it out)."""
    cluster = _cluster()
    assignment = ((1, 2, 0), (2, 0, 1))
    _create_topic(cluster, "topic1", assignment=assignment)
    _create_topic(cluster, "topic2", assignment=assignment)
    image = _image(cluster, 0)
    answer = topic_metadata(image, ["topic1", "topic2"])
    assert len(answer) == 2
    for topic in answer:
        assert topic.error == "NONE"
        assert topic.topic_id == image.topics_by_name[topic.name]
        assert topic.topic_id != "AAAAAAAAAAAAAAAAAAAAAA"


def test_preferred_replica() -> None:
    """testPreferredReplica: on brokers 0 and 1, each partition's replicas and ISR are its
    assignment, led by the first (the preferred replica)."""
    cluster = _cluster()
    assignment = ((1, 2, 0), (2, 0, 1))
    _create_topic(cluster, "t1", assignment=assignment)
    for broker in (0, 1):
        answer = topic_metadata(_image(cluster, broker), ["t1"])
        assert len(answer) == 1
        topic = answer[0]
        assert (topic.error, topic.name) == ("NONE", "t1")
        assert [p.partition_index for p in topic.partitions] == [0, 1]
        for partition in topic.partitions:
            expected = assignment[partition.partition_index]
            assert partition.replica_nodes == expected
            assert partition.isr_nodes == expected
            assert partition.leader_id == expected[0]


def test_replica_down_response() -> None:
    """testReplicaDownResponse: a replica that is not the leader shuts down; once the
    answer no longer lists it, v0 leaves it out of the replicas with
    REPLICA_NOT_AVAILABLE, and v1 lists all three replicas without error."""
    cluster = _cluster()
    _create_topic(cluster, "replicaDown", 1, 3)
    partition = topic_metadata(_image(cluster, 0), ["replicaDown"])[0].partitions[0]
    down = next(b for b in partition.replica_nodes if b != partition.leader_id)
    asked = next(b for b in cluster.config.broker_ids if b != down)
    cluster.sim.shutdown(down)
    assert cluster.run_until(lambda: down not in _broker_ids(_image(cluster, asked)),
                             50_000)
    image = _image(cluster, asked)

    v0 = topic_metadata(image, ["replicaDown"], error_unavailable_endpoints=True)
    assert down not in _broker_ids(image)
    assert len(v0) == 1 and v0[0].error == "NONE"
    assert v0[0].partitions[0].error == "REPLICA_NOT_AVAILABLE"
    assert len(v0[0].partitions[0].replica_nodes) == 2

    v1 = topic_metadata(image, ["replicaDown"])
    assert len(v1) == 1 and v1[0].error == "NONE"
    assert v1[0].partitions[0].error == "NONE"
    assert len(v1[0].partitions[0].replica_nodes) == 3


def test_isr_after_broker_shut_down_and_joins_back() -> None:
    """testIsrAfterBrokerShutDownAndJoinsBack: the last broker shuts down and starts again;
    every running broker comes to answer the partition's ISR as all of them."""
    cluster = _cluster()
    _create_topic(cluster, "isr-after-broker-shutdown", 1, 3)
    last = cluster.config.broker_ids[-1]
    cluster.sim.shutdown(last)
    assert cluster.run_until(lambda: not cluster.sim.slots[last].running, WAIT_MS)
    cluster.sim.restart(last)

    def isr_everywhere() -> bool:
        expected = set(_running(cluster))
        for broker in _running(cluster):
            loader = cluster.loader(broker)
            if loader is None or loader.published is None:
                return False
            answer = topic_metadata(loader.published, ["isr-after-broker-shutdown"])
            if not answer or set(answer[0].partitions[0].isr_nodes) != expected:
                return False
        return True
    assert cluster.run_until(isr_everywhere, WAIT_MS)
    assert set(_running(cluster)) == {0, 1, 2}


def test_alive_brokers_with_no_topics() -> None:
    """testAliveBrokersWithNoTopics: with no topic, the answer lists two brokers once the
    last one shut down, and three once it is back, on every running broker alike."""
    cluster = _cluster()
    last = cluster.config.broker_ids[-1]

    def every_broker_lists(count: int) -> bool:
        running = _running(cluster)
        answers = []
        for broker in running:
            loader = cluster.loader(broker)
            if loader is None or loader.published is None:
                return False
            answers.append((_broker_ids(loader.published),
                            _all_topics(loader.published)))
        return all(len(ids) == count for ids, _ in answers) and \
            all(answer == answers[0] for answer in answers)

    cluster.sim.shutdown(last)
    assert cluster.run_until(lambda: not cluster.sim.slots[last].running
                             and every_broker_lists(BROKERS - 1), WAIT_MS)
    cluster.sim.restart(last)
    assert cluster.run_until(lambda: every_broker_lists(BROKERS), WAIT_MS)
