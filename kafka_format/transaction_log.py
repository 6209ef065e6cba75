"""``__transaction_state`` records: Kafka's TransactionLogKey and TransactionLogValue bytes.

Both are version-prefixed (an int16 version, then the message):

- key: version 0, ``TransactionalId`` as a (non-compact) string: int16 length
  and UTF-8 bytes;
- value: version 1 (flexible): ProducerId int64, ProducerEpoch int16,
  TransactionTimeoutMs int32, TransactionStatus int8, TransactionPartitions
  (compact nullable array of {Topic compact string, PartitionIds compact
  array of int32, tagged fields}), TransactionLastUpdateTimestampMs int64,
  TransactionStartTimestampMs int64, then tagged fields: 0
  PreviousProducerId int64, 1 NextProducerId int64, 2
  ClientTransactionVersion int16, 3 NextProducerEpoch int16 (KIP-939; trunk's
  schema, PR #18316), each written when not its default (-1, -1, 0, -1).
  Version 0 is the same without the compact encodings and tags. A null value
  is a tombstone (an expired transactional id).

Kafka writes a null TransactionPartitions for a transaction in Empty, and refuses
to write an Empty value that names partitions (TransactionLog.valueToBytes).
"""

from __future__ import annotations

import struct

import msgspec

from kafka_format import wire
from kafka_format.errors import DecodeError, EncodeError

KEY_VERSION = 0
VALUE_VERSION = 1
EMPTY_STATUS = 0
"""TransactionStatus of Empty."""
_FIXED_HEAD = struct.Struct(">qhib")
_TIMES = struct.Struct(">qq")


class TxnLogValue(msgspec.Struct, frozen=True, gc=False):
    """A TransactionLogValue with Kafka's field names (partitions as (topic, ids))."""

    ProducerId: int
    ProducerEpoch: int
    TransactionTimeoutMs: int
    TransactionStatus: int
    TransactionPartitions: tuple[tuple[str, tuple[int, ...]], ...] | None
    TransactionLastUpdateTimestampMs: int
    TransactionStartTimestampMs: int
    PreviousProducerId: int = -1
    NextProducerId: int = -1
    ClientTransactionVersion: int = 0
    NextProducerEpoch: int = -1


def encode_key(transactional_id: str) -> bytes:
    """The record key of ``transactional_id``."""
    data = transactional_id.encode("utf-8")
    if len(data) > 0x7FFF:
        raise EncodeError(f"transactional id of {len(data)} bytes is too long")
    return struct.pack(">hh", KEY_VERSION, len(data)) + data


def decode_key(data: bytes) -> str:
    """The transactional id of a record key; raises DecodeError."""
    end = len(data)
    version, pos = wire.read_int16(data, 0, end)
    if version != KEY_VERSION:
        raise DecodeError(f"TransactionLogKey version {version} (only 0 is read)", 0,
                          "unsupported")
    length, pos = wire.read_int16(data, pos, end)
    if length < 0 or pos + length > end:
        raise DecodeError(f"transactional id of {length} bytes at byte {pos}", pos,
                          "truncated")
    try:
        return data[pos:pos + length].decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("transactional id is not UTF-8", pos) from None


def encode_value(value: TxnLogValue) -> bytes:
    """The record value (version 1).

    Empty's partitions are written null, as Kafka's valueToBytes does; an Empty value
    that names a partition is an EncodeError (Kafka's IllegalStateException).
    """
    partitions = value.TransactionPartitions
    if value.TransactionStatus == EMPTY_STATUS:
        if partitions:
            raise EncodeError("TransactionLogValue: a transaction in Empty has no partitions")
        partitions = None
    out = bytearray(struct.pack(">h", VALUE_VERSION))
    try:
        out += _FIXED_HEAD.pack(value.ProducerId, value.ProducerEpoch,
                                value.TransactionTimeoutMs, value.TransactionStatus)
        if partitions is None:
            out.append(0)
        else:
            wire.write_uvarint(out, len(partitions) + 1)
            for topic, ids in partitions:
                wire.write_compact_string(out, topic)
                wire.write_uvarint(out, len(ids) + 1)
                for partition in ids:
                    out += struct.pack(">i", partition)
                out.append(0)  # no tagged fields
        out += _TIMES.pack(value.TransactionLastUpdateTimestampMs,
                           value.TransactionStartTimestampMs)
        tags: list[tuple[int, bytes]] = []
        if value.PreviousProducerId != -1:
            tags.append((0, struct.pack(">q", value.PreviousProducerId)))
        if value.NextProducerId != -1:
            tags.append((1, struct.pack(">q", value.NextProducerId)))
        if value.ClientTransactionVersion != 0:
            tags.append((2, struct.pack(">h", value.ClientTransactionVersion)))
        if value.NextProducerEpoch != -1:
            tags.append((3, struct.pack(">h", value.NextProducerEpoch)))
    except struct.error as exc:
        raise EncodeError(f"TransactionLogValue: {exc}") from None
    wire.write_uvarint(out, len(tags))
    for tag, payload in tags:
        wire.write_tagged_field(out, tag, payload)
    return bytes(out)


def decode_value(data: bytes) -> TxnLogValue:
    """A record value (version 0 or 1); raises DecodeError."""
    end = len(data)
    version, pos = wire.read_int16(data, 0, end)
    if version not in (0, 1):
        raise DecodeError(f"TransactionLogValue version {version} (0 and 1 are read)", 0,
                          "unsupported")
    flexible = version >= 1
    if end - pos < _FIXED_HEAD.size:
        raise wire.truncated("TransactionLogValue", pos, _FIXED_HEAD.size, end)
    producer_id, epoch, timeout, status = _FIXED_HEAD.unpack_from(data, pos)
    pos += _FIXED_HEAD.size
    if flexible:
        count, pos = wire.read_compact_length(data, pos, end, "TransactionPartitions")
    else:
        count, pos = wire.read_int32(data, pos, end)
    partitions: list[tuple[str, tuple[int, ...]]] | None = None if count < 0 else []
    for _ in range(max(count, 0)):
        if flexible:
            topic, pos = wire.read_compact_string(data, pos, end)
            n, pos = wire.read_compact_length(data, pos, end, "PartitionIds")
        else:
            topic, pos = _short_string(data, pos, end)
            n, pos = wire.read_int32(data, pos, end)
        if n < 0:  # Kafka: non-nullable field partitionIds was serialized as null
            raise DecodeError(f"TransactionLogValue PartitionIds of topic {topic!r} is null "
                              f"but may not be", pos)
        ids = []
        for _ in range(max(n, 0)):
            partition, pos = wire.read_int32(data, pos, end)
            ids.append(partition)
        if flexible:
            pos = _skip_tags(data, pos, end)
        assert partitions is not None
        partitions.append((topic, tuple(ids)))
    if end - pos < _TIMES.size:
        raise wire.truncated("TransactionLogValue timestamps", pos, _TIMES.size, end)
    last_update, start = _TIMES.unpack_from(data, pos)
    pos += _TIMES.size
    previous, following, client_version, next_epoch = -1, -1, 0, -1
    if flexible:
        tag_count, pos = wire.read_uvarint(data, pos, end)
        for _ in range(tag_count):
            tag, size, pos = wire.read_tagged_header(data, pos, end)
            if tag == 0 and size == 8:
                previous = struct.unpack_from(">q", data, pos)[0]
            elif tag == 1 and size == 8:
                following = struct.unpack_from(">q", data, pos)[0]
            elif tag == 2 and size == 2:
                client_version = struct.unpack_from(">h", data, pos)[0]
            elif tag == 3 and size == 2:
                next_epoch = struct.unpack_from(">h", data, pos)[0]
            pos += size
    return TxnLogValue(producer_id, epoch, timeout, status,
                       None if partitions is None else tuple(partitions), last_update, start,
                       previous, following, client_version, next_epoch)


def _short_string(data: bytes, pos: int, end: int) -> tuple[str, int]:
    """A non-null string before flexible versions: int16 length, UTF-8."""
    start = pos
    length, pos = wire.read_int16(data, pos, end)
    if length < 0:  # Kafka: non-nullable field topic was serialized as null
        raise DecodeError(f"TransactionLogValue topic at byte {start} is null but may not be",
                          start)
    if pos + length > end:
        raise wire.truncated("TransactionLogValue topic", pos, length, end)
    return data[pos:pos + length].decode("utf-8", "replace"), pos + length


def _skip_tags(data: bytes, pos: int, end: int) -> int:
    count, pos = wire.read_uvarint(data, pos, end)
    for _ in range(count):
        _, size, pos = wire.read_tagged_header(data, pos, end)
        pos += size
    return pos


def value_json(value: TxnLogValue) -> dict[str, object]:
    """The value as kafka-dump-log's transaction log decoder names its fields."""
    out: dict[str, object] = {"producerId": value.ProducerId}
    if value.PreviousProducerId != -1:
        out["previousProducerId"] = value.PreviousProducerId
    if value.NextProducerId != -1:
        out["nextProducerId"] = value.NextProducerId
    out.update({
        "producerEpoch": value.ProducerEpoch,
        "transactionTimeoutMs": value.TransactionTimeoutMs,
        "transactionStatus": value.TransactionStatus,
        "transactionPartitions": None if value.TransactionPartitions is None else [
            {"topic": topic, "partitionIds": list(ids)}
            for topic, ids in value.TransactionPartitions],
        "transactionLastUpdateTimestampMs": value.TransactionLastUpdateTimestampMs,
        "transactionStartTimestampMs": value.TransactionStartTimestampMs,
    })
    if value.ClientTransactionVersion != 0:
        out["clientTransactionVersion"] = value.ClientTransactionVersion
    if value.NextProducerEpoch != -1:
        out["nextProducerEpoch"] = value.NextProducerEpoch
    return out
