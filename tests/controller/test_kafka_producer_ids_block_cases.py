"""The block of producer ids a broker is given, following Kafka's ``ProducerIdsBlockTest``.

kraftsim's block is the answer of ``AllocateProducerIds`` (its first id and length) with
the ProducerIdsRecord that moves the image's next producer id past it; blocks are
Kafka's fixed 1,000 ids.

Not ported: ``testClaimNextId``: claiming ids from a block across threads; kraftsim is
single-threaded and its brokers take no ids from a block object.
"""

from __future__ import annotations

from controller.operations.cluster import PRODUCER_ID_BLOCK_SIZE, AllocateProducerIds
from metadata.schema import ProducerIdsRecord

from .kafka_cases import brokers, image_of, run


def test_the_first_block_starts_at_zero() -> None:
    """Kafka's ProducerIdsBlockTest.testEmptyBlock: before any block (Kafka's empty one,
    whose last id is -1) the next block starts at id 0."""
    image = image_of(brokers(5))
    assert image.next_producer_id == 0
    _, _, response = run(AllocateProducerIds(5), image)
    assert response == {"producerIdStart": 0, "producerIdLen": PRODUCER_ID_BLOCK_SIZE}


def test_a_block_spans_its_ids_and_the_next_one_follows() -> None:
    """Kafka's ProducerIdsBlockTest.testDynamicBlock: a block's first id, its last (first +
    size - 1), the first of the next block (first + size), its size and its broker."""
    first = 1309418324
    image = image_of([*brokers(5), ProducerIdsRecord(broker_id=3, next_producer_id=first,
                                                     broker_epoch=100)])
    after, records, response = run(AllocateProducerIds(5), image)
    assert response == {"producerIdStart": first, "producerIdLen": PRODUCER_ID_BLOCK_SIZE}
    last = first + PRODUCER_ID_BLOCK_SIZE - 1
    assert records == [ProducerIdsRecord(broker_id=5, next_producer_id=last + 1,
                                         broker_epoch=100)]
    assert after.next_producer_id == last + 1
