"""Configs in the image, following the cases of Kafka's ``ConfigurationsImageTest``.

Ported: every key of one resource removed (the resource goes), one key of
another replaced by a new one, a resource that had no config gets one; the
round trips of both images and the delta through every split.

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import pytest

from metadata.delta import BROKER_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, MetadataRecord
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)


def broker_config(broker: str, name: str, value: str | None) -> ConfigRecord:
    return ConfigRecord(BROKER_RESOURCE, broker, name, value)


IMAGE1 = image_of([
    broker_config("0", "foo", "bar"),
    broker_config("0", "baz", "quux"),
    broker_config("1", "foobar", "foobaz"),
])
DELTA1_RECORDS: list[MetadataRecord] = [
    broker_config("0", "foo", None),
    broker_config("0", "baz", None),
    broker_config("1", "foobar", None),
    broker_config("1", "barfoo", "bazfoo"),
    broker_config("2", "foo", "bar"),
]
IMAGE2 = image_of([broker_config("1", "barfoo", "bazfoo"), broker_config("2", "foo", "bar")])


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    image = image_of(DELTA1_RECORDS, IMAGE1)
    assert image == IMAGE2
    assert (BROKER_RESOURCE, "0") not in image.configs  # a resource left without keys goes
    assert {key: dict(values) for key, values in image.configs.items()} == {
        (BROKER_RESOURCE, "1"): {"barfoo": "bazfoo"}, (BROKER_RESOURCE, "2"): {"foo": "bar"}}
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])
