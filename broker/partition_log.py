"""PartitionLog: one replica's log of a partition, its leader epochs and producer state.

The log is a list of :class:`LogEntry` from offset 0 (no retention); the
log end offset (LEO) is its length. The leader-epoch cache maps each leader
epoch to its first offset (Kafka's ``LeaderEpochFileCache``) so that
``end_offset_for_epoch`` answers a follower's divergence check
(OffsetsForLeaderEpoch, KIP-101/KIP-279). The high watermark never goes past
the LEO, and down only with a truncation below it (after an unclean election).

Producer state (Kafka's ``ProducerStateManager``): per producer id, its epoch
and the metadata of its last 5 batches (first and last sequence, offsets). A
leader checks each idempotent batch against it:

- a batch equal to one of the last 5 is a duplicate: nothing is written, the
  original offsets are returned;
- an older producer epoch is INVALID_PRODUCER_EPOCH;
- a new epoch must start at sequence 0; a producer with no state may start at
  any sequence (Kafka's checkSequence accepts any sequence when it knows no
  epoch for the producer, e.g. after its batches were truncated away: since
  KIP-360 a broker no longer answers UNKNOWN_PRODUCER_ID);
- otherwise the first sequence must follow the last one (Integer.MAX_VALUE
  is followed by 0), else OUT_OF_ORDER_SEQUENCE_NUMBER;
- a non-transactional batch of a producer whose transaction is open on this
  partition is INVALID_TXN_STATE.

Followers and truncation rebuild the same state from the entries, so a new
leader knows every producer whose batches it holds.

Producer ids expire (Kafka's ``removeExpiredProducers``, run every
producer.id.expiration.check.interval.ms by whoever drives the broker): a
producer with no transaction open here whose last batch or marker was
appended at least producer.id.expiration.ms ago is forgotten, on leaders and
followers alike; its next batch is then taken at any sequence, as from a new
producer. A batch's time is the leader's clock when it appended it (the
simulated producers' CreateTime would be the same clock, one hop earlier). A
truncation rebuilds the state and applies the last expiration again, so that
a forgotten producer stays forgotten.

Transactions (KIP-98): transactional records open a producer's transaction
at their first offset; a control record (COMMIT or ABORT marker, written by
WriteTxnMarkers) closes it. ``txns`` (:class:`broker.txn.log_state.TxnLogState`)
keeps the ongoing transactions, the completed ones not yet below the HW and
the abort index, from which the first unstable offset and the last stable
offset (LSO) follow.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

import immutables
import msgspec

from broker.txn.log_state import TxnLogState
from broker.txn.verification import SENTINEL, VerificationGuard, VerificationStateEntry

MAX_BATCHES_PER_PRODUCER = 5
"""Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN."""
SEQUENCE_MODULUS = 1 << 31
"""Sequences wrap from Integer.MAX_VALUE to 0 (Kafka's DefaultRecordBatch.incrementSequence)."""


def sequence_after(sequence: int, increment: int) -> int:
    """``sequence + increment``, wrapped past Integer.MAX_VALUE to 0 as Kafka does."""
    return (sequence + increment) % SEQUENCE_MODULUS


class LogEntry(msgspec.Struct, frozen=True, gc=False):
    """One record: written by the leader of ``leader_epoch``; idempotent ones carry the
    producer id, epoch, the batch's first sequence and the record's sequence."""

    offset: int
    leader_epoch: int
    value: str
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    sequence: int = -1
    batch_size: int = 1
    transactional: bool = False
    control: int = -1
    """-1: a data record; a control record (transaction marker): 0 ABORT, 1 COMMIT."""
    coordinator_epoch: int = -1
    timestamp: int = -1
    """When the leader appended it (simulated ms); -1: unknown."""


class BatchMetadata(msgspec.Struct, frozen=True, gc=False):
    """Where one idempotent batch went."""

    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int


class ProducerEntry(msgspec.Struct, gc=False):
    """One producer's epoch, last batches and the time of its last batch or marker."""

    epoch: int
    batches: list[BatchMetadata]
    last_timestamp: int = -1


class ActiveProducer(msgspec.Struct, frozen=True, gc=False):
    """One producer a partition knows, as DescribeProducers answers it (Kafka's
    ProducerState of the admin client)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    """The last sequence of its last batch; -1: none (only markers, or no sequences)."""
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int
    """The first offset of its transaction open here; -1: none."""


class SequenceError(Exception):
    """An idempotent batch refused with a Kafka error name."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


_NO_ENTRIES: Sequence[LogEntry] = ()
_NO_EPOCHS: Sequence[tuple[int, int]] = ()
_NO_PRODUCERS: Mapping[int, ProducerEntry] = immutables.Map()
_NO_COORDINATOR_EPOCHS: Mapping[int, int] = immutables.Map()


class PartitionLog:
    """One replica's log; see the module docs.

    An empty log shares its empty containers with every other empty log and
    has no transaction state until it is asked for (a broker hosts a log per
    replica, most of them idle): each is made on the first write.
    """

    __slots__ = (
        "_expiry",
        "_txns",
        "check_sequences",
        "coordinator_epochs",
        "entries",
        "epoch_starts",
        "high_watermark",
        "producers",
        "truncations",
        "verifying",
    )

    def __init__(self, check_sequences: bool = True) -> None:
        self.entries: Sequence[LogEntry] = _NO_ENTRIES
        self.high_watermark = 0
        self.epoch_starts: Sequence[tuple[int, int]] = _NO_EPOCHS  # (leader epoch, first)
        self.producers: Mapping[int, ProducerEntry] = _NO_PRODUCERS
        self.truncations = 0
        self.check_sequences = check_sequences
        self._txns: TxnLogState | None = None
        self.coordinator_epochs: Mapping[int, int] = _NO_COORDINATOR_EPOCHS  # pid -> marker's
        self._expiry: tuple[int, int] | None = None  # the last expiration: (now, expiration ms)
        self.verifying: dict[int, VerificationStateEntry] | None = None
        """KIP-890: producer id -> its transaction verification under way (made when first
        needed; see :mod:`broker.txn.verification`)."""

    @property
    def txns(self) -> TxnLogState:
        """The transaction state (see :mod:`broker.txn.log_state`), made when first asked."""
        if self._txns is None:
            self._txns = TxnLogState()
        return self._txns

    def _own_producers(self) -> dict[int, ProducerEntry]:
        if not isinstance(self.producers, dict):
            self.producers = {}
        return self.producers

    def _own_coordinator_epochs(self) -> dict[int, int]:
        if not isinstance(self.coordinator_epochs, dict):
            self.coordinator_epochs = {}
        return self.coordinator_epochs

    @property
    def end_offset(self) -> int:
        """The log end offset (LEO)."""
        return len(self.entries)

    @property
    def last_epoch(self) -> int:
        """The leader epoch of the last entry (-1: empty)."""
        return self.entries[-1].leader_epoch if self.entries else -1

    def update_high_watermark(self, offset: int) -> None:
        """Raise the HW towards ``offset`` (not down, never past the LEO)."""
        self.high_watermark = max(self.high_watermark, min(offset, self.end_offset))

    # ------------------------------------------------------------------ epochs
    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= ``epoch``, its end offset), Kafka's OffsetsForLeaderEpoch.

        The end offset is the first offset of the next higher epoch, or the LEO.
        As Kafka's LeaderEpochFileCache.endOffsetFor: an epoch below the first
        known one gives (``epoch``, that first epoch's start offset); UNDEFINED_EPOCH
        (-1) or an empty cache gives (-1, -1).
        """
        if epoch == -1 or not self.epoch_starts:
            return -1, -1
        i = bisect.bisect_right(self.epoch_starts, (epoch, 1 << 62)) - 1
        if i < 0:
            return epoch, self.epoch_starts[0][1]
        found = self.epoch_starts[i][0]
        end = self.epoch_starts[i + 1][1] if i + 1 < len(self.epoch_starts) else self.end_offset
        return found, end

    def _note_epoch(self, epoch: int, offset: int) -> None:
        starts = self.epoch_starts
        if not starts or starts[-1][0] < epoch:
            if not isinstance(starts, list):
                starts = self.epoch_starts = []
            starts.append((epoch, offset))

    # ------------------------------------------------------------------ appends
    def check_batch(self, producer_id: int, producer_epoch: int, first_sequence: int,
                    count: int, transactional: bool = False,
                    verification: VerificationGuard | None = None) -> tuple[int, int] | None:
        """The offsets of the duplicate it is, None for a new batch; raises SequenceError.

        ``verification``: None when the append needs no verification (KIP-890 off, or
        not a client's append); else the guard the append's verification got
        (:data:`~broker.txn.verification.SENTINEL`: none), which must be the producer's
        current guard here for a transactional batch that opens a transaction, else
        INVALID_TXN_STATE (Kafka's UnifiedLog append).
        """
        if not self.check_sequences:
            return None
        entry = self.producers.get(producer_id)
        if first_sequence < 0:  # NO_SEQUENCE (a TxnOffsetCommit): the epoch check only
            self._check_verified(producer_id, producer_epoch, transactional, verification)
            if entry is not None and producer_epoch < entry.epoch:
                raise SequenceError("INVALID_PRODUCER_EPOCH",
                                    f"epoch {producer_epoch} is older than {entry.epoch}")
            self._check_txn_state(producer_id, transactional)
            return None
        last_sequence = sequence_after(first_sequence, count - 1)
        if entry is not None and producer_epoch == entry.epoch:
            for batch in entry.batches:
                if batch.first_sequence == first_sequence and \
                        batch.last_sequence == last_sequence:
                    return batch.first_offset, batch.last_offset
        self._check_verified(producer_id, producer_epoch, transactional, verification)
        if entry is not None and producer_epoch < entry.epoch:
            raise SequenceError("INVALID_PRODUCER_EPOCH",
                                f"epoch {producer_epoch} is older than {entry.epoch}")
        verifying = self.verifying.get(producer_id) if self.verifying is not None else None
        if verifying is not None and first_sequence > verifying.lowest_sequence:
            raise SequenceError("OUT_OF_ORDER_SEQUENCE_NUMBER",
                                f"sequence {first_sequence} is above {verifying.lowest_sequence}, "
                                f"the lowest one seen while verifying")
        # without state (entry None) any first sequence is taken, as Kafka's checkSequence does
        if entry is not None and producer_epoch > entry.epoch:
            if first_sequence != 0:
                raise SequenceError("OUT_OF_ORDER_SEQUENCE_NUMBER",
                                    f"new epoch {producer_epoch} must start at sequence 0")
        elif entry is not None and first_sequence != sequence_after(
                last := entry.batches[-1].last_sequence if entry.batches else -1, 1):
            # a marker of a bumped epoch (TV2) leaves no batches: sequence 0 follows (Kafka)
            raise SequenceError("OUT_OF_ORDER_SEQUENCE_NUMBER",
                                f"sequence {first_sequence} does not follow {last}")
        self._check_txn_state(producer_id, transactional)
        return None

    def has_ongoing_transaction(self, producer_id: int, epoch: int | None = None) -> bool:
        """A transaction of ``producer_id`` is open on this partition (data, no marker yet);
        with ``epoch``, one of that producer epoch (under transaction version 2 each
        transaction has its own epoch, so a batch of the next one does not belong to a
        transaction whose marker has not landed yet)."""
        if self._txns is None or producer_id not in self._txns.ongoing:
            return False
        entry = self.producers.get(producer_id)
        return epoch is None or entry is None or entry.epoch == epoch

    def verification_guard(self, producer_id: int) -> VerificationGuard:
        """The guard of the producer's verification under way, else SENTINEL."""
        entry = self.verifying.get(producer_id) if self.verifying is not None else None
        return entry.guard if entry is not None else SENTINEL

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int,
                                             epoch: int, now: int) -> VerificationGuard:
        """SENTINEL if the producer's transaction is open here (nothing to verify); else
        its verification state, made at ``now`` or updated with ``sequence`` and
        ``epoch``, and that state's guard (Kafka's maybeStartTransactionVerification)."""
        if self.has_ongoing_transaction(producer_id, epoch):
            return SENTINEL
        if self.verifying is None:
            self.verifying = {}
        entry = self.verifying.get(producer_id)
        if entry is None:
            entry = self.verifying[producer_id] = VerificationStateEntry(now, sequence, epoch)
        entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry.guard

    def _check_verified(self, producer_id: int, producer_epoch: int, transactional: bool,
                        verification: VerificationGuard | None) -> None:
        if verification is not None and transactional and \
                not self.has_ongoing_transaction(producer_id, producer_epoch) and \
                not self.verification_guard(producer_id).verify(verification):
            raise SequenceError("INVALID_TXN_STATE",
                                f"producer {producer_id}'s batch is not part of an ongoing "
                                f"transaction (not verified)")

    def _check_txn_state(self, producer_id: int, transactional: bool) -> None:
        """Kafka's appendDataBatch: no plain write inside the producer's open transaction."""
        if not transactional and self._txns is not None and producer_id in self._txns.ongoing:
            raise SequenceError("INVALID_TXN_STATE",
                                f"producer {producer_id} has a transaction open here; "
                                f"expected a transactional write")

    def append_as_leader(self, values: list[str], leader_epoch: int, producer_id: int = -1,
                         producer_epoch: int = -1, first_sequence: int = -1,
                         transactional: bool = False, timestamp: int = -1) -> tuple[int, int]:
        """Append one batch at ``timestamp`` (the leader's clock); returns its (first, last)
        offset."""
        first = self.end_offset
        n = len(values)
        self.append_entries([LogEntry(first + i, leader_epoch, value, producer_id,
                                      producer_epoch, first_sequence,
                                      sequence_after(first_sequence, i)
                                      if first_sequence >= 0 else -1, n, transactional,
                                      timestamp=timestamp)
                             for i, value in enumerate(values)])
        return first, first + n - 1

    def check_marker(self, producer_id: int, producer_epoch: int,
                     coordinator_epoch: int) -> None:
        """Raise SequenceError if a marker must be refused (Kafka's appendEndTxnMarker).

        INVALID_PRODUCER_EPOCH for an epoch older than the producer's,
        TRANSACTION_COORDINATOR_FENCED for an older coordinator epoch.
        """
        entry = self.producers.get(producer_id)
        if entry is not None and producer_epoch < entry.epoch:
            raise SequenceError("INVALID_PRODUCER_EPOCH",
                                f"marker epoch {producer_epoch} is older than {entry.epoch}")
        if coordinator_epoch < self.coordinator_epochs.get(producer_id, -1):
            raise SequenceError("TRANSACTION_COORDINATOR_FENCED",
                                f"coordinator epoch {coordinator_epoch} is older than "
                                f"{self.coordinator_epochs[producer_id]}")

    def append_marker(self, leader_epoch: int, producer_id: int, producer_epoch: int,
                      commit: bool, coordinator_epoch: int, timestamp: int = -1) -> int:
        """Append a COMMIT or ABORT control record as leader at ``timestamp``; returns its
        offset."""
        offset = self.end_offset
        self.append_entries([LogEntry(offset, leader_epoch, "COMMIT" if commit else "ABORT",
                                      producer_id, producer_epoch, transactional=True,
                                      control=1 if commit else 0,
                                      coordinator_epoch=coordinator_epoch,
                                      timestamp=timestamp)])
        return offset

    def append_entries(self, entries: list[LogEntry]) -> None:
        """Append entries that continue the log (a follower's fetch, or the leader's batch).

        All or nothing, as Kafka's follower append validates the whole fetched set before
        it appends any of it: entries whose offsets do not run on from the LEO one by one
        (below it, past it, or out of order: Kafka's UnexpectedAppendOffsetException and
        OffsetsOutOfOrderException) are a ValueError, and the log is left as it was."""
        if not entries:
            return
        log = self.entries
        end = len(log)
        for i, entry in enumerate(entries):
            if entry.offset != end + i:
                raise ValueError(f"entry at {entry.offset} does not follow LEO {end + i}")
        if not isinstance(log, list):
            log = []
            self.entries = log
        for entry in entries:
            log.append(entry)
            self._note_epoch(entry.leader_epoch, entry.offset)
            self._track_producer(entry)

    def _producer(self, entry: LogEntry) -> ProducerEntry:
        """The state of ``entry``'s producer, a fresh one at a higher epoch; its time is
        ``entry``'s."""
        state = self.producers.get(entry.producer_id)
        if state is None or entry.producer_epoch > state.epoch:
            state = ProducerEntry(entry.producer_epoch, [])
            self._own_producers()[entry.producer_id] = state
        state.last_timestamp = entry.timestamp
        return state

    def _track_producer(self, entry: LogEntry) -> None:
        if entry.transactional and self.verifying:  # the data or marker ends a verification
            self.verifying.pop(entry.producer_id, None)
        if entry.control >= 0:
            self._producer(entry)
            self._own_coordinator_epochs()[entry.producer_id] = entry.coordinator_epoch
            self.txns.on_marker(entry.producer_id, entry.offset, entry.control == 1)
            return
        if entry.transactional:
            self.txns.on_data(entry.producer_id, entry.offset)
        if entry.producer_id >= 0 and entry.base_sequence < 0:  # NO_SEQUENCE: the epoch only
            self._producer(entry)
            return
        if entry.producer_id < 0 or \
                entry.sequence != sequence_after(entry.base_sequence, entry.batch_size - 1):
            return  # state changes once per batch, at its last record
        state = self._producer(entry)
        state.batches.append(BatchMetadata(entry.base_sequence, entry.sequence,
                                           entry.offset - entry.batch_size + 1, entry.offset))
        del state.batches[:-MAX_BATCHES_PER_PRODUCER]

    def active_producers(self) -> list[ActiveProducer]:
        """Every producer this log knows (Kafka's UnifiedLog.activeProducers), in the order
        they were first seen."""
        ongoing = self._txns.ongoing if self._txns is not None else {}
        return [ActiveProducer(pid, state.epoch,
                               state.batches[-1].last_sequence if state.batches else -1,
                               state.last_timestamp, self.coordinator_epochs.get(pid, -1),
                               ongoing.get(pid, -1))
                for pid, state in self.producers.items()]

    def remove_expired_producers(self, now: int, expiration_ms: int) -> list[int]:
        """Forget every producer with no transaction open here whose last batch or marker is
        at least ``expiration_ms`` old at ``now`` (Kafka's removeExpiredProducers, with
        producer.id.expiration.ms); returns their ids, in the order they were first seen."""
        self._expiry = (now, expiration_ms)
        ongoing = self._txns.ongoing if self._txns is not None else {}
        expired = [pid for pid, state in self.producers.items()
                   if pid not in ongoing and now - state.last_timestamp >= expiration_ms]
        if expired:
            producers, epochs = self._own_producers(), self._own_coordinator_epochs()
            for pid in expired:
                del producers[pid]
                epochs.pop(pid, None)
        if self.verifying:
            for pid in [p for p, v in self.verifying.items()
                        if now - v.timestamp >= expiration_ms]:
                del self.verifying[pid]
        return expired

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at ``offset`` and above.

        Below the HW too, which then comes down to the new log end (Kafka's
        UnifiedLog.truncateTo). A follower is asked to go below its HW only after an
        unclean election, whose leader may lack records the old leader committed; it
        must then drop them to follow the new leader at all. A negative offset
        (UNDEFINED_EPOCH_OFFSET) is a ValueError, as Kafka's UnifiedLog.truncateTo
        refuses it; nothing is dropped.
        """
        if offset < 0:
            raise ValueError(f"cannot truncate to the negative offset {offset}")
        if offset >= self.end_offset:
            return
        self.high_watermark = min(self.high_watermark, offset)
        entries = self.entries
        if isinstance(entries, list):  # a non-empty log's: its own
            del entries[offset:]
        self.truncations += 1
        self.epoch_starts = [(e, s) for e, s in self.epoch_starts if s < offset]
        self.producers = {}
        self.coordinator_epochs = {}
        self._txns = TxnLogState(self._txns.ignore_open) if self._txns is not None else None
        for entry in self.entries:
            self._track_producer(entry)
        if self._expiry is not None:
            self.remove_expired_producers(*self._expiry)

    def read(self, offset: int, max_records: int, up_to: int | None = None) -> list[LogEntry]:
        """Entries from ``offset``, at most ``max_records``, below ``up_to`` (default LEO)."""
        end = self.end_offset if up_to is None else min(up_to, self.end_offset)
        return list(self.entries[offset:min(end, offset + max_records)])
