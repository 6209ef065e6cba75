"""The whole image, following the cases of Kafka's ``MetadataImageTest``.

Kafka's first image is every part's first image together (features, cluster,
topics, configs, client quotas, producer ids, ACLs, SCRAM credentials,
delegation tokens), its delta every part's delta in that order, and its second
image every part's second image. Ported: the delta gives the second image at
the delta's provenance; both images and the first image's records followed by
the delta's reach the same image through every split into deltas.

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2_at_the_deltas_provenance).
"""

from __future__ import annotations

import pytest

from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import MetadataRecord
from metadata.snapshot import image_to_records
from tests.metadata import test_kafka_acls_image_cases as acls
from tests.metadata import test_kafka_client_quotas_image_cases as quotas
from tests.metadata import test_kafka_cluster_image_cases as cluster
from tests.metadata import test_kafka_configurations_image_cases as configs
from tests.metadata import test_kafka_delegation_token_image_cases as tokens
from tests.metadata import test_kafka_features_image_cases as features
from tests.metadata import test_kafka_producer_ids_image_cases as producer_ids
from tests.metadata import test_kafka_scram_image_cases as scram
from tests.metadata import test_kafka_topics_image_cases as topics
from tests.metadata.kafka_image_cases import (
    EPOCH,
    OFFSET,
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

PARTS = (features, cluster, topics, configs, quotas, producer_ids, acls, scram, tokens)


def records_of(image_name: str) -> list[MetadataRecord]:
    return [record for part in PARTS for record in image_to_records(getattr(part, image_name))]


IMAGE1 = image_of(records_of("IMAGE1"))
DELTA1_RECORDS: list[MetadataRecord] = [r for part in PARTS for r in part.DELTA1_RECORDS]
IMAGE2 = image_of(records_of("IMAGE2"))


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_every_part_is_there() -> None:
    assert len(IMAGE1.topics_by_id) == 2 and len(IMAGE1.brokers) == 3
    assert len(IMAGE1.features) == 3 and len(IMAGE1.configs) == 2
    assert len(IMAGE1.client_quotas) == 2 and IMAGE1.next_producer_id == 123
    assert len(IMAGE1.acls) == 4 and len(IMAGE1.scram) == 2
    assert len(IMAGE1.delegation_tokens) == 3


def test_delta1_gives_image2_at_the_deltas_provenance() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    delta = MetadataDelta(IMAGE1)
    delta.replay_all(DELTA1_RECORDS)
    applied = delta.apply(OFFSET * 2, EPOCH + 1)
    assert (applied.offset, applied.epoch) == (OFFSET * 2, EPOCH + 1)
    assert applied == IMAGE2.with_provenance(OFFSET * 2, EPOCH + 1)


def test_image1_records_and_delta1_reach_image2_through_every_split() -> None:
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])
