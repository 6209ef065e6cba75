"""A partition leader's AlterPartition as the controller checks it (Kafka's
ReplicationControlManager.alterPartition): the broker's epoch (for the whole request), the
topic id, the partition and leader epochs, the ISR holding the leader within the
replicas, only active brokers joining (each partition on its own)."""

from __future__ import annotations

import random

import pytest

from controller import WriteMode
from controller.errors import ApiError
from controller.handle import OperationStatus
from controller.operations import CreateTopics, NewTopic, OperationContext
from controller.operations.alter_partition import AlterPartitionOp
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResponse,
)
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.versions import LATEST_PRODUCTION, METADATA_VERSION_FEATURE
from tests.controller.conftest import cluster
from tests.controller.kafka_cases import OnePartitionAlter, alter_partition

TOPIC = "AAAAAAAAAAAAAAAAAAAAAA"


def _image(isr: tuple[int, ...] = (1, 2)) -> MetadataImage:
    """metadata.version 4.0-IV0; brokers 1-3 (3 fenced) and 4 (in controlled shutdown);
    partition 0 on 1-4 led by 1 at leader epoch 5, partition epoch 9, with ``isr``."""
    records: list[MetadataRecord] = [
        FeatureLevelRecord(METADATA_VERSION_FEATURE, LATEST_PRODUCTION),
        *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=10 + b, fenced=b == 3,
                               in_controlled_shutdown=b == 4) for b in (1, 2, 3, 4)),
        TopicRecord("t", TOPIC),
        PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=(1, 2, 3, 4), isr=isr,
                        leader=1, leader_epoch=5, partition_epoch=9),
    ]
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(20, 1)


def _op(isr: tuple[int, ...], broker: int = 1, broker_epoch: int = 11, partition: int = 0,
        leader_epoch: int = 5, partition_epoch: int = 9) -> OnePartitionAlter:
    return alter_partition(broker, broker_epoch, TOPIC, partition, leader_epoch,
                            partition_epoch, isr)


def _generate(op: OnePartitionAlter | AlterPartitionOp, image: MetadataImage | None = None
              ) -> tuple[list[MetadataRecord], object]:
    generated = op.generate(OperationContext(image or _image(), random.Random(1), 21, 0))
    return list(generated.records), generated.response


def test_a_shrink_writes_the_new_isr_and_answers_the_merged_registration() -> None:
    records, response = _generate(_op((1,)))
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(1,))]
    assert response == _image().topics_by_id[TOPIC].partitions[0].merge(records[0])  # type: ignore[arg-type]


def test_the_same_isr_writes_nothing() -> None:
    records, response = _generate(_op((1, 2)))
    assert records == [] and response == _image().topics_by_id[TOPIC].partitions[0]


@pytest.mark.parametrize(("op", "code", "message"), [
    (_op((1,), broker_epoch=10), "STALE_BROKER_EPOCH",
     "Expected broker epoch 11, but got broker epoch 10"),
    (_op((1,), broker=7), "STALE_BROKER_EPOCH", "No broker registration found for broker id 7"),
    (_op((1,), partition=3), "UNKNOWN_TOPIC_OR_PARTITION", f"no partition {TOPIC}-3"),
    (alter_partition(1, 11, "B" * 22, 0, 5, 9, (1,)), "UNKNOWN_TOPIC_ID", "no topic with id"),
    (_op((1,), leader_epoch=4), "FENCED_LEADER_EPOCH", "leader epoch 4, the partition is at 5"),
    (_op((2,), broker=2, broker_epoch=12), "INVALID_REQUEST", "broker 2 does not lead"),
    (_op((1,), partition_epoch=8), "INVALID_UPDATE_VERSION", "partition epoch 8, the partition"),
    (_op((2,)), "INVALID_REQUEST", "ISR [2] lacks the leader"),
    (_op((1, 5)), "INVALID_REQUEST", "not within the replicas [1, 2, 3, 4]"),
    (_op((1, 2, 3)), "INELIGIBLE_REPLICA", "replica 3 is fenced"),
    (_op((1, 2, 4)), "INELIGIBLE_REPLICA", "replica 4 is fenced, shutting down"),
])
def test_refusals_follow_kafka(op: OnePartitionAlter, code: str, message: str) -> None:
    with pytest.raises(ApiError) as refused:
        _generate(op)
    assert refused.value.code == code and message in refused.value.message


def test_a_member_the_isr_keeps_must_be_active_too() -> None:
    """Kafka checks every member of the new ISR, not only those it gains: an ISR that
    keeps a fenced or shutting-down broker is refused, unchanged or not."""
    for isr in ((1, 2, 3), (1, 2, 4)):
        for asked in (isr, (1, *isr[2:])):
            with pytest.raises(ApiError) as refused:
                _generate(_op(asked), _image(isr))
            assert refused.value.code == "INELIGIBLE_REPLICA"
            assert f"replica {isr[2]} is fenced, shutting down" in refused.value.message
    records, _ = _generate(_op((1,)), _image((1, 2, 3)))  # dropping it is allowed
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=(1,))]


def test_a_leader_that_is_no_longer_active_cannot_keep_itself_in_the_isr() -> None:
    """Every member of the new ISR must be active, the requesting leader included (Kafka's
    ineligibleReplicasForIsr checks them all): a leader registered as in controlled
    shutdown is refused INELIGIBLE_REPLICA."""
    base = _image()
    delta = MetadataDelta(base)
    delta.replay(BrokerRegistrationChangeRecord(1, 11, in_controlled_shutdown=1))
    image = delta.apply(base.offset + 1, 1)
    with pytest.raises(ApiError) as refused:
        _generate(_op((1, 2)), image)
    assert refused.value.code == "INELIGIBLE_REPLICA"


def _request(*topics: tuple[str, tuple[AlterPartitionPartitionData, ...]],
             broker_epoch: int = 11) -> AlterPartitionOp:
    return AlterPartitionOp(1, broker_epoch, tuple(
        AlterPartitionTopicData(topic_id, parts) for topic_id, parts in topics))


def _mixed_image() -> MetadataImage:
    """:func:`_image` with partition 1 of the topic, (1, 2) led by 1, epochs 0."""
    delta = MetadataDelta(_image())
    delta.replay_all([PartitionRecord(partition_id=1, topic_id=TOPIC, replicas=(1, 2),
                                      isr=(1, 2), leader=1, leader_epoch=0,
                                      partition_epoch=0)])
    return delta.apply(21, 1)


def test_a_request_of_several_partitions_answers_each_in_its_order() -> None:
    """One request, three partitions with mixed outcomes (kraftsim's own case: Kafka's
    ReplicationControlManagerTest sends one partition each): partition 1 is applied,
    partition 0 names a leader epoch behind its own (FENCED_LEADER_EPOCH) and an unknown
    topic id answers its partition UNKNOWN_TOPIC_ID. Only the applied partition's record
    is written, and the response lists every partition in the request's order."""
    unknown = "B" * 22
    op = _request(
        (TOPIC, (AlterPartitionPartitionData(1, 0, 0, (1,)),
                 AlterPartitionPartitionData(0, 4, 9, (1,)))),
        (unknown, (AlterPartitionPartitionData(7, 0, 0, (1,)),)))
    records, response = _generate(op, _mixed_image())
    assert records == [PartitionChangeRecord(partition_id=1, topic_id=TOPIC, isr=(1,))]
    assert response == (
        AlterPartitionTopicResponse(TOPIC, (
            AlterPartitionPartitionResponse(1, "NONE", 1, 0, (1,), 0, 1),
            AlterPartitionPartitionResponse(0, "FENCED_LEADER_EPOCH"))),
        AlterPartitionTopicResponse(unknown, (
            AlterPartitionPartitionResponse(7, "UNKNOWN_TOPIC_ID"),)))


def test_a_stale_broker_epoch_refuses_the_whole_request() -> None:
    """The broker epoch is checked once, for the request: STALE_BROKER_EPOCH raised (the
    request's top-level error), nothing written, however the partitions stand."""
    op = _request((TOPIC, (AlterPartitionPartitionData(1, 0, 0, (1,)),)), broker_epoch=10)
    with pytest.raises(ApiError) as refused:
        op.generate(OperationContext(_mixed_image(), random.Random(1), 22, 0))
    assert refused.value.code == "STALE_BROKER_EPOCH"


def test_an_invalid_leader_recovery_state_fails_the_whole_request() -> None:
    """Kafka's LeaderRecoveryState.of throws out of the request's handling: the request
    fails UNKNOWN_SERVER_ERROR, the other partition's change not written either."""
    op = _request((TOPIC, (AlterPartitionPartitionData(1, 0, 0, (1,)),
                           AlterPartitionPartitionData(0, 5, 9, (1,), leader_recovery_state=7))))
    with pytest.raises(ApiError) as refused:
        op.generate(OperationContext(_mixed_image(), random.Random(1), 22, 0))
    assert refused.value.code == "UNKNOWN_SERVER_ERROR"


def test_a_request_of_no_partition_is_answered_at_once_and_empty() -> None:
    """Kafka's QuorumController.alterPartition completes a request with no topics at
    once."""
    early = AlterPartitionOp(1, 11, ()).early_result()
    assert early is not None and (early.records, early.response) == ([], ())
    assert _request((TOPIC, ())).early_result() is None


def test_describe_names_each_partition_and_its_new_isr() -> None:
    """The operation's description (a handle's and a trace's) names every partition of
    the request by topic id and index with the ISR it asks for, in the request's order."""
    op = _request((TOPIC, (AlterPartitionPartitionData(1, 0, 0, (1,)),
                           AlterPartitionPartitionData(0, 5, 9, (1, 2)))),
                  ("B" * 22, (AlterPartitionPartitionData(3, 0, 0, (2, 1)),)))
    assert op.describe() == (f"AlterPartition({TOPIC}-1 isr=[1], {TOPIC}-0 isr=[1, 2], "
                             f"{'B' * 22}-3 isr=[2, 1])")


def test_a_request_larger_than_a_batch_is_written_over_batches_even_in_atomic_mode() -> None:
    """Kafka writes an AlterPartition's records as a non-atomic result
    (ReplicationControlManager.alterPartition's ControllerResult.of): in atomic mode
    (Kafka as built) a request whose changes need more than one batch is split over
    batches, every partition's change written and answered, not refused."""
    c = cluster(seed=15, batch=5, mode=WriteMode.ATOMIC, noop_ms=0)
    b1, b2, b3 = c.config.broker_ids[:3]
    created = c.submit(CreateTopics((NewTopic("big", -1, -1,
                                              assignments=((b1, b2, b3),) * 8),)),
                       mode=WriteMode.TRANSACTIONAL)  # (too large for one batch)
    assert c.wait(created) and created.status is OperationStatus.COMMITTED
    active = c.active_controller()
    assert active is not None
    image = active.committed_image()
    topic = image.topic("big")
    assert topic is not None
    parts = tuple(AlterPartitionPartitionData(pid, reg.leader_epoch, reg.partition_epoch,
                                              (b1, b2))
                  for pid, reg in sorted(topic.partitions.items()))
    handle = c.submit(AlterPartitionOp(b1, image.brokers[b1].epoch,
                                       (AlterPartitionTopicData(topic.topic_id, parts),)),
                      mode=WriteMode.ATOMIC)
    assert c.wait(handle)
    assert handle.status is OperationStatus.COMMITTED, handle.outcome()
    assert handle.record_count == 8 and handle.batch_count > 1
    ((answers),) = handle.response
    assert [(a.partition_index, a.error, a.isr) for a in answers.partitions] == \
        [(pid, "NONE", (b1, b2)) for pid in range(8)]
