"""A standby applies an open transaction only at its End; what it reports and holds is the same."""

from __future__ import annotations

import gc
import random

import pytest

import metadata.delta
from controller import ControllerFault, QuorumController
from controller.deferred import DeferredImage
from metadata.delta import clear_sharing_caches
from metadata.image import MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from metadata.uuids import random_uuid
from raft import Batch, RaftNode, RaftStorage


def standby(defer: bool) -> QuorumController:
    raft = RaftNode(0, (0, 1, 2), RaftStorage(), random.Random(0), 0)
    controller = QuorumController(0, raft, random.Random(0), lambda: 0)
    controller.defer_transactions = defer
    return controller


def topic(rng: random.Random, name: str, partitions: int) -> tuple[str, list[MetadataRecord]]:
    topic_id = random_uuid(rng)
    return topic_id, [TopicRecord(name, topic_id), *(
        PartitionRecord(partition_id=p, topic_id=topic_id, replicas=(0, 1), isr=(0, 1),
                        leader=0, leader_epoch=0, partition_epoch=0)
        for p in range(partitions))]


def change(topic_id: str, pid: int) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=pid, topic_id=topic_id, isr=(1,), leader=1)


def log_of(rng: random.Random) -> list[MetadataRecord]:
    """Committed and aborted transactions, changes inside them, records between them."""
    t0, records = topic(rng, "t0", 5)
    t1, created = topic(rng, "t1", 8)
    records += [BeginTransactionRecord("a"), *created, change(t1, 3), change(t0, 1),
                change(t1, 3), EndTransactionRecord(), NoOpRecord()]
    _, created = topic(rng, "t2", 9)
    records += [BeginTransactionRecord("b"), *created, change(t0, 2), RemoveTopicRecord(t1),
                AbortTransactionRecord("Controller failover"), change(t1, 0)]
    t3, created = topic(rng, "t3", 6)
    records += [BeginTransactionRecord("c"), *created, change(t3, 5), RemoveTopicRecord(t0),
                EndTransactionRecord(), BeginTransactionRecord("d"), *topic(rng, "t4", 4)[1]]
    return records


def batches_of(records: list[MetadataRecord], rng: random.Random) -> list[Batch]:
    batches, offset = [], 0
    while offset < len(records):
        size = rng.randint(1, 7)
        batches.append(Batch(offset, 1, tuple(records[offset:offset + size])))
        offset += size
    return batches


def state(controller: QuorumController) -> tuple[int, int, int, int, int]:
    offsets = controller.offsets
    return (offsets.last_committed_offset, offsets.last_stable_offset,
            offsets.transaction_start_offset, controller.committed_image().digest,
            controller.committed_state().image.digest)


@pytest.mark.parametrize("read_every_batch", [False, True])
def test_a_deferring_standby_ends_in_the_state_of_one_applying_every_batch(
        read_every_batch: bool) -> None:
    for seed in range(25):
        rng = random.Random(seed)
        batches = batches_of(log_of(rng), rng)
        eager, deferring = standby(False), standby(True)
        for batch in batches:
            for controller in (eager, deferring):
                controller.handle_commit([batch], batch.end_offset)
            if read_every_batch:
                assert state(deferring) == state(eager)
        assert eager.fault is None and deferring.fault is None
        assert eager.transaction_open and deferring.transaction_open  # "d" is still open
        assert state(deferring) == state(eager)
        assert deferring.image.topic("t3") is not None and deferring.image.topic("t0") is None
        assert deferring.image.topic("t4") is not None  # read: the open "d" is applied
        assert deferring.committed_image().topic("t4") is None


@pytest.mark.parametrize("bad_at", [3, 9, 17])
def test_a_record_that_cannot_apply_inside_a_transaction_stops_the_standby_at_its_commit(
        bad_at: int) -> None:
    rng = random.Random(5)
    _, created = topic(rng, "t", 20)
    records = [BeginTransactionRecord("big"), *created]
    records.insert(bad_at, change(created[0].topic_id, 40))  # type: ignore[attr-defined]
    batches = [Batch(i, 1, tuple(records[i:i + 4])) for i in range(0, len(records), 4)]
    faults = []
    for defer in (False, True):
        controller = standby(defer)
        for batch in batches:
            controller.handle_commit([batch], batch.end_offset)
            if controller.fault is not None:
                faults.append((batch.base_offset, controller.fault.offset, str(controller.fault)))
                break
    assert faults[0] == faults[1]
    assert faults[0][1] == bad_at and "unknown partition t-40" in faults[0][2]


def test_an_aborted_transaction_is_never_applied_on_a_standby() -> None:
    rng = random.Random(7)
    _, created = topic(rng, "big", 2_000)
    records = [BeginTransactionRecord("big"), *created]
    batches = [Batch(i, 1, tuple(records[i:i + 500])) for i in range(0, len(records), 500)]
    controller = standby(True)
    clear_sharing_caches()
    for batch in batches:
        controller.handle_commit([batch], batch.end_offset)
    abort = Batch(len(records), 1, (AbortTransactionRecord("Controller failover"),))
    controller.handle_commit([abort], abort.end_offset)
    assert not metadata.delta._from_record  # no PartitionRegistration was ever made
    assert controller.committed_state().image.topic("big") is None
    assert controller.offsets.last_stable_offset == abort.last_offset


@pytest.mark.parametrize("defer", [False, True])
def test_an_abort_reverts_to_just_before_a_begin_inside_a_batch(defer: bool) -> None:
    """A Begin in the middle of a batch: the records before it in the same batch stay, the
    transaction's go (the revert point is Begin - 1, not the batch's start or end)."""
    rng = random.Random(11)
    kept_id, kept = topic(rng, "kept", 2)
    _, dropped = topic(rng, "dropped", 2)
    controller = standby(defer)
    first = Batch(0, 1, (NoOpRecord(), *kept, BeginTransactionRecord("t"), *dropped[:2]))
    second = Batch(first.end_offset, 1, (*dropped[2:], change(kept_id, 1),
                                         AbortTransactionRecord("Controller failover"),
                                         change(kept_id, 0)))
    for batch in (first, second):
        controller.handle_commit([batch], batch.end_offset)
    image = controller.committed_image()
    assert controller.fault is None and not controller.transaction_open
    assert image.topic("dropped") is None
    topic_kept = image.topic("kept")
    assert topic_kept is not None
    assert topic_kept.partitions[1].leader == 0  # changed inside the aborted transaction
    assert topic_kept.partitions[0].leader == 1  # changed after the abort
    assert image.offset == second.last_offset


def test_a_deferred_record_that_cannot_apply_is_named_by_its_own_offset() -> None:
    """Building a deferred state applies each link's slice of its batch; a record that
    cannot apply then (which the check at its commit should have refused) is a fault at
    the record's own offset: the link's first offset plus its place in the slice."""
    base = MetadataImage.EMPTY
    bad = PartitionChangeRecord(partition_id=0, topic_id=random_uuid(random.Random(1)),
                                isr=(0,))
    records = (NoOpRecord(), NoOpRecord(), NoOpRecord(), bad)
    deferred = DeferredImage(base, records, 2, 4, 102, 103, 1, ReplayCheck(base))
    with pytest.raises(ControllerFault, match="Unable to apply PARTITION_CHANGE_RECORD") as e:
        deferred.image()
    assert e.value.offset == 103


def test_a_built_deferred_state_lets_go_of_its_base_and_records() -> None:
    """Once a deferred state is built, it keeps only the image it built: neither the
    state it was deferred on nor its batch's records stay reachable from it."""
    base = MetadataImage.EMPTY
    records = (NoOpRecord(), NoOpRecord())
    first = DeferredImage(base, records, 0, 1, 100, 100, 1, ReplayCheck(base))
    second = DeferredImage(first, records, 1, 2, 101, 101, 1, first.check)
    built = second.image()
    assert built.offset == 101 and second.built and not first.built
    held = gc.get_referents(second)
    assert any(r is built for r in held)
    assert not any(r is first or r is records for r in held)
    assert second.image() is built  # read again: the kept image, nothing applied
