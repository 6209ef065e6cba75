"""ReplayCheck refuses exactly what MetadataDelta refuses, without building registrations."""

from __future__ import annotations

import random

import pytest

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage
from metadata.replay_check import PartitionIds, ReplayCheck
from metadata.schema import (
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnknownRecord,
)
from tests.metadata.test_image_delta import BAR, FOO, foo_with_partitions


def first_error(delta: MetadataDelta, records: list[MetadataRecord]) -> tuple[int, str] | None:
    """(index, message) of the first record ``delta`` refuses, or None."""
    for index, record in enumerate(records):
        try:
            delta.replay(record)
        except ReplayError as exc:
            return index, str(exc)
    return None


def partition(topic_id: str, pid: int) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=(1, 2), isr=(1, 2),
                           leader=1, leader_epoch=0, partition_epoch=0)


def random_records(rng: random.Random, length: int) -> list[MetadataRecord]:
    """Records over two topic ids, a few partitions and one broker: many are refused."""
    make = [
        lambda: TopicRecord(rng.choice(("foo", "bar")), rng.choice((FOO, BAR))),
        lambda: partition(rng.choice((FOO, BAR)), rng.randrange(6)),
        lambda: PartitionChangeRecord(partition_id=rng.randrange(6),
                                      topic_id=rng.choice((FOO, BAR)), isr=(1,)),
        lambda: RemoveTopicRecord(rng.choice((FOO, BAR))),
        lambda: RegisterBrokerRecord(broker_id=1, broker_epoch=rng.randrange(2)),
        lambda: FenceBrokerRecord(id=1, epoch=rng.randrange(2)),
        lambda: UnfenceBrokerRecord(id=1, epoch=rng.randrange(2)),
        lambda: ProducerIdsRecord(broker_id=1, broker_epoch=0,
                                  next_producer_id=rng.randrange(1, 4) * 1000),
    ]
    return [rng.choice(make)() for _ in range(length)]


@pytest.mark.parametrize("base", ["empty", "foo with 3 partitions"])
def test_random_record_sequences_are_refused_alike(base: str) -> None:
    image = MetadataImage.EMPTY if base == "empty" else foo_with_partitions(3)
    rng = random.Random(868)
    refused = 0
    for _ in range(3_000):
        records = random_records(rng, rng.randrange(1, 12))
        expected = first_error(MetadataDelta(image), records)
        assert first_error(ReplayCheck(image), records) == expected, records
        refused += expected is not None
    assert 500 < refused < 2_900  # both outcomes are exercised


def test_an_unknown_record_type_is_refused_with_the_deltas_message() -> None:
    record = UnknownRecord(api_key=99, version=0, payload=b"")
    assert first_error(ReplayCheck(MetadataImage.EMPTY), [record]) == \
        first_error(MetadataDelta(MetadataImage.EMPTY), [record])


def test_a_check_cannot_be_applied() -> None:
    check = ReplayCheck(MetadataImage.EMPTY)
    check.replay(TopicRecord("foo", FOO))
    with pytest.raises(TypeError, match="checks records"):
        check.apply(0, 1)


def test_partition_ids_in_order_keep_one_run() -> None:
    ids = PartitionIds()
    for pid in range(100_000):
        ids.add(pid)
    assert ids.others is None and (ids.low, ids.high) == (0, 100_000)
    assert 99_999 in ids and 100_000 not in ids and -1 not in ids


def test_partition_ids_out_of_order_are_all_members() -> None:
    ids = PartitionIds()
    added = [5, 6, 7, 2, 9, 3, 8, 5]
    for pid in added:
        ids.add(pid)
    assert {pid for pid in range(12) if pid in ids} == set(added)
