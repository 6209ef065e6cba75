"""An image written at an older metadata.version, following Kafka's ``ImageDowngradeTest``.

Each case builds an image from records at one metadata.version, writes it as the
records of another (``image_to_records(image, metadata_version, on_loss)``) and looks
at the records written and the losses reported. Ported: below 3.3-IV0 no feature is
written, and a feature other than metadata.version is reported lost
(testPremodernVersion); below 3.3-IV3 a broker's controlled-shutdown state is
dropped and reported (testPreControlledShutdownStateVersion); below 3.4-IV0 a
broker's ZK-migrating state is (testPreZkMigrationSupportVersion); below 3.7-IV2
the directories of replicas are (testDirectoryAssignmentState, without JBOD: kraftsim
only carries the directory ids a record gives). Beyond Kafka's cases: what is written
reads back as the image without what was lost, and without a loss handler the first
loss is an error (Kafka's default loss handler throws).

Where kraftsim differs on purpose: a kind of loss is reported once per write (Kafka
reports it again for each broker or replica that holds it); and a ZkMigrationStateRecord
is written only when the image holds a ZK migration state (Kafka writes one, NONE,
at every level from 3.4-IV0; ZK migration is not modelled).
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import (
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.snapshot import UnwritableMetadataError, image_from_records, image_to_records
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from tests.metadata.kafka_image_cases import image_of

TOPIC_ID = "5JPuABiJTPu2pQjpZWM6_A"
FOO = TopicRecord("foo", TOPIC_ID)
FOO_0 = PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(0, 1), isr=(0, 1),
                        leader=0, leader_epoch=1, partition_epoch=2)
INCARNATION = "XgjKo16hRWeWrTui0iR5Nw"


def metadata_version(name: str) -> FeatureLevelRecord:
    """The FeatureLevelRecord of metadata.version at the release ``name``."""
    return FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS[name])


def broker_123(in_controlled_shutdown: bool = False,
               is_migrating_zk_broker: bool = False) -> RegisterBrokerRecord:
    """Broker 123, unfenced, at epoch 456."""
    return RegisterBrokerRecord(broker_id=123, incarnation_id=INCARNATION, broker_epoch=456,
                                fenced=False, in_controlled_shutdown=in_controlled_shutdown,
                                is_migrating_zk_broker=is_migrating_zk_broker)


def write_with_losses(records: list[MetadataRecord],
                      release: str) -> tuple[list[MetadataRecord], list[str]]:
    """The image of ``records`` written at ``release``: the records and the losses."""
    losses: list[str] = []
    written = image_to_records(image_of(records), LEVELS[release], losses.append)
    return written, losses


def test_below_3_3_iv0_no_feature_is_written_and_other_features_are_lost() -> None:
    written, losses = write_with_losses(
        [metadata_version("3.3-IV0"), FOO, FOO_0, FeatureLevelRecord("foo.feature", 4)],
        "3.2-IV0")
    assert losses == ["feature flag(s): foo.feature"]
    assert written == [FOO, FOO_0]
    back = image_from_records(written, 10, 1)
    assert back.metadata_version == MINIMUM_KRAFT
    assert dict(back.features) == {}
    assert dict(back.topics_by_name) == {"foo": TOPIC_ID}


def test_below_3_3_iv0_metadata_version_alone_is_no_loss() -> None:
    written, losses = write_with_losses([metadata_version("3.3-IV0"), FOO, FOO_0], "3.2-IV0")
    assert (written, losses) == ([FOO, FOO_0], [])


def test_below_3_3_iv3_the_controlled_shutdown_state_is_lost() -> None:
    written, losses = write_with_losses(
        [metadata_version("3.3-IV3"), broker_123(in_controlled_shutdown=True), FOO, FOO_0],
        "3.3-IV2")
    assert losses == ["the inControlledShutdown state of one or more brokers"]
    assert written == [metadata_version("3.3-IV2"), broker_123(), FOO, FOO_0]
    back = image_from_records(written, 10, 1)
    assert back.metadata_version == LEVELS["3.3-IV2"]
    assert not back.brokers[123].in_controlled_shutdown
    assert back.brokers[123].epoch == 456


def test_below_3_4_iv0_the_zk_migrating_state_is_lost_and_controlled_shutdown_kept() -> None:
    written, losses = write_with_losses(
        [metadata_version("3.4-IV0"),
         broker_123(in_controlled_shutdown=True, is_migrating_zk_broker=True), FOO, FOO_0],
        "3.3-IV3")
    assert losses == ["the isMigratingZkBroker state of one or more brokers"]
    assert written == [metadata_version("3.3-IV3"), broker_123(in_controlled_shutdown=True),
                       FOO, FOO_0]


def test_below_3_7_iv2_the_directories_of_replicas_are_lost() -> None:
    placed = PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(0, 1), isr=(0, 1),
                             leader=0, leader_epoch=1, partition_epoch=2,
                             directories=("c7QfSi6xSIGQVh3Qd5RJxA", "rWaCHejCRRiptDMvW5Xw0g"))
    written, losses = write_with_losses([metadata_version("3.7-IV2"), FOO, placed], "3.7-IV0")
    assert losses == ["the directory assignment state of one or more replicas"]
    assert written == [metadata_version("3.7-IV0"), FOO, FOO_0]
    written, losses = write_with_losses([metadata_version("3.7-IV2"), FOO, placed], "3.7-IV2")
    assert (written, losses) == ([metadata_version("3.7-IV2"), FOO, placed], [])


def test_a_kind_of_loss_is_reported_once() -> None:
    second = RegisterBrokerRecord(broker_id=124, incarnation_id="9ABu6HEgRuS-hjHLgC4cHw",
                                  broker_epoch=457, fenced=False, in_controlled_shutdown=True)
    written, losses = write_with_losses(
        [metadata_version("3.3-IV3"), broker_123(in_controlled_shutdown=True), second],
        "3.3-IV2")
    assert losses == ["the inControlledShutdown state of one or more brokers"]
    assert [r.in_controlled_shutdown for r in written
            if isinstance(r, RegisterBrokerRecord)] == [False, False]


def test_without_a_loss_handler_a_loss_is_an_error() -> None:
    image = image_of([metadata_version("3.3-IV3"), broker_123(in_controlled_shutdown=True)])
    with pytest.raises(UnwritableMetadataError) as raised:
        image_to_records(image, LEVELS["3.3-IV2"])
    assert raised.value.loss == "the inControlledShutdown state of one or more brokers"
    assert raised.value.metadata_version == LEVELS["3.3-IV2"]
    assert "3.3-IV2" in str(raised.value)
    assert "inControlledShutdown" in str(raised.value)


def test_at_its_own_version_an_image_writes_as_without_one() -> None:
    records: list[MetadataRecord] = [
        metadata_version("3.4-IV0"),
        broker_123(in_controlled_shutdown=True, is_migrating_zk_broker=True), FOO, FOO_0,
        FeatureLevelRecord("foo.feature", 4)]
    image = image_of(records)
    assert image_to_records(image, LEVELS["3.4-IV0"]) == image_to_records(image)


def test_the_empty_image_at_an_old_version_loses_nothing() -> None:
    assert image_to_records(MetadataImage.EMPTY, LEVELS["3.0-IV1"]) == []
    assert image_to_records(MetadataImage.EMPTY, LEVELS["3.3-IV0"]) == [
        metadata_version("3.3-IV0")]
