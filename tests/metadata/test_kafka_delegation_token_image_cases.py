"""Delegation tokens in the image, following the cases of Kafka's ``DelegationTokenImageTest``.

Ported: an image of three tokens; one token's expiration changed by a new
record, one removed; the round trips of both images and the delta through
every split; written at metadata.version 3.5-IV2, the empty image loses nothing
and an image with tokens loses them, an error without a loss handler
(testEmptyWithInvalidIBP, testImage1withInvalidIBP).

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import DelegationTokenRecord, MetadataRecord, RemoveDelegationTokenRecord
from metadata.snapshot import UnwritableMetadataError, image_to_records
from metadata.versions import LEVELS
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)


def fred_token(token_id: str, expiration: int) -> DelegationTokenRecord:
    return DelegationTokenRecord(owner="User:fred", requester="User:fred", renewers=(),
                                 issue_timestamp=0, max_timestamp=1000,
                                 expiration_timestamp=expiration, token_id=token_id)


IMAGE1 = image_of([fred_token("somerandomuuid1", 100), fred_token("somerandomuuid2", 100),
                   fred_token("somerandomuuid3", 100)])
DELTA1_RECORDS: list[MetadataRecord] = [
    fred_token("somerandomuuid1", 200),
    RemoveDelegationTokenRecord("somerandomuuid3"),
]
IMAGE2 = image_of([fred_token("somerandomuuid1", 200), fred_token("somerandomuuid2", 100)])


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert sorted(IMAGE2.delegation_tokens) == ["somerandomuuid1", "somerandomuuid2"]
    assert IMAGE2.delegation_tokens["somerandomuuid1"].expiration_timestamp == 200
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_below_3_6_iv2_delegation_tokens_cannot_be_written() -> None:
    assert image_to_records(MetadataImage.EMPTY, LEVELS["3.5-IV2"]) == image_to_records(
        MetadataImage.EMPTY, LEVELS["3.5-IV2"], lambda loss: pytest.fail(loss))
    with pytest.raises(UnwritableMetadataError, match="delegation tokens"):
        image_to_records(IMAGE1, LEVELS["3.5-IV2"])
    losses: list[str] = []
    written = image_to_records(IMAGE1, LEVELS["3.5-IV2"], losses.append)
    assert not any(isinstance(r, DelegationTokenRecord) for r in written)
    assert losses == ["delegation tokens (" + ", ".join(sorted(IMAGE1.delegation_tokens)) + ")"]
    assert any(isinstance(r, DelegationTokenRecord)
               for r in image_to_records(IMAGE1, LEVELS["3.6-IV2"]))
