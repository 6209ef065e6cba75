"""Client quotas in the image, following the cases of Kafka's ``ClientQuotasImageTest``.

Ported: an image of a user's quota and a (user, ip) entity's quota; the only
quota of the second entity removed (the entity goes), the first one's value
changed and a second key added to it; the round trips of both images and the
delta through every split.

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import ClientQuotaRecord, EntityData, MetadataRecord
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

PRODUCE, CONSUME = "producer_byte_rate", "consumer_byte_rate"
FOO_USER = (EntityData("user", "foo"),)
BAR_USER_AND_IP = (EntityData("user", "bar"), EntityData("ip", "127.0.0.1"))

IMAGE1 = image_of([ClientQuotaRecord(FOO_USER, PRODUCE, 123.0),
                   ClientQuotaRecord(BAR_USER_AND_IP, CONSUME, 456.0)])
DELTA1_RECORDS: list[MetadataRecord] = [
    ClientQuotaRecord(BAR_USER_AND_IP, CONSUME, 0.0, remove=True),
    ClientQuotaRecord(FOO_USER, PRODUCE, 234.0),
    ClientQuotaRecord(FOO_USER, CONSUME, 999.0),
]
IMAGE2 = image_of([ClientQuotaRecord(FOO_USER, PRODUCE, 234.0),
                   ClientQuotaRecord(FOO_USER, CONSUME, 999.0)])


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert {entity: dict(values) for entity, values in IMAGE2.client_quotas.items()} == {
        (("user", "foo"),): {PRODUCE: 234.0, CONSUME: 999.0}}
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_an_entity_is_the_same_whatever_the_order_of_its_parts() -> None:
    """Kafka's ClientQuotaEntity is a map: (user, ip) and (ip, user) name one entity."""
    reordered = (BAR_USER_AND_IP[1], BAR_USER_AND_IP[0])
    image = image_of([ClientQuotaRecord(reordered, CONSUME, 0.0, remove=True)], IMAGE1)
    assert list(image.client_quotas) == [(("user", "foo"),)]
