"""CreateTopics and DeleteTopics as a client sends them, following the cases of Kafka's
CreateTopicsRequestTest (and its base AbstractCreateTopicsRequestTest) and
DeleteTopicsRequestTest (core/src/test/scala/unit/kafka/server/), run against a KRaft
controller of three registered brokers (Kafka's BaseRequestTest cluster, num.partitions
and default.replication.factor 1).

Kafka checks a topic's metadata on the brokers after the request; here the image the
request's records make is checked.

Covered elsewhere: testInvalidCreateTopicsRequests in test_kafka_manual_assignment_cases
(test_an_assignment_needs_minus_one_partitions_and_replication_factor); the duplicate
names of one request and the too-long name in test_kafka_replication_control_cases.

Not ported:

- CreateTopicsRequestTest.testCreateTopicsWithVeryShortTimeouts: ZooKeeper only (a
  request's timeout and the broker's purgatory are not modelled).
- CreateTopicsRequestTest.testNotController: ZooKeeper only (NOT_CONTROLLER; a KRaft
  broker forwards the request to the controller, a broker's forwarding not modelled).
- CreateTopicsRequestTest.testCreateTopicsRequestVersions: request versions (and
  ZooKeeper only) not modelled.
- DeleteTopicsRequestTest.testNotController: as CreateTopicsRequestTest.testNotController.
- DeleteTopicsRequestTest.testDeleteTopicsVersions: request versions (and ZooKeeper
  only) not modelled.
- DeleteTopicsRequestTest.testErrorDeleteTopicRequests, its timeout (a 0 ms timeout is
  REQUEST_TIMED_OUT, the topic deleted later): ZooKeeper only, timeouts not modelled; its
  other cases are ported below.
"""

from __future__ import annotations

from controller.operations import CreateTopics, DeleteTopics, FenceBroker, NewTopic, UnfenceBroker
from metadata.image import MetadataImage

from .kafka_cases import brokers, image_of, refusal, run

BROKER_COUNT = 3


def _cluster() -> MetadataImage:
    return image_of(brokers(*range(BROKER_COUNT)))


def _topic(name: str, partitions: int | None = None, rf: int | None = None,
           config: dict[str, str] | None = None,
           assignment: dict[int, list[int]] | None = None) -> NewTopic:
    """Kafka's topicReq: 1 partition and replication factor 1 unless given, both -1 with an
    assignment."""
    default = -1 if assignment is not None else 1
    return NewTopic(name, default if partitions is None else partitions,
                    default if rf is None else rf,
                    tuple((config or {}).items()),
                    tuple(tuple(assignment[p]) for p in sorted(assignment or {})))


def _shape(image: MetadataImage, name: str) -> tuple[int, int] | None:
    """The topic's partition count and its first partition's replica count, None when
    there is no such topic."""
    topic = image.topic(name)
    if topic is None:
        return None
    return len(topic.partitions), len(topic.partitions[0].replicas)


def _answers(response: object) -> dict[str, str | None]:
    """Each topic's error code in a CreateTopics response (None when created)."""
    topics = response["topics"]  # type: ignore[index]
    return {t["name"]: t.get("errorCode") for t in topics}


# ------------------------------------------------------------------ CreateTopics

def test_valid_create_topics_requests() -> None:
    """testValidCreateTopicsRequests: generated, manual and mixed requests create their
    topics with the partitions and replication factor asked (-1 the defaults, 1 and 1);
    a validate-only request answers without an error and creates nothing."""
    image = _cluster()
    wanted = {"topic1": (1, 1), "topic2": (1, 3), "topic3": (5, 2), "topic4": (1, 1),
              "topic5": (3, 2), "topic6": (1, 1), "topic7": (5, 2), "topic8": (3, 2),
              "topic12": (1, 1), "topic13": (1, 2), "topic14": (2, 1)}
    manual = {0: [0, 1], 1: [1, 0], 2: [1, 2]}
    requests = [
        (_topic("topic1"),),
        (_topic("topic2", rf=3),),
        (_topic("topic3", 5, 2, {"min.insync.replicas": "2"}),),
        (_topic("topic4", assignment={0: [0]}),),
        (_topic("topic5", assignment=manual, config={"min.insync.replicas": "2"}),),
        (_topic("topic6"), _topic("topic7", 5, 2), _topic("topic8", assignment=manual)),
        (_topic("topic12", -1, -1),),
        (_topic("topic13", -1, 2),),
        (_topic("topic14", 2, -1),),
    ]
    for topics in requests:
        image, _, response = run(CreateTopics(topics), image)
        assert set(_answers(response).values()) == {None}
        for topic in topics:
            assert _shape(image, topic.name) == wanted[topic.name]
    assert image.topic("topic5").partitions[2].replicas == (1, 2)  # type: ignore[union-attr]
    validate_only = CreateTopics((_topic("topic9"), _topic("topic10", 5, 2),
                                  _topic("topic11", assignment=manual)), validate_only=True)
    after, records, response = run(validate_only, image)
    assert records == [] and set(_answers(response).values()) == {None}
    assert [_shape(after, n) for n in ("topic9", "topic10", "topic11")] == [None] * 3


def test_error_create_topics_requests() -> None:
    """testErrorCreateTopicsRequests, its basic cases: each request of one topic is refused
    with Kafka's error (the existing topic's message too); an unknown config and one
    kraftsim does not model (message.format.version, deprecated) are both INVALID_CONFIG."""
    image, _, _ = run(CreateTopics((_topic("existing-topic"),)), _cluster())
    cases = [
        (_topic("existing-topic"), "TOPIC_ALREADY_EXISTS"),
        (_topic("error-partitions", partitions=-2), "INVALID_PARTITIONS"),
        (_topic("error-replication", rf=BROKER_COUNT + 1), "INVALID_REPLICATION_FACTOR"),
        (_topic("error-config", config={"not.a.property": "error"}), "INVALID_CONFIG"),
        (_topic("error-config-value", config={"message.format.version": "invalid-value"}),
         "INVALID_CONFIG"),
        (_topic("error-assignment", assignment={0: [0, 1], 1: [0]}),
         "INVALID_REPLICA_ASSIGNMENT"),
    ]
    for topic, code in cases:
        refused = refusal(CreateTopics((topic,)), image)
        assert refused.code == code, topic.name
    assert refusal(CreateTopics((_topic("existing-topic"),)), image).message == \
        "Topic 'existing-topic' already exists."


def test_a_partly_erroneous_create_topics_request_creates_its_valid_topic() -> None:
    """testErrorCreateTopicsRequests, its partial request: each topic answers its own
    error and the valid one, partial-none, is created."""
    image, _, _ = run(CreateTopics((_topic("existing-topic"),)), _cluster())
    request = CreateTopics((
        _topic("existing-topic"),
        _topic("partial-partitions", partitions=-2),
        _topic("partial-replication", rf=BROKER_COUNT + 1),
        _topic("partial-assignment", assignment={0: [0, 1], 1: [0]}),
        _topic("partial-none")))
    image, _, response = run(request, image)
    assert _answers(response) == {
        "existing-topic": "TOPIC_ALREADY_EXISTS",
        "partial-partitions": "INVALID_PARTITIONS",
        "partial-replication": "INVALID_REPLICATION_FACTOR",
        "partial-assignment": "INVALID_REPLICA_ASSIGNMENT",
        "partial-none": None}
    assert _shape(image, "partial-none") == (1, 1)
    assert [_shape(image, n) for n in ("partial-partitions", "partial-replication",
                                       "partial-assignment")] == [None] * 3


def test_the_cluster_metadata_topic_cannot_be_created() -> None:
    """testCreateClusterMetadataTopic: __cluster_metadata is INVALID_REQUEST "Creation of
    internal topic __cluster_metadata is prohibited." (Kafka's ControllerApis), alone or
    beside a topic that is created; named twice it is a duplicate name first."""
    image = _cluster()
    refused = refusal(CreateTopics((_topic("__cluster_metadata"),)), image)
    assert (refused.code, refused.message) == (
        "INVALID_REQUEST", "Creation of internal topic __cluster_metadata is prohibited.")
    image, _, response = run(CreateTopics((_topic("__cluster_metadata"), _topic("foo"))),
                             image)
    assert _answers(response) == {"__cluster_metadata": "INVALID_REQUEST", "foo": None}
    assert image.topic("__cluster_metadata") is None and image.topic("foo") is not None
    twice = refusal(CreateTopics((_topic("__cluster_metadata"),) * 2), image)
    assert (twice.code, twice.message) == ("INVALID_REQUEST", "Duplicate topic name.")


# ------------------------------------------------------------------ DeleteTopics

def _create(image: MetadataImage, name: str, partitions: int = 1, rf: int = 1
            ) -> MetadataImage:
    return run(CreateTopics((NewTopic(name, partitions, rf),)), image)[0]


def test_valid_delete_topic_requests() -> None:
    """testValidDeleteTopicRequests: one topic by name, two by name, two by id; each
    answered without an error and gone."""
    image = _create(_cluster(), "topic-1")
    image, _, response = run(DeleteTopics(("topic-1",)), image)
    assert response == {"deleted": ["topic-1"]} and image.topic("topic-1") is None
    image = _create(_create(image, "topic-3", 5, 2), "topic-4", 1, 2)
    image, _, response = run(DeleteTopics(("topic-3", "topic-4")), image)
    assert response == {"deleted": ["topic-3", "topic-4"]}
    assert image.topic("topic-3") is None and image.topic("topic-4") is None
    image = _create(_create(image, "topic-7", 3, 2), "topic-6", 1, 2)
    ids = (image.topics_by_name["topic-7"], image.topics_by_name["topic-6"])
    image, _, response = run(DeleteTopics((), ids), image)
    assert response == {"deleted": ["topic-7", "topic-6"]}
    assert not image.topics_by_name and not image.topics_by_id


def test_error_delete_topic_requests() -> None:
    """testErrorDeleteTopicRequests (less its timeout): an unknown name alone is
    UNKNOWN_TOPIC_OR_PARTITION; beside a known topic, that topic is deleted and the
    unknown one answers its error; by id, an unknown id is UNKNOWN_TOPIC_ID and the known
    one is deleted."""
    image = _cluster()
    assert refusal(DeleteTopics(("invalid-topic",)), image).code == \
        "UNKNOWN_TOPIC_OR_PARTITION"
    image = _create(image, "partial-topic-1")
    image, _, response = run(DeleteTopics(("partial-topic-1", "partial-invalid-topic")),
                             image)
    assert response["deleted"] == ["partial-topic-1"]  # type: ignore[index]
    assert [(e["name"], e["errorCode"]) for e in response["errors"]] == [  # type: ignore[index]
        ("partial-invalid-topic", "UNKNOWN_TOPIC_OR_PARTITION")]
    assert image.topic("partial-topic-1") is None
    image = _create(image, "topic-id-1")
    valid, invalid = image.topics_by_name["topic-id-1"], "AAAAAAAAAAAAAAAAAAAAAQ"
    image, _, response = run(DeleteTopics((), (invalid, valid)), image)
    assert response["deleted"] == ["topic-id-1"]  # type: ignore[index]
    assert [(e["topicId"], e["errorCode"]) for e in response["errors"]] == [  # type: ignore[index]
        (invalid, "UNKNOWN_TOPIC_ID")]
    assert image.topic("topic-id-1") is None


def test_topics_with_offline_partitions_can_be_deleted() -> None:
    """testTopicDeletionClusterHasOfflinePartitions: topic-1 on broker 0 alone, topic-2 on
    broker 1; broker 0 fenced, topic-1 has no leader; both deleted, and broker 0 back
    finds neither."""
    image = _cluster()
    for name, broker in (("topic-1", 0), ("topic-2", 1)):
        image = run(CreateTopics((_topic(name, assignment={0: [broker]}),)), image)[0]
    image = run(FenceBroker(0), image)[0]
    offline, online = image.topic("topic-1"), image.topic("topic-2")
    assert offline is not None and online is not None
    assert (offline.partitions[0].leader, online.partitions[0].leader) == (-1, 1)
    image, _, response = run(DeleteTopics(("topic-2",)), image)
    image, _, response = run(DeleteTopics(("topic-1",)), image)
    assert response == {"deleted": ["topic-1"]}
    image = run(UnfenceBroker(0), image)[0]
    assert not image.topics_by_name and not image.topics_by_id
