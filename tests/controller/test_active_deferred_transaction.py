"""The active controller applies a transaction it writes once, at its End.

Each batch of a multi-batch transaction is checked as it is written (a record
that cannot apply stops the write before its batch is appended, as before),
but the records are applied together at the End: the revert points at the
batches inside the transaction hold deferred states, built only if a revert
reaches them, and each then holds exactly the batches up to it.
"""

from __future__ import annotations

import msgspec

from controller import WriteMode
from controller.operations import CreateTopics, NewTopic
from controller.operations.base import Generated, OperationContext
from metadata.schema import PartitionRecord, RemoveTopicRecord, TopicRecord
from tests.controller.conftest import cluster

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAABw"


def test_the_points_inside_a_written_transaction_are_built_only_when_read() -> None:
    c = cluster(seed=3, batch=10, mode=WriteMode.TRANSACTIONAL)
    active = c.active_controller()
    assert active is not None
    handle = c.submit(CreateTopics((NewTopic("deferred", 37, 3),)))
    assert handle.transactional and handle.batch_count == 4
    offsets = active.offsets
    inside = [offset for offset in range(handle.first_offset, handle.last_offset)
              if offsets.registry.get(offset) is not None]
    assert len(inside) == 3  # the ends of the first three batches
    assert not any(offsets.registry.get(offset).built for offset in inside)
    final = active.image.topic("deferred")  # the End applied every batch at once
    assert final is not None and len(final.partitions) == 37
    partitions = []
    for offset in inside:  # each point holds the batches up to it, no more
        topic = offsets.point_at(offset).image.topic("deferred")
        partitions.append(0 if topic is None else len(topic.partitions))
    # Begin + TopicRecord + 8 partitions, then 10 more per batch
    assert partitions == [8, 18, 28]
    assert c.wait(handle, 20_000) and handle.error is None
    assert c.run_until(c.idle, 20_000), c.sim.violation


class _CreateThenRemoveUnknown(msgspec.Struct, frozen=True):
    """A buggy operation: a topic of 25 partitions, then a record that cannot apply."""

    def describe(self) -> str:
        return "CreateThenRemoveUnknown"

    def generate(self, ctx: OperationContext) -> Generated:
        records = [TopicRecord(name="doomed", topic_id=TOPIC_ID),
                   *(PartitionRecord(partition_id=p, topic_id=TOPIC_ID, replicas=(0, 1),
                                     isr=(0, 1), leader=0, leader_epoch=0, partition_epoch=0)
                     for p in range(25)),
                   RemoveTopicRecord("AAAAAAAAAAAAAAAAAAAABg")]
        return Generated(records)


def test_a_record_that_cannot_apply_stops_the_write_before_its_batch() -> None:
    c = cluster(seed=5, batch=10, mode=WriteMode.TRANSACTIONAL)
    active = c.active_controller()
    assert active is not None
    end = active.raft.log.end_offset
    handle = c.submit(_CreateThenRemoveUnknown())
    assert handle.done and handle.error is not None
    assert handle.error.code == "UNKNOWN_SERVER_ERROR"
    assert active.fault is not None
    # Begin + 27 records + End in batches of 10: the bad record is in the third batch,
    # so the first two were appended and nothing after them
    assert active.raft.log.end_offset == end + 20
    new = c.run_until_active(20_000)
    assert new is not None and new is not active
    assert c.run_until(c.idle, 20_000), c.sim.violation
    assert new.image.topic("doomed") is None  # the partial transaction was aborted
