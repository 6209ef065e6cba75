"""Helpers shared by the ports of Kafka's controller unit tests (``test_kafka_*``):
an image made by replaying records, and one operation's records against it."""

from __future__ import annotations

import random
from collections.abc import Iterable

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.base import Operation
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
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
