"""A broker's publishers of metadata images, following the cases of Kafka's
``BrokerMetadataPublisherTest`` (core/src/test/scala/unit/kafka/server/metadata/) and
``BrokerRegistrationTrackerTest`` (metadata/src/test/java/org/apache/kafka/image/publisher/)
that kraftsim models. Kafka's BrokerMetadataPublisher hands each topic's delta to the
replica manager; kraftsim's :class:`~broker.replica_manager.ReplicaManager` subscribes to
the loader itself and finds the topics that changed by comparing the image it had with the
published one (its broker index), so Kafka's per-topic delta is a behaviour here: the
replicas of a changed topic change, those of a removed topic go, and those of a topic the
image did not change are not visited.

Ported: testGetTopicDelta (no delta for an unknown topic or a deleted one, one for a changed
topic) as test_a_published_image_touches_only_the_topics_it_changed.

Already covered: the replicas of a removed topic and their logs are gone, and a fetch or
produce for them is refused (test_kafka_replica_manager_cases.py::
test_follower_and_leader_removed_from_the_replicas_or_with_their_topic); every publisher gets
every published image, in order (testNewImagePushedToGroupCoordinator's point; kraftsim's
group and transaction coordinators follow the replicas of their internal topics that the
broker leads, ``ReplicaManager.topic_leaders``, rather than the image:
test_kafka_metadata_loader_cases.py and test_kafka_replica_manager_cases.py::
test_the_leaders_of_a_topic_are_the_replicas_this_broker_leads).

Not modelled: dynamic broker configs reloaded from files
(testReloadUpdatedFilesWithoutConfigChange); a publisher that throws, reported to the
non-fatal fault handler while loading goes on (testExceptionInUpdateCoordinator: kraftsim's
publishers are its own code, and an exception there is a bug that stops the run). And the
whole of BrokerRegistrationTrackerTest (testTrackerName,
testMetadataVersionUpdateWithoutRegistrationDoesNothing,
testBrokerUpdateWithoutNewMvDoesNothing, testBrokerUpdateWithNewMv,
testBrokerUpdateWithNewMvWithTwoDeltas): the tracker asks a broker to register again when
metadata.version reaches 3.7-IV2 and its registration names no log directories, for the
move to JBOD. kraftsim's brokers register no log directories at any level (JBOD and
directory assignment are not modelled; a registration carries directory ids only when a
test's or a Kafka file's records give them), so a new registration would carry nothing
more.
"""

from __future__ import annotations

from metadata.schema import PartitionChangeRecord, PartitionRecord, RemoveTopicRecord, TopicRecord
from tests.broker.replica_cell import KEY, TOPIC_ID, Cell

REMOVED_ID, UNCHANGED_ID = "rWaCHejCRRiptDMvW5Xw0g", "c7QfSi6xSIGQVh3Qd5RJxA"


def _topic(name: str, topic_id: str) -> tuple[TopicRecord, PartitionRecord]:
    return (TopicRecord(name, topic_id),
            PartitionRecord(partition_id=0, topic_id=topic_id, replicas=(1, 2, 3),
                            isr=(1, 2, 3), leader=1, leader_epoch=0, partition_epoch=0))


def test_a_published_image_touches_only_the_topics_it_changed() -> None:
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    cell.publish(*_topic("removed", REMOVED_ID), *_topic("unchanged", UNCHANGED_ID))
    removed, unchanged = (REMOVED_ID, 0), (UNCHANGED_ID, 0)
    follower = cell.managers[2]
    follower.drain_changed()
    before = follower.replicas[unchanged]
    cell.publish(PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, leader=2),
                 RemoveTopicRecord(REMOVED_ID))
    changed = follower.drain_changed()
    assert KEY in changed and unchanged not in changed
    assert follower.replicas[KEY].is_leader and follower.replicas[KEY].leader_epoch == 1
    assert removed not in follower.replicas and removed not in follower.log_dir.replica_keys()
    assert follower.replicas[unchanged] is before
    assert follower.replicas[unchanged].leader_epoch == 0
