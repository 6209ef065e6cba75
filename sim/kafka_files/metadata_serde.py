"""Metadata record values: the frame and the record body.

A metadata record value (the value of a record in a data batch) is three
unsigned varints, frame version (always 1), apiKey and record version, then
the body in the flexible encoding of that record's schema. A type or version
this codec does not model decodes to :class:`UnknownRecord` with the body as
``payload``, and re-encodes to the same bytes.
"""

from __future__ import annotations

import struct
from typing import Any

import msgspec

from controller.records.schema import MetadataRecord, UnknownRecord
from sim.kafka_files import wire
from sim.kafka_files.errors import DecodeError, EncodeError
from sim.kafka_files.message_codec import MessageCodec, compile_codec
from sim.kafka_files.metadata_schemas import METADATA_SCHEMAS
from sim.kafka_files.wire import TaggedField

FRAME_VERSION = 1
"""The only metadata frame version Kafka writes and reads."""

_CODECS: dict[tuple[int, int], tuple[type[Any], MessageCodec]] = {
    (api_key, version): (schema.cls, compile_codec(schema, version))
    for api_key, schema in METADATA_SCHEMAS.items()
    for version in range(schema.max_version + 1)
}


def supported_versions(api_key: int) -> range:
    """The record versions this codec models for an apiKey (empty if none)."""
    schema = METADATA_SCHEMAS.get(api_key)
    return range(schema.max_version + 1) if schema is not None else range(0)


class DecodedRecord(msgspec.Struct, frozen=True, gc=False):
    """A metadata record with what its bytes say beyond the record itself.

    ``version`` is the record version read from the frame;
    ``unknown_tagged_fields`` are tags this codec does not model, kept as
    ``(tag, payload)`` so that re-encoding writes them back.
    """

    record: MetadataRecord
    version: int
    unknown_tagged_fields: tuple[TaggedField, ...] = ()


def decode_metadata_value(buf: bytes, pos: int, end: int) -> DecodedRecord:
    """Decode the metadata record in ``buf[pos:end]``; raises :class:`DecodeError`."""
    frame, pos = wire.read_uvarint(buf, pos, end)
    if frame != FRAME_VERSION:
        raise DecodeError(f"unknown metadata frame version {frame}", pos - 1)
    api_key, pos = wire.read_uvarint(buf, pos, end)
    version, pos = wire.read_uvarint(buf, pos, end)
    entry = _CODECS.get((api_key, version))
    if entry is None:
        unknown_record = UnknownRecord(api_key=api_key, version=version, payload=buf[pos:end])
        return DecodedRecord(unknown_record, version)
    cls, codec = entry
    values, unknown, after = codec.decode(buf, pos, end)
    if after != end:
        raise DecodeError(
            f"{codec.name} ends at byte {after} but its value runs to byte {end}", after
        )
    return DecodedRecord(cls(**values), version, unknown)


def decode_metadata_record(data: bytes) -> DecodedRecord:
    """Decode one whole metadata record value; raises :class:`DecodeError`."""
    return decode_metadata_value(data, 0, len(data))


def encode_metadata_record(
    record: MetadataRecord, version: int, unknown_tagged_fields: tuple[TaggedField, ...] = ()
) -> bytes:
    """The value bytes of ``record`` at ``version``; raises :class:`EncodeError`.

    An :class:`UnknownRecord` is written with its own apiKey, version and
    payload (``version`` must agree with it).
    """
    out = bytearray()
    write_metadata_value(out, record, version, unknown_tagged_fields)
    return bytes(out)


def write_metadata_value(
    out: bytearray,
    record: MetadataRecord,
    version: int,
    unknown_tagged_fields: tuple[TaggedField, ...] = (),
) -> None:
    """Append the value bytes of ``record`` at ``version`` to ``out``."""
    if isinstance(record, UnknownRecord):
        if version != record.version:
            raise EncodeError(
                f"UnknownRecord of version {record.version} cannot be written as version {version}"
            )
        out.append(FRAME_VERSION)
        wire.write_uvarint(out, record.api_key)
        wire.write_uvarint(out, record.version)
        out += record.payload
        return
    api_key = type(record).API_KEY
    entry = _CODECS.get((api_key, version))
    if entry is None or not isinstance(record, entry[0]):
        raise EncodeError(f"{type(record).__name__} has no version {version} in this codec")
    out.append(FRAME_VERSION)
    wire.write_uvarint(out, api_key)
    wire.write_uvarint(out, version)
    try:
        entry[1].encode(out, record, unknown_tagged_fields)
    except (struct.error, TypeError, AttributeError, OverflowError) as exc:
        raise EncodeError(f"{type(record).__name__} v{version}: {exc}") from None
