"""Producer id blocks, following the cases of Kafka's ProducerIdControlManagerTest: the
first block, blocks that only move forward (gaps allowed), the broker's epoch checked,
and no block past the largest int64: testInitialResult (test_the_first_block_starts_at_zero),
testMonotonic (test_blocks_only_move_forward_and_may_leave_gaps), testUnknownBrokerOrEpoch
(test_an_unknown_broker_or_another_epoch_is_stale), testMaxValue
(test_no_block_may_pass_the_largest_int64), testGenerateProducerIds
(test_a_hundred_blocks_in_turn_for_four_brokers)."""

from __future__ import annotations

import pytest

from controller.operations.cluster import (
    MAX_PRODUCER_ID,
    PRODUCER_ID_BLOCK_SIZE,
    AllocateProducerIds,
)
from metadata.delta import ReplayError
from metadata.schema import ProducerIdsRecord

from .kafka_cases import brokers, image_of, refusal, run

CLUSTER = image_of(brokers(0, 1, 2, 3))


def test_the_first_block_starts_at_zero() -> None:
    image, [record], response = run(AllocateProducerIds(1, 100), CLUSTER)
    assert response == {"producerIdStart": 0, "producerIdLen": PRODUCER_ID_BLOCK_SIZE}
    assert record == ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=1000)
    assert image.next_producer_id == 1000


def test_blocks_only_move_forward_and_may_leave_gaps() -> None:
    at_42 = image_of([ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=42)],
                     CLUSTER)
    _, _, response = run(AllocateProducerIds(1, 100), at_42)
    assert response["producerIdStart"] == 42  # type: ignore[index]
    for broker, back in ((1, 40), (2, 42)):  # not above the current next id: refused
        with pytest.raises(ReplayError, match="not above the current 42"):
            image_of([ProducerIdsRecord(broker_id=broker, broker_epoch=100,
                                        next_producer_id=back)], at_42)
    _, _, response = run(AllocateProducerIds(3, 100), at_42)
    assert response["producerIdStart"] == 42  # type: ignore[index]
    at_50 = image_of([ProducerIdsRecord(broker_id=1, broker_epoch=100, next_producer_id=50)],
                     at_42)
    _, _, response = run(AllocateProducerIds(1, 100), at_50)
    assert response["producerIdStart"] == 50  # type: ignore[index]


@pytest.mark.parametrize(("broker", "epoch", "message"), [
    (99, 0, "No broker registration found for broker id 99"),
    (1, 99, "Expected broker epoch 100, but got broker epoch 99"),
])
def test_an_unknown_broker_or_another_epoch_is_stale(broker: int, epoch: int,
                                                     message: str) -> None:
    refused = refusal(AllocateProducerIds(broker, epoch), CLUSTER)
    assert refused.code == "STALE_BROKER_EPOCH" and message in refused.message


def test_no_block_may_pass_the_largest_int64() -> None:
    assert MAX_PRODUCER_ID == 9_223_372_036_854_775_807  # Java's Long.MAX_VALUE
    near_end = image_of([ProducerIdsRecord(broker_id=1, broker_epoch=100,
                                           next_producer_id=MAX_PRODUCER_ID - 1)], CLUSTER)
    refused = refusal(AllocateProducerIds(1, 100), near_end)
    assert (refused.code, refused.message) == (
        "UNKNOWN_SERVER_ERROR", "Exhausted all producerIds as the next block's end producerId has "
        "exceeded the int64 type limit")
    last = image_of([ProducerIdsRecord(broker_id=1, broker_epoch=100,
                                       next_producer_id=MAX_PRODUCER_ID - 1000)], CLUSTER)
    _, [record], _ = run(AllocateProducerIds(1, 100), last)  # the last whole block
    assert record.next_producer_id == MAX_PRODUCER_ID  # type: ignore[attr-defined]


def test_a_hundred_blocks_in_turn_for_four_brokers() -> None:
    image = CLUSTER
    for i in range(100):
        image, [record], response = run(AllocateProducerIds(i % 4, 100), image)
        assert response["producerIdStart"] == i * 1000  # type: ignore[index]
    assert record == ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=100_000)
    assert image.next_producer_id == 100_000
