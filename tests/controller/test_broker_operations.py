"""The records of the broker operations (Kafka's ClusterControlMachine and
ReplicationControlManager): a registration's epoch is the offset of its operation's
first record, a new incarnation first leaves its partitions, and a fence, an unfence or
a controlled shutdown writes the registration-change record from metadata.version
3.3-IV2 on, the older records below it, and nothing when there is nothing to change."""

from __future__ import annotations

import random

import pytest

from controller.operations import OperationContext
from controller.operations.base import Operation
from controller.operations.brokers import (
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
)
from metadata.delta import MetadataDelta
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from metadata.versions import (
    BROKER_REGISTRATION_CHANGE,
    IN_CONTROLLED_SHUTDOWN_STATE,
    METADATA_VERSION_FEATURE,
)

TOPIC = "AAAAAAAAAAAAAAAAAAAAAA"
NEW, OLD = BROKER_REGISTRATION_CHANGE, BROKER_REGISTRATION_CHANGE - 1


def _image(level: int, fenced: tuple[int, ...] = (), shutting: tuple[int, ...] = (),
           leader: int = 1) -> MetadataImage:
    """Brokers 1-3 (incarnation "inc-N", epoch 10 + N), a topic of two partitions on all
    three with ``leader`` leading, at metadata.version ``level``."""
    records: list[MetadataRecord] = [
        FeatureLevelRecord(METADATA_VERSION_FEATURE, level),
        *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=10 + b, fenced=b in fenced,
                               in_controlled_shutdown=b in shutting) for b in (1, 2, 3)),
        TopicRecord("t", TOPIC),
        *(PartitionRecord(partition_id=p, topic_id=TOPIC, replicas=(1, 2, 3),
                          isr=(1, 2, 3), leader=leader, leader_epoch=0, partition_epoch=0)
          for p in range(2))]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(99, 1)


def _records(op: Operation, image: MetadataImage) -> tuple[list[MetadataRecord], object]:
    """The records ``op`` writes at offset 100, and its response."""
    generated = op.generate(OperationContext(image, random.Random(3), 100, 0))
    return list(generated.records), generated.response


def test_a_registration_epoch_is_the_offset_of_its_record() -> None:
    records, result = _records(RegisterBroker(4, incarnation_id="inc-4"), _image(NEW))
    [register] = records
    assert isinstance(register, RegisterBrokerRecord)
    assert (register.broker_id, register.incarnation_id, register.broker_epoch,
            register.fenced) == (4, "inc-4", 100, True)
    assert result == {"brokerId": 4, "brokerEpoch": 100}


def test_the_same_incarnation_registering_again_changes_no_partition() -> None:
    records, _ = _records(RegisterBroker(1, incarnation_id="inc-1"), _image(NEW))
    assert [type(r) for r in records] == [RegisterBrokerRecord]


def test_a_new_incarnation_first_leaves_its_partitions_its_epoch_their_first_offset() -> None:
    """Kafka's registerBroker takes nextWriteOffset, the offset of the operation's first
    record, whatever records the unclean-shutdown handling puts before the registration."""
    records, result = _records(RegisterBroker(1, incarnation_id="inc-1b"), _image(NEW))
    *changes, register = records
    assert changes == [PartitionChangeRecord(partition_id=p, topic_id=TOPIC, isr=(2, 3),
                                             leader=2) for p in range(2)]
    assert isinstance(register, RegisterBrokerRecord) and register.broker_epoch == 100
    assert result == {"brokerId": 1, "brokerEpoch": 100}


@pytest.mark.parametrize(("level", "fence"), [
    (NEW, BrokerRegistrationChangeRecord(2, 12, fenced=1)), (OLD, FenceBrokerRecord(2, 12))])
def test_a_fence_moves_leadership_then_fences(level: int, fence: MetadataRecord) -> None:
    records, result = _records(FenceBroker(2), _image(level, leader=2))
    assert records == [*(PartitionChangeRecord(partition_id=p, topic_id=TOPIC, isr=(1, 3),
                                               leader=1) for p in range(2)), fence]
    assert result == {"brokerId": 2, "fenced": True}
    assert _records(FenceBroker(2), _image(level, fenced=(2,))) == \
        ([], {"brokerId": 2, "fenced": True})


@pytest.mark.parametrize(("level", "unfence"), [
    (NEW, BrokerRegistrationChangeRecord(1, 11, fenced=-1)), (OLD, UnfenceBrokerRecord(1, 11))])
def test_an_unfence_then_leads_the_leaderless_partitions_it_is_in_sync_for(
        level: int, unfence: MetadataRecord) -> None:
    records, result = _records(UnfenceBroker(1), _image(level, fenced=(1,), leader=NO_LEADER))
    assert records == [unfence, *(PartitionChangeRecord(partition_id=p, topic_id=TOPIC,
                                                        leader=1) for p in range(2))]
    assert result == {"brokerId": 1, "fenced": False}
    assert _records(UnfenceBroker(1), _image(level)) == ([], {"brokerId": 1, "fenced": False})


@pytest.mark.parametrize(("level", "mark_first", "mark"), [
    (IN_CONTROLLED_SHUTDOWN_STATE, True, BrokerRegistrationChangeRecord(
        3, 13, in_controlled_shutdown=1)),
    (NEW, False, BrokerRegistrationChangeRecord(3, 13, fenced=1)),
    (OLD, False, FenceBrokerRecord(3, 13))])
def test_a_controlled_shutdown_marks_the_broker_then_leaves(level: int, mark_first: bool,
                                                          mark: MetadataRecord) -> None:
    """From 3.3-IV3 the mark comes first, as Kafka writes it; an older version cannot say
    "in controlled shutdown", and the broker is fenced after leaving its partitions."""
    records, _ = _records(ControlledShutdown(3), _image(level, leader=3))
    changes = [PartitionChangeRecord(partition_id=p, topic_id=TOPIC, isr=(1, 2), leader=1)
               for p in range(2)]
    assert records == ([mark, *changes] if mark_first else [*changes, mark])
    assert _records(ControlledShutdown(3), _image(level, fenced=(3,))) == \
        ([], {"brokerId": 3})
    # marked already (a new active controller starts it again): what is left, no mark
    assert _records(ControlledShutdown(3), _image(level, shutting=(3,), leader=3)) == \
        (changes, {"brokerId": 3})
