"""The checkers' reference replay: what a committed log means, batch by batch.

It replays a batch's records between transaction markers at once; these tests pin what
that must keep from a record-by-record replay: a record that cannot apply is reported
at its own offset and skipped, the state before a Begin is kept and an Abort goes back
to it, NoOps are not meaningful, and a transaction counts its records.
"""

from __future__ import annotations

import pytest

from metadata.image import MetadataImage
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionRecord,
    TopicRecord,
)
from raft import Batch
from sim.invariants.history import CommittedLog
from sim.invariants.reference import ReferenceReplay

FOO, BAR, BAZ = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw", "AAAAAAAAAAAAAAAAAAAABA"


def partition(topic_id: str, pid: int) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=(1, 2, 3),
                           isr=(1, 2, 3), leader=1, leader_epoch=0, partition_epoch=0)


class Log:
    """A committed log fed batch by batch to a reference replay."""

    def __init__(self) -> None:
        self.history = CommittedLog()
        self.reference = ReferenceReplay(self.history)
        self.end = 0

    def commit(self, *records: MetadataRecord, epoch: int = 1) -> list[tuple[str, str]]:
        batch = Batch(self.end, epoch, tuple(records))
        self.end = batch.end_offset
        assert self.history.observe(batch) is None
        return self.reference.advance()

    def partitions(self, topic_id: str, offset: int | None = None) -> list[int] | None:
        image = self.reference.image if offset is None else self.reference.image_at(offset)
        assert image is not None
        topic = image.topics_by_id.get(topic_id)
        return None if topic is None else sorted(topic.partitions)


def test_a_record_that_cannot_apply_is_reported_at_its_offset_and_skipped() -> None:
    log = Log()
    problems = log.commit(TopicRecord("foo", FOO), *(partition(FOO, p) for p in range(3)),
                          partition(BAR, 0), *(partition(FOO, p) for p in range(3, 6)),
                          NoOpRecord(), NoOpRecord())
    assert problems == [("TxnWellFormed", "record at 4 cannot apply: PartitionRecord 0 for "
                         f"unknown topic id {BAR}")]
    assert log.partitions(FOO) == [0, 1, 2, 3, 4, 5]
    assert log.reference.last_meaningful_offset == 7  # the NoOps after it are not


def test_a_committed_transaction_counts_its_records_and_keeps_the_state_before_it() -> None:
    log = Log()
    assert log.commit(TopicRecord("foo", FOO), partition(FOO, 0)) == []
    assert log.commit(BeginTransactionRecord("t"), TopicRecord("bar", BAR),
                      *(partition(BAR, p) for p in range(4))) == []
    assert log.reference.inside_transaction(4) is not None
    assert log.commit(partition(BAR, 4), NoOpRecord(), EndTransactionRecord(),
                      TopicRecord("baz", BAZ)) == []
    txn = log.reference.transactions[0]
    assert (txn.begin_offset, txn.close_offset, txn.outcome, txn.records) == \
        (2, 10, "committed", 7)
    assert log.partitions(BAR, 1) is None  # the state just before the Begin
    assert log.partitions(BAR) == [0, 1, 2, 3, 4]
    assert log.partitions(BAZ) == []
    assert log.reference.boundaries == [(10, "end")]
    assert log.reference.last_meaningful_offset == 11


def test_the_state_before_a_begin_inside_a_batch_includes_the_records_before_it() -> None:
    """A Begin in the middle of a batch: the state at the offset before it holds the
    batch's records up to there (the image a broker publishes before a Begin, KIP-868),
    not only the previous batch's."""
    log = Log()
    assert log.commit(TopicRecord("foo", FOO)) == []
    assert log.commit(partition(FOO, 0), partition(FOO, 1), BeginTransactionRecord("t"),
                      TopicRecord("bar", BAR), EndTransactionRecord()) == []
    assert log.partitions(FOO, 0) == []
    assert log.partitions(FOO, 2) == [0, 1]  # just before the Begin at 3
    before = log.reference.image_at(2)
    assert before is not None and (before.offset, before.epoch) == (2, 1)
    assert log.partitions(BAR, 2) is None
    assert log.partitions(BAR, 5) == []


def test_an_abort_goes_back_to_the_state_before_the_begin() -> None:
    log = Log()
    log.commit(TopicRecord("foo", FOO), partition(FOO, 0))
    log.commit(BeginTransactionRecord("t"), TopicRecord("bar", BAR),
               *(partition(BAR, p) for p in range(3)))
    assert log.commit(AbortTransactionRecord(), epoch=2) == []  # a new leader's first
    assert log.commit(partition(FOO, 1), epoch=2) == []
    assert log.partitions(BAR) is None
    assert log.partitions(FOO) == [0, 1]
    txn = log.reference.transactions[0]
    assert (txn.outcome, txn.records, txn.close_offset) == ("aborted", 4, 7)
    assert log.reference.last_boundary_before(8) == "abort"


def test_misplaced_markers_are_reported_and_skipped() -> None:
    log = Log()
    problems = log.commit(EndTransactionRecord(), BeginTransactionRecord("a"),
                          TopicRecord("foo", FOO), BeginTransactionRecord("b"),
                          partition(FOO, 0), EndTransactionRecord())
    assert problems == [
        ("TxnWellFormed", "EndTransactionRecord at 0 without an open transaction"),
        ("TxnWellFormed", "Begin at 3 inside the transaction begun at 1")]
    assert log.partitions(FOO) == [0]
    assert log.reference.transactions[0].records == 2


def test_a_new_epoch_must_begin_with_the_abort_of_an_open_transaction() -> None:
    log = Log()
    log.commit(BeginTransactionRecord("t"), TopicRecord("foo", FOO))
    problems = log.commit(partition(FOO, 0), epoch=2)
    assert [name for name, _ in problems] == ["FailoverAbortsInflight"]


def test_a_new_epoch_beginning_with_an_abort_and_more_is_not_a_lone_abort() -> None:
    log = Log()
    log.commit(BeginTransactionRecord("t"), TopicRecord("foo", FOO))
    problems = log.commit(AbortTransactionRecord(), TopicRecord("bar", BAR), epoch=2)
    assert [name for name, _ in problems] == ["FailoverAbortsInflight"]


def test_the_state_is_known_only_up_to_what_was_replayed_and_not_past_a_gap() -> None:
    log = Log()
    log.commit(TopicRecord("foo", FOO), partition(FOO, 0))
    assert log.reference.image_at(1) is not None
    assert log.reference.image_at(2) is None  # not replayed yet
    assert log.history.observe(Batch(5, 1, (NoOpRecord(),))) is None  # 2-4 never seen
    assert log.reference.advance() == []
    assert log.reference.gap and log.reference.image_at(1) is None


def test_the_last_boundary_counts_the_marker_at_the_offset_itself() -> None:
    log = Log()
    log.commit(BeginTransactionRecord("t"), TopicRecord("foo", FOO))
    log.commit(EndTransactionRecord())  # at 2
    assert log.reference.last_boundary_before(1) is None
    assert log.reference.last_boundary_before(2) == "end"
    assert log.reference.inside_transaction(0) is not None
    assert log.reference.inside_transaction(2) is None


def test_the_reference_starts_from_a_snapshot_only_before_replaying() -> None:
    log = Log()
    log.commit(TopicRecord("foo", FOO))
    with pytest.raises(ValueError, match="already replayed"):
        log.reference.start_from(MetadataImage.EMPTY)
