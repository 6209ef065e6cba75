"""Record batch v2 (magic 2): the layout, the decoded form, and the encoder.

Layout (Kafka's ``DefaultRecordBatch``), 61 header bytes then the records::

    baseOffset int64 | batchLength int32 (bytes after this field)
    partitionLeaderEpoch int32 | magic int8 (2) | crc uint32 (CRC-32C of attributes..end)
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64
    producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32

Attribute bits: 0-2 compression (none, or gzip, snappy, lz4, zstd: Kafka's raft
layer never compresses, but its reader decompresses a batch that is; so does this
one, keeping the stored section to write it back), 3 timestamp type,
4 transactional, 5 control, 6 delete horizon. Each record (``DefaultRecord``)
is a zig-zag varint length, then attributes int8, timestampDelta varlong,
offsetDelta varint, key (varint length, -1 = null), value (likewise), and a
varint count of headers (key, value). A metadata batch has records with no
key whose value is a metadata record; a control batch has records whose key
is (version, type) and whose value is a control record.

A decoded batch is a :class:`raft.batch.Batch` plus what the ``Batch`` does
not model (:class:`BatchHeader`, one :class:`RecordFacts` per record), which is
exactly what re-encoding needs to reproduce the original bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import google_crc32c
import msgspec

from kafka_format import compression, wire
from kafka_format.control_records import encode_control_key, encode_control_value
from kafka_format.errors import EncodeError
from kafka_format.metadata_serde import fast_encoder, write_metadata_value
from kafka_format.record_versions import (
    LEVEL_VERSIONED_TYPES,
    metadata_version_after,
    record_version,
)
from kafka_format.wire import TaggedField
from metadata.schema import MetadataRecord
from raft.batch import Batch

HEADER = struct.Struct(">qiibIhiqqqhii")
"""The whole 61-byte batch header."""
_HEADER_BEFORE_CRC = struct.Struct(">qiibI")
_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")
HEADER_SIZE = HEADER.size
"""61: bytes before the first record."""
LENGTH_PREFIX = 12
"""baseOffset and batchLength: the bytes ``batchLength`` does not count."""
CRC_START = 21
"""Offset, in a batch, of the first byte the CRC covers (the attributes)."""
MAGIC = 2
"""The only batch format this codec reads and writes."""

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40
COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
"""Kafka's compression codec ids."""

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1


crc32c_of_bytes: Callable[[bytes], int] = google_crc32c.value
"""CRC-32C (Castagnoli) of ``bytes``, Google's C implementation called directly."""


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``, with Google's C implementation."""
    return int(google_crc32c.value(bytes(data)))


class BatchHeader(msgspec.Struct, frozen=True, gc=False):
    """The header facts of a batch that :class:`raft.batch.Batch` does not hold.

    ``base_offset`` and ``partitionLeaderEpoch`` are the Batch's
    ``base_offset`` and ``epoch``; ``max_timestamp`` is its ``append_time_ms``;
    the length, CRC, lastOffsetDelta and record count follow from the records.
    """

    attributes: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE

    @property
    def is_control(self) -> bool:
        """True for a batch of control records."""
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def compression(self) -> str:
        """The compression codec's name (``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``)."""
        return COMPRESSION_NAMES.get(self.attributes & COMPRESSION_MASK, "unknown")

    @property
    def is_transactional(self) -> bool:
        """True for a batch of a transactional producer (never in a metadata log)."""
        return bool(self.attributes & TRANSACTIONAL_FLAG)


RecordHeader = tuple[bytes, bytes | None]
"""A record header: key bytes (UTF-8 in Kafka) and value bytes or null."""


class RecordFacts(msgspec.Struct, frozen=True, gc=False):
    """What one record of a batch carries besides its decoded value.

    ``version`` is the metadata record version of a data record, or the
    control key version of a control record. ``raw_value`` is set only when
    the value's bytes are not what encoding the decoded value gives (e.g. a
    tagged field written with its default, or a non-minimal varint): then the
    bytes are written back as they were. ``key`` is set only when it is not
    the canonical one (none for data records, (version, type) for control).
    """

    version: int
    attributes: int = 0
    timestamp_delta: int = 0
    key: bytes | None = None
    headers: tuple[RecordHeader, ...] = ()
    unknown_tagged_fields: tuple[TaggedField, ...] = ()
    raw_value: bytes | None = None


_PLAIN_FACTS = tuple(RecordFacts(version) for version in range(16))


def plain_facts(version: int) -> RecordFacts:
    """The facts of a record Kafka writes for a metadata log: just its version (shared)."""
    return _PLAIN_FACTS[version] if 0 <= version < len(_PLAIN_FACTS) else RecordFacts(version)


def plain_prefix(index: int) -> bytes:
    """The bytes before the value of a plain data record: attributes, deltas, null key."""
    out = bytearray(b"\x00\x00")  # attributes 0, timestamp delta 0
    wire.write_varint(out, index)
    out.append(1)  # zig-zag -1: no key
    return bytes(out)


_PREFIX_LIMIT = 1 << 16
_prefixes: tuple[bytes, ...] = tuple(plain_prefix(index) for index in range(1024))


def plain_prefixes(count: int) -> tuple[bytes, ...]:
    """:func:`plain_prefix` of every index below ``count`` (of the first 65,536 at most),
    and of any more indexes already cached: a caller reads only the first ``count``."""
    global _prefixes
    known = _prefixes
    if len(known) < count and len(known) < _PREFIX_LIMIT:
        wanted = min(max(count, 2 * len(known)), _PREFIX_LIMIT)
        known = known + tuple(plain_prefix(index) for index in range(len(known), wanted))
        _prefixes = known
    return known


class DecodedBatch(msgspec.Struct, frozen=True, gc=False):
    """One batch read from bytes: the :class:`Batch` and the facts to re-encode it.

    The header facts the ``Batch`` does not hold are kept flat (one object per
    batch is cheaper to decode); :attr:`header` gathers them. ``position`` is
    the byte where the batch starts in its file, ``size`` its total length in
    bytes and ``crc`` the checksum it carries (verified when decoded).
    ``compressed_records`` is the records section of a compressed batch as it
    was stored: re-encoding writes it back as it is (compressors differ from
    Kafka's byte for byte), so a batch whose records change must drop it.
    """

    batch: Batch
    facts: tuple[RecordFacts, ...]
    attributes: int
    base_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    position: int
    size: int
    crc: int
    compressed_records: bytes | None = None

    @classmethod
    def of(
        cls, batch: Batch, header: BatchHeader, facts: tuple[RecordFacts, ...],
        position: int, size: int, crc: int,
    ) -> DecodedBatch:
        """A decoded batch from a :class:`BatchHeader` (its max timestamp is the Batch's)."""
        return cls(batch, facts, header.attributes, header.base_timestamp, header.producer_id,
                   header.producer_epoch, header.base_sequence, position, size, crc)  # fmt: skip

    @property
    def header(self) -> BatchHeader:
        """The batch header facts that the :class:`Batch` does not hold."""
        return BatchHeader(
            self.attributes, self.base_timestamp, self.batch.append_time_ms, self.producer_id,
            self.producer_epoch, self.base_sequence,
        )

    @property
    def is_control(self) -> bool:
        """True for a batch of control records."""
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def last_offset(self) -> int:
        """The offset of the batch's last record."""
        return self.batch.base_offset + len(self.facts) - 1

    @property
    def records(self) -> tuple[Any, ...]:
        """The decoded records: metadata records, or control records of a control batch."""
        return self.batch.control_records if self.is_control else self.batch.records


def _write_record(
    out: bytearray, index: int, record: Any, facts: RecordFacts, control: bool
) -> None:
    body = bytearray()
    attributes = facts.attributes
    body.append(attributes & 0xFF)
    wire.write_varlong(body, facts.timestamp_delta)
    wire.write_varint(body, index)
    key = facts.key
    if key is None and control:
        key = encode_control_key(record, facts.version)
    if key is None:
        body.append(1)  # zig-zag -1: no key
    else:
        wire.write_varint(body, len(key))
        body += key
    value = facts.raw_value
    if value is None:
        if control:
            value = encode_control_value(record, facts.unknown_tagged_fields)
        else:
            if not isinstance(record, MetadataRecord):
                raise EncodeError(f"{type(record).__name__} is not a metadata record")
            value_out = bytearray()
            write_metadata_value(value_out, record, facts.version, facts.unknown_tagged_fields)
            value = bytes(value_out)
    wire.write_varint(body, len(value))
    body += value
    wire.write_varint(body, len(facts.headers))
    for header_key, header_value in facts.headers:
        wire.write_varint(body, len(header_key))
        body += header_key
        if header_value is None:
            body.append(1)
        else:
            wire.write_varint(body, len(header_value))
            body += header_value
    wire.write_varint(out, len(body))
    out += body


def encode_records(
    records: Sequence[Any], facts: Sequence[RecordFacts], control: bool
) -> bytes:
    """The records section of a batch (everything after the 61-byte header)."""
    if len(records) != len(facts):
        raise EncodeError(f"{len(records)} records but facts for {len(facts)}")
    out = bytearray()
    if control:
        for index, (record, record_facts) in enumerate(zip(records, facts, strict=True)):
            _write_record(out, index, record, record_facts, control)
        return bytes(out)
    prefixes = plain_prefixes(len(records))
    known_prefixes = len(prefixes)
    plain = _PLAIN_FACTS
    lengths = _ZIGZAG
    short = len(lengths) - 16  # a value this short has both lengths in the table
    last_type: type[Any] | None = None
    last_facts: RecordFacts | None = None
    encode = None
    for index in range(len(records)):
        # A plain data record (what Kafka writes) is framed inline around its value; any
        # other record, or a value the fast encoder leaves alone, takes _write_record.
        record = records[index]
        record_facts = facts[index]
        if record_facts is not last_facts or type(record) is not last_type:
            last_facts, last_type = record_facts, type(record)
            version = record_facts.version
            plain_record = 0 <= version < len(plain) and plain[version] is record_facts
            encode = fast_encoder(last_type, version) if plain_record else None
        if encode is None:
            _write_record(out, index, record, record_facts, control)
            continue
        value = bytearray()
        try:
            encode(value, record)
        except Exception:  # the generic encoder decides
            _write_record(out, index, record, record_facts, control)
            continue
        prefix = prefixes[index] if index < known_prefixes else plain_prefix(index)
        size = len(value)
        if size < short:
            size_bytes = lengths[size]
            out += lengths[len(prefix) + len(size_bytes) + size + 1]
        else:
            size_bytes = zigzag_bytes(size)
            out += zigzag_bytes(len(prefix) + len(size_bytes) + size + 1)
        out += prefix
        out += size_bytes
        out += value
        out.append(0)  # no headers
    return bytes(out)


def zigzag_bytes(value: int) -> bytes:
    """The zig-zag varint of an int32."""
    if 0 <= value < len(_ZIGZAG):
        return _ZIGZAG[value]
    out = bytearray()
    wire.write_varint(out, value)
    return bytes(out)


def _zigzag_table(count: int) -> tuple[bytes, ...]:
    table = []
    for value in range(count):
        out = bytearray()
        wire.write_varint(out, value)
        table.append(bytes(out))
    return tuple(table)


_ZIGZAG = _zigzag_table(4096)
"""The zig-zag varints of 0..4095: the record and value lengths of most records."""


def assemble_batch(
    batch: Batch,
    attributes: int,
    base_timestamp: int,
    header: tuple[int, int, int],
    count: int,
    records_section: bytes,
) -> bytes:
    """A whole batch from its header facts and its encoded records section.

    ``header`` is (producerId, producerEpoch, baseSequence); the max timestamp
    is the batch's append time.
    """
    return pack_batch(batch, attributes, base_timestamp, *header, count, records_section)


def pack_batch(
    batch: Batch, attributes: int, base_timestamp: int, producer_id: int, producer_epoch: int,
    base_sequence: int, count: int, records_section: bytes,
) -> bytes:  # fmt: skip
    """:func:`assemble_batch` with the producer fields given one by one."""
    try:
        tail = _HEADER_AFTER_CRC.pack(
            attributes, count - 1, base_timestamp, batch.append_time_ms, producer_id,
            producer_epoch, base_sequence, count,
        ) + records_section  # fmt: skip
        head = _HEADER_BEFORE_CRC.pack(
            batch.base_offset, HEADER_SIZE - LENGTH_PREFIX + len(records_section), batch.epoch,
            MAGIC, crc32c_of_bytes(tail),
        )
    except struct.error as exc:
        raise EncodeError(f"batch at offset {batch.base_offset}: {exc}") from None
    return head + tail


def assemble_decoded(decoded: DecodedBatch, count: int, records_section: bytes) -> bytes:
    """A decoded batch's bytes, given its encoded records section."""
    return pack_batch(
        decoded.batch, decoded.attributes, decoded.base_timestamp, decoded.producer_id,
        decoded.producer_epoch, decoded.base_sequence, count, records_section,
    )


def _records_of(batch: Batch, control: bool) -> tuple[Any, ...]:
    if batch.records and batch.control_records:
        raise EncodeError(f"batch at offset {batch.base_offset} mixes data and control records")
    return batch.control_records if control else batch.records


def encode_decoded_batch(decoded: DecodedBatch) -> bytes:
    """The bytes of a decoded batch: identical to the bytes it was decoded from."""
    control = decoded.is_control
    records = _records_of(decoded.batch, control)
    if decoded.compressed_records is not None:
        return assemble_decoded(decoded, len(records), decoded.compressed_records)
    section = compress_section(decoded.attributes,
                               encode_records(records, decoded.facts, control))
    return assemble_decoded(decoded, len(records), section)


def compress_section(attributes: int, section: bytes) -> bytes:
    """A records section compressed with the codec of a batch's ``attributes`` (as is
    when they say none)."""
    codec = attributes & COMPRESSION_MASK
    return compression.compress(codec, section) if codec else section


def header_for(batch: Batch) -> BatchHeader:
    """The header Kafka's raft layer writes for a batch: no producer, timestamps = append time."""
    return BatchHeader(
        CONTROL_FLAG if batch.control_records else 0, batch.append_time_ms, batch.append_time_ms
    )


def facts_for(batch: Batch, metadata_version: int) -> tuple[RecordFacts, ...]:
    """Record facts for a simulated batch: versions chosen for ``metadata_version``."""
    if batch.control_records:
        return (plain_facts(0),) * len(batch.control_records)
    facts = []
    known: dict[type[Any], RecordFacts] = {}  # of the types whose version the level decides
    for record in batch.records:
        record_facts = known.get(type(record))
        if record_facts is None:
            if not isinstance(record, MetadataRecord):
                raise EncodeError(
                    f"batch at offset {batch.base_offset}: {type(record).__name__} "
                    "is not a metadata record"
                )
            record_facts = plain_facts(record_version(record, metadata_version))
            if type(record) in LEVEL_VERSIONED_TYPES:
                known[type(record)] = record_facts
        facts.append(record_facts)
    return tuple(facts)


def to_decoded_batch(batch: Batch, metadata_version: int, position: int = 0) -> DecodedBatch:
    """A simulated batch with the facts Kafka would write (versions for ``metadata_version``)."""
    header = header_for(batch)
    facts = facts_for(batch, metadata_version)
    data = encode_batch(batch, metadata_version)
    crc = HEADER.unpack_from(data)[4]
    return DecodedBatch.of(batch, header, facts, position, len(data), crc)


def encode_batch(batch: Batch, metadata_version: int) -> bytes:
    """The bytes of a simulated batch, record versions chosen for ``metadata_version``."""
    control = bool(batch.control_records)
    records = _records_of(batch, control)
    section = encode_records(records, facts_for(batch, metadata_version), control)
    header = header_for(batch)
    return assemble_batch(
        batch, header.attributes, header.base_timestamp,
        (header.producer_id, header.producer_epoch, header.base_sequence), len(records), section,
    )


def encode_batches(batches: Iterable[Batch], metadata_version: int) -> bytes:
    """The bytes of consecutive simulated batches (a log segment's content).

    ``metadata_version`` is the level before the first batch; a batch that
    sets metadata.version (a FeatureLevelRecord) changes the record versions
    of the batches after it, as it does in Kafka.
    """
    out = []
    for batch in batches:
        out.append(encode_batch(batch, metadata_version))
        metadata_version = metadata_version_after(batch.records, metadata_version)
    return b"".join(out)
