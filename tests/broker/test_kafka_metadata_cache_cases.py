"""What a broker answers from its published image, following the KRaft cases of Kafka's
``MetadataCacheTest`` (core/src/test/scala/unit/kafka/server/), in kraftsim's terms:
:mod:`broker.metadata_cache` stands in for KRaftMetadataCache, an image built by replaying
records for the cache's image (Kafka's own KRaft cases build it the same way; its
UpdateMetadata cases are turned into the records its test helper writes: each broker
registered unfenced, each partition with its ZK version as partition epoch).

Ported: a topic the image lacks is left out (getTopicMetadataNonExistingTopics); topics,
ids, leaders, epochs, replicas and ISR on each of two listeners (getTopicMetadata); a leader
that is not registered (getTopicMetadataPartitionLeaderNotAvailable) or lacks the listener
(getTopicMetadataPartitionListenerNotAvailableOnLeader,
getTopicMetadataWithNonSupportedSecurityProtocol); replicas and ISR members that are not
alive, listed or left out with REPLICA_NOT_AVAILABLE (getTopicMetadataReplicaNotAvailable,
getTopicMetadataIsrNotAvailable); an answer does not change when a newer image is published
(getAliveBrokersShouldNotBeMutatedByUpdateCache); fenced brokers, alive brokers and their
endpoints, brokers in controlled shutdown, alive broker epochs (testIsBrokerFenced,
testGetAliveBrokersWithBrokerFenced, testIsBrokerInControlledShutdown, testGetLiveBrokerEpoch);
a partition's leader, epochs, ISR and replicas (testGetPartitionInfo); offline replicas by
directory assignment (testGetOfflineReplicasConsidersDirAssignment).

Where the broker uses these answers, already covered: the leader a client is told
(``KRaftCluster.partition_leader``, now read through the cache; every producer and
transaction test sends to it), the ISR eligibility of a follower (fenced, in controlled
shutdown, its fetch's broker epoch: tests/broker/test_isr_broker_epochs.py) and a fetch with
a stale broker epoch (tests/broker/test_stale_fetch_epoch.py).

Not modelled: the ZK metadata cache and UpdateMetadata requests
(testGetClusterMetadataWithOfflineReplicas, testHandleFullUpdateMetadataRequestInZkMigration,
testCreateDeletionEntries, transformUMR*, testUpdateZkMetadataCache*); DescribeTopicPartitions
with its partition limit and cursor (testGetTopicMetadataForDescribeTopicPartitionsResponse:
kraftsim has no such request); Kafka's ``Cluster`` view for clients (getClusterMetadata).
"""

from __future__ import annotations

from broker.metadata_cache import (
    NO_LEADER,
    PartitionMetadata,
    TopicMetadata,
    alive_broker_epoch,
    alive_broker_node,
    alive_brokers,
    is_broker_fenced,
    is_broker_shutting_down,
    partition_leader,
    partition_metadata,
    topic_metadata,
)
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.uuids import LOST_DIRECTORY, MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY
from metadata.versions import LATEST_PRODUCTION, METADATA_VERSION_FEATURE
from tests.metadata.kafka_image_cases import image_of

PLAINTEXT, SSL = "PLAINTEXT", "SSL"
ZK_VERSION = 3
TOPIC_ID = "95OVr1IPRYGrcNCLlpImCA"
MV = FeatureLevelRecord(METADATA_VERSION_FEATURE, LATEST_PRODUCTION)


def _endpoint(listener: str, host: str, port: int) -> BrokerEndpoint:
    return BrokerEndpoint(listener, host, port, 0 if listener == PLAINTEXT else 1)


def _broker(broker_id: int, *endpoints: BrokerEndpoint, rack: str | None = None,
            epoch: int = 10, fenced: bool = False,
            log_dirs: tuple[str, ...] = ()) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, incarnation_id=f"inc-{broker_id}",
                                broker_epoch=epoch, end_points=endpoints, rack=rack,
                                fenced=fenced, log_dirs=log_dirs)


def _plaintext_broker(broker_id: int) -> RegisterBrokerRecord:
    return _broker(broker_id, _endpoint(PLAINTEXT, "foo", 9092))


def _partition(index: int, leader: int, leader_epoch: int, isr: tuple[int, ...],
               replicas: tuple[int, ...], topic_id: str = TOPIC_ID,
               directories: tuple[str, ...] = ()) -> PartitionRecord:
    return PartitionRecord(partition_id=index, topic_id=topic_id, replicas=replicas, isr=isr,
                           leader=leader, leader_epoch=leader_epoch, partition_epoch=ZK_VERSION,
                           directories=directories)


def _one_partition(brokers: list[MetadataRecord], leader: int, isr: tuple[int, ...],
                   replicas: tuple[int, ...], leader_epoch: int = 1) -> MetadataImage:
    """Topic ``topic`` with one partition, as Kafka's single-partition cases write it."""
    return image_of([MV, *brokers, TopicRecord("topic", TOPIC_ID),
                     _partition(0, leader, leader_epoch, isr, replicas)])


def _only_partition(image: MetadataImage, listener: str = PLAINTEXT, *,
                    endpoints: bool = False, listeners: bool = False) -> PartitionMetadata:
    [topic] = topic_metadata(image, ["topic"], listener, error_unavailable_endpoints=endpoints,
                             error_unavailable_listeners=listeners)
    assert topic.error == "NONE"
    [partition] = topic.partitions
    assert partition.partition_index == 0
    return partition


def test_a_topic_the_image_lacks_is_left_out() -> None:
    assert topic_metadata(MetadataImage.EMPTY, ["topic"], PLAINTEXT) == []


def test_topics_and_partitions_on_each_listener() -> None:
    topic0_id, topic1_id = "HDceyWK0Ry-j3XLR8DvvGA", "97FBD1g4QyyNNZNY94bkRA"
    brokers = [_broker(b, _endpoint(PLAINTEXT, f"foo-{b}", 9092),
                       _endpoint(SSL, f"foo-{b}", 9093), rack="rack1") for b in range(5)]
    partitions = {
        "topic-0": [_partition(0, 0, 0, (0, 1, 3), (0, 1, 3), topic0_id),
                    _partition(1, 1, 1, (1, 0), (1, 2, 0, 4), topic0_id)],
        "topic-1": [_partition(0, 2, 2, (2, 1), (2, 1, 3), topic1_id)],
    }
    image = image_of([MV, *brokers, TopicRecord("topic-0", topic0_id), *partitions["topic-0"],
                      TopicRecord("topic-1", topic1_id), *partitions["topic-1"]])
    for listener in (PLAINTEXT, SSL):
        for name, topic_id in (("topic-0", topic0_id), ("topic-1", topic1_id)):
            [topic] = topic_metadata(image, [name], listener)
            assert (topic.name, topic.topic_id, topic.error, topic.is_internal) == (
                name, topic_id, "NONE", False)
            assert topic.partitions == tuple(
                PartitionMetadata(p.partition_id, "NONE", p.leader, p.leader_epoch, p.replicas,
                                  p.isr, ()) for p in partitions[name])


def test_a_leader_that_is_not_registered_is_not_available() -> None:
    image = _one_partition([_plaintext_broker(0)], leader=1, isr=(0,), replicas=(0,))
    for listeners in (False, True):
        partition = _only_partition(image, listeners=listeners)
        assert partition.error == "LEADER_NOT_AVAILABLE"
        assert partition.leader_id == NO_LEADER and partition.leader_epoch == 1
        assert partition.isr_nodes == (0,) and partition.replica_nodes == (0,)
    assert partition_leader(image, "topic", 0) is None


def test_a_leader_without_the_listener_is_listener_not_found_when_asked_for() -> None:
    both = _broker(0, _endpoint(PLAINTEXT, "host0", 9092), _endpoint(SSL, "host0", 9093))
    plaintext_only = _broker(1, _endpoint(PLAINTEXT, "host1", 9092))
    image = _one_partition([both, plaintext_only], leader=1, isr=(0,), replicas=(0,))
    new = _only_partition(image, SSL, listeners=True)
    assert (new.error, new.leader_id, new.isr_nodes, new.replica_nodes) == (
        "LISTENER_NOT_FOUND", NO_LEADER, (0,), (0,))
    old = _only_partition(image, SSL, listeners=False)
    assert (old.error, old.leader_id) == ("LEADER_NOT_AVAILABLE", NO_LEADER)
    assert partition_leader(image, "topic", 0, SSL) is None
    assert partition_leader(image, "topic", 0, PLAINTEXT) == 1


def test_a_listener_no_broker_has_names_no_leader() -> None:
    image = _one_partition([_broker(0, _endpoint(PLAINTEXT, "foo", 9092), rack="")],
                           leader=0, isr=(0, 1), replicas=(0,), leader_epoch=0)
    [topic] = topic_metadata(image, ["topic"], SSL)
    assert len(topic.partitions) == 1 and topic.partitions[0].leader_id == NO_LEADER


def test_a_replica_that_is_not_alive_is_listed_or_left_out_when_asked() -> None:
    image = _one_partition([_plaintext_broker(0)], leader=0, isr=(0,), replicas=(0, 1),
                           leader_epoch=0)
    listed = _only_partition(image, endpoints=False)
    assert (listed.error, listed.replica_nodes, listed.isr_nodes) == ("NONE", (0, 1), (0,))
    assert listed.offline_replicas == (1,)
    left_out = _only_partition(image, endpoints=True)
    assert (left_out.error, left_out.replica_nodes, left_out.isr_nodes) == (
        "REPLICA_NOT_AVAILABLE", (0,), (0,))


def test_an_isr_member_that_is_not_alive_is_listed_or_left_out_when_asked() -> None:
    image = _one_partition([_broker(0, _endpoint(PLAINTEXT, "foo", 9092), rack="rack1")],
                           leader=0, isr=(0, 1), replicas=(0,), leader_epoch=0)
    listed = _only_partition(image, endpoints=False)
    assert (listed.error, listed.replica_nodes, listed.isr_nodes) == ("NONE", (0,), (0, 1))
    left_out = _only_partition(image, endpoints=True)
    assert (left_out.error, left_out.replica_nodes, left_out.isr_nodes) == (
        "REPLICA_NOT_AVAILABLE", (0,), (0,))


def test_an_answer_does_not_change_when_a_newer_image_is_published() -> None:
    first = _one_partition([_plaintext_broker(b) for b in range(3)], leader=0, isr=(0, 1),
                           replicas=(0,), leader_epoch=0)
    answered = alive_brokers(first)
    second = image_of([_plaintext_broker(3)], first)
    assert answered == (0, 1, 2) == alive_brokers(first)
    assert alive_brokers(second) == (0, 1, 2, 3)


def test_a_broker_is_fenced_once_a_change_fences_it() -> None:
    image = image_of([MV, _broker(0)])
    assert not is_broker_fenced(image, 0)
    image = image_of([BrokerRegistrationChangeRecord(0, 10, fenced=1)], image)
    assert is_broker_fenced(image, 0)
    assert not is_broker_fenced(image, 7)  # an unknown broker is not fenced


def test_alive_brokers_are_the_unfenced_ones_and_only_they_have_a_node() -> None:
    listener = _endpoint("listener", "foo", 123)
    image = image_of([MV, _broker(0, listener), _broker(1, listener),
                      BrokerRegistrationChangeRecord(1, 10, fenced=1)])
    assert not is_broker_fenced(image, 0) and is_broker_fenced(image, 1)
    alive = alive_brokers(image)
    for broker_id, registration in image.brokers.items():
        assert (broker_id in alive) == (not registration.fenced)
        assert (broker_id in alive) == (alive_broker_node(image, broker_id, "listener")
                                        is not None)
    assert alive_broker_node(image, 0, "listener") == listener
    assert alive_broker_node(image, 0, PLAINTEXT) is None


def test_a_broker_is_shutting_down_once_a_change_says_so() -> None:
    image = image_of([MV, _broker(0)])
    assert not is_broker_shutting_down(image, 0)
    image = image_of([BrokerRegistrationChangeRecord(0, 10, in_controlled_shutdown=1)], image)
    assert is_broker_shutting_down(image, 0)


def test_the_alive_broker_epoch_is_known_only_for_unfenced_brokers() -> None:
    image = image_of([MV, _broker(0, epoch=100), _broker(1, epoch=101, fenced=True)])
    assert alive_broker_epoch(image, 0) == 100
    assert alive_broker_epoch(image, 1) is None
    assert alive_broker_epoch(image, 2) is None


def test_a_partition_answers_its_leader_epochs_isr_and_replicas() -> None:
    image = image_of([MV, _broker(0, _endpoint(PLAINTEXT, "foo", 9092), rack="rack1"),
                      TopicRecord("topic", TOPIC_ID),
                      _partition(0, 0, 0, (2, 3, 0), (2, 3, 0, 1, 4))])
    registration = image.topics_by_id[TOPIC_ID].partitions[0]
    assert (registration.leader, registration.leader_epoch, registration.isr,
            registration.partition_epoch, registration.replicas) == (
        0, 0, (2, 3, 0), ZK_VERSION, (2, 3, 0, 1, 4))
    answer = partition_metadata(image, "topic", 0)
    assert answer == PartitionMetadata(0, "NONE", 0, 0, (2, 3, 0, 1, 4), (2, 3, 0),
                                       (2, 3, 1, 4))
    assert partition_metadata(image, "topic", 1) is None
    assert partition_metadata(image, "other", 0) is None


def test_offline_replicas_follow_directory_assignment() -> None:
    dir0, dir1 = "broker1logdirjEo71BG0w", "broker2logdirRmQQgLxgw"
    brokers = [_broker(b, _endpoint(PLAINTEXT, f"broker-{b}", 9093), log_dirs=(d,))
               for b, d in ((0, dir0), (1, dir1))]
    partitions = [
        _partition(0, 0, 0, (0, 1), (0, 1), directories=(dir0, LOST_DIRECTORY)),
        _partition(1, 0, 0, (0, 1), (0, 1),
                   directories=("unknownlogdirjEo71BG0w", UNASSIGNED_DIRECTORY)),
        _partition(2, 0, 0, (0, 1), (0, 1), directories=(MIGRATING_DIRECTORY, dir1)),
    ]
    image = image_of([MV, *brokers, TopicRecord("foo", TOPIC_ID), *partitions])
    [topic] = topic_metadata(image, ["foo"], PLAINTEXT)
    assert {p.partition_index: p.offline_replicas for p in topic.partitions} == {
        0: (1,), 1: (0,), 2: ()}


def test_internal_topics_are_marked() -> None:
    image = image_of([MV, _plaintext_broker(0), TopicRecord("__transaction_state", TOPIC_ID),
                      _partition(0, 0, 0, (0,), (0,))])
    assert topic_metadata(image, ["__transaction_state"]) == [TopicMetadata(
        "__transaction_state", TOPIC_ID, True,
        (PartitionMetadata(0, "NONE", 0, 0, (0,), (0,), ()),))]


def test_by_default_a_metadata_answer_lists_every_replica_and_names_no_missing_listener() -> None:
    """The defaults are those of a current Metadata request: unavailable replicas listed (only
    v0 leaves them out), a leader without the listener LEADER_NOT_AVAILABLE."""
    image = _one_partition([_plaintext_broker(0)], leader=0, isr=(0, 1), replicas=(0, 1))
    [topic] = topic_metadata(image, ["topic"])
    [partition] = topic.partitions
    assert (partition.error, partition.replica_nodes, partition.isr_nodes) == (
        "NONE", (0, 1), (0, 1))
    assert partition.offline_replicas == (1,)
    ssl_only = _one_partition([_broker(0, _endpoint(SSL, "foo", 9093))], leader=0, isr=(0,),
                              replicas=(0,))
    [topic] = topic_metadata(ssl_only, ["topic"])
    assert topic.partitions[0].error == "LEADER_NOT_AVAILABLE"
