"""MetadataBatchLoader on its own, following the cases of Kafka's ``MetadataBatchLoaderTest``.

Each case loads batches one by one and flushes as the loader's commit would,
and looks at every image the batch loader emits: when (during a batch, at a
Begin, or only at the flush), at which offset and epoch, whether the offset is
a batch boundary, how many batches the change completes (Kafka's manifest
counts bytes too; kraftsim's batches have no size), and what the image holds.

Already covered in ``test_loader.py`` (with the MetadataLoader around the batch
loader) and ported here only for what they assert beyond it: two transactions
in one batch, a transaction over several commits, markers out of place.
"""

from __future__ import annotations

import pytest

from broker import Manifest, MetadataImage
from broker.batch_loader import LoaderFault, MetadataBatchLoader
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

FOO, BAR = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"


def partition(topic_id: str, pid: int) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=(), isr=())


TOPIC_TXN_BATCH_1: tuple[MetadataRecord, ...] = (
    BeginTransactionRecord("txn-1"), TopicRecord("foo", FOO), partition(FOO, 0))
TOPIC_TXN_BATCH_2: tuple[MetadataRecord, ...] = (
    partition(FOO, 1), partition(FOO, 2), EndTransactionRecord())
TOPIC_NO_TXN_BATCH: tuple[MetadataRecord, ...] = (
    TopicRecord("bar", BAR), partition(BAR, 0), partition(BAR, 1))
BEGIN: tuple[MetadataRecord, ...] = (BeginTransactionRecord("txn-1"),)
END: tuple[MetadataRecord, ...] = (EndTransactionRecord(),)
ABORT: tuple[MetadataRecord, ...] = (AbortTransactionRecord(),)


def noops(count: int) -> tuple[MetadataRecord, ...]:
    return tuple(NoOpRecord() for _ in range(count))


class Updates:
    """A batch loader from the empty image, with every image it emits and every fault."""

    def __init__(self) -> None:
        self.images: list[tuple[MetadataImage, Manifest]] = []
        self.faults: list[LoaderFault] = []
        self.loader = MetadataBatchLoader(MetadataImage.EMPTY,
                                          lambda image, manifest: self.images.append(
                                              (image, manifest)),
                                          self.faults.append)

    def load(self, base_offset: int, epoch: int, records: tuple[MetadataRecord, ...]) -> None:
        self.loader.load_batch(Batch(base_offset, epoch, records))

    def flush(self) -> None:
        self.loader.maybe_flush_batches()

    @property
    def count(self) -> int:
        return len(self.images)

    @property
    def image(self) -> MetadataImage:
        return self.images[-1][0]

    @property
    def manifest(self) -> Manifest:
        return self.images[-1][1]


def test_a_transaction_over_aligned_batches_is_emitted_at_the_flush() -> None:
    """testAlignedTransactionBatches."""
    u = Updates()
    u.load(10, 1, TOPIC_TXN_BATCH_1)
    u.load(13, 2, noops(3))
    u.load(16, 2, TOPIC_TXN_BATCH_2)
    assert u.count == 0
    u.flush()
    assert u.count == 1 and u.image.topic("foo") is not None
    assert (u.image.offset, u.image.epoch, u.manifest.batch_aligned) == (18, 2, True)
    assert u.manifest.batches == 3


def test_a_begin_and_an_end_in_batches_of_their_own_in_one_commit() -> None:
    """testSingletonBeginAndEnd, all in one commit: the records before the Begin are emitted
    when the Begin is loaded, batch-aligned."""
    u = Updates()
    u.load(13, 1, noops(3))
    assert u.count == 0
    u.load(16, 2, BEGIN)
    assert u.count == 1 and u.manifest.batch_aligned and u.image.topic("bar") is None
    assert (u.image.offset, u.manifest.batches) == (15, 1)
    u.load(17, 3, TOPIC_NO_TXN_BATCH)
    u.load(20, 4, END)
    assert u.count == 1
    u.flush()
    assert u.image.topic("bar") is not None and (u.image.offset, u.image.epoch) == (20, 4)


def test_a_begin_and_an_end_in_batches_of_their_own_each_in_its_commit() -> None:
    """testSingletonBeginAndEnd, one commit per batch: nothing between the Begin and the
    End is emitted."""
    u = Updates()
    u.load(13, 1, noops(3))
    u.flush()
    assert u.count == 1
    u.load(16, 2, BEGIN)
    u.flush()
    u.load(17, 3, TOPIC_NO_TXN_BATCH)
    u.flush()
    assert u.count == 1
    u.load(20, 4, END)
    u.flush()
    assert u.count == 2 and u.image.topic("bar") is not None


def test_a_begin_inside_a_transaction_is_a_fault_and_nothing_is_emitted() -> None:
    """testUnexpectedBeginTransaction."""
    u = Updates()
    u.load(10, 2, TOPIC_TXN_BATCH_1)
    assert u.faults == []
    u.load(13, 2, BEGIN)
    assert u.faults == [LoaderFault(13, "Encountered BeginTransactionRecord while already in "
                                        "a transaction")]
    u.flush()
    assert u.count == 0


@pytest.mark.parametrize(("marker", "name"), [(END, "EndTransactionRecord"),
                                              (ABORT, "AbortTransactionRecord")])
def test_an_end_or_abort_without_a_begin_is_a_fault_and_the_batch_before_stays(
        marker: tuple[MetadataRecord, ...], name: str) -> None:
    """testUnexpectedEndTransaction, testUnexpectedAbortTransaction."""
    u = Updates()
    u.load(10, 2, TOPIC_NO_TXN_BATCH)
    u.load(13, 2, marker)
    assert u.faults == [LoaderFault(13, f"Encountered {name} without having seen a "
                                        f"BeginTransactionRecord")]
    u.flush()
    assert u.count == 1 and u.image.topic("bar") is not None and u.image.offset == 13


def test_two_transactions_in_one_batch() -> None:
    """testMultipleTransactionsInOneBatch: the first is emitted in the middle of the batch,
    at its End, not batch-aligned and completing no batch; the second at the flush."""
    u = Updates()
    u.load(10, 42, TOPIC_TXN_BATCH_1 + TOPIC_TXN_BATCH_2 + BEGIN + TOPIC_NO_TXN_BATCH + END)
    assert u.count == 1
    assert (u.image.offset, u.image.epoch, u.manifest.batch_aligned, u.manifest.batches) == \
        (15, 42, False, 0)
    assert u.image.topic("foo") is not None and u.image.topic("bar") is None
    u.flush()
    assert u.count == 2
    assert (u.image.offset, u.image.epoch, u.manifest.batch_aligned, u.manifest.batches) == \
        (20, 42, True, 1)
    assert u.image.topic("foo") is not None and u.image.topic("bar") is not None


def test_two_transactions_in_one_batch_among_noops() -> None:
    """testMultipleTransactionsInOneBatchesWithNoOp: a record before each Begin makes an
    image of what came before it."""
    u = Updates()
    records = (noops(1) + TOPIC_TXN_BATCH_1 + noops(1) + TOPIC_TXN_BATCH_2 + noops(1) + BEGIN
               + noops(1) + TOPIC_NO_TXN_BATCH + noops(1) + END + noops(1))
    u.load(10, 42, records)
    assert [image.offset for image, _ in u.images] == [10, 18]
    assert (u.image.epoch, u.manifest.batch_aligned, u.manifest.batches) == (42, False, 0)
    assert u.image.topic("foo") is not None and u.image.topic("bar") is None
    u.flush()
    assert u.count == 3 and (u.image.offset, u.image.epoch, u.manifest.batches) == (26, 42, 1)
    assert u.image.topic("foo") is not None and u.image.topic("bar") is not None


@pytest.mark.parametrize("abort", [True, False], ids=["abort", "end"])
def test_one_transaction_in_several_batches(abort: bool) -> None:
    """testOneTransactionInMultipleBatches: ended or aborted, the flush emits an image at the
    marker's offset that completes the three batches."""
    u = Updates()
    u.load(16, 2, BEGIN)
    u.load(17, 3, TOPIC_NO_TXN_BATCH)
    u.load(20, 4, ABORT if abort else END)
    assert u.count == 0
    u.flush()
    assert u.count == 1
    assert (u.image.offset, u.image.epoch, u.manifest.batches) == (20, 4, 3)
    assert (u.image.topic("bar") is None) is abort


def test_a_begin_at_the_start_of_a_batch_emits_what_the_previous_batch_left() -> None:
    """testTransactionAlignmentOnBatchBoundary."""
    u = Updates()
    u.load(10, 42, noops(3) + TOPIC_TXN_BATCH_1 + TOPIC_TXN_BATCH_2 + noops(3))
    assert u.count == 1
    assert (u.image.offset, u.manifest.batch_aligned, u.manifest.batches) == (12, False, 0)
    u.load(22, 42, BEGIN)
    assert u.count == 2
    assert (u.image.offset, u.manifest.batch_aligned, u.manifest.batches) == (21, True, 1)
    assert u.image.topic("foo") is not None
