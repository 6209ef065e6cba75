"""Shared fixtures of the tests that follow Kafka's ``metadata/.../image/*ImageTest`` classes.

Kafka builds each image part (topics, cluster, features, ...) by hand, replays a
list of records on it and checks three things: the delta gives the expected
second image; an image written as snapshot records and read back is equal to
itself; and the same records replayed from the empty image in *every* split
into consecutive deltas end at the same image (its
``RecordTestUtils.TestThroughAllIntermediateImagesLeadingToFinalImageHelper``).
kraftsim keeps one :class:`~metadata.image.MetadataImage` for all parts, so an
image here is made from records, and the check of every split is
:func:`assert_every_split_reaches`.
"""

from __future__ import annotations

from collections.abc import Sequence

from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import MetadataRecord
from metadata.snapshot import image_to_records

OFFSET, EPOCH = 100, 4
"""The provenance every image of these tests is applied at (Kafka's tests use one too), so
that images compare equal exactly when their contents are equal."""


def image_of(records: Sequence[MetadataRecord],
             base: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    """``records`` replayed in one delta on ``base``, applied at the tests' provenance."""
    delta = MetadataDelta(base)
    delta.replay_all(records)
    return delta.apply(OFFSET, EPOCH)


def assert_every_split_reaches(final: MetadataImage, records: Sequence[MetadataRecord]) -> None:
    """Kafka's check of all intermediate images.

    For each length of a first delta (on the empty image) and each size of the
    deltas that follow it, replaying ``records`` delta by delta ends at ``final``.
    """
    count = len(records)
    for first in range(1, count + 1):
        start = image_of(records[:first])
        if first == count:
            assert start == final, f"one delta of all {count} records"
            continue
        for size in range(1, count - first + 1):
            image = start
            for at in range(first, count, size):
                image = image_of(records[at:at + size], image)
            assert image == final, f"first delta {first} records, then deltas of {size}"


def assert_round_trip(image: MetadataImage) -> None:
    """The image written as snapshot records comes back equal, through every split."""
    assert_every_split_reaches(image, image_to_records(image))
