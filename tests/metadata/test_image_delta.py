"""Replay semantics of MetadataDelta and the structure of MetadataImage."""

from __future__ import annotations

import pytest

from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta, ReplayError
from metadata.image import MetadataImage
from metadata.schema import (
    BeginTransactionRecord,
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    ZkMigrationStateRecord,
)
from metadata.snapshot import image_from_records, image_to_records

FOO = "AAAAAAAAAAAAAAAAAAAAAg"
BAR = "AAAAAAAAAAAAAAAAAAAAAw"


def image_of(*records: object, base: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    delta = MetadataDelta(base)
    delta.replay_all(records)  # type: ignore[arg-type]
    return delta.apply(base.offset + len(records), 1)


def foo_with_partitions(n: int) -> MetadataImage:
    return image_of(TopicRecord("foo", FOO), *[
        PartitionRecord(partition_id=i, topic_id=FOO, replicas=(1, 2, 3), isr=(1, 2, 3),
                        leader=1, leader_epoch=0, partition_epoch=0) for i in range(n)])


def test_partition_change_merges_with_kafka_rules() -> None:
    image = foo_with_partitions(1)
    image = image_of(PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2)), base=image)
    p = image.topics_by_id[FOO].partitions[0]
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2), 1, 0, 1)
    image = image_of(PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1), base=image)
    p = image.topics_by_id[FOO].partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (1, 1, 2)  # same leader still bumps
    image = image_of(PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=-1), base=image)
    assert image.topics_by_id[FOO].partitions[0].leader == -1


def test_config_null_deletes_and_remove_topic_drops_configs() -> None:
    image = image_of(TopicRecord("foo", FOO),
                     ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", "100"),
                     ConfigRecord(TOPIC_RESOURCE, "foo", "cleanup.policy", "compact"),
                     ConfigRecord(BROKER_RESOURCE, "1", "log.retention.ms", "5"))
    image = image_of(ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", None), base=image)
    assert dict(image.configs[(TOPIC_RESOURCE, "foo")]) == {"cleanup.policy": "compact"}
    image = image_of(RemoveTopicRecord(FOO), base=image)
    assert (TOPIC_RESOURCE, "foo") not in image.configs
    assert image.topic("foo") is None and len(image.topics_by_id) == 0
    assert (BROKER_RESOURCE, "1") in image.configs


def test_broker_changes_need_a_matching_epoch() -> None:
    image = image_of(RegisterBrokerRecord(broker_id=1, broker_epoch=10))
    assert image.brokers[1].fenced
    image = image_of(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1),
                     base=image)
    assert not image.brokers[1].fenced
    with pytest.raises(ReplayError, match="epoch 10, not 11"):
        image_of(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=11, fenced=1),
                 base=image)
    with pytest.raises(ReplayError, match="not registered"):
        image_of(UnregisterBrokerRecord(broker_id=2, broker_epoch=10), base=image)


def test_unknown_topics_and_markers_are_replay_errors() -> None:
    with pytest.raises(ReplayError):
        image_of(RemoveTopicRecord(FOO))
    with pytest.raises(ReplayError):
        image_of(PartitionRecord(partition_id=0, topic_id=FOO, replicas=(1,), isr=(1,)))
    with pytest.raises(ReplayError, match="BEGIN_TRANSACTION_RECORD"):
        image_of(BeginTransactionRecord("x"))


def test_metadata_version_defaults_to_3_0_iv1() -> None:
    assert MetadataImage.EMPTY.metadata_version == 1
    assert image_of(FeatureLevelRecord("metadata.version", 13)).metadata_version == 13


def test_apply_shares_unchanged_structure() -> None:
    base = image_of(TopicRecord("bar", BAR), base=foo_with_partitions(100))
    after = image_of(PartitionChangeRecord(partition_id=3, topic_id=FOO, isr=(1,)), base=base)
    assert after.topics_by_id[BAR] is base.topics_by_id[BAR]
    assert after.brokers is base.brokers and after.configs is base.configs
    assert after.topics_by_id[FOO].partitions[4] is base.topics_by_id[FOO].partitions[4]


def test_digest_tracks_content_not_history() -> None:
    a = foo_with_partitions(3)
    b = image_of(PartitionChangeRecord(partition_id=1, topic_id=FOO, isr=(1,)), base=a)
    assert not a.same_content(b)
    c = image_of(RemoveTopicRecord(FOO), TopicRecord("foo", FOO), *[
        PartitionRecord(partition_id=i, topic_id=FOO, replicas=(1, 2, 3), isr=(1, 2, 3),
                        leader=1, leader_epoch=0, partition_epoch=0) for i in range(3)], base=b)
    assert c.same_content(a)
    noop = image_of(NoOpRecord(), base=a)
    assert noop.same_content(a) and noop.offset == a.offset + 1


def test_snapshot_records_rebuild_the_same_image() -> None:
    image = image_of(FeatureLevelRecord("metadata.version", 13),
                     RegisterBrokerRecord(broker_id=2, broker_epoch=7, fenced=False),
                     ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", "100"),
                     base=foo_with_partitions(5))
    records = image_to_records(image)
    assert records[0] == FeatureLevelRecord("metadata.version", 13)
    rebuilt = image_from_records(records, image.offset, image.epoch)
    assert rebuilt.same_content(image)
    assert rebuilt == image
    with pytest.raises(ReplayError, match="cannot appear within a snapshot"):
        image_from_records([BeginTransactionRecord()], 0, 0)


def test_a_snapshot_writes_metadata_version_first_and_the_producer_ids_as_kafka_does() -> None:
    """metadata.version before every other feature, and the next producer id as
    ProducerIdsRecord(brokerId -1, brokerEpoch -1), as Kafka's images write them (the other
    features by name: Kafka's order is its hash map's)."""
    image = image_of(FeatureLevelRecord("transaction.version", 2),
                     FeatureLevelRecord("metadata.version", 13),
                     FeatureLevelRecord("kraft.version", 1),
                     ProducerIdsRecord(broker_id=3, broker_epoch=9, next_producer_id=5000))
    records = image_to_records(image)
    assert records == [FeatureLevelRecord("metadata.version", 13),
                       FeatureLevelRecord("kraft.version", 1),
                       FeatureLevelRecord("transaction.version", 2),
                       ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=5000)]
    rebuilt = image_from_records(records, image.offset, image.epoch)
    assert rebuilt.same_content(image)
    assert rebuilt == image


def test_the_next_producer_id_only_moves_forward() -> None:
    """Kafka's ProducerIdControlManager.replay: a record whose next producer id is not
    above the current one is refused, the same one included."""
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(ProducerIdsRecord(broker_id=1, broker_epoch=5, next_producer_id=1000))
    for stale in (1000, 999):
        with pytest.raises(ReplayError, match=f"next producer id {stale} is not above the "
                                              f"current 1000"):
            delta.replay(ProducerIdsRecord(broker_id=1, broker_epoch=5,
                                           next_producer_id=stale))
    delta.replay(ProducerIdsRecord(broker_id=2, broker_epoch=6, next_producer_id=2000))
    image = delta.apply(2, 1)
    assert image.next_producer_id == 2000
    later = MetadataDelta(image)
    with pytest.raises(ReplayError, match="not above the current 2000"):
        later.replay(ProducerIdsRecord(broker_id=1, broker_epoch=5, next_producer_id=2000))


def test_a_topic_id_is_created_once() -> None:
    """A TopicRecord for a topic id that exists, in the image or earlier in the same delta,
    cannot apply (whatever its name): the existing topic is left as it was."""
    image = foo_with_partitions(2)
    with pytest.raises(ReplayError, match=f"topic id {FOO} already exists"):
        image_of(TopicRecord("other", FOO), base=image)
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(TopicRecord("bar", BAR))
    with pytest.raises(ReplayError, match=f"topic id {BAR} already exists"):
        delta.replay(TopicRecord("baz", BAR))
    assert delta.apply(1, 1).topic("bar") is not None


def test_feature_level_zero_removes_a_feature_but_never_metadata_version() -> None:
    """FeatureLevelRecord at level 0 removes a feature (Kafka's FeaturesDelta), except
    metadata.version, which an image always keeps."""
    image = image_of(FeatureLevelRecord("metadata.version", 13),
                     FeatureLevelRecord("kraft.version", 1))
    image = image_of(FeatureLevelRecord("kraft.version", 0), base=image)
    assert "kraft.version" not in image.features
    image = image_of(FeatureLevelRecord("metadata.version", 0), base=image)
    assert "metadata.version" in image.features


def test_snapshot_records_keep_the_zk_migration_state() -> None:
    """An image with a ZK migration state writes it into its snapshot records (Kafka's
    image writes a ZkMigrationStateRecord), so the rebuilt image has it too."""
    image = image_of(FeatureLevelRecord("metadata.version", 13), ZkMigrationStateRecord(3))
    records = image_to_records(image)
    assert ZkMigrationStateRecord(3) in records
    rebuilt = image_from_records(records, image.offset, image.epoch)
    assert rebuilt.zk_migration_state == 3
    assert rebuilt.same_content(image)


def test_a_topic_removed_earlier_in_the_delta_takes_no_more_partition_records() -> None:
    """Once a RemoveTopicRecord is replayed, the topic is gone for the rest of the delta:
    a PartitionRecord or PartitionChangeRecord for it cannot apply (it does not come back)."""
    image = foo_with_partitions(2)
    for late in (PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,)),
                 PartitionRecord(partition_id=5, topic_id=FOO, replicas=(1,), isr=(1,),
                                 leader=1)):
        delta = MetadataDelta(image)
        delta.replay(RemoveTopicRecord(FOO))
        with pytest.raises(ReplayError, match="unknown topic"):
            delta.replay(late)
        after = delta.apply(image.offset + 1, 1)
        assert FOO not in after.topics_by_id and after.topic("foo") is None


def test_a_registration_change_replaces_the_log_dirs_only_when_it_names_them() -> None:
    """BrokerRegistrationChangeRecord with log dirs replaces the broker's directories
    (Kafka's BrokerRegistration.cloneWith); without them the directories stay."""
    image = image_of(RegisterBrokerRecord(broker_id=1, broker_epoch=10, log_dirs=("d1",)))
    image = image_of(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1),
                     base=image)
    assert image.brokers[1].directories == ("d1",)
    image = image_of(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10,
                                                    log_dirs=("d2", "d3")), base=image)
    assert image.brokers[1].directories == ("d2", "d3")
    assert not image.brokers[1].fenced


def test_a_brokers_endpoints_are_a_set_by_listener_name() -> None:
    """Kafka keeps a registration's listeners in a map by name: two registrations listing
    the same endpoints in another order are the same registration (same content)."""
    plain = BrokerEndpoint("PLAINTEXT", "h", 9092)
    ssl = BrokerEndpoint("SSL", "h", 9093)
    one = image_of(RegisterBrokerRecord(broker_id=1, broker_epoch=10, end_points=(ssl, plain)))
    other = image_of(RegisterBrokerRecord(broker_id=1, broker_epoch=10, end_points=(plain, ssl)))
    assert one.brokers[1] == other.brokers[1]
    assert one.same_content(other)


def test_snapshot_records_keep_every_partition_field() -> None:
    """A partition's leader recovery state and directories survive a round trip through
    snapshot records (a recovering partition stays recovering)."""
    image = image_of(TopicRecord("foo", FOO), PartitionRecord(
        partition_id=0, topic_id=FOO, replicas=(1, 2), isr=(1,), leader=1,
        leader_recovery_state=1, leader_epoch=3, partition_epoch=4,
        directories=("AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg")))
    rebuilt = image_from_records(image_to_records(image), image.offset, image.epoch)
    partition = rebuilt.topics_by_id[FOO].partitions[0]
    assert partition.leader_recovery_state == 1
    assert partition.directories == ("AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg")
    assert rebuilt == image


def test_a_change_of_the_zk_migration_state_is_a_change_of_content() -> None:
    """Two images that differ only in their ZK migration state do not hold the same
    metadata, and an image whose state changed holds what one built at once with that
    state holds."""
    before = image_of(FeatureLevelRecord("metadata.version", 13), ZkMigrationStateRecord(0))
    after = image_of(ZkMigrationStateRecord(2), base=before)
    assert after.zk_migration_state == 2 and not after.same_content(before)
    built = image_of(FeatureLevelRecord("metadata.version", 13), ZkMigrationStateRecord(2))
    assert after.same_content(built)


def test_the_same_change_record_replayed_twice_applies_twice() -> None:
    """A PartitionChangeRecord naming a leader bumps the leader epoch each time it is
    replayed, also when one record object is replayed twice in a row (Kafka replays each
    record it reads, whatever it read before)."""
    change = PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=2)
    image = image_of(change, change, base=foo_with_partitions(1))
    p = image.topics_by_id[FOO].partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 2, 2)
    again = image_of(change, base=image)
    assert again.topics_by_id[FOO].partitions[0].leader_epoch == 3


def test_images_and_what_they_hold_cannot_be_changed_in_place() -> None:
    """Images share their structures with older ones (and with other nodes): none of
    them can be modified in place, which would change every image sharing it."""
    image = foo_with_partitions(1)
    image = image_of(RegisterBrokerRecord(broker_id=1, broker_epoch=3), base=image)
    topic = image.topics_by_id[FOO]
    held: list[tuple[object, str]] = [(image, "offset"), (topic, "name"),
                                      (topic.partitions[0], "leader"),
                                      (image.brokers[1], "fenced")]
    for struct, field in held:
        with pytest.raises(AttributeError):
            setattr(struct, field, getattr(struct, field))


def test_removing_a_topic_drops_the_configs_of_kafkas_topic_resource_type() -> None:
    """Config records name their resource by Kafka's ConfigResource.Type ids (2: a topic,
    4: a broker): deleting topic "foo" drops type 2's "foo" configs and keeps a broker's
    that happens to share the name."""
    image = image_of(TopicRecord("foo", FOO), ConfigRecord(2, "foo", "retention.ms", "100"),
                     ConfigRecord(4, "foo", "log.retention.ms", "5"))
    assert dict(image.configs[(2, "foo")]) == {"retention.ms": "100"}
    image = image_of(RemoveTopicRecord(FOO), base=image)
    assert (2, "foo") not in image.configs
    assert dict(image.configs[(4, "foo")]) == {"log.retention.ms": "5"}


def test_the_empty_image_is_before_the_first_offset_and_epoch() -> None:
    """The state before any record (Kafka's MetadataProvenance.EMPTY): offset -1, epoch -1,
    nothing in it, and an empty delta on it changes only its provenance."""
    empty = MetadataImage.EMPTY
    assert (empty.offset, empty.epoch, empty.partition_count) == (-1, -1, 0)
    assert not empty.brokers and not empty.topics_by_id and not empty.features
    later = MetadataDelta(empty).apply(4, 2)
    assert (later.offset, later.epoch) == (4, 2) and later.same_content(empty)
