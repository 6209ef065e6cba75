"""The records and refusals of UpdateFeatures, AlterPartition and AllocateProducerIds
(Kafka's FeatureControlManager, ReplicationControlManager.alterPartition and
ProducerIdControlManager), one operation at a time against a hand-made image."""

from __future__ import annotations

import random

import pytest

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.base import Operation
from controller.operations.cluster import (
    KNOWN_FEATURES,
    PRODUCER_ID_BLOCK_SIZE,
    AllocateProducerIds,
    AlterPartition,
    FeatureUpdate,
    UpdateFeatures,
)
from metadata.delta import MetadataDelta
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import (
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT

TOPIC, OTHER = "AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"
MV = METADATA_VERSION_FEATURE
CURRENT_MV = LEVELS["3.7-IV0"]
HIGHEST_MV = KNOWN_FEATURES[MV]


def _image(fenced: tuple[int, ...] = (), leader: int = 1) -> MetadataImage:
    """metadata.version 3.7-IV0 and transaction.version 1; brokers 1-3 (broker 4 has
    replicas but never registered); topic ``t`` of one partition on 1, 2, 3 and 4, all in
    the ISR, led by ``leader``; topic ``v`` of one partition on 1, 2 and 3 with 3 out of
    the ISR; the next producer id 5000."""
    records: list[MetadataRecord] = [
        FeatureLevelRecord(MV, CURRENT_MV),
        FeatureLevelRecord("transaction.version", 1),
        *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=10 + b, fenced=b in fenced)
          for b in (1, 2, 3)),
        TopicRecord("t", TOPIC),
        PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 2, 3, 4),
                        isr=(1, 2, 3, 4), leader=leader, leader_epoch=0, partition_epoch=0),
        TopicRecord("v", OTHER),
        PartitionRecord(partition_id=0, topic_id=OTHER, replicas=(1, 2, 3), isr=(1, 2),
                        leader=1, leader_epoch=0, partition_epoch=0),
        ProducerIdsRecord(broker_id=1, broker_epoch=11, next_producer_id=5000),
    ]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(99, 1)


def _generate(op: Operation, image: MetadataImage | None = None
              ) -> tuple[list[MetadataRecord], object]:
    generated = op.generate(OperationContext(image or _image(), random.Random(3), 100, 0))
    return list(generated.records), generated.response


def _refusal(op: Operation, image: MetadataImage | None = None) -> ApiError:
    with pytest.raises(ApiError) as refused:
        _generate(op, image)
    return refused.value


def _features(*updates: FeatureUpdate) -> UpdateFeatures:
    return UpdateFeatures(tuple(updates))


@pytest.mark.parametrize(("name", "level", "downgrade"), [
    (MV, HIGHEST_MV, False),  # the highest known
    (MV, CURRENT_MV, False),  # the same level again
    ("transaction.version", 2, False),
    ("transaction.version", 0, True),  # level 0: the feature off
    ("group.version", 0, False),  # not finalized yet (0): not a downgrade
    ("group.version", 1, False),
])
def test_a_feature_level_in_range_is_written(name: str, level: int, downgrade: bool) -> None:
    records, response = _generate(_features(FeatureUpdate(name, level, downgrade)))
    assert records == [FeatureLevelRecord(name, level)]
    assert response == {name: level}


@pytest.mark.parametrize(("update", "message"), [
    (FeatureUpdate("no.such.feature", 1), "Local controller 0 does not support this feature."),
    (FeatureUpdate(MV, HIGHEST_MV + 1), f"only supports versions {MINIMUM_KRAFT}-{HIGHEST_MV}"),
    (FeatureUpdate(MV, MINIMUM_KRAFT - 1, True),
     f"only supports versions {MINIMUM_KRAFT}-{HIGHEST_MV}"),
    (FeatureUpdate("transaction.version", 3), "only supports versions 0-2"),
    (FeatureUpdate("transaction.version", -1, True), "A feature version cannot be less than 0."),
    (FeatureUpdate(MV, CURRENT_MV - 1), f"Invalid update version {CURRENT_MV - 1} for feature "
                                        "metadata.version. Can't downgrade the version"),
    (FeatureUpdate("transaction.version", 0), "Invalid update version 0 for feature "
                                              "transaction.version. Can't downgrade"),
])
def test_a_feature_level_out_of_range_or_a_silent_downgrade_is_refused(
        update: FeatureUpdate, message: str) -> None:
    refused = _refusal(_features(update, FeatureUpdate("group.version", 1)))
    assert refused.code == "INVALID_UPDATE_VERSION"
    assert message in refused.message  # and nothing is written, the good update included


def test_shrinking_the_isr_keeps_the_leader_unless_it_leaves() -> None:
    [kept], response = _generate(AlterPartition("t", 0, (1, 2)))
    assert kept == PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(1, 2), leader=-2)
    assert response == {"topic": "t", "partition": 0}
    [moved], _ = _generate(AlterPartition("t", 0, (3, 2)))
    assert moved == PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(3, 2),
                                          leader=3)  # the leader left: the ISR's first


def test_the_isr_grows_back_to_every_replica() -> None:
    [grown], _ = _generate(AlterPartition("v", 0, (1, 2, 3)))
    assert grown == PartitionChangeRecord(partition_id=0, topic_id=OTHER, isr=(1, 2, 3),
                                          leader=-2)


@pytest.mark.parametrize(("leader", "written"), [
    (2, 2),  # another ISR member
    (1, -2),  # the current leader: no leader change
    (NO_LEADER, NO_LEADER),  # no leader at all
])
def test_a_requested_leader_must_be_in_the_isr(leader: int, written: int) -> None:
    [change], _ = _generate(AlterPartition("t", 0, (1, 2), leader=leader))
    assert change == PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(1, 2),
                                           leader=written)


@pytest.mark.parametrize(("op", "code", "message"), [
    (AlterPartition("t", 0, ()), "INVALID_REQUEST", "ISR [] is empty"),
    (AlterPartition("t", 0, (1, 5)), "INVALID_REQUEST", "not within the replicas [1, 2, 3, 4]"),
    (AlterPartition("t", 0, (1, 2), leader=3), "INVALID_REQUEST", "leader 3 is not in the ISR"),
    (AlterPartition("t", 0, (1, 4)), "INELIGIBLE_REPLICA", "Replica 4 is fenced or not regis"),
    (AlterPartition("t", 1, (1,)), "UNKNOWN_TOPIC_OR_PARTITION", "t-1"),
    (AlterPartition("u", 0, (1,)), "UNKNOWN_TOPIC_OR_PARTITION", "u-0"),
])
def test_an_alter_partition_outside_the_rules_is_refused(op: AlterPartition, code: str,
                                                         message: str) -> None:
    refused = _refusal(op)
    assert refused.code == code and message in refused.message


def test_a_fenced_broker_cannot_join_the_isr() -> None:
    refused = _refusal(AlterPartition("t", 0, (1, 3)), _image(fenced=(3,)))
    assert refused.code == "INELIGIBLE_REPLICA" and "Replica 3" in refused.message


def test_a_producer_id_block_starts_at_the_next_id_and_moves_it_one_block_on() -> None:
    [record], response = _generate(AllocateProducerIds(2))
    assert record == ProducerIdsRecord(broker_id=2, broker_epoch=12,
                                       next_producer_id=5000 + PRODUCER_ID_BLOCK_SIZE)
    assert response == {"producerIdStart": 5000, "producerIdLen": 1000}
    refused = _refusal(AllocateProducerIds(4))
    assert (refused.code, refused.message) == ("STALE_BROKER_EPOCH",
                                               "No broker registration found for broker id 4")
