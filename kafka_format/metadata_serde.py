"""Metadata record values: the frame and the record body.

A metadata record value (the value of a record in a data batch) is three
unsigned varints, frame version (always 1), apiKey and record version, then
the body in the flexible encoding of that record's schema. A type or version
this codec does not model decodes to :class:`UnknownRecord` with the body as
``payload``, and re-encodes to the same bytes.

A version above the newest one modelled for a known type is read with the
newest schema when that reads the body exactly: Kafka's metadata records are
flexible, and their new versions have added tagged fields only (Kafka 4.3's
RegisterBrokerRecord v4 and BrokerRegistrationChangeRecord v3 add the tagged
CordonedLogDirs), which are kept as unknown tagged fields. Such a record keeps
its version; it cannot be encoded at that version, so a log keeps its bytes
(:mod:`kafka_format.log_codec`). A body the newest schema does not read exactly
stays an :class:`UnknownRecord`.
"""

from __future__ import annotations

import contextlib
import struct
from typing import Any

import msgspec

from kafka_format import wire
from kafka_format.errors import DecodeError, EncodeError
from kafka_format.fast_codec import FastDecoder, FastEncoder, Unsupported, message_decoder
from kafka_format.fast_encode import message_encoder
from kafka_format.message_codec import MessageCodec, MessageSchema, compile_codec
from kafka_format.metadata_schemas import METADATA_SCHEMAS
from kafka_format.wire import TaggedField
from metadata.schema import MetadataRecord, UnknownRecord

FRAME_VERSION = 1
"""The only metadata frame version Kafka writes and reads."""

_CODECS: dict[tuple[int, int], tuple[type[Any], MessageCodec]] = {
    (api_key, version): (schema.cls, compile_codec(schema, version))
    for api_key, schema in METADATA_SCHEMAS.items()
    for version in range(schema.max_version + 1)
}


FAST_DECODERS: dict[bytes, tuple[FastDecoder, int]] = {}
"""The fast decoders generated so far, by a value's first three bytes (frame, apiKey,
version), each with its version: see :func:`fast_decoder`."""
FAST_ENCODERS: dict[tuple[type[Any], int], FastEncoder] = {}
"""The fast encoders (frame and body) generated so far, by exact record type and
version: see :func:`fast_encoder`."""


def _unbuilt() -> tuple[
    dict[bytes, tuple[MessageSchema, int]],
    dict[tuple[type[Any], int], tuple[MessageSchema, int, bytes]],
]:
    decoders: dict[bytes, tuple[MessageSchema, int]] = {}
    encoders: dict[tuple[type[Any], int], tuple[MessageSchema, int, bytes]] = {}
    for api_key, schema in METADATA_SCHEMAS.items():
        for version in range(schema.max_version + 1):
            if api_key <= 0x7F and version <= 0x7F:
                frame = bytes([FRAME_VERSION, api_key, version])
                decoders[frame] = (schema, version)
                encoders[schema.cls, version] = (schema, version, frame)
    return decoders, encoders


# What can still be generated: on first use, as generating them all costs tens of ms.
_UNBUILT_DECODERS, _UNBUILT_ENCODERS = _unbuilt()


def fast_decoder(frame: bytes) -> tuple[FastDecoder, int] | None:
    """The fast decoder of the values that start with ``frame`` and their version.

    Generated on first use; ``None`` when there is none (the generic codec then
    does it all).
    """
    entry = FAST_DECODERS.get(frame)
    if entry is None:
        unbuilt = _UNBUILT_DECODERS.pop(frame, None)
        if unbuilt is not None:
            with contextlib.suppress(Unsupported):
                entry = FAST_DECODERS[frame] = (message_decoder(*unbuilt), unbuilt[1])
    return entry


def fast_encoder(cls: type[Any], version: int) -> FastEncoder | None:
    """The fast encoder of records of exactly ``cls`` at ``version`` (frame and body).

    Generated on first use; ``None`` when there is none.
    """
    encoder = FAST_ENCODERS.get((cls, version))
    if encoder is None:
        unbuilt = _UNBUILT_ENCODERS.pop((cls, version), None)
        if unbuilt is not None:
            with contextlib.suppress(Unsupported):
                encoder = FAST_ENCODERS[cls, version] = message_encoder(*unbuilt)
    return encoder


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


def decode_canonical_value(buf: bytes, pos: int, end: int) -> tuple[MetadataRecord, int] | None:
    """The record in ``buf[pos:end]`` and its version, if the fast path can decode it.

    ``None`` unless the value is what encoding the record gives back (minimal
    varints, no unknown or default-valued tagged fields, ...): then
    :func:`decode_metadata_value` decides, and names any error.
    """
    frame = buf[pos : pos + 3]
    entry = FAST_DECODERS.get(frame) or fast_decoder(frame)
    if entry is None:
        return None
    try:
        return entry[0](buf, pos + 3, end), entry[1]
    except Exception:  # damaged or unusual bytes: the generic decoder decides
        return None


def decode_metadata_value(buf: bytes, pos: int, end: int) -> DecodedRecord:
    """Decode the metadata record in ``buf[pos:end]``; raises :class:`DecodeError`."""
    fast = decode_canonical_value(buf, pos, end)
    if fast is not None:
        return DecodedRecord(fast[0], fast[1])
    return decode_generic_value(buf, pos, end)


def decode_generic_value(buf: bytes, pos: int, end: int) -> DecodedRecord:
    """:func:`decode_metadata_value` without the fast path (the reference decoder)."""
    start = pos
    frame, pos = wire.read_uvarint(buf, pos, end)
    if frame != FRAME_VERSION:
        raise DecodeError(f"unknown metadata frame version {frame}", start)
    api_key, pos = _read_int16_uvarint(buf, pos, end, "apiKey")
    version, pos = _read_int16_uvarint(buf, pos, end, "record version")
    entry = _CODECS.get((api_key, version))
    if entry is None:
        newer = _as_newest_version(buf, pos, end, api_key, version)
        if newer is not None:
            return newer
        unknown_record = UnknownRecord(api_key=api_key, version=version, payload=buf[pos:end])
        return DecodedRecord(unknown_record, version)
    cls, codec = entry
    values, unknown, after = codec.decode(buf, pos, end)
    if after != end:
        raise DecodeError(
            f"{codec.name} ends at byte {after} but its value runs to byte {end}", after
        )
    return DecodedRecord(cls(**values), version, unknown)


def _as_newest_version(buf: bytes, pos: int, end: int, api_key: int,
                       version: int) -> DecodedRecord | None:
    """A body of a version newer than modelled, read with the newest modelled schema if
    that reads it exactly (see the module docs); None otherwise."""
    schema = METADATA_SCHEMAS.get(api_key)
    if schema is None or version <= schema.max_version:
        return None
    cls, codec = _CODECS[(api_key, schema.max_version)]
    try:
        values, unknown, after = codec.decode(buf, pos, end)
        record = cls(**values)
    except (DecodeError, TypeError, ValueError, msgspec.ValidationError):
        return None
    return DecodedRecord(record, version, unknown) if after == end else None


def _read_int16_uvarint(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """An unsigned varint that Kafka narrows to an int16: above 32767 it is refused."""
    value, after = wire.read_uvarint(buf, pos, end)
    if value > 0x7FFF:
        raise DecodeError(f"{what} {value} at byte {pos} does not fit an int16", pos)
    return value, after


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
    if not unknown_tagged_fields:
        fast = FAST_ENCODERS.get((type(record), version)) or fast_encoder(type(record), version)
        if fast is not None:
            mark = len(out)
            try:
                fast(out, record)
                return
            except Exception:  # an unusual value: the generic encoder decides
                del out[mark:]
    write_generic_value(out, record, version, unknown_tagged_fields)


def write_generic_value(
    out: bytearray,
    record: MetadataRecord,
    version: int,
    unknown_tagged_fields: tuple[TaggedField, ...] = (),
) -> None:
    """:func:`write_metadata_value` without the fast path (the reference encoder)."""
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
