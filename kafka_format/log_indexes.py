"""The binary side files of a partition's log: offset index, time index, producer snapshots.

Every partition directory of a Kafka broker (``__cluster_metadata-0`` too)
holds, beside each ``<base offset>.log`` segment:

- ``<base offset>.index``, the offset index: 8-byte entries, big-endian, of
  the offset relative to the base offset (int32) and the byte position of a
  batch in the segment (int32); each entry names a batch's last offset;
- ``<base offset>.timeindex``, the time index: 12-byte entries of a
  timestamp (int64) and a relative offset (int32);
- ``<offset>.snapshot``, the producer state at that offset (Kafka's
  ``ProducerSnapshot`` v1): version int16 (1), a CRC-32C (uint32) of every
  byte after it, an int32 count, then per producer 46 bytes: producerId
  int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
  timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 (-1:
  no open transaction).

Kafka preallocates an index and fills it with zeros; a reader stops at the
first entry after the first that points back at the base offset, as Kafka's
``kafka-dump-log`` does. Pure: bytes in, bytes out; damage yields the good
entries and a :class:`~kafka_format.errors.DecodeFailure`, never an exception.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable

import msgspec

from kafka_format.batch_format import crc32c_of_bytes
from kafka_format.errors import DecodeFailure, EncodeError

OFFSET_INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
OFFSET_ENTRY = struct.Struct(">ii")
"""One offset index entry: relative offset, position."""
TIME_ENTRY = struct.Struct(">qi")
"""One time index entry: timestamp, relative offset."""
PRODUCER_SNAPSHOT_VERSION = 1
_SNAPSHOT_HEAD = struct.Struct(">hIi")  # version, crc, producer count
_CRC_START = 6  # the CRC covers every byte from the producer count on
PRODUCER_ENTRY = struct.Struct(">qhiqiqiq")
"""One producer of a snapshot: 46 bytes."""
_BASE_OFFSET_NAME = re.compile(r"^(\d+)\.[a-z]+$")
_INT32_MAX = 2**31 - 1


class OffsetIndexEntry(msgspec.Struct, frozen=True, gc=False):
    """The last offset of a batch and the byte where the batch starts in its segment."""

    offset: int
    position: int


class TimeIndexEntry(msgspec.Struct, frozen=True, gc=False):
    """The largest timestamp so far in a segment and the offset of the batch that holds it."""

    timestamp: int
    offset: int


class ProducerSnapshotEntry(msgspec.Struct, frozen=True, gc=False):
    """One producer's state in a producer snapshot (Kafka's ProducerStateEntry)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int = -1

    @property
    def first_sequence(self) -> int:
        """The sequence of the last batch's first record (wrapping at 2**31 as Kafka does)."""
        if self.last_sequence < self.offset_delta:
            return _INT32_MAX - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    @property
    def has_batch(self) -> bool:
        """Whether the snapshot holds the producer's last batch (a last offset of -1: none)."""
        return self.last_offset >= 0


class IndexDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """The entries of an index file, and what stopped the reader (None: all good)."""

    entries: tuple[OffsetIndexEntry, ...] | tuple[TimeIndexEntry, ...]
    error: DecodeFailure | None


class ProducerSnapshotDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """The producers of a snapshot file, and why it could not be read (None: all good).

    A snapshot that fails its checks yields no producers: Kafka then discards
    the whole file and rebuilds the state from the log.
    """

    entries: tuple[ProducerSnapshotEntry, ...]
    error: DecodeFailure | None


def base_offset_of(name: str) -> int | None:
    """The offset a side file's name starts with (``00000000000000000042.index``: 42)."""
    match = _BASE_OFFSET_NAME.match(name)
    return int(match.group(1)) if match else None


# --- the offset and time indexes ---------------------------------------------------------------


def encode_offset_index(entries: Iterable[OffsetIndexEntry], base_offset: int) -> bytes:
    """An offset index file's bytes."""
    try:
        return b"".join(OFFSET_ENTRY.pack(e.offset - base_offset, e.position) for e in entries)
    except struct.error as exc:
        raise EncodeError(f"offset index entry: {exc}") from None


def encode_time_index(entries: Iterable[TimeIndexEntry], base_offset: int) -> bytes:
    """A time index file's bytes."""
    try:
        return b"".join(TIME_ENTRY.pack(e.timestamp, e.offset - base_offset) for e in entries)
    except struct.error as exc:
        raise EncodeError(f"time index entry: {exc}") from None


def _cut_tail(data: bytes, size: int, count: int, source: str) -> DecodeFailure | None:
    whole = len(data) - len(data) % size
    if whole == len(data):
        return None
    return DecodeFailure(source, "truncated", f"{len(data) - whole} bytes after the last whole "
                         f"{size}-byte entry", whole, count)


def decode_offset_index(data: bytes, base_offset: int, source: str = "<bytes>"
                        ) -> IndexDecodeResult:
    """The entries of an offset index, up to its preallocated zeros."""
    entries: list[OffsetIndexEntry] = []
    for i, (relative, position) in enumerate(OFFSET_ENTRY.iter_unpack(
            data[:len(data) - len(data) % OFFSET_ENTRY.size])):
        if relative == 0 and i > 0:
            return IndexDecodeResult(tuple(entries), None)
        entries.append(OffsetIndexEntry(base_offset + relative, position))
    return IndexDecodeResult(tuple(entries), _cut_tail(data, OFFSET_ENTRY.size, len(entries),
                                                       source))


def decode_time_index(data: bytes, base_offset: int, source: str = "<bytes>"
                      ) -> IndexDecodeResult:
    """The entries of a time index, up to its preallocated zeros."""
    entries: list[TimeIndexEntry] = []
    for i, (timestamp, relative) in enumerate(TIME_ENTRY.iter_unpack(
            data[:len(data) - len(data) % TIME_ENTRY.size])):
        if relative == 0 and i > 0:
            return IndexDecodeResult(tuple(entries), None)
        entries.append(TimeIndexEntry(timestamp, base_offset + relative))
    return IndexDecodeResult(tuple(entries), _cut_tail(data, TIME_ENTRY.size, len(entries),
                                                       source))


# --- producer snapshots ------------------------------------------------------------------------


def encode_producer_snapshot(entries: Iterable[ProducerSnapshotEntry]) -> bytes:
    """A producer snapshot file's bytes (version 1, its CRC filled in)."""
    entries = list(entries)
    try:
        body = struct.pack(">i", len(entries)) + b"".join(
            PRODUCER_ENTRY.pack(e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
                                e.offset_delta, e.timestamp, e.coordinator_epoch,
                                e.current_txn_first_offset) for e in entries)
    except struct.error as exc:
        raise EncodeError(f"producer snapshot entry: {exc}") from None
    return struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc32c_of_bytes(body)) + body


def decode_producer_snapshot(data: bytes, source: str = "<bytes>"
                             ) -> ProducerSnapshotDecodeResult:
    """The producers of a snapshot; any damage (Kafka's CorruptSnapshotException) yields none."""

    def failed(kind: str, message: str, position: int) -> ProducerSnapshotDecodeResult:
        return ProducerSnapshotDecodeResult((), DecodeFailure(
            source, kind, message, position))  # type: ignore[arg-type]

    if len(data) < 2:
        return failed("truncated", f"{len(data)} bytes: too short for the version", 0)
    version = struct.unpack_from(">h", data)[0]
    if version != PRODUCER_SNAPSHOT_VERSION:
        return failed("unsupported", f"snapshot file version {version} (only "
                      f"{PRODUCER_SNAPSHOT_VERSION} is read)", 0)
    if len(data) < _SNAPSHOT_HEAD.size:
        return failed("truncated", f"{len(data)} bytes: too short for the CRC and the "
                      f"producer count", len(data))
    _, stored, count = _SNAPSHOT_HEAD.unpack_from(data)
    if count < 0:
        return failed("corrupt", f"producer count {count} is negative", _CRC_START)
    end = _SNAPSHOT_HEAD.size + count * PRODUCER_ENTRY.size
    if end > len(data):
        return failed("truncated", f"{count} producers need {end} bytes, the file has "
                      f"{len(data)}", len(data))
    computed = crc32c_of_bytes(data[_CRC_START:])
    if stored != computed:
        return failed("crc-mismatch", f"stored CRC {stored}, computed {computed}", 2)
    entries = tuple(ProducerSnapshotEntry(*fields) for fields in PRODUCER_ENTRY.iter_unpack(
        data[_SNAPSHOT_HEAD.size:end]))
    return ProducerSnapshotDecodeResult(entries, None)
