"""Decoding and encoding a sequence of batches: a log segment's or snapshot's bytes.

:func:`decode_log` reads batch after batch and stops at the first one that is
cut short, fails its CRC, or breaks the format, returning the good batches
before it and a :class:`DecodeFailure` (Kafka's log recovery keeps that prefix
and truncates the rest). It never raises on bad input, and every length or
count is checked against the bytes that remain before it is used.

Speed: a batch's records section is decoded once per distinct content. A
metadata log is mostly identical NoOpRecord batches whose records sections are
byte-for-byte equal (timestamps live in the header), so they share one decoded
tuple of records, as frozen records are meant to be shared. A record framed as
Kafka frames it is read inline and its value by a generated fast decoder
(:mod:`.fast_codec`), which only accepts canonical bytes: no value is encoded
again to learn whether its raw bytes must be kept. Any other record goes the
generic way: decode, then re-encode to compare.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any, NoReturn

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
    DecodedBatch,
    RecordFacts,
    RecordHeader,
    compress_section,
    crc32c,
    crc32c_of_bytes,
    encode_records,
    pack_batch,
    plain_facts,
    plain_prefix,
    plain_prefixes,
)
from kafka_format.control_records import (
    CONTROL_KEY,
    decode_control_record,
    encode_control_value,
)
from kafka_format.errors import DecodeError, DecodeFailure, EncodeError
from kafka_format.fast_codec import FastDecoder
from kafka_format.metadata_serde import (
    DecodedRecord,
    decode_canonical_value,
    decode_generic_value,
    encode_metadata_record,
    fast_decoder,
)
from raft.batch import Batch, LeaderChangeMessage

MIN_RECORD_SIZE = 7
"""The fewest bytes one record can take (length, attributes, deltas, key, value, headers)."""
_CACHEABLE_SECTION = 512
_CACHE_LIMIT = 4096


class LogDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """The good batches of some bytes, in order, and why decoding stopped early (if it did).

    ``valid_bytes`` is where the last good batch ends: the length Kafka's
    recovery would truncate the file to.
    """

    batches: tuple[DecodedBatch, ...]
    error: DecodeFailure | None
    valid_bytes: int
    total_bytes: int

    @property
    def ok(self) -> bool:
        """True when every byte decoded."""
        return self.error is None


def _read_length(buf: bytes, pos: int, end: int, what: str, nullable: bool) -> tuple[int, int]:
    start = pos
    length, pos = wire.read_varint(buf, pos, end)
    if length < -1 or (length == -1 and not nullable):
        raise DecodeError(f"{what} at byte {start} has length {length}", start)
    if length > end - pos:
        raise DecodeError(
            f"{what} at byte {start} declares {length} bytes but only {end - pos} remain",
            start,
            "corrupt",
        )
    return length, pos


def _read_headers(buf: bytes, pos: int, end: int) -> tuple[tuple[RecordHeader, ...], int]:
    start = pos
    count, pos = wire.read_varint(buf, pos, end)
    if count < 0 or count > (end - pos) // 2:
        raise DecodeError(f"record header count {count} at byte {start} is impossible", start)
    headers: list[RecordHeader] = []
    for _ in range(count):
        key_length, pos = _read_length(buf, pos, end, "header key", nullable=False)
        key = buf[pos : pos + key_length]
        pos += key_length
        value_length, pos = _read_length(buf, pos, end, "header value", nullable=True)
        value = None if value_length < 0 else buf[pos : pos + value_length]
        pos += max(value_length, 0)
        headers.append((key, value))
    return tuple(headers), pos


_FAST_VALUES: dict[bytes, tuple[FastDecoder, RecordFacts]] = {}
"""The fast decoder of each (frame, apiKey, version) and the facts of a canonical value."""


def _fast_value(frame: bytes) -> tuple[FastDecoder, RecordFacts] | None:
    """The :data:`_FAST_VALUES` entry of ``frame``, made on first use (None if none)."""
    found = fast_decoder(frame)
    if found is None:
        return None
    entry = _FAST_VALUES[frame] = (found[0], plain_facts(found[1]))
    return entry


def _raw_if_not_canonical(buf: bytes, pos: int, end: int, value: DecodedRecord) -> bytes | None:
    """The value's bytes when encoding the decoded value would not give them back."""
    try:
        encoded = encode_metadata_record(value.record, value.version, value.unknown_tagged_fields)
    except EncodeError:
        return buf[pos:end]
    if len(encoded) == end - pos and buf.startswith(encoded, pos):
        return None
    return buf[pos:end]


def _decode_value(
    buf: bytes, key: bytes | None, key_pos: int, value_pos: int, value_end: int, control: bool
) -> tuple[Any, int, tuple[wire.TaggedField, ...], bytes | None, bool]:
    """(record, version, unknown tags, raw value if not canonical, key is canonical)."""
    if not control:
        fast = decode_canonical_value(buf, value_pos, value_end)
        if fast is not None:
            return fast[0], fast[1], (), None, key is None
        value = decode_generic_value(buf, value_pos, value_end)
        raw = _raw_if_not_canonical(buf, value_pos, value_end, value)
        return value.record, value.version, value.unknown_tagged_fields, raw, key is None
    if key is None:
        raise DecodeError(f"control record at byte {value_pos} has no key", value_pos)
    decoded = decode_control_record(buf, key_pos, key_pos + len(key), value_pos, value_end)
    original = buf[value_pos:value_end]
    try:
        encoded = encode_control_value(decoded.record, decoded.unknown_tagged_fields)
    except EncodeError:
        encoded = b""
    return (
        decoded.record,
        decoded.key_version,
        decoded.unknown_tagged_fields,
        None if encoded == original else original,
        len(key) == CONTROL_KEY.size,
    )


def decode_records(
    buf: bytes, pos: int, end: int, count: int, control: bool
) -> tuple[tuple[Any, ...], tuple[RecordFacts, ...]]:
    """Decode ``count`` records from ``buf[pos:end]``, which they must fill exactly.

    The batch around them is whole (its CRC matched), so running out of bytes
    here is reported as ``corrupt``, not as a truncated file.
    """
    try:
        return _decode_records(buf, pos, end, count, control)
    except DecodeError as exc:
        if exc.kind == "truncated":
            exc.kind = "corrupt"
        raise


def _decode_records(
    buf: bytes, pos: int, end: int, count: int, control: bool
) -> tuple[tuple[Any, ...], tuple[RecordFacts, ...]]:
    if count > (end - pos) // MIN_RECORD_SIZE:
        raise DecodeError(
            f"record count {count} cannot fit in {end - pos} bytes", pos - 4, "corrupt"
        )
    records: list[Any] = []
    facts: list[RecordFacts] = []
    fast_values = _FAST_VALUES
    prefixes = plain_prefixes(count)
    known_prefixes = len(prefixes)
    for index in range(count):
        prefix = prefixes[index] if index < known_prefixes else plain_prefix(index)
        if not control and pos + 1 < end:
            # What Kafka writes, decoded inline: a record length of one or two bytes, no
            # attributes, no timestamp delta, no key, a value length of one or two bytes, a
            # canonical value and no headers. Anything else goes the long way below.
            byte = buf[pos]
            if byte < 0x80:
                length = (byte >> 1) ^ -(byte & 1)
                record_start = pos + 1
            else:
                raw_length = (byte & 0x7F) | (buf[pos + 1] << 7)
                length = (raw_length >> 1) ^ -(raw_length & 1) if raw_length < 0x4000 else -1
                record_start = pos + 2
            record_end = record_start + length
            value_pos = record_start + len(prefix)
            if (
                value_pos + 1 < record_end <= end
                and buf[record_end - 1] == 0
                and buf.startswith(prefix, record_start)
            ):
                byte = buf[value_pos]
                if byte < 0x80:
                    value_length = (byte >> 1) ^ -(byte & 1)
                    value_pos += 1
                else:
                    raw_length = (byte & 0x7F) | (buf[value_pos + 1] << 7)
                    value_length = (raw_length >> 1) ^ -(raw_length & 1)
                    value_pos += 2
                frame = buf[value_pos : value_pos + 3]
                entry = fast_values.get(frame)
                if entry is None:
                    entry = _fast_value(frame)
                if entry is not None and 0 <= value_length == record_end - 1 - value_pos:
                    try:
                        records.append(entry[0](buf, value_pos + 3, record_end - 1))
                    except Exception:  # not canonical, or damaged: the long way decides
                        pass
                    else:
                        facts.append(entry[1])
                        pos = record_end
                        continue
        start = pos
        length, pos = _read_length(buf, pos, end, f"record {index}", nullable=False)
        record_end = pos + length
        if (
            not control
            and length > len(prefix) + 1
            and buf[record_end - 1] == 0
            and buf.startswith(prefix, pos)
        ):
            # What Kafka writes: no attributes, no timestamp delta, no key, no headers.
            value_length, value_pos = _read_length(
                buf, pos + len(prefix), record_end, "record value", nullable=False
            )
            if value_pos + value_length == record_end - 1:
                value = decode_generic_value(buf, value_pos, record_end - 1)
                raw = _raw_if_not_canonical(buf, value_pos, record_end - 1, value)
                records.append(value.record)
                if raw is None and not value.unknown_tagged_fields:
                    facts.append(plain_facts(value.version))
                else:
                    facts.append(RecordFacts(value.version,
                                             unknown_tagged_fields=value.unknown_tagged_fields,
                                             raw_value=raw))  # fmt: skip
                pos = record_end
                continue
        attributes, pos = wire.read_int8(buf, pos, record_end)
        timestamp_delta, pos = wire.read_varlong(buf, pos, record_end)
        offset_delta, pos = wire.read_varint(buf, pos, record_end)
        if offset_delta != index:
            raise DecodeError(
                f"record {index} at byte {start} has offset delta {offset_delta}", start
            )
        key_length, pos = _read_length(buf, pos, record_end, "record key", nullable=True)
        key_pos = pos
        key = None if key_length < 0 else buf[pos : pos + key_length]
        pos += max(key_length, 0)
        value_length, pos = _read_length(buf, pos, record_end, "record value", nullable=False)
        value_pos = pos
        value_end = pos = pos + value_length
        headers, pos = _read_headers(buf, pos, record_end)
        if pos != record_end:
            raise DecodeError(
                f"record {index} at byte {start} declares {length} bytes "
                f"but {record_end - pos} of them are left over",
                start,
            )
        record, version, unknown, raw, canonical_key = _decode_value(
            buf, key, key_pos, value_pos, value_end, control
        )
        records.append(record)
        if attributes or timestamp_delta or headers or unknown or raw is not None or not (
            canonical_key
        ):
            facts.append(
                RecordFacts(
                    version,
                    attributes,
                    timestamp_delta,
                    None if canonical_key else key,
                    headers,
                    unknown,
                    raw,
                )
            )
        else:
            facts.append(plain_facts(version))
    if pos != end:
        raise DecodeError(
            f"{end - pos} bytes follow the last of {count} records", pos, "corrupt"
        )
    return tuple(records), tuple(facts)


def _check_header(
    data: bytes, pos: int, size: int, expected_offset: int | None
) -> NoReturn:
    """Raise the DecodeError that names what is wrong with the batch at ``pos``."""
    if size - pos < HEADER_SIZE:
        raise DecodeError(
            f"only {size - pos} bytes remain for a batch header of {HEADER_SIZE}", pos, "truncated"
        )
    fields = HEADER.unpack_from(data, pos)
    base_offset, batch_length, _epoch, magic, stored_crc, attributes = fields[:6]
    if batch_length < HEADER_SIZE - LENGTH_PREFIX:
        raise DecodeError(f"batch length {batch_length} is below the header's size", pos + 8)
    if batch_length > size - pos - LENGTH_PREFIX:
        raise DecodeError(
            f"batch declares {batch_length} bytes after its length field but only "
            f"{size - pos - LENGTH_PREFIX} remain",
            pos + 8,
            "truncated",
        )
    if magic != MAGIC:
        raise DecodeError(
            f"batch magic {magic} is not 2 (record batch v2)", pos + 16, "unsupported"
        )
    end = pos + LENGTH_PREFIX + batch_length
    actual_crc = crc32c(data[pos + CRC_START : end])
    if actual_crc != stored_crc:
        raise DecodeError(
            f"CRC-32C mismatch: stored {stored_crc}, computed {actual_crc}",
            pos + 17,
            "crc-mismatch",
        )
    if (attributes & COMPRESSION_MASK) not in COMPRESSION_NAMES:
        raise DecodeError(
            f"compression type {attributes & COMPRESSION_MASK} is not one of Kafka's "
            f"(0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)",
            pos + 21,
            "unsupported",
        )
    if expected_offset is not None and base_offset != expected_offset:
        raise DecodeError(
            f"base offset {base_offset} does not follow the previous batch (expected "
            f"{expected_offset})",
            pos,
        )
    count = fields[12]
    if count < 0 or fields[6] != count - 1:
        raise DecodeError(
            f"record count {count} and last offset delta {fields[6]} disagree", pos + 57
        )
    raise AssertionError("a batch failed the quick check but passes every named check")


_LAST_CODEC = max(COMPRESSION_NAMES)
"""The highest compression codec id Kafka has (zstd)."""


def _decompressed_records(codec: int, stored: bytes, start: int, count: int, control: bool
                          ) -> tuple[tuple[Any, ...], tuple[RecordFacts, ...]]:
    """The records of a compressed batch whose section, stored at byte ``start``, is
    ``stored`` (as Kafka's reader, which decompresses any batch it meets)."""
    section = compression.decompress(codec, stored, start)
    try:
        return decode_records(section, 0, len(section), count, control)
    except DecodeError as exc:  # a position in the decompressed bytes means nothing on disk
        raise DecodeError(f"in the records decompressed from byte {start}, at their byte "
                          f"{exc.position}: {exc.message}", start, exc.kind) from None


_EPOCH_FIELD = 12
"""Where ``partitionLeaderEpoch`` sits in a batch header (after baseOffset and length)."""


def _check_log_epoch(epoch: int, previous: int, control: int, records: tuple[Any, ...],
                     pos: int) -> None:
    """A log's epoch never decreases and changes only at the new leader's first batch.

    Kafka's leader starts its epoch by appending a LeaderChange control batch
    (``KafkaRaftClient.onBecomeLeader``). The CRC does not cover
    ``partitionLeaderEpoch``, so this is the only check a flipped epoch meets.
    """
    if epoch < previous:
        raise DecodeError(f"partitionLeaderEpoch {epoch} after {previous}: a log's epochs "
                          f"never decrease", pos + _EPOCH_FIELD)
    if not control or not any(isinstance(r, LeaderChangeMessage) for r in records):
        raise DecodeError(f"partitionLeaderEpoch {epoch} after {previous}: a new epoch starts "
                          f"with its leader's LeaderChange control batch, and this batch is "
                          f"not one", pos + _EPOCH_FIELD)


def decode_log(
    data: bytes, *, source: str = "<bytes>", first_offset: int | None = None,
    leader_epochs: bool = False, previous_epoch: int | None = None,
    snapshot_epoch: int | None = None, start: int = 0,
) -> LogDecodeResult:
    """Decode consecutive batches (a ``.log`` segment or a ``.checkpoint``'s bytes).

    ``source`` names the input in error reports. Batches must follow each
    other without gaps; ``first_offset``, when given, is the base offset the
    first batch must have (a segment's file name). With ``leader_epochs`` (a
    log segment) the batches' epochs never decrease and change only at a
    LeaderChange control batch; ``previous_epoch`` is the epoch of the batch
    before this segment's first, if any. With ``snapshot_epoch`` (a snapshot)
    every batch carries that epoch. ``start`` is the byte the first batch starts at
    (positions, in batches and errors, stay those in ``data``). Never raises on bad bytes.
    """
    data = bytes(data)
    size = len(data)
    pos = start
    # Without a first offset, the first batch sets what the next one must start at.
    expected = first_offset
    if expected is None and size - start >= 8:
        expected = wire.INT64.unpack_from(data, start)[0]
    batches: list[DecodedBatch] = []
    append = batches.append
    unpack_header = HEADER.unpack_from
    checksum = crc32c_of_bytes
    # Decoded records sections by their bytes and the record count before them.
    data_cache: dict[bytes, tuple[tuple[Any, ...], tuple[RecordFacts, ...]]] = {}
    control_cache: dict[bytes, tuple[tuple[Any, ...], tuple[RecordFacts, ...]]] = {}
    min_length = HEADER_SIZE - LENGTH_PREFIX
    cacheable = HEADER_SIZE + _CACHEABLE_SECTION
    control_flag = CONTROL_FLAG
    current_epoch = snapshot_epoch if snapshot_epoch is not None else previous_epoch
    try:
        # ``while True`` and not ``while pos < size``: CPython 3.11 only warms a code object
        # up for its specialising interpreter on calls and unconditional backward jumps,
        # and this function is called once per file.
        while True:
            if pos >= size:
                break
            try:
                (base_offset, batch_length, epoch, magic, crc, attributes, last_delta,
                 base_ts, max_ts, producer_id, producer_epoch, base_seq, count) = unpack_header(
                    data, pos)  # fmt: skip
            except struct.error:  # fewer than 61 bytes left
                _check_header(data, pos, size, expected)
            end = pos + LENGTH_PREFIX + batch_length
            # The common case is tested in one go; _check_header names any problem.
            if (
                batch_length < min_length
                or end > size
                or magic != MAGIC
                or (attributes & COMPRESSION_MASK) > _LAST_CODEC
                or last_delta != count - 1
                or count < 0
                or base_offset != expected
                or checksum(data[pos + CRC_START : end]) != crc
            ):
                _check_header(data, pos, size, expected)
            control = attributes & control_flag
            compressed = None
            if attributes & COMPRESSION_MASK:
                compressed = data[pos + HEADER_SIZE : end]
                records, facts = _decompressed_records(
                    attributes & COMPRESSION_MASK, compressed, pos + HEADER_SIZE, count,
                    bool(control))
            elif end - pos > cacheable:
                records, facts = decode_records(data, pos + HEADER_SIZE, end, count, bool(control))
            else:
                cache = control_cache if control else data_cache
                key = data[pos + HEADER_SIZE - 4 : end]  # the record count and the records
                cached = cache.get(key)
                if cached is None:
                    cached = decode_records(data, pos + HEADER_SIZE, end, count, bool(control))
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[key] = cached
                records, facts = cached
            if epoch != current_epoch:
                if snapshot_epoch is not None:
                    raise DecodeError(
                        f"partitionLeaderEpoch {epoch}, but every batch of a snapshot carries "
                        f"the epoch of its file name ({snapshot_epoch})", pos + _EPOCH_FIELD)
                if leader_epochs and current_epoch is not None:
                    _check_log_epoch(epoch, current_epoch, control, records, pos)
                current_epoch = epoch
            append(
                DecodedBatch(
                    Batch(base_offset, epoch, (), records, max_ts)
                    if control
                    else Batch(base_offset, epoch, records, (), max_ts),
                    facts,
                    attributes,
                    base_ts,
                    producer_id,
                    producer_epoch,
                    base_seq,
                    pos,
                    end - pos,
                    crc,
                    compressed,
                )
            )
            expected = base_offset + count
            pos = end
    except DecodeError as exc:
        failure = DecodeFailure(
            source,
            exc.kind,
            exc.message,
            exc.position,
            len(batches),
            wire.INT64.unpack_from(data, pos)[0] if size - pos >= 8 else None,
            pos,
        )
        return LogDecodeResult(tuple(batches), failure, pos, size)
    return LogDecodeResult(tuple(batches), None, pos, size)


def encode_log(batches: Iterable[DecodedBatch]) -> bytes:
    """The bytes of decoded batches, identical to those they were decoded from.

    Batches that share their records and facts tuples (as :func:`decode_log`
    makes identical NoOp batches do) share one encoded records section.
    """
    out: list[bytes] = []
    sections: dict[int, tuple[Any, Any, bytes]] = {}  # by id of the facts tuple
    for decoded in batches:
        batch = decoded.batch
        facts = decoded.facts
        control = bool(decoded.attributes & CONTROL_FLAG)
        records = batch.control_records if control else batch.records
        if batch.records if control else batch.control_records:
            raise EncodeError(f"batch at offset {batch.base_offset} mixes data and control records")
        entry = sections.get(id(facts))
        if decoded.compressed_records is not None:
            section = decoded.compressed_records
        elif decoded.attributes & COMPRESSION_MASK:
            section = compress_section(decoded.attributes,
                                       encode_records(records, facts, control))
        elif entry is not None and entry[0] is records and entry[1] is facts:
            section = entry[2]
        else:
            section = encode_records(records, facts, control)
            if len(sections) >= _CACHE_LIMIT:
                sections.clear()
            sections[id(facts)] = (records, facts, section)
        out.append(pack_batch(
            batch, decoded.attributes, decoded.base_timestamp, decoded.producer_id,
            decoded.producer_epoch, decoded.base_sequence, len(records), section,
        ))  # fmt: skip
    return b"".join(out)
