"""The next producer id in the image, following the cases of Kafka's ``ProducerIdsImageTest``.

Ported: four ProducerIdsRecords from two brokers, each above the last (the
image keeps the last); the round trips of both images, written as Kafka writes
them (broker id and epoch -1), and the delta through every split.

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import MetadataRecord, ProducerIdsRecord
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

IMAGE1 = image_of([ProducerIdsRecord(broker_id=-1, next_producer_id=123)])
DELTA1_RECORDS: list[MetadataRecord] = [
    ProducerIdsRecord(broker_id=2, broker_epoch=100, next_producer_id=456),
    ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=780),
    ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=785),
    ProducerIdsRecord(broker_id=2, broker_epoch=100, next_producer_id=800),
]
IMAGE2 = image_of([ProducerIdsRecord(broker_id=-1, next_producer_id=800)])


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_the_empty_image_writes_no_producer_ids() -> None:
    assert image_to_records(MetadataImage.EMPTY) == []


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert IMAGE2.next_producer_id == 800
    assert image_to_records(IMAGE2) == [
        ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=800)]
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])
