"""Finalized features in the image, following the cases of Kafka's ``FeaturesImageTest``.

Ported: a feature's level changed, a feature removed (level 0) and one added;
then every feature removed and one added back at another level; the round trips
of the three images; what counts as an empty features part. metadata.version is
a feature like the others in kraftsim's image (Kafka keeps it in a field of its
own), written first.

Not ported: the ZK migration state of ``testEmpty`` (ZK migration is not
modelled).

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_the_empty_image_round_trips); testImage1RoundTrip, testImage2RoundTrip,
testImage3RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2); testApplyDelta2 (test_delta2_gives_image3).
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import FeatureLevelRecord, MetadataRecord
from metadata.snapshot import image_to_records
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

LATEST = max(LEVELS.values())
MV = FeatureLevelRecord(METADATA_VERSION_FEATURE, LATEST)

IMAGE1 = image_of([MV, FeatureLevelRecord("foo", 2), FeatureLevelRecord("bar", 1)])
DELTA1_RECORDS: list[MetadataRecord] = [
    FeatureLevelRecord("foo", 3),
    FeatureLevelRecord("bar", 0),
    FeatureLevelRecord("baz", 8),
]
IMAGE2 = image_of([MV, FeatureLevelRecord("foo", 3), FeatureLevelRecord("baz", 8)])
DELTA2_RECORDS: list[MetadataRecord] = [
    FeatureLevelRecord("foo", 0),
    FeatureLevelRecord("baz", 0),
    FeatureLevelRecord("bar", 1),
]
IMAGE3 = image_of([MV, FeatureLevelRecord("bar", 1)])


@pytest.mark.parametrize("image", [IMAGE1, IMAGE2, IMAGE3], ids=["image1", "image2", "image3"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert image_to_records(image)[0] == MV  # metadata.version first, as Kafka writes it
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert dict(IMAGE2.features) == {METADATA_VERSION_FEATURE: LATEST, "foo": 3, "baz": 8}
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_delta2_gives_image3() -> None:
    assert image_of(DELTA2_RECORDS, IMAGE2) == IMAGE3
    assert dict(IMAGE3.features) == {METADATA_VERSION_FEATURE: LATEST, "bar": 1}
    assert_every_split_reaches(IMAGE3, [*image_to_records(IMAGE2), *DELTA2_RECORDS])


def test_what_an_empty_features_part_is() -> None:
    """testEmpty: no feature and metadata.version at its minimum (3.0-IV1) is empty; any
    feature, or another metadata.version, is not."""
    assert not MetadataImage.EMPTY.features
    assert MetadataImage.EMPTY.metadata_version == MINIMUM_KRAFT
    assert not image_of([FeatureLevelRecord("foo", 1)]).same_content(MetadataImage.EMPTY)
    other_version = image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.3-IV0"])])
    assert other_version.metadata_version == LEVELS["3.3-IV0"]
    assert not other_version.same_content(MetadataImage.EMPTY)


def test_the_empty_image_round_trips() -> None:
    """testEmptyImageRoundTrip: no finalized feature and metadata.version at its minimum
    (3.0-IV1, which predates the FeatureLevelRecord of metadata.version) writes no record,
    and nothing read back is the empty image."""
    assert image_to_records(MetadataImage.EMPTY) == []
    assert_round_trip(MetadataImage.EMPTY)
