"""SCRAM credentials in the image, following the cases of Kafka's ``ScramImageTest``.

Ported: an image with two users per mechanism; every SHA-512 credential removed,
a SHA-256 credential replaced and a SHA-512 one added again under a name just
removed; the round trips of both images and the delta through every split.

Also ported: written at metadata.version 3.4-IV0, the empty image loses nothing and
an image with credentials loses them, an error without a loss handler
(testEmptyWithInvalidIBP, testImage1withInvalidIBP).

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import random

import pytest

from metadata.image import MetadataImage
from metadata.schema import (
    FeatureLevelRecord,
    MetadataRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)
from metadata.snapshot import UnwritableMetadataError, image_to_records
from metadata.versions import LEVELS
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

SHA_256, SHA_512 = 1, 2
_random = random.Random(868)


def credential(name: str, mechanism: int) -> UserScramCredentialRecord:
    """A credential of random salt and keys (1024 bytes each), 1024-2047 iterations."""
    return UserScramCredentialRecord(
        name=name, mechanism=mechanism, salt=_random.randbytes(1024),
        stored_key=_random.randbytes(1024), server_key=_random.randbytes(1024),
        iterations=1024 + _random.randrange(1024))


ALPHA_256, BETA_256 = credential("alpha", SHA_256), credential("beta", SHA_256)
ALPHA_512, GAMMA_512 = credential("alpha", SHA_512), credential("gamma", SHA_512)
IMAGE1 = image_of([ALPHA_256, BETA_256, ALPHA_512, GAMMA_512])

SECOND_ALPHA_256, SECOND_ALPHA_512 = credential("alpha", SHA_256), credential("alpha", SHA_512)
DELTA1_RECORDS: list[MetadataRecord] = [
    RemoveUserScramCredentialRecord("alpha", SHA_512),
    RemoveUserScramCredentialRecord("gamma", SHA_512),
    SECOND_ALPHA_256,
    SECOND_ALPHA_512,
]
IMAGE2 = image_of([SECOND_ALPHA_256, BETA_256, SECOND_ALPHA_512])


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert sorted(IMAGE2.scram[SHA_512]) == ["alpha"]
    assert IMAGE2.scram[SHA_512]["alpha"].salt == SECOND_ALPHA_512.salt
    assert IMAGE2.scram[SHA_256]["beta"].stored_key == BETA_256.stored_key
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_below_3_5_iv2_scram_credentials_cannot_be_written() -> None:
    assert image_to_records(MetadataImage.EMPTY, LEVELS["3.4-IV0"],
                            lambda loss: pytest.fail(loss)) == [
        FeatureLevelRecord("metadata.version", LEVELS["3.4-IV0"])]
    with pytest.raises(UnwritableMetadataError, match="SCRAM credentials"):
        image_to_records(IMAGE1, LEVELS["3.4-IV0"])
    losses: list[str] = []
    written = image_to_records(IMAGE1, LEVELS["3.4-IV0"], losses.append)
    assert not any(isinstance(r, UserScramCredentialRecord) for r in written)
    assert losses == ["SCRAM credentials (SCRAM-SHA-256: alpha, beta; SCRAM-SHA-512: alpha, gamma)"]
