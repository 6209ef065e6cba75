"""ListTransactions and DescribeTransactions at one transaction coordinator.

ListTransactions (KIP-664) filters by state names, producer ids and, since
v1, ``DurationFilter`` (KIP-994: only transactions running longer than that
many milliseconds). KIP-939 asked for the same filter as
``RunningLongerThanMs``; Kafka shipped it as KIP-994's field, and kraftsim
uses Kafka's name. Kafka's rule: a transaction is listed when
``now - txnStartTimestamp > DurationFilter``; Empty and Complete* keep the
start timestamp of their last transaction (-1 before the first), so they pass
the filter too unless a state filter excludes them.

DescribeTransactions answers per transactional id: its state, timeout, start
time, producer id and epoch and partitions, or INVALID_REQUEST (an empty id),
NOT_COORDINATOR / TRANSACTIONAL_ID_NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from broker.txn.state import TransactionState

if TYPE_CHECKING:
    from broker.txn.coordinator import TransactionCoordinator

STATE_NAMES = {s.kafka_name: s for s in TransactionState}
"""DescribeTransactions' state names."""


class TransactionListing(msgspec.Struct, frozen=True):
    """One entry of ListTransactionsResponse.TransactionStates."""

    TransactionalId: str
    ProducerId: int
    TransactionState: str


class ListTransactionsResult(msgspec.Struct, frozen=True):
    """ListTransactionsResponse of one coordinator."""

    ErrorCode: str
    UnknownStateFilters: list[str]
    TransactionStates: list[TransactionListing]


class TransactionDescription(msgspec.Struct, frozen=True):
    """One entry of DescribeTransactionsResponse.TransactionStates."""

    ErrorCode: str
    TransactionalId: str
    TransactionState: str = ""
    TransactionTimeoutMs: int = 0
    TransactionStartTimeMs: int = -1
    ProducerId: int = -1
    ProducerEpoch: int = -1
    Topics: list[tuple[str, list[int]]] = msgspec.field(default_factory=list)


def list_transactions(coordinator: TransactionCoordinator, now: int,
                      states_filter: Sequence[str] = (),
                      producer_id_filter: Sequence[int] = (),
                      duration_filter_ms: int = -1) -> ListTransactionsResult:
    """The transactions this coordinator owns that pass every given filter (Dead never)."""
    unknown = sorted(name for name in states_filter if name not in STATE_NAMES)
    states = {STATE_NAMES[n] for n in states_filter if n in STATE_NAMES}
    listed = []
    for txn_id in sorted(coordinator.txns):
        meta = coordinator.txns[txn_id]
        if meta.state == TransactionState.DEAD \
                or (producer_id_filter and meta.producer_id not in producer_id_filter) \
                or (states_filter and meta.state not in states) \
                or (duration_filter_ms >= 0
                    and now - meta.txn_start_timestamp <= duration_filter_ms):
            continue
        listed.append(TransactionListing(txn_id, meta.producer_id, meta.state.kafka_name))
    return ListTransactionsResult("NONE", unknown, listed)


def describe_transactions(coordinator: TransactionCoordinator,
                          transactional_ids: Sequence[str]) -> list[TransactionDescription]:
    """DescribeTransactions for ``transactional_ids`` in request order."""
    out = []
    for txn_id in transactional_ids:
        if not txn_id:
            out.append(TransactionDescription("INVALID_REQUEST", txn_id))
            continue
        if coordinator.partition_of(txn_id) not in coordinator.owned:
            out.append(TransactionDescription("NOT_COORDINATOR", txn_id))
            continue
        meta = coordinator.txns.get(txn_id)
        if meta is None or meta.state == TransactionState.DEAD:
            out.append(TransactionDescription("TRANSACTIONAL_ID_NOT_FOUND", txn_id))
            continue
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(meta.topic_partitions):
            topics.setdefault(topic, []).append(partition)
        out.append(TransactionDescription(
            "NONE", txn_id, meta.state.kafka_name, meta.txn_timeout_ms,
            meta.txn_start_timestamp, meta.producer_id, meta.producer_epoch,
            sorted(topics.items())))
    return out
