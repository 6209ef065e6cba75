"""Data partition segments: record batches v2 of raw records, transaction markers, ``.txnindex``.

A data partition's ``.log`` segment holds the same record batches (magic 2)
as the metadata log (layout in :mod:`.batch_format`), but its records are
opaque key and value bytes. Producer transactions (KIP-98) add:

- transactional batches: attribute bit 4 (``isTransactional``) with the
  producer id, epoch and base sequence in the header;
- control batches: bits 4 and 5 (``isControl``), sequence -1, one record
  whose key is the control record key (version int16 0, type int16: ABORT 0,
  COMMIT 1) and whose value is Kafka's ``EndTransactionMarker`` (version
  int16 0, coordinatorEpoch int32): key 4 bytes, value 6 bytes;
- the abort index (``<base offset>.txnindex``): per aborted transaction
  whose ABORT marker is in the segment, 34 bytes big-endian: version int16
  (0), producerId int64, firstOffset int64, lastOffset int64 (the marker's
  offset), lastStableOffset int64.

Pure: bytes in, bytes out. Damage yields the good prefix and a
:class:`~kafka_format.errors.DecodeFailure`, never an exception.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable

import msgspec

from kafka_format import compression, wire
from kafka_format.batch_format import (
    COMPRESSION_MASK,
    COMPRESSION_NAMES,
    CONTROL_FLAG,
    CRC_START,
    HEADER,
    HEADER_SIZE,
    LENGTH_PREFIX,
    MAGIC,
    TRANSACTIONAL_FLAG,
    crc32c_of_bytes,
)
from kafka_format.errors import DecodeError, DecodeFailure, EncodeError

ABORT, COMMIT = 0, 1
"""Kafka's ControlRecordType ids of the transaction markers."""
CONTROL_TYPE_NAMES = {ABORT: "ABORT", COMMIT: "COMMIT"}
NO_TIMESTAMP = -1
"""Kafka's RecordBatch.NO_TIMESTAMP."""
TXN_INDEX_ENTRY = struct.Struct(">hqqqq")
"""One ``.txnindex`` entry: version, producerId, firstOffset, lastOffset, lastStableOffset."""
TXN_INDEX_ENTRY_SIZE = TXN_INDEX_ENTRY.size
"""34 bytes."""
TXN_INDEX_VERSION = 0
"""Kafka's AbortedTxn.CURRENT_VERSION: a reader refuses an entry of a later version (an
earlier one, negative, is read as Kafka reads it)."""
TXN_INDEX_SUFFIX = ".txnindex"
_TXN_INDEX_NAME = re.compile(r"^(\d{20})\.txnindex$")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
_MARKER_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")


class DataRecord(msgspec.Struct, frozen=True, gc=False):
    """One record of a data batch: key and value bytes (None: null), headers.

    ``offset_delta`` is None when the record's offset delta is its index in the
    batch; compaction removes records and leaves the others' deltas as they were.
    """

    key: bytes | None
    value: bytes | None
    timestamp_delta: int = 0
    headers: tuple[tuple[bytes, bytes | None], ...] = ()
    offset_delta: int | None = None


class DataBatch(msgspec.Struct, frozen=True, gc=False):
    """One record batch of a data partition; ``position``, ``size``, ``crc`` when decoded."""

    base_offset: int
    partition_leader_epoch: int
    attributes: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[DataRecord, ...]
    position: int = 0
    size: int = 0
    crc: int = 0
    last_offset_delta: int | None = None
    """The header's lastOffsetDelta when it is not the record count less one (after
    compaction, the batch keeps its offsets, even with no record left)."""

    @property
    def is_transactional(self) -> bool:
        """Attribute bit 4."""
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        """Attribute bit 5."""
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def compression(self) -> str:
        """The compression codec's name."""
        return COMPRESSION_NAMES.get(self.attributes & COMPRESSION_MASK, "unknown")

    @property
    def last_offset(self) -> int:
        """The batch's last offset (its last record's, unless compaction removed it)."""
        if self.last_offset_delta is not None:
            return self.base_offset + self.last_offset_delta
        return self.base_offset + len(self.records) - 1

    def record_offset(self, index: int) -> int:
        """The offset of the batch's ``index``-th record."""
        delta = self.records[index].offset_delta
        return self.base_offset + (index if delta is None else delta)


class EndTxnMarker(msgspec.Struct, frozen=True, gc=False):
    """A control record's transaction marker (Kafka's EndTransactionMarker)."""

    control_type: int
    coordinator_epoch: int
    version: int = 0

    @property
    def name(self) -> str:
        """``COMMIT`` or ``ABORT``."""
        return CONTROL_TYPE_NAMES.get(self.control_type, f"UNKNOWN({self.control_type})")


class AbortedTxnEntry(msgspec.Struct, frozen=True, gc=False):
    """One ``.txnindex`` entry (Kafka's AbortedTxn)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = 0


class DataLogDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """The good batches of a segment, and what stopped the reader (None: all good)."""

    batches: tuple[DataBatch, ...]
    error: DecodeFailure | None


class TxnIndexDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """The good entries of a ``.txnindex``, and what stopped the reader."""

    entries: tuple[AbortedTxnEntry, ...]
    error: DecodeFailure | None


# --- markers ----------------------------------------------------------------------------------


def marker_record(commit: bool, coordinator_epoch: int) -> DataRecord:
    """The control record of a COMMIT or ABORT marker."""
    try:
        key = _MARKER_KEY.pack(0, COMMIT if commit else ABORT)
        value = _MARKER_VALUE.pack(0, coordinator_epoch)
    except struct.error as exc:
        raise EncodeError(f"transaction marker: {exc}") from None
    return DataRecord(key, value)


def decode_marker(record: DataRecord) -> EndTxnMarker | None:
    """The transaction marker a control record holds; None if it is another control type
    or not a valid marker.

    As Kafka's ``EndTransactionMarker``: the key is at least 4 bytes with a key version
    of 0 or more, the value at least 6 bytes with a marker version of 0 or more (a newer
    version is read as version 0, bytes after the coordinator epoch ignored).
    """
    key, value = record.key, record.value
    if key is None or len(key) < _MARKER_KEY.size:
        return None
    key_version, control_type = _MARKER_KEY.unpack_from(key)
    if key_version < 0 or control_type not in CONTROL_TYPE_NAMES or value is None or \
            len(value) < _MARKER_VALUE.size:
        return None
    version, epoch = _MARKER_VALUE.unpack_from(value)
    if version < 0:
        return None
    return EndTxnMarker(control_type, epoch, version)


# --- batches ----------------------------------------------------------------------------------


def _write_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out.append(1)  # zig-zag -1: null
        return
    wire.write_varint(out, len(data))
    out += data


def encode_data_batch(batch: DataBatch) -> bytes:
    """The bytes of one batch, its records compressed if its attributes say so."""
    if not batch.records and batch.last_offset_delta is None:
        raise EncodeError(f"batch at offset {batch.base_offset} has no records")
    section = bytearray()
    for index, record in enumerate(batch.records):
        body = bytearray(b"\x00")  # record attributes: unused, 0
        wire.write_varlong(body, record.timestamp_delta)
        wire.write_varint(body, index if record.offset_delta is None else record.offset_delta)
        _write_bytes(body, record.key)
        _write_bytes(body, record.value)
        wire.write_varint(body, len(record.headers))
        for header_key, header_value in record.headers:
            _write_bytes(body, header_key)
            _write_bytes(body, header_value)
        wire.write_varint(section, len(body))
        section += body
    count = len(batch.records)
    codec = batch.attributes & COMPRESSION_MASK
    if codec:
        section = bytearray(compression.compress(codec, bytes(section)))
    try:
        tail = struct.pack(">hiqqqhii", batch.attributes, batch.last_offset - batch.base_offset,
                           batch.base_timestamp,
                           batch.max_timestamp, batch.producer_id, batch.producer_epoch,
                           batch.base_sequence, count) + bytes(section)
        head = struct.pack(">qiibI", batch.base_offset, HEADER_SIZE - LENGTH_PREFIX +
                           len(section), batch.partition_leader_epoch, MAGIC,
                           crc32c_of_bytes(tail))
    except struct.error as exc:
        raise EncodeError(f"batch at offset {batch.base_offset}: {exc}") from None
    return head + tail


def encode_data_log(batches: Iterable[DataBatch]) -> bytes:
    """A segment's bytes: the batches one after the other."""
    return b"".join(encode_data_batch(batch) for batch in batches)


def _read_bytes(buf: bytes, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    start = pos
    length, pos = wire.read_varint(buf, pos, end)
    if length < 0:
        return None, pos
    if length > end - pos:
        raise DecodeError(f"{what} at byte {start} declares {length} bytes but only "
                          f"{end - pos} remain", start, "truncated")
    return bytes(buf[pos:pos + length]), pos + length


def _decode_records(buf: bytes, pos: int, end: int, count: int,
                    last_delta: int) -> tuple[DataRecord, ...]:
    """The records of a batch; offset deltas must grow and stay within ``last_delta``
    (they skip the records compaction removed)."""
    records = []
    previous = -1
    for index in range(count):
        start = pos
        length, pos = wire.read_varint(buf, pos, end)
        record_end = pos + length
        if length < 0 or record_end > end:
            raise DecodeError(f"record {index} at byte {start} declares {length} bytes",
                              start, "truncated" if length >= 0 else "corrupt")
        pos += 1  # attributes
        delta, pos = wire.read_varlong(buf, pos, record_end)
        offset_delta, pos = wire.read_varint(buf, pos, record_end)
        if not previous < offset_delta <= last_delta:
            raise DecodeError(f"record {index} at byte {start} has offset delta "
                              f"{offset_delta}, not above {previous} and at most the batch's "
                              f"last offset delta {last_delta}", start)
        previous = offset_delta
        key, pos = _read_bytes(buf, pos, record_end, "key")
        value, pos = _read_bytes(buf, pos, record_end, "value")
        header_start = pos
        header_count, pos = wire.read_varint(buf, pos, record_end)
        if header_count < 0:
            raise DecodeError(f"record {index} at byte {start} has {header_count} headers",
                              header_start)
        headers = []
        for _ in range(header_count):
            key_start = pos
            header_key, pos = _read_bytes(buf, pos, record_end, "header key")
            if header_key is None:  # Kafka refuses a null header key as a corrupt record
                raise DecodeError(f"record {index} at byte {start} has a null header key",
                                  key_start)
            header_value, pos = _read_bytes(buf, pos, record_end, "header value")
            headers.append((header_key, header_value))
        if pos != record_end:
            raise DecodeError(f"record {index} at byte {start} has {record_end - pos} bytes "
                              f"left over", pos)
        records.append(DataRecord(key, value, delta, tuple(headers),
                                  None if offset_delta == index else offset_delta))
    if pos != end:
        raise DecodeError(f"{end - pos} bytes after the last record", pos)
    return tuple(records)


def _batch_records(data: bytes, pos: int, end: int, codec: int, count: int,
                   last_delta: int) -> tuple[DataRecord, ...]:
    """The records of the batch at ``pos``, decompressed first if ``codec`` says so."""
    start = pos + HEADER_SIZE
    if not codec:
        return _decode_records(data, start, end, count, last_delta)
    if codec not in compression.CODECS:
        raise DecodeError(f"compression type {codec} is not one of Kafka's", pos + 21,
                          "unsupported")
    section = compression.decompress(codec, bytes(data[start:end]), start)
    try:
        return _decode_records(section, 0, len(section), count, last_delta)
    except DecodeError as exc:  # a position in the decompressed bytes means nothing on disk
        raise DecodeError(f"in the decompressed records, at their byte {exc.position}: "
                          f"{exc.message}", start, exc.kind) from None


def decode_data_log(data: bytes, source: str = "<bytes>") -> DataLogDecodeResult:
    """The batches of a data segment, up to the first damaged one."""
    batches: list[DataBatch] = []
    pos = 0
    total = len(data)
    while pos < total:
        batch_offset: int | None = None
        try:
            if total - pos < HEADER_SIZE:
                raise wire.truncated("batch header", pos, HEADER_SIZE, total)
            (base_offset, length, leader_epoch, magic, crc, attributes, last_delta,
             base_ts, max_ts, producer_id, producer_epoch, base_sequence,
             count) = HEADER.unpack_from(data, pos)
            batch_offset = base_offset
            end = pos + LENGTH_PREFIX + length
            if magic != MAGIC:
                raise DecodeError(f"magic {magic} (only 2 is read)", pos + 16, "unsupported")
            if length < HEADER_SIZE - LENGTH_PREFIX:
                raise DecodeError(f"batch length {length} is shorter than a header", pos + 8)
            if end > total:
                raise wire.truncated("batch", pos, end - pos, total)
            actual = crc32c_of_bytes(bytes(data[pos + CRC_START:end]))
            if actual != crc:
                raise DecodeError(f"CRC {crc} stored, {actual} computed", pos + 17,
                                  "crc-mismatch")
            records = _batch_records(data, pos, end, attributes & COMPRESSION_MASK, count,
                                     last_delta)
        except DecodeError as exc:
            return DataLogDecodeResult(tuple(batches), DecodeFailure(
                source, exc.kind, exc.message, exc.position, len(batches), batch_offset, pos))
        batches.append(DataBatch(base_offset, leader_epoch, attributes, base_ts, max_ts,
                                 producer_id, producer_epoch, base_sequence, records, pos,
                                 end - pos, crc,
                                 None if last_delta == count - 1 else last_delta))
        pos = end
    return DataLogDecodeResult(tuple(batches), None)


# --- the abort index ------------------------------------------------------------------------


def encode_txn_index(entries: Iterable[AbortedTxnEntry], source: str = "<bytes>") -> bytes:
    """A ``.txnindex`` file's bytes. Each entry's last offset must be above the one before
    it, as Kafka's ``TransactionIndex.append`` requires (an :class:`EncodeError` in Kafka's
    words otherwise; ``source`` names the index)."""
    out: list[bytes] = []
    last: int | None = None
    for e in entries:
        if last is not None and last >= e.last_offset:
            raise EncodeError(
                f"The last offset of appended transactions must increase sequentially, but "
                f"{e.last_offset} is not greater than current last offset {last} of index "
                f"{source}")
        last = e.last_offset
        try:
            out.append(TXN_INDEX_ENTRY.pack(e.version, e.producer_id, e.first_offset,
                                            e.last_offset, e.last_stable_offset))
        except struct.error as exc:
            raise EncodeError(f"abort index entry: {exc}") from None
    return b"".join(out)


def decode_txn_index(data: bytes, source: str = "<bytes>") -> TxnIndexDecodeResult:
    """The entries of a ``.txnindex``; a cut last entry is reported, the rest kept."""
    whole = len(data) - len(data) % TXN_INDEX_ENTRY_SIZE
    entries: list[AbortedTxnEntry] = []
    for pos in range(0, whole, TXN_INDEX_ENTRY_SIZE):
        version, producer_id, first, last, lso = TXN_INDEX_ENTRY.unpack_from(data, pos)
        if version > TXN_INDEX_VERSION:
            return TxnIndexDecodeResult(tuple(entries), DecodeFailure(
                source, "unsupported", f"Unexpected aborted transaction version {version} in "
                f"transaction index {source}, current version is {TXN_INDEX_VERSION}", pos,
                len(entries)))
        entries.append(AbortedTxnEntry(producer_id, first, last, lso, version))
    if whole != len(data):
        return TxnIndexDecodeResult(tuple(entries), DecodeFailure(
            source, "truncated", f"{len(data) - whole} bytes after the last whole "
            f"{TXN_INDEX_ENTRY_SIZE}-byte entry", whole, len(entries)))
    return TxnIndexDecodeResult(tuple(entries), None)


# --- names -------------------------------------------------------------------------------------


def partition_dir_name(topic: str, partition: int) -> str:
    """``orders-0``: a partition replica's directory in a broker's log directory."""
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a ``<topic>-<partition>`` directory name, or None."""
    match = _PARTITION_DIR.match(name)
    return (match.group(1), int(match.group(2))) if match else None


def txn_index_file_name(base_offset: int) -> str:
    """``<base offset, 20 digits>.txnindex``."""
    return f"{base_offset:020d}{TXN_INDEX_SUFFIX}"


def is_txn_index_name(name: str) -> bool:
    """Whether ``name`` is a ``.txnindex`` file's name."""
    return _TXN_INDEX_NAME.match(name) is not None or name.endswith(TXN_INDEX_SUFFIX)
