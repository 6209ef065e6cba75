"""Transaction coordinator state: Kafka's TransactionState, TransactionMetadata, log records.

The states carry Kafka's ``TransactionStatus`` ids. ``VALID_PREVIOUS`` is
Kafka's valid-previous-state table (trunk). Every change goes through
:meth:`TransactionMetadata.prepare_transition_to`, which sets the pending
state and returns a :class:`TxnTransitMetadata`; the coordinator appends it
to ``__transaction_state`` and only once the ISR has it calls
:meth:`TransactionMetadata.complete_transition_to` (Kafka's two-phase
in-memory update). ``PrepareEpochFence`` is only ever a pending state; it is
never written.

``TransactionLogValue`` is the record the coordinator writes, keyed by the
transactional id; a ``None`` value is a tombstone.
"""

from __future__ import annotations

from enum import IntEnum

import msgspec

MAX_EPOCH = 32767
"""Short.MAX_VALUE: the last producer epoch."""
EXHAUSTED_EPOCH = MAX_EPOCH - 1
"""From this epoch on an InitProducerId rotates to a new producer id (KIP-360)."""
NO_TIMEOUT_MS = 2**31 - 1
"""Int.MaxValue: the timeout a KIP-939 two-phase-commit transaction is stored with; the
coordinator never aborts it on timeout."""
TV2 = 2
"""ClientTransactionVersion of KIP-890 part 2 clients (EndTxn bumps the epoch)."""


class TransactionState(IntEnum):
    """Kafka's TransactionState with its TransactionStatus ids."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions shows."""
        return "".join(part.capitalize() for part in self.name.split("_"))


S = TransactionState
VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY,
                                S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}
"""Kafka's valid previous states of each state (trunk, TransactionState.java)."""
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})
"""States whose transactional id may expire."""

TopicPartition = tuple[str, int]


class IllegalTransition(Exception):
    """A transition Kafka's TransactionMetadata refuses (a coordinator bug)."""


class TxnTransitMetadata(msgspec.Struct, frozen=True):
    """The metadata a transition writes (Kafka's TxnTransitMetadata)."""

    producer_id: int
    prev_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    next_producer_epoch: int = -1
    """KIP-939: with NextProducerId, the identity the client holds (or gets) next."""
    client_transaction_version: int = 0


class TransactionLogValue(msgspec.Struct, frozen=True):
    """The ``__transaction_state`` value (v1 with tags PreviousProducerId, NextProducerId)."""

    ProducerId: int
    ProducerEpoch: int
    TransactionTimeoutMs: int
    TransactionStatus: int
    TransactionPartitions: list[tuple[str, int]]
    TransactionLastUpdateTimestampMs: int
    TransactionStartTimestampMs: int
    PreviousProducerId: int = -1
    NextProducerId: int = -1
    LastProducerEpoch: int = -1
    """Not in Kafka's record (KAFKA-20357): kept so that a retried InitProducerId after
    a coordinator failover is recognised."""
    ClientTransactionVersion: int = 0
    NextProducerEpoch: int = -1
    """KIP-939 (tag 3 in Kafka's schema): the epoch paired with NextProducerId."""


class TransactionLogRecord(msgspec.Struct, frozen=True):
    """One record of ``__transaction_state``: key and value (None: a tombstone)."""

    TransactionalId: str
    Value: TransactionLogValue | None


def encode_record(transactional_id: str, transit: TxnTransitMetadata | None) -> str:
    """The record's text as stored in a partition log entry."""
    value = None if transit is None else TransactionLogValue(
        transit.producer_id, transit.producer_epoch, transit.txn_timeout_ms, int(transit.state),
        sorted(transit.topic_partitions), transit.txn_last_update_timestamp,
        transit.txn_start_timestamp, transit.prev_producer_id, transit.next_producer_id,
        transit.last_producer_epoch, transit.client_transaction_version,
        transit.next_producer_epoch)
    return msgspec.json.encode(TransactionLogRecord(transactional_id, value)).decode()


def decode_record(text: str) -> TransactionLogRecord:
    """The record stored as ``text``."""
    return msgspec.json.decode(text, type=TransactionLogRecord)


class TransactionMetadata:
    """One transactional id's state at the coordinator (Kafka's TransactionMetadata)."""

    def __init__(self, transactional_id: str, producer_id: int, txn_timeout_ms: int,
                 now: int, producer_epoch: int = -1, last_producer_epoch: int = -1,
                 prev_producer_id: int = -1, state: TransactionState = S.EMPTY) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.prev_producer_id = prev_producer_id
        self.next_producer_id = -1
        self.next_producer_epoch = -1
        self.client_transaction_version = 0
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.topic_partitions: frozenset[TopicPartition] = frozenset()
        self.txn_start_timestamp = -1
        self.txn_last_update_timestamp = now
        self.pending_state: TransactionState | None = None
        self.has_failed_epoch_fence = False

    @classmethod
    def from_log(cls, transactional_id: str, value: TransactionLogValue) -> TransactionMetadata:
        """The metadata a loaded record describes."""
        meta = cls(transactional_id, value.ProducerId, value.TransactionTimeoutMs,
                   value.TransactionLastUpdateTimestampMs, value.ProducerEpoch,
                   value.LastProducerEpoch, value.PreviousProducerId,
                   TransactionState(value.TransactionStatus))
        meta.next_producer_id = value.NextProducerId
        meta.next_producer_epoch = value.NextProducerEpoch
        meta.client_transaction_version = value.ClientTransactionVersion
        meta.topic_partitions = frozenset((t, p) for t, p in value.TransactionPartitions)
        meta.txn_start_timestamp = value.TransactionStartTimestampMs
        return meta

    def transit(self, state: TransactionState, now: int, *, producer_id: int | None = None,
                producer_epoch: int | None = None, last_producer_epoch: int | None = None,
                txn_timeout_ms: int | None = None,
                topic_partitions: frozenset[TopicPartition] | None = None,
                txn_start_timestamp: int | None = None, prev_producer_id: int | None = None,
                next_producer_id: int | None = None, next_producer_epoch: int | None = None,
                client_transaction_version: int | None = None) -> TxnTransitMetadata:
        """Kafka's prepareTransitionTo: check, set the pending state, return the transit.

        The previous producer id defaults to the current one (Kafka as built); the
        KIP-890/KIP-939 paths pass the one their walkthroughs list.
        """
        if self.pending_state is not None:
            raise IllegalTransition(f"{self.transactional_id}: {self.pending_state.kafka_name} "
                                    f"is pending")
        if self.state not in VALID_PREVIOUS[state]:
            raise IllegalTransition(f"{self.transactional_id}: {self.state.kafka_name} -> "
                                    f"{state.kafka_name}")
        transit = TxnTransitMetadata(
            self.producer_id if producer_id is None else producer_id,
            self.producer_id if prev_producer_id is None else prev_producer_id,
            self.next_producer_id if next_producer_id is None else next_producer_id,
            self.producer_epoch if producer_epoch is None else producer_epoch,
            self.last_producer_epoch if last_producer_epoch is None else last_producer_epoch,
            self.txn_timeout_ms if txn_timeout_ms is None else txn_timeout_ms,
            state, self.topic_partitions if topic_partitions is None else topic_partitions,
            self.txn_start_timestamp if txn_start_timestamp is None else txn_start_timestamp,
            now, self.next_producer_epoch if next_producer_epoch is None else next_producer_epoch,
            self.client_transaction_version if client_transaction_version is None
            else client_transaction_version)
        if transit.producer_id < 0 or (transit.producer_epoch < 0 and state != S.DEAD):
            raise IllegalTransition(f"{self.transactional_id}: negative producer id or epoch")
        self.pending_state = state
        return transit

    def complete_transition_to(self, transit: TxnTransitMetadata) -> None:
        """Kafka's completeTransitionTo: the transit is in the log; take it."""
        if self.pending_state != transit.state or transit.state in (S.PREPARE_EPOCH_FENCE,
                                                                    S.DEAD):
            raise IllegalTransition(f"{self.transactional_id}: completing "
                                    f"{transit.state.kafka_name}, pending "
                                    f"{self.pending_state}")
        if transit.state == S.ONGOING and not (
                transit.producer_id == self.producer_id
                and transit.producer_epoch == self.producer_epoch
                and transit.topic_partitions >= self.topic_partitions):
            raise IllegalTransition(f"{self.transactional_id}: Ongoing changes the producer")
        if not self._producer_change_allowed(transit):
            raise IllegalTransition(f"{self.transactional_id}: {transit.state.kafka_name} "
                                    f"changes the producer")
        self.producer_id = transit.producer_id
        self.prev_producer_id = transit.prev_producer_id
        self.next_producer_id = transit.next_producer_id
        self.next_producer_epoch = transit.next_producer_epoch
        self.client_transaction_version = transit.client_transaction_version
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.txn_timeout_ms = transit.txn_timeout_ms
        self.state = transit.state
        self.topic_partitions = transit.topic_partitions
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None

    def _producer_change_allowed(self, transit: TxnTransitMetadata) -> bool:
        """Kafka's completeTransitionTo producer checks for Prepare* and Complete*.

        TV1 keeps the producer. Under TV2 Prepare* bumps the epoch once (not past
        MAX_EPOCH) and Complete* may move to the next producer id/epoch (KIP-890
        overflow, KIP-939 dual identity).
        """
        same = (transit.producer_id, transit.producer_epoch) == \
            (self.producer_id, self.producer_epoch)
        tv2 = transit.client_transaction_version >= TV2
        if transit.state == S.PREPARE_COMMIT:
            return same or (tv2 and transit.producer_id == self.producer_id
                            and transit.producer_epoch == min(self.producer_epoch + 1,
                                                              MAX_EPOCH))
        if transit.state == S.PREPARE_ABORT:  # also the epoch fence
            return transit.producer_id == self.producer_id
        if transit.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            return same or (tv2 and (transit.producer_id, transit.producer_epoch) ==
                            (self.next_producer_id, self.next_producer_epoch))
        return True

    @property
    def two_phase_commit(self) -> bool:
        """A KIP-939 2PC transaction: stored without a timeout."""
        return self.txn_timeout_ms == NO_TIMEOUT_MS

    def fail_transition(self) -> None:
        """The append failed: forget the pending state (Kafka's TransactionStateManager)."""
        self.pending_state = None
