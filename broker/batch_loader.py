"""MetadataBatchLoader: buffer records in a MetadataDelta, publish only whole transactions.

Kafka's five transaction states drive it:

- NO_TRANSACTION: records go into the delta; a commit publishes it.
- STARTED_TRANSACTION (a Begin was just read): if records came before it since
  the last publication, they are published first, up to the record before the
  Begin (an image that need not end on a batch boundary).
- CONTINUED_TRANSACTION: records are buffered across any number of commits.
- ENDED_TRANSACTION: the next flush publishes the whole transaction at once.
- ABORTED_TRANSACTION: the next flush publishes an empty change, so the image
  offset advances past the Abort while its content stays as before the Begin.

Where kraftsim differs from Kafka: the delta is discarded *at* the Abort.
Kafka only notes the state, so records that follow the Abort in the same
commit are replayed into the same delta and the aborted records are published
with them (edge case (a) of the semantics reference). Here they never are.

A Begin inside a transaction, or an End/Abort without one, is a fault naming
the offset; loading goes on with the next record (as on a Kafka broker, where
loader faults are not fatal).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import msgspec

from broker.mutations import BrokerMutation
from metadata.batch_shape import shape_of
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
)
from raft import Batch


class TransactionState(StrEnum):
    """Kafka's MetadataBatchLoader.TransactionState."""

    NO_TRANSACTION = "NO_TRANSACTION"
    STARTED_TRANSACTION = "STARTED_TRANSACTION"
    CONTINUED_TRANSACTION = "CONTINUED_TRANSACTION"
    ENDED_TRANSACTION = "ENDED_TRANSACTION"
    ABORTED_TRANSACTION = "ABORTED_TRANSACTION"


_IN_TRANSACTION = (TransactionState.STARTED_TRANSACTION, TransactionState.CONTINUED_TRANSACTION)


class LoaderFault(msgspec.Struct, frozen=True):
    """A record the loader could not apply; loading went on."""

    offset: int
    message: str


class Manifest(msgspec.Struct, frozen=True):
    """Where a published image comes from."""

    offset: int
    epoch: int
    batch_aligned: bool
    records: int
    from_snapshot: bool = False
    batches: int = 0
    """How many batches the change completes since the previous image (Kafka's
    ``LogDeltaManifest.numBatches``): a batch counts in the image that holds its last
    record, so an image cut inside the first batch counts none; 0 for a snapshot."""


Emit = Callable[[MetadataImage, Manifest], None]
"""Receives each image the batch loader completes."""


class MetadataBatchLoader:
    """Replays batches into a delta and emits images at transaction boundaries."""

    def __init__(self, image: MetadataImage, emit: Emit,
                 on_fault: Callable[[LoaderFault], None],
                 mutations: frozenset[BrokerMutation] = frozenset()) -> None:
        self.emit = emit
        self.on_fault = on_fault
        self.mutations = mutations
        self.largest_delta = 0
        self.reset_to_image(image)

    def reset_to_image(self, image: MetadataImage) -> None:
        """Start over from ``image``: a fresh delta, no transaction."""
        self.image = image
        self.delta = MetadataDelta(image)
        self.state = TransactionState.NO_TRANSACTION
        self.last_offset = image.offset
        self.last_epoch = image.epoch
        self.batches_since_emit = 0
        self.records_since_emit = 0

    def load_batch(self, batch: Batch) -> None:
        """Replay one committed batch (control batches only move the offset)."""
        self.last_epoch = batch.epoch
        records = batch.records
        base_offset = batch.base_offset
        index = 0
        for marker in (*shape_of(records).markers, len(records)):
            if index < marker:  # the records up to the next marker
                self._load_plain(records, index, marker, base_offset)
            if marker == len(records):
                break
            offset = base_offset + marker
            self._replay_marker(records[marker], offset)
            if self.state is TransactionState.STARTED_TRANSACTION and (
                    marker > 0 or self.batches_since_emit > 0):
                self._emit_before_begin(offset - 1, aligned=marker == 0)
            index = marker + 1
        self.last_offset = batch.last_offset
        self.last_epoch = batch.epoch
        self.batches_since_emit += 1

    def _load_plain(self, records: tuple[MetadataRecord, ...], start: int, stop: int,
                    base_offset: int) -> None:
        """``records[start:stop]``, none of them a transaction marker.

        The steps a record takes, taken once for all of them where they do not
        depend on the record: the first record moves the state out of STARTED,
        ENDED or ABORTED and no later one moves it; no emission before a Begin
        can happen; the delta only grows, so its largest size is its size at
        the end. A record that cannot apply is a fault; loading goes on with
        the next.
        """
        state = self.state
        if state is TransactionState.STARTED_TRANSACTION:
            self.state = TransactionState.CONTINUED_TRANSACTION
        elif state is TransactionState.ENDED_TRANSACTION or \
                state is TransactionState.ABORTED_TRANSACTION:
            self.state = TransactionState.NO_TRANSACTION
        delta = self.delta
        delta.replay_past_errors(records, start, stop, lambda index, error: self._fault(
            base_offset + index, f"Error loading metadata log record: {error}"))
        self.records_since_emit += stop - start
        if delta.records > self.largest_delta:
            self.largest_delta = delta.records

    def _emit_before_begin(self, offset: int, aligned: bool) -> None:
        image = self.delta.apply(offset, self.last_epoch)
        self._publish(image, offset, aligned)
        self.state = TransactionState.STARTED_TRANSACTION

    def _replay_marker(self, record: MetadataRecord, offset: int) -> None:
        """A Begin, End or Abort: the transaction state moves, or it is a fault."""
        state = self.state
        if isinstance(record, BeginTransactionRecord):
            if state in _IN_TRANSACTION:
                self._fault(offset, "Encountered BeginTransactionRecord while already in a "
                                    "transaction")
            else:
                self.state = TransactionState.STARTED_TRANSACTION
        elif isinstance(record, EndTransactionRecord):
            if state in _IN_TRANSACTION:
                self.state = TransactionState.ENDED_TRANSACTION
            else:
                self._fault(offset, "Encountered EndTransactionRecord without having seen a "
                                    "BeginTransactionRecord")
        else:
            assert isinstance(record, AbortTransactionRecord), record
            if state in _IN_TRANSACTION:
                self.state = TransactionState.ABORTED_TRANSACTION
                if not self.mutations & {BrokerMutation.LEAK_AFTER_ABORT,
                                         BrokerMutation.ABORT_KEEPS_DELTA}:
                    self.delta = MetadataDelta(self.image)
            else:
                self._fault(offset, "Encountered AbortTransactionRecord without having seen a "
                                    "BeginTransactionRecord")

    def _fault(self, offset: int, message: str) -> None:
        self.on_fault(LoaderFault(offset, message))

    def maybe_flush_batches(self) -> None:
        """End of a commit: publish unless a transaction is still open."""
        if self.batches_since_emit == 0:
            return
        state = self.state
        if state in _IN_TRANSACTION and \
                BrokerMutation.PUBLISH_EVERY_COMMIT not in self.mutations:
            return
        if state is TransactionState.ABORTED_TRANSACTION and \
                BrokerMutation.ABORT_KEEPS_DELTA not in self.mutations:
            image = self.image.with_provenance(self.last_offset, self.last_epoch)
        else:
            image = self.delta.apply(self.last_offset, self.last_epoch)
        self._publish(image, self.last_offset, aligned=True)

    def _publish(self, image: MetadataImage, offset: int, aligned: bool) -> None:
        manifest = Manifest(offset, image.epoch, aligned, self.records_since_emit,
                            batches=self.batches_since_emit)
        self.reset_to_image(image)
        self.emit(image, manifest)
