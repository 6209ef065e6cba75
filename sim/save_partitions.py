"""A broker's partition replicas as Kafka's data partition directories (``--save``).

Each replica a running broker hosts becomes ``<topic>-<partition>/`` beside
its ``__cluster_metadata-0``: one segment whose record batches are the
replica's log entries, batched as they were appended (an idempotent or
transactional batch by its producer id, epoch and base sequence; a control
record is a batch of its own), a ``.txnindex`` with the replica's abort
index, its ``leader-epoch-checkpoint`` (the replica's leader-epoch cache) and
its ``partition.metadata`` (the topic id); the broker's
``replication-offset-checkpoint`` gets every replica's high watermark. Record
values are UTF-8 with no key; ``__transaction_state`` records get Kafka's
TransactionLogKey / TransactionLogValue bytes, ``__consumer_offsets`` offset
commits Kafka's OffsetCommitKey (type 1) / OffsetCommitValue (version 3).
Timestamps are -1 (Kafka's NO_TIMESTAMP): the append time a log entry keeps
serves the producer-id expiration only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from broker.partition_log import LogEntry, PartitionLog
from broker.replica_manager import ReplicaManager
from broker.txn.coordinator import TRANSACTION_STATE_TOPIC
from broker.txn.group import CONSUMER_OFFSETS_TOPIC, decode_offset, offset_commit_time
from broker.txn.state import decode_record
from kafka_format.batch_format import CONTROL_FLAG, TRANSACTIONAL_FLAG
from kafka_format.checkpoints import EpochEntry, OffsetEntry
from kafka_format.data_log import (
    NO_TIMESTAMP,
    AbortedTxnEntry,
    DataBatch,
    DataRecord,
    marker_record,
    partition_dir_name,
)
from kafka_format.files import write_checkpoint, write_partition_dir
from kafka_format.offsets_log import encode_offset_commit
from kafka_format.transaction_log import TxnLogValue, encode_key, encode_value
from sim.world import NodeSlot

HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"
"""The file of a broker's log directory that keeps its replicas' high watermarks."""
EMPTY_STATUS = 0
"""TransactionStatus of Empty: Kafka writes null partitions for it."""


def _record(topic: str, entry: LogEntry) -> DataRecord:
    if entry.control >= 0:
        return marker_record(entry.control == 1, entry.coordinator_epoch)
    if topic == CONSUMER_OFFSETS_TOPIC:
        commit = decode_offset(entry.value)
        if commit is not None:
            (group, committed_topic, partition), offset = commit
            return DataRecord(*encode_offset_commit(group, committed_topic, partition, offset,
                                                    -1, "", offset_commit_time(entry.value)))
    if topic != TRANSACTION_STATE_TOPIC:
        return DataRecord(None, entry.value.encode("utf-8"))
    record = decode_record(entry.value)
    value = record.Value
    if value is None:
        return DataRecord(encode_key(record.TransactionalId), None)
    by_topic: dict[str, list[int]] = {}
    for t, p in value.TransactionPartitions:
        by_topic.setdefault(t, []).append(p)
    partitions = None if value.TransactionStatus == EMPTY_STATUS else tuple(
        (t, tuple(sorted(ids))) for t, ids in sorted(by_topic.items()))
    kafka_value = TxnLogValue(
        value.ProducerId, value.ProducerEpoch, value.TransactionTimeoutMs,
        value.TransactionStatus, partitions, value.TransactionLastUpdateTimestampMs,
        value.TransactionStartTimestampMs, value.PreviousProducerId, value.NextProducerId,
        value.ClientTransactionVersion, value.NextProducerEpoch)
    return DataRecord(encode_key(record.TransactionalId), encode_value(kafka_value))


def _same_batch(first: LogEntry, entry: LogEntry, index: int) -> bool:
    if entry.control >= 0 or first.control >= 0 or index >= first.batch_size:
        return False
    if (entry.producer_id, entry.producer_epoch, entry.base_sequence, entry.leader_epoch,
            entry.transactional, entry.batch_size) != \
            (first.producer_id, first.producer_epoch, first.base_sequence, first.leader_epoch,
             first.transactional, first.batch_size):
        return False
    return entry.sequence < 0 or entry.sequence == first.base_sequence + index


def _batches(topic: str, entries: list[LogEntry]) -> Iterator[DataBatch]:
    i = 0
    while i < len(entries):
        first = entries[i]
        j = i + 1
        while j < len(entries) and _same_batch(first, entries[j], j - i):
            j += 1
        chunk = entries[i:j]
        attributes = (TRANSACTIONAL_FLAG if first.transactional else 0) | \
            (CONTROL_FLAG if first.control >= 0 else 0)
        base_sequence = -1 if first.control >= 0 or first.sequence < 0 else first.sequence
        yield DataBatch(first.offset, first.leader_epoch, attributes, NO_TIMESTAMP,
                        NO_TIMESTAMP, first.producer_id, first.producer_epoch, base_sequence,
                        tuple(_record(topic, e) for e in chunk))
        i = j


def partition_batches(topic: str, log: PartitionLog) -> list[DataBatch]:
    """The record batches of a replica's log."""
    return list(_batches(topic, list(log.entries)))


def high_watermark_checkpoint(manager: ReplicaManager) -> list[OffsetEntry]:
    """The entries of a broker's ``replication-offset-checkpoint``: each replica's high
    watermark (Kafka's ``ReplicaManager.checkpointHighWatermarks``)."""
    return [OffsetEntry(topic, partition, hw) for topic, partition, hw in
            manager.high_watermarks()]


def write_high_watermarks(manager: ReplicaManager, node_dir: Path) -> Path:
    """Write ``node_dir``/replication-offset-checkpoint from the broker's replicas."""
    node_dir.mkdir(parents=True, exist_ok=True)
    return write_checkpoint(node_dir / HIGH_WATERMARK_CHECKPOINT,
                            high_watermark_checkpoint(manager))


def write_partitions(slot: NodeSlot, node_dir: Path) -> list[Path]:
    """Write every partition replica of a running broker under ``node_dir`` (its segment,
    abort index, ``leader-epoch-checkpoint`` and ``partition.metadata``), and the
    broker's ``replication-offset-checkpoint`` beside them."""
    manager = next((a for a in slot.apps if isinstance(a, ReplicaManager)), None)
    if manager is None or not slot.running:
        return []
    written: list[Path] = []
    for _, replica in sorted(manager.replicas.items()):
        log = replica.log
        aborted = [AbortedTxnEntry(a.producer_id, a.first_offset, a.last_offset,
                                   a.last_stable_offset) for a in log.txns.aborted]
        written += write_partition_dir(
            node_dir / partition_dir_name(replica.topic, replica.partition_id),
            partition_batches(replica.topic, log), aborted,
            epochs=[EpochEntry(epoch, start) for epoch, start in log.epoch_starts],
            topic_id=replica.topic_id)
    written.append(write_high_watermarks(manager, node_dir))
    return written
