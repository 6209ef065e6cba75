"""Helpers shared by the ports of Kafka's controller unit tests (``test_kafka_*``):
an image made by replaying records, and one operation's records against it."""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.alter_partition import AlterPartitionOp, alter_one
from controller.operations.base import Generated, Operation
from metadata.delta import MetadataDelta
from metadata.image import RECOVERED, MetadataImage
from metadata.requests import AlterPartitionPartitionData, AlterPartitionTopicData
from metadata.schema import FeatureLevelRecord, MetadataRecord, RegisterBrokerRecord
from metadata.versions import METADATA_VERSION_FEATURE


def image_of(records: Iterable[MetadataRecord], base: MetadataImage = MetadataImage.EMPTY,
             offset: int = 99) -> MetadataImage:
    """``base`` with ``records`` replayed, at ``offset``."""
    delta = MetadataDelta(base)
    delta.replay_all(records)
    return delta.apply(offset, 1)


def brokers(*ids: int, level: int = 22, fenced: Iterable[int] = (),
            shutting: Iterable[int] = (), epoch: int = 100) -> list[MetadataRecord]:
    """metadata.version ``level`` and brokers ``ids`` registered with ``epoch`` and
    incarnation ``inc-N``: unfenced unless in ``fenced``, in controlled shutdown when in
    ``shutting``."""
    fenced, shutting = set(fenced), set(shutting)
    return [FeatureLevelRecord(METADATA_VERSION_FEATURE, level),
            *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=epoch, fenced=b in fenced,
                                   in_controlled_shutdown=b in shutting) for b in ids)]


def generate(op: Operation, image: MetadataImage, offset: int = 100, seed: int = 3
             ) -> tuple[list[MetadataRecord], object]:
    """The records ``op`` writes at ``offset`` against ``image``, and its response."""
    generated = op.generate(OperationContext(image, random.Random(seed), offset, 0))
    return list(generated.records), generated.response


def refusal(op: Operation, image: MetadataImage, offset: int = 100) -> ApiError:
    """The ApiError ``op`` raises against ``image`` (fails the test when it does not)."""
    try:
        generate(op, image, offset)
    except ApiError as error:
        return error
    raise AssertionError(f"{op.describe()} was not refused")


def run(op: Operation, image: MetadataImage, offset: int = 100, seed: int = 3
        ) -> tuple[MetadataImage, list[MetadataRecord], object]:
    """``op`` generated then replayed: the image after it, its records and response."""
    records, response = generate(op, image, offset, seed)
    return image_of(records, image, offset + max(len(records) - 1, 0)), records, response


class OnePartitionAlter(msgspec.Struct, frozen=True):
    """An AlterPartition request of one partition (:class:`AlterPartitionOp`), for the
    tests written against one partition's change: a refusal of the request, or the
    partition's error, raises ApiError (with the message :func:`alter_one` gives it);
    else (NONE, or NEW_LEADER_ELECTED with its record) the response is the partition's
    registration after the change."""

    op: AlterPartitionOp

    def describe(self) -> str:
        """The request's description."""
        return self.op.describe()

    def generate(self, ctx: OperationContext) -> Generated:
        """The request's records; its one partition's registration, or its error raised."""
        generated = self.op.generate(ctx)
        ((topic,),) = (generated.response,)
        ((answer,),) = (topic.partitions,)
        ((topic_id, part),) = [(t.topic_id, p) for t in self.op.topics for p in t.partitions]
        assert (topic.topic_id, answer.partition_index) == (topic_id, part.partition_index)
        if answer.error not in ("NONE", "NEW_LEADER_ELECTED"):
            if topic_id not in ctx.image.topics_by_id:
                raise ApiError(answer.error, f"no topic with id {topic_id}")
            try:
                alter_one(ctx.image, ctx.node_id, self.op.broker_id, topic_id, part)
            except ApiError as refused:
                assert refused.code == answer.error
                raise
            raise AssertionError(f"{answer.error} but the partition's change passes")
        reg = ctx.image.topics_by_id[topic_id].partitions[part.partition_index]
        for record in generated.records:
            reg = reg.merge(record)  # type: ignore[arg-type]
        return Generated(generated.records, reg)


def alter_partition(broker_id: int, broker_epoch: int, topic_id: str, partition_id: int,
                    leader_epoch: int, partition_epoch: int, new_isr: tuple[int, ...],
                    leader_recovery_state: int = RECOVERED,
                    new_isr_epochs: tuple[int, ...] = ()) -> OnePartitionAlter:
    """A one-partition AlterPartition request, as :class:`OnePartitionAlter`."""
    return OnePartitionAlter(AlterPartitionOp(broker_id, broker_epoch, (AlterPartitionTopicData(
        topic_id, (AlterPartitionPartitionData(
            partition_id, leader_epoch, partition_epoch, new_isr, leader_recovery_state,
            new_isr_epochs),)),)))
