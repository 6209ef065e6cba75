"""The pre-registration proposal (seed 002) as an opt-in protocol variant of the coordinator.

Three changes to the classic (KIP-98, TV1) protocol, as the seed states them:

- **Pre-registered output partitions and group**: one AddPartitionsToTxn at
  ``beginTransaction`` carries every output partition and a nullable
  ``GroupId``; the group stands for its ``__consumer_offsets`` partition, as
  AddOffsetsToTxn would add it, so no AddOffsetsToTxn follows.
- **Blocking begin**: while the previous transaction of the id is completing
  (PrepareCommit / PrepareAbort, or a state change pending), that
  AddPartitionsToTxn is not bounced with CONCURRENT_TRANSACTIONS; its
  callback waits in the coordinator's :class:`BeginPurgatory` and the request
  runs again once the markers are written and the Complete* record is
  durable. A coordinator that loses the partition answers the waiting
  requests NOT_COORDINATOR (the client finds the new one and sends again); a
  stopped broker answers them as a lost connection.
- **EndTxn with the written partitions**: ``Topics`` lists the partitions the
  producer actually wrote, or is null for "all registered". Markers go only to
  registered partitions that were written, plus the registered group's
  ``__consumer_offsets`` partition (the message has no field for it). A
  written partition that was never registered is INVALID_REQUEST.

The seed bumps AddPartitionsToTxn to v2 and EndTxn to v3; Kafka uses those
numbers for other things (reference 1.12), so here the messages carry the
version tag :data:`PRE_REGISTRATION_VERSION` instead of a number. A broker
without the variant (``TxnCoordinatorConfig.pre_registration`` false)
answers UNSUPPORTED_VERSION, as the seed's compatibility plan asks.
``TxnCoordinatorConfig.block_classic_begin`` applies the blocking begin to
classic AddPartitionsToTxn too (the seed's compatibility rule: "applied to
both old and new producers"); it is off by default so that classic stays
Kafka's as-built behaviour for side-by-side measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import msgspec

from broker.txn.state import TopicPartition, TransactionState

if TYPE_CHECKING:
    from broker.txn.coordinator import TransactionCoordinator

S = TransactionState
PRE_REGISTRATION_VERSION = "pre-registration-1"
"""The variant's version tag (not a Kafka wire version number)."""
GROUP_METADATA_TOPIC = "__consumer_offsets"
"""Kafka's internal topic of committed offsets."""
Topics = tuple[tuple[str, tuple[int, ...]], ...]
"""``[{Name, Partitions}]`` as sorted (name, partitions) pairs."""


def to_topics(partitions: frozenset[TopicPartition] | set[TopicPartition]) -> Topics:
    """The ``Topics`` field of a set of partitions (sorted by name, then partition)."""
    names = sorted({t for t, _ in partitions})
    return tuple((n, tuple(sorted(p for t, p in partitions if t == n))) for n in names)


def from_topics(topics: Topics) -> frozenset[TopicPartition]:
    """The partitions a ``Topics`` field names."""
    return frozenset((name, p) for name, parts in topics for p in parts)


class AddPartitionsToTxnPreRegRequest(msgspec.Struct, frozen=True):
    """AddPartitionsToTxn of the variant: the seed's v2 fields, with ``GroupId``."""

    version: ClassVar[str] = PRE_REGISTRATION_VERSION
    TransactionalId: str
    ProducerId: int
    ProducerEpoch: int
    GroupId: str | None
    Topics: Topics


class EndTxnPreRegRequest(msgspec.Struct, frozen=True):
    """EndTxn of the variant: the seed's v3 fields, ``Topics`` null for all registered."""

    version: ClassVar[str] = PRE_REGISTRATION_VERSION
    TransactionalId: str
    ProducerId: int
    ProducerEpoch: int
    Committed: bool
    Topics: Topics | None


class _Waiter(msgspec.Struct):
    """A held begin's callbacks (not frozen: it holds closures, which a fork must copy)."""

    retry: Callable[[int], None]
    fail: Callable[[str], None]


class BeginPurgatory:
    """AddPartitionsToTxn requests waiting for their id's previous transaction to complete."""

    def __init__(self) -> None:
        self.waiting: dict[str, list[_Waiter]] = {}

    def hold(self, transactional_id: str, retry: Callable[[int], None],
             fail: Callable[[str], None]) -> None:
        """Park a request: ``retry(now)`` runs it again, ``fail(error)`` answers it."""
        self.waiting.setdefault(transactional_id, []).append(_Waiter(retry, fail))

    def wake(self, transactional_id: str, now: int) -> None:
        """The id's state changed: run its waiting requests again (they may park again)."""
        for waiter in self.waiting.pop(transactional_id, []):
            waiter.retry(now)

    def fail(self, transactional_ids: list[str], error: str) -> None:
        """Answer the waiting requests of ``transactional_ids`` with ``error``."""
        for txn_id in sorted(transactional_ids):
            for waiter in self.waiting.pop(txn_id, []):
                waiter.fail(error)

    def __len__(self) -> int:
        return sum(len(w) for w in self.waiting.values())


def offsets_partition(group_id: str, num_partitions: int) -> TopicPartition:
    """The ``__consumer_offsets`` partition of a group (Kafka's partitionFor)."""
    from broker.txn.coordinator import partition_for
    return GROUP_METADATA_TOPIC, partition_for(group_id, num_partitions)


def add_partitions(c: TransactionCoordinator, request: AddPartitionsToTxnPreRegRequest,
                   now: int, callback: Callable[[str], None]) -> None:
    """The variant's AddPartitionsToTxn: the classic checks, blocking instead of bouncing."""
    txn_id = request.TransactionalId
    if not c.config.pre_registration:
        callback("UNSUPPORTED_VERSION")
        return
    if not txn_id:
        callback("INVALID_REQUEST")
        return
    if request.GroupId == "":
        callback("INVALID_GROUP_ID")
        return
    if c.partition_of(txn_id) not in c.owned:
        callback("NOT_COORDINATOR")
        return
    meta = c.txns.get(txn_id)
    if meta is None:
        callback("INVALID_PRODUCER_ID_MAPPING")
        return

    def block() -> None:
        c.purgatory.hold(txn_id, lambda later: add_partitions(c, request, later, callback),
                         callback)

    if meta.pending_state is not None:
        block()
    elif request.ProducerId != meta.producer_id:
        callback("INVALID_PRODUCER_ID_MAPPING")
    elif request.ProducerEpoch != meta.producer_epoch:
        callback("PRODUCER_FENCED")
    elif meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        block()
    else:
        partitions = from_topics(request.Topics)
        if request.GroupId is not None:
            partitions |= {offsets_partition(request.GroupId, c.offsets_partition_count())}
        if meta.state == S.ONGOING and partitions <= meta.topic_partitions:
            callback("NONE")
            return
        start = meta.txn_start_timestamp if meta.state == S.ONGOING else now
        transit = meta.transit(S.ONGOING, now,
                               topic_partitions=meta.topic_partitions | partitions,
                               txn_start_timestamp=start)
        c.write(meta, transit, lambda: callback("NONE"), callback)


def end_txn(c: TransactionCoordinator, request: EndTxnPreRegRequest, now: int,
            callback: Callable[[str], None]) -> None:
    """The variant's EndTxn: the classic EndTxn, markers only where the producer wrote."""
    txn_id = request.TransactionalId
    if not c.config.pre_registration:
        callback("UNSUPPORTED_VERSION")
        return
    if not txn_id:
        callback("INVALID_REQUEST")
        return
    if c.partition_of(txn_id) not in c.owned:
        callback("NOT_COORDINATOR")
        return
    meta = c.txns.get(txn_id)
    if meta is None or meta.producer_id != request.ProducerId:
        callback("INVALID_PRODUCER_ID_MAPPING")
        return
    marked: frozenset[TopicPartition] | None = None
    if request.Topics is not None and meta.state == S.ONGOING and \
            meta.pending_state is None and request.ProducerEpoch == meta.producer_epoch:
        written = from_topics(request.Topics)
        if not written <= meta.topic_partitions:
            callback("INVALID_REQUEST")
            return
        marked = frozenset(tp for tp in meta.topic_partitions
                           if tp in written or tp[0] == GROUP_METADATA_TOPIC)
    c.end(meta, request.Committed, request.ProducerEpoch, True, now, callback, marked)
