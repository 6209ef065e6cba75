"""GroupCoordinator: the offsets side of Kafka's group coordinator on one broker (KIP-98, KIP-447).

The coordinator of a consumer group is the leader of ``__consumer_offsets``
partition ``abs(javaHashCode(group.id)) % offsets.topic.num.partitions``
(FindCoordinator(GROUP)). Offsets live in that replicated partition as
``OffsetCommitKey``/``OffsetCommitValue`` records, one per input partition:

- **OffsetCommit** (a plain consumer) appends non-transactional records with
  acks=all; they are committed once below the high watermark.
- **TxnOffsetCommit** (a transactional producer's ``sendOffsetsToTransaction``,
  after AddOffsetsToTxn put this partition into its transaction) appends them
  as *transactional* records of the producer's id and epoch. They stay
  *pending* for that producer until a WriteTxnMarkers control record for the
  producer reaches this partition: COMMIT materializes them, ABORT discards
  them (Kafka's ``GroupMetadataManager``: ``pendingTransactionalOffsetCommits``,
  ``handleTxnCompletion``). A pending offset replaces the committed one only if
  its record is newer, as Kafka's ``completePendingTxnOffsetCommit`` does.
- **OffsetFetch** returns committed offsets only (-1 for none). With
  ``require_stable`` (KIP-447), a partition with a pending transactional
  commit answers ``UNSTABLE_OFFSET_COMMIT`` and the consumer retries.

The materialized state is a function of the partition's log: the leader
replays its log below the high watermark (:meth:`sync`, called with the
entries; a new leader epoch replays from offset 0, as Kafka loads the
partition on becoming its leader), and pending commits also count the
records above the high watermark. Append errors map as Kafka's
``GroupMetadataManager.storeOffsets``: NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
UNKNOWN_TOPIC_OR_PARTITION and REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE;
NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> NOT_COORDINATOR; the producer
epoch check of the log (INVALID_PRODUCER_EPOCH) passes through.

Not modelled: group membership (generation and member id are not checked:
the simulated loops use standalone partition assignment, generation -1, which
Kafka accepts), and offset retention. KIP-890's verification is done for a
producer's own transactional batches (:mod:`broker.txn.verification`) but **not**
for a TV1 TxnOffsetCommit (v0-4): Kafka's group coordinator asks the transaction
coordinator (VerifyOnly) that the ``__consumer_offsets`` partition is in the
transaction before it appends the offsets; kraftsim's appends them as the
coordinator's own write (``from_coordinator``), which the leader does not verify.
A TV2 producer's TxnOffsetCommit v5 (KIP-890 part 2, no AddOffsetsToTxn) has the
group coordinator's broker add the partition to the transaction first
(:meth:`broker.txn.verification.TxnVerifier.add_offsets_partition`, called before
:meth:`GroupCoordinator.handle_txn_offset_commit`).

Pure: the log append is a handed-in callable, time is passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

import msgspec

from broker.partition_log import LogEntry
from broker.txn.coordinator import CONSUMER_OFFSETS_TOPIC, partition_for
from broker.txn.mutations import TxnMutation

__all__ = ["CONSUMER_OFFSETS_TOPIC", "GroupCoordinator", "GroupCoordinatorConfig",
           "OffsetFetchResult", "OffsetsState", "decode_offset", "encode_offset",
           "offset_commit_time"]

TopicPartition = tuple[str, int]
GroupTopicPartition = tuple[str, str, int]
"""(group id, topic, partition): the key of one committed offset."""

APPEND_ERRORS = {"NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE",
                 "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "COORDINATOR_NOT_AVAILABLE",
                 "UNKNOWN_TOPIC_OR_PARTITION": "COORDINATOR_NOT_AVAILABLE",
                 "REQUEST_TIMED_OUT": "COORDINATOR_NOT_AVAILABLE",
                 "NOT_LEADER_OR_FOLLOWER": "NOT_COORDINATOR",
                 "KAFKA_STORAGE_ERROR": "NOT_COORDINATOR",
                 "NETWORK_EXCEPTION": "NOT_COORDINATOR"}
"""Kafka's storeOffsets mapping of log-append errors."""


class GroupCoordinatorConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The group coordinator's settings with Kafka's names and defaults."""

    num_partitions: int = 50
    """offsets.topic.num.partitions."""


class OffsetFetchResult(msgspec.Struct, frozen=True):
    """OffsetFetch: a top-level error, and per partition (offset or -1, error)."""

    error: str
    partitions: dict[TopicPartition, tuple[int, str]] = msgspec.field(default_factory=dict)


Append = Callable[[int, list[str], int, int, bool, Callable[[str], None]], None]
"""append(offsets partition, record values, producer id, producer epoch, transactional,
on_done(error name)): acks=all."""
Callback = Callable[[str], None]


def encode_offset(label: str, group_id: str, topic: str, partition: int, offset: int,
                  now: int) -> str:
    """One offset record's text: ``<label>/`` then the key and value as JSON.

    ``label`` is the simulator's name of the transaction that writes it (the data
    records' convention, see ``sim/txn_clients.py``): Kafka's record has no such
    field; it lets the invariants tell which transaction wrote the record. A
    ``/`` inside the JSON is escaped so that the label stays the text before the
    last ``/``.
    """
    body = json.dumps({"key": {"Group": group_id, "Topic": topic, "Partition": partition},
                       "value": {"Offset": offset, "LeaderEpoch": -1, "Metadata": "",
                                 "CommitTimestamp": now}},
                      sort_keys=True, separators=(",", ":"))
    return f"{label}/{body.replace('/', chr(92) + 'u002f')}"


def decode_offset(value: str) -> tuple[GroupTopicPartition, int] | None:
    """(group, topic, partition) and offset of an offset record; None for other text."""
    body = value.rsplit("/", 1)[-1]
    if not body.startswith("{"):
        return None
    try:
        record = json.loads(body)
        key, val = record["key"], record["value"]
        return (str(key["Group"]), str(key["Topic"]), int(key["Partition"])), \
            int(val["Offset"])
    except (ValueError, KeyError, TypeError):
        return None


def offset_commit_time(value: str) -> int:
    """The commit timestamp of an offset record (-1 when the text holds none)."""
    try:
        return int(json.loads(value.rsplit("/", 1)[-1])["value"]["CommitTimestamp"])
    except (ValueError, KeyError, TypeError):
        return -1


class OffsetsState:
    """The offsets of one ``__consumer_offsets`` partition, replayed from its log.

    ``committed`` maps a key to (offset, the log offset of its record);
    ``pending`` maps a producer id to the offsets its open transaction wrote.
    """

    def __init__(self) -> None:
        self.applied = 0
        self.committed: dict[GroupTopicPartition, tuple[int, int]] = {}
        self.pending: dict[int, dict[GroupTopicPartition, tuple[int, int]]] = {}

    def apply(self, entries: Sequence[LogEntry]) -> list[tuple[GroupTopicPartition, int]]:
        """Apply committed entries in log order; returns the offsets that became committed."""
        changed: list[tuple[GroupTopicPartition, int]] = []
        for entry in entries:
            self.applied = entry.offset + 1
            if entry.control >= 0:
                offsets = self.pending.pop(entry.producer_id, {})
                if entry.control == 1:
                    for key, (offset, at) in sorted(offsets.items()):
                        if key not in self.committed or self.committed[key][1] < at:
                            self.committed[key] = (offset, at)
                            changed.append((key, offset))
                continue
            decoded = decode_offset(entry.value)
            if decoded is None:
                continue
            key, offset = decoded
            if entry.transactional:
                self.pending.setdefault(entry.producer_id, {})[key] = (offset, entry.offset)
            else:
                self.committed[key] = (offset, entry.offset)
                changed.append((key, offset))
        return changed

    def pending_keys(self, tail: Sequence[LogEntry]) -> set[GroupTopicPartition]:
        """Keys with a pending transactional commit: below the HW, or in ``tail`` (the
        entries above it) with no marker of its producer after it."""
        keys = {key for offsets in self.pending.values() for key in offsets}
        open_tail: dict[int, set[GroupTopicPartition]] = {}
        for entry in tail:
            if entry.control >= 0:
                open_tail.pop(entry.producer_id, None)
                if entry.producer_id in self.pending:
                    keys -= set(self.pending[entry.producer_id])
            elif entry.transactional and (decoded := decode_offset(entry.value)) is not None:
                open_tail.setdefault(entry.producer_id, set()).add(decoded[0])
        for more in open_tail.values():
            keys |= more
        return keys


class GroupCoordinator:
    """The group coordinator of one broker; see the module docs."""

    def __init__(self, broker_id: int, config: GroupCoordinatorConfig, append: Append,
                 mutations: frozenset[TxnMutation] = frozenset()) -> None:
        self.broker_id = broker_id
        self.config = config
        self.append = append
        self.mutations = mutations
        self.owned: dict[int, int] = {}  # offsets partition -> leader epoch
        self.states: dict[int, OffsetsState] = {}
        self.tails: dict[int, list[LogEntry]] = {}

    def partition_of(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of ``group_id``."""
        return partition_for(group_id, self.config.num_partitions)

    # ------------------------------------------------------------------ ownership
    def sync(self, partition: int, leader_epoch: int, entries: Sequence[LogEntry],
             high_watermark: int) -> None:
        """This broker leads ``partition`` in ``leader_epoch`` with ``entries``: replay what
        is new below the HW (everything, in a new epoch) and remember the tail above it."""
        if self.owned.get(partition) != leader_epoch:
            self.owned[partition] = leader_epoch
            self.states[partition] = OffsetsState()
        state = self.states[partition]
        state.apply(entries[state.applied:high_watermark])
        self.tails[partition] = list(entries[high_watermark:])

    def resign(self, partition: int) -> None:
        """Stop coordinating the groups of ``partition``."""
        self.owned.pop(partition, None)
        self.states.pop(partition, None)
        self.tails.pop(partition, None)

    def _error(self, group_id: str) -> str | None:
        if not group_id:
            return "INVALID_GROUP_ID"
        if self.partition_of(group_id) not in self.owned:
            return "NOT_COORDINATOR"
        return None

    # ------------------------------------------------------------------ commits
    def handle_txn_offset_commit(self, transactional_id: str, group_id: str, producer_id: int,
                                 producer_epoch: int, offsets: Mapping[TopicPartition, int],
                                 now: int, callback: Callback, label: str = "") -> None:
        """TxnOffsetCommit: the offsets as transactional records of the producer.

        ``callback`` gets one error for every partition of the request (Kafka
        answers per partition; a store fails or succeeds as a whole).
        """
        error = "INVALID_REQUEST" if not transactional_id else self._error(group_id)
        if error is not None:
            callback(error)
            return
        transactional = TxnMutation.OFFSETS_OUTSIDE_TXN not in self.mutations
        self._store(group_id, offsets, producer_id if transactional else -1,
                    producer_epoch if transactional else -1, transactional, now, callback,
                    label)

    def handle_offset_commit(self, group_id: str, offsets: Mapping[TopicPartition, int],
                             now: int, callback: Callback, label: str = "") -> None:
        """OffsetCommit of a consumer outside any transaction (generation -1)."""
        error = self._error(group_id)
        if error is not None:
            callback(error)
            return
        self._store(group_id, offsets, -1, -1, False, now, callback, label)

    def _store(self, group_id: str, offsets: Mapping[TopicPartition, int], producer_id: int,
               producer_epoch: int, transactional: bool, now: int, callback: Callback,
               label: str) -> None:
        if any(offset < 0 for offset in offsets.values()):
            callback("INVALID_COMMIT_OFFSET_SIZE")
            return
        values = [encode_offset(label, group_id, topic, partition, offset, now)
                  for (topic, partition), offset in sorted(offsets.items())]
        if not values:
            callback("NONE")
            return

        def done(error: str) -> None:
            callback(APPEND_ERRORS.get(error, error))

        self.append(self.partition_of(group_id), values, producer_id, producer_epoch,
                    transactional, done)

    # ------------------------------------------------------------------ fetch
    def handle_offset_fetch(self, group_id: str, partitions: Sequence[TopicPartition],
                            require_stable: bool = False) -> OffsetFetchResult:
        """OffsetFetch: committed offsets only; UNSTABLE_OFFSET_COMMIT for a partition with
        a pending transactional commit when ``require_stable`` (KIP-447)."""
        error = self._error(group_id)
        if error is not None:
            return OffsetFetchResult(error)
        partition = self.partition_of(group_id)
        state = self.states[partition]
        pending = state.pending_keys(self.tails.get(partition, [])) if require_stable \
            else set()
        out: dict[TopicPartition, tuple[int, str]] = {}
        for topic, part in partitions:
            key = (group_id, topic, part)
            if key in pending:
                out[(topic, part)] = (-1, "UNSTABLE_OFFSET_COMMIT")
            else:
                out[(topic, part)] = (state.committed.get(key, (-1, -1))[0], "NONE")
        return OffsetFetchResult("NONE", out)
