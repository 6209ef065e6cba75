"""Replaying a batch at once (runs of PartitionRecords) changes nothing a replay one record at
a time would give: the same state, the same first refused record and message, for deltas and
checks, whole batches and slices of them; a broker and a controller report a bad record
inside a large batch at its own offset."""

from __future__ import annotations

import random

import pytest

import metadata.delta as delta_module
from broker import MetadataLoader
from controller import ControllerConfig, ControllerFault, QuorumController
from metadata.batch_shape import MIN_RUN, outside_runs, shape_of
from metadata.broker_index import shared_update
from metadata.delta import (
    MetadataDelta,
    ReplayError,
    _new_registration,
    clear_sharing_caches,
    merged_partition,
    partition_from_record,
    registrations_of,
)
from metadata.image import MetadataImage
from metadata.replay_check import PartitionIds, ReplayCheck
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
    PartitionChangeRecord,
    TopicRecord,
)
from raft import Batch, RaftNode, RaftStorage
from tests.metadata.test_image_delta import BAR, FOO, foo_with_partitions
from tests.metadata.test_replay_check import first_error, partition, random_records


def run_of(rng: random.Random) -> list[MetadataRecord]:
    """PartitionRecords of one topic in a row: ids in order, shuffled or repeated."""
    topic = rng.choice((FOO, BAR))
    length = rng.randrange(max(1, MIN_RUN - 2), 3 * MIN_RUN + 4)
    first = rng.randrange(4)
    ids = list(range(first, first + length))
    shape = rng.randrange(3)
    if shape == 1:
        rng.shuffle(ids)
    elif shape == 2:
        ids = [rng.randrange(first, first + length) for _ in ids]
    return [partition(topic, pid) for pid in ids]


def random_batch(rng: random.Random) -> tuple[MetadataRecord, ...]:
    """Runs mixed with records of every kind (many refused)."""
    records: list[MetadataRecord] = []
    for _ in range(rng.randrange(1, 6)):
        if rng.random() < 0.5:
            records.extend(run_of(rng))
        else:
            records.extend(random_records(rng, rng.randrange(1, 5)))
    return tuple(records)


def one_by_one(delta: MetadataDelta, records: tuple[MetadataRecord, ...], start: int,
               stop: int) -> tuple[int, str | None]:
    error = first_error(delta, list(records[start:stop]))
    return (stop, None) if error is None else (start + error[0], error[1])


def at_once(delta: MetadataDelta, records: tuple[MetadataRecord, ...], start: int,
            stop: int) -> tuple[int, str | None]:
    index, error = delta.replay_many(records, start, stop)
    return index, None if error is None else str(error)


@pytest.mark.parametrize("base", ["empty", "foo with 3 partitions"])
def test_random_batches_replay_alike_at_once_and_one_by_one(base: str) -> None:
    image = MetadataImage.EMPTY if base == "empty" else foo_with_partitions(3)
    rng = random.Random(1868)
    refused = runs = 0
    for _ in range(1_500):
        clear_sharing_caches()
        records = random_batch(rng)
        start = rng.choice((0, 0, rng.randrange(len(records))))
        stop = rng.choice((len(records), rng.randrange(start, len(records) + 1)))
        runs += len(shape_of(records).runs)
        single, whole = MetadataDelta(image), MetadataDelta(image)
        expected = one_by_one(single, records, start, stop)
        assert at_once(whole, records, start, stop) == expected, records
        assert whole.records == single.records
        again = MetadataDelta(image)  # a second node: the run's registrations are shared
        assert at_once(again, records, start, stop) == expected
        for delta in (whole, again):
            applied, reference = delta.apply(9, 1), single.apply(9, 1)
            assert applied.digest == reference.digest
            assert applied.topics_by_id == reference.topics_by_id
            assert applied.partitions_by_broker == reference.partitions_by_broker
        assert at_once(ReplayCheck(image), records, start, stop) == \
            one_by_one(ReplayCheck(image), records, start, stop)
        refused += expected[1] is not None
    assert 200 < refused < 1_450 and runs > 500  # both outcomes, and many runs, exercised


def test_a_check_after_a_run_knows_the_runs_partitions() -> None:
    records = (TopicRecord("foo", FOO), *(partition(FOO, pid) for pid in range(20)))
    check = ReplayCheck(MetadataImage.EMPTY)
    assert check.replay_many(records) == (len(records), None)
    check.replay(PartitionChangeRecord(partition_id=19, topic_id=FOO, isr=(1,)))
    with pytest.raises(ReplayError, match="unknown partition foo-20"):
        check.replay(PartitionChangeRecord(partition_id=20, topic_id=FOO, isr=(1,)))


def test_partition_id_ranges_add_as_their_ids_one_by_one() -> None:
    rng = random.Random(7)
    for _ in range(2_000):
        one, ranged = PartitionIds(), PartitionIds()
        for _ in range(rng.randrange(1, 5)):
            low = rng.randrange(30)
            high = low + rng.randrange(1, 10)
            if rng.random() < 0.5:
                one.add(low)
                ranged.add(low)
            for pid in range(low, high):
                one.add(pid)
            ranged.add_range(low, high)
        assert {p for p in range(50) if p in one} == {p for p in range(50) if p in ranged}


def test_the_shape_names_markers_and_long_runs_only() -> None:
    records = (BeginTransactionRecord(), TopicRecord("foo", FOO),
               *(partition(FOO, pid) for pid in range(MIN_RUN)),
               *(partition(BAR, pid) for pid in range(MIN_RUN - 1)),
               EndTransactionRecord(), AbortTransactionRecord())
    shape = shape_of(records)
    assert shape.markers == (0, len(records) - 2, len(records) - 1)
    assert [(i, run.end, run.topic_id) for i, run in shape.runs.items()] == \
        [(2, 2 + MIN_RUN, FOO)]
    assert shape_of(records) is shape  # found once per batch object


def test_outside_runs_keeps_every_record_but_the_runs_in_order() -> None:
    rng = random.Random(5)
    for _ in range(200):
        records = random_batch(rng)
        runs = shape_of(records).runs
        inside = {i for start, run in runs.items() for i in range(start, run.end)}
        assert list(outside_runs(records)) == [r for i, r in enumerate(records)
                                               if i not in inside]


def test_a_broker_reports_each_record_of_a_run_for_an_unknown_topic() -> None:
    loader = MetadataLoader(1)
    loader.catching_up = False
    records = (*(partition(FOO, pid) for pid in range(MIN_RUN + 4)), TopicRecord("bar", BAR),
               *(partition(BAR, pid) for pid in range(MIN_RUN + 4)))
    loader.handle_commit([Batch(0, 1, records)], len(records))
    assert [f.offset for f in loader.faults] == list(range(MIN_RUN + 4))
    assert all("unknown topic id" in f.message for f in loader.faults)
    assert loader.image.topic("bar") is not None
    assert len(loader.image.topic("bar").partitions) == MIN_RUN + 4  # type: ignore[union-attr]


def test_a_standby_stops_at_the_offset_of_the_first_record_that_cannot_apply() -> None:
    raft = RaftNode(0, (0, 1, 2), RaftStorage(), random.Random(0), 0)
    standby = QuorumController(0, raft, random.Random(0), lambda: 0, ControllerConfig())
    faults: list[ControllerFault] = []
    standby.fatal_handler = faults.append
    good = (TopicRecord("foo", FOO), *(partition(FOO, pid) for pid in range(40)))
    bad = (*(partition(FOO, pid) for pid in range(40, 60)), *(partition(BAR, 0),) * 3)
    standby.handle_commit([Batch(100, 1, good), Batch(141, 1, bad)], 165)
    assert standby.fault is not None and standby.fault.offset == 161, standby.fault
    assert "PartitionRecord 0 for unknown topic id" in str(standby.fault)


def test_a_runs_registrations_are_made_once_and_shared_with_every_replay() -> None:
    clear_sharing_caches()
    records = [partition(FOO, p) for p in range(20)]
    made = registrations_of(records)
    assert made == [_new_registration(r) for r in records]
    assert all(partition_from_record(r) is reg for r, reg in zip(records, made, strict=True))
    assert all(a is b for a, b in zip(registrations_of(records), made, strict=True))
    inside = registrations_of(records[5:12])  # a run that starts inside the cached one
    assert all(a is b for a, b in zip(inside, made[5:12], strict=True))
    new = partition(BAR, 0)
    mixed = registrations_of([*records[15:], new])  # cached records, then one nobody made
    assert all(a is b for a, b in zip(mixed[:-1], made[15:], strict=True))
    assert mixed[-1] == _new_registration(new) and partition_from_record(new) is mixed[-1]
    fresh = registrations_of([new, *records[:3]])  # a new first record: made afresh
    assert fresh == [_new_registration(r) for r in (new, *records[:3])]


def test_the_shared_registrations_stay_within_their_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The registrations shared between replays are a bounded cache (emptied when full),
    record by record and run by run: memory does not grow with the records replayed, and
    every registration handed out is still the record's."""
    clear_sharing_caches()
    monkeypatch.setattr(delta_module, "SHARED_REGISTRATIONS", 4)
    records = [partition(FOO, p) for p in range(10)]
    for record in records:
        assert partition_from_record(record) == _new_registration(record)
        assert len(delta_module._records_held) <= 4
    for start in range(0, 9, 3):
        run = records[start:start + 3]
        assert registrations_of(run) == [_new_registration(r) for r in run]
        assert len(delta_module._records_held) <= 4
    clear_sharing_caches()


def test_clearing_the_sharing_caches_forgets_shared_merges_and_shapes() -> None:
    """The same change merged over the same registration is shared, and so is a batch's
    shape; once the caches are cleared (what a simulation run does at its end) neither is
    held any more: the next merge and the next shape are made afresh, equal to the old."""
    records = (TopicRecord("foo", FOO), *(partition(FOO, pid) for pid in range(MIN_RUN)))
    registration = _new_registration(partition(FOO, 0))
    change = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,))
    merged = merged_partition(registration, change)
    shape = shape_of(records)
    assert merged_partition(registration, change) is merged and shape_of(records) is shape
    clear_sharing_caches()
    again = merged_partition(registration, change)
    assert again == merged and again is not merged
    reshaped = shape_of(records)
    assert reshaped is not shape and reshaped.runs.keys() == shape.runs.keys()


def test_clearing_the_sharing_caches_forgets_shared_broker_indexes() -> None:
    """A broker index updated with the same topics is shared until the caches are cleared;
    then it is made afresh (equal to the one before)."""
    image = foo_with_partitions(3)
    topic = image.topics_by_id[FOO]
    changed = [(FOO, None, dict(topic.partitions))]
    index = shared_update(MetadataImage.EMPTY.partitions_by_broker, [], changed, [topic])
    assert shared_update(MetadataImage.EMPTY.partitions_by_broker, [], changed,
                         [topic]) is index
    clear_sharing_caches()
    again = shared_update(MetadataImage.EMPTY.partitions_by_broker, [], changed, [topic])
    assert again is not index and again == index
