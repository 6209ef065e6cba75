"""Kafka's wire primitives: fixed-width numbers, varints, compact strings, bytes and arrays.

Readers take ``(buf, pos, end)`` and return ``(value, next_pos)``; every read
is checked against ``end`` before it touches the buffer, so a forged length or
count raises :class:`DecodeError` at once instead of allocating or looping.
Writers append to a ``bytearray``. Integers are big-endian.

Two varint families exist (Kafka's ``ByteUtils``): the *unsigned* varints of
the flexible message encoding (lengths of compact strings/arrays, tagged
field headers, the metadata frame) and the *zig-zag* varints/varlongs of the
record batch (record length, deltas, key/value lengths).
"""

from __future__ import annotations

import struct

from kafka_format.errors import DecodeError, EncodeError
from metadata.uuids import uuid_to_bytes, uuid_to_str

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
FLOAT64 = struct.Struct(">d")

_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


def truncated(what: str, pos: int, need: int, end: int) -> DecodeError:
    """The error for a read of ``need`` bytes at ``pos`` that would pass ``end``."""
    return DecodeError(
        f"{what} needs {need} bytes at byte {pos} but only {max(end - pos, 0)} remain",
        pos,
        "truncated",
    )


# --- fixed width ---------------------------------------------------------------------------


def read_int8(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A signed byte."""
    if pos >= end:
        raise truncated("int8", pos, 1, end)
    value = buf[pos]
    return (value - 256 if value > 127 else value), pos + 1


def read_bool(buf: bytes, pos: int, end: int) -> tuple[bool, int]:
    """A boolean byte; like Kafka, any non-zero byte reads as true."""
    if pos >= end:
        raise truncated("bool", pos, 1, end)
    return buf[pos] != 0, pos + 1


def read_int16(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A big-endian int16."""
    if pos + 2 > end:
        raise truncated("int16", pos, 2, end)
    return INT16.unpack_from(buf, pos)[0], pos + 2


def read_uint16(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A big-endian uint16 (ports)."""
    if pos + 2 > end:
        raise truncated("uint16", pos, 2, end)
    return UINT16.unpack_from(buf, pos)[0], pos + 2


def read_int32(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A big-endian int32."""
    if pos + 4 > end:
        raise truncated("int32", pos, 4, end)
    return INT32.unpack_from(buf, pos)[0], pos + 4


def read_int64(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A big-endian int64."""
    if pos + 8 > end:
        raise truncated("int64", pos, 8, end)
    return INT64.unpack_from(buf, pos)[0], pos + 8


def read_float64(buf: bytes, pos: int, end: int) -> tuple[float, int]:
    """A big-endian IEEE 754 double (client quota values)."""
    if pos + 8 > end:
        raise truncated("float64", pos, 8, end)
    return FLOAT64.unpack_from(buf, pos)[0], pos + 8


_UUID_CACHE_LIMIT = 1 << 16
UUID_TEXTS: dict[bytes, str] = {}
"""The memo of :func:`uuid_text` (cleared, never replaced, when full)."""
UUID_BYTES: dict[str, bytes] = {}
"""The memo of :func:`uuid_bytes` (cleared, never replaced, when full)."""


def uuid_text(raw: bytes) -> str:
    """Kafka's text form of 16 bytes, memoized: a log repeats its topic and directory ids."""
    text = UUID_TEXTS.get(raw)
    if text is None:
        text = uuid_to_str(raw)
        if len(UUID_TEXTS) >= _UUID_CACHE_LIMIT:
            UUID_TEXTS.clear()
        UUID_TEXTS[raw] = text
    return text


def uuid_bytes(text: str) -> bytes:
    """The 16 bytes of a Uuid in text form (memoized); raises :class:`EncodeError`."""
    raw = UUID_BYTES.get(text)
    if raw is None:
        try:
            raw = uuid_to_bytes(text)
        except (ValueError, TypeError) as exc:
            raise EncodeError(str(exc)) from None
        if len(UUID_BYTES) >= _UUID_CACHE_LIMIT:
            UUID_BYTES.clear()
        UUID_BYTES[text] = raw
    return raw


def read_uuid(buf: bytes, pos: int, end: int) -> tuple[str, int]:
    """A 16-byte Uuid, returned in Kafka's text form."""
    if pos + 16 > end:
        raise truncated("uuid", pos, 16, end)
    return uuid_text(buf[pos : pos + 16]), pos + 16


def write_int8(out: bytearray, value: int) -> None:
    """Append a signed byte."""
    out += INT8.pack(value)


def write_bool(out: bytearray, value: bool) -> None:
    """Append a boolean byte (1 or 0)."""
    out.append(1 if value else 0)


def write_int16(out: bytearray, value: int) -> None:
    """Append a big-endian int16."""
    out += INT16.pack(value)


def write_uint16(out: bytearray, value: int) -> None:
    """Append a big-endian uint16."""
    out += UINT16.pack(value)


def write_int32(out: bytearray, value: int) -> None:
    """Append a big-endian int32."""
    out += INT32.pack(value)


def write_int64(out: bytearray, value: int) -> None:
    """Append a big-endian int64."""
    out += INT64.pack(value)


def write_float64(out: bytearray, value: float) -> None:
    """Append a big-endian IEEE 754 double."""
    out += FLOAT64.pack(value)


def write_uuid(out: bytearray, value: str) -> None:
    """Append the 16 bytes of a Uuid given in Kafka's text form."""
    out += uuid_bytes(value)


# --- varints -------------------------------------------------------------------------------


def read_uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """An unsigned varint of at most 5 bytes (Kafka's ``readUnsignedVarint``)."""
    if pos >= end:
        raise truncated("varint", pos, 1, end)
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    start = pos
    value = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise truncated("varint", start, pos - start + 1, end)
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFF, pos
        shift += 7
        if pos - start >= _MAX_VARINT_BYTES:
            raise DecodeError(f"varint at byte {start} runs past 5 bytes", start)


def _read_zigzag(buf: bytes, pos: int, end: int, limit: int, bits: int) -> tuple[int, int]:
    if pos >= end:
        raise truncated("varint", pos, 1, end)
    byte = buf[pos]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos + 1
    start = pos
    raw = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise truncated("varint", start, pos - start + 1, end)
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            raw &= (1 << bits) - 1
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if pos - start >= limit:
            raise DecodeError(f"varint at byte {start} runs past {limit} bytes", start)


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A zig-zag varint (int32) of the record format."""
    return _read_zigzag(buf, pos, end, _MAX_VARINT_BYTES, 32)


def read_varlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A zig-zag varlong (int64) of the record format."""
    return _read_zigzag(buf, pos, end, _MAX_VARLONG_BYTES, 64)


def write_uvarint(out: bytearray, value: int) -> None:
    """Append an unsigned varint (0 <= value < 2**32)."""
    if 0 <= value < 0x80:
        out.append(value)
        return
    if not 0 <= value <= 0xFFFFFFFF:
        raise EncodeError(f"{value} does not fit an unsigned varint")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    """Append a zig-zag varint (int32)."""
    if not -(1 << 31) <= value < (1 << 31):
        raise EncodeError(f"{value} does not fit an int32 varint")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    """Append a zig-zag varlong (int64)."""
    if not -(1 << 63) <= value < (1 << 63):
        raise EncodeError(f"{value} does not fit an int64 varlong")
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


# --- compact strings, bytes and array headers ----------------------------------------------


def read_compact_length(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """The length of a compact string/bytes/array: -1 for null, else 0 or more.

    A length that would pass ``end`` is rejected here, before any allocation
    (every element of any compact array takes at least one byte).
    """
    start = pos
    encoded, pos = read_uvarint(buf, pos, end)
    length = encoded - 1
    if length > end - pos:
        raise DecodeError(
            f"{what} at byte {start} declares {length} entries or bytes "
            f"but only {end - pos} bytes remain",
            start,
        )
    return length, pos


MAX_STRING_BYTES = 0x7FFF
"""The longest string (in UTF-8 bytes) a Kafka message may hold: its generated readers
refuse a longer one and its writers refuse to write it, flexible versions included."""


def _too_long(start: int, length: int) -> DecodeError:
    return DecodeError(f"string at byte {start} has length {length}, more than Kafka's "
                       f"{MAX_STRING_BYTES}-byte limit", start)


def read_compact_string(buf: bytes, pos: int, end: int) -> tuple[str, int]:
    """A non-null compact string (UTF-8, at most :data:`MAX_STRING_BYTES`)."""
    start = pos
    length, pos = read_compact_length(buf, pos, end, "string")
    if length < 0:
        raise DecodeError(f"null string at byte {start} where a value is required", start)
    if length > MAX_STRING_BYTES:
        raise _too_long(start, length)
    try:
        return buf[pos : pos + length].decode("utf-8"), pos + length
    except UnicodeDecodeError:
        raise DecodeError(f"string at byte {start} is not valid UTF-8", start) from None


def read_compact_nullable_string(buf: bytes, pos: int, end: int) -> tuple[str | None, int]:
    """A compact string that may be null (at most :data:`MAX_STRING_BYTES`)."""
    start = pos
    length, pos = read_compact_length(buf, pos, end, "string")
    if length < 0:
        return None, pos
    if length > MAX_STRING_BYTES:
        raise _too_long(start, length)
    try:
        return buf[pos : pos + length].decode("utf-8"), pos + length
    except UnicodeDecodeError:
        raise DecodeError(f"string at byte {start} is not valid UTF-8", start) from None


def read_compact_bytes(buf: bytes, pos: int, end: int) -> tuple[bytes, int]:
    """A non-null compact byte string (SCRAM salts and keys)."""
    start = pos
    length, pos = read_compact_length(buf, pos, end, "bytes")
    if length < 0:
        raise DecodeError(f"null bytes at byte {start} where a value is required", start)
    return bytes(buf[pos : pos + length]), pos + length


def write_compact_bytes(out: bytearray, value: bytes) -> None:
    """Append a non-null compact byte string."""
    if not isinstance(value, bytes | bytearray):
        raise EncodeError(f"{type(value).__name__} where bytes are required")
    write_uvarint(out, len(value) + 1)
    out += value


def write_compact_string(out: bytearray, value: str) -> None:
    """Append a non-null compact string (EncodeError above :data:`MAX_STRING_BYTES`)."""
    if value is None:
        raise EncodeError("null where a string is required")
    data = value.encode("utf-8")
    if len(data) > MAX_STRING_BYTES:
        raise EncodeError(f"a string of {len(data)} bytes is too long to be written "
                          f"(Kafka's limit is {MAX_STRING_BYTES})")
    write_uvarint(out, len(data) + 1)
    out += data


def write_compact_nullable_string(out: bytearray, value: str | None) -> None:
    """Append a compact string that may be null (EncodeError above :data:`MAX_STRING_BYTES`)."""
    if value is None:
        out.append(0)
        return
    write_compact_string(out, value)


# --- tagged fields -------------------------------------------------------------------------

TaggedField = tuple[int, bytes]
"""A tagged field kept as raw bytes: (tag, payload)."""


def read_tagged_header(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """One tagged field's ``(tag, size, payload_pos)``; the payload is bounds-checked."""
    tag, pos = read_uvarint(buf, pos, end)
    start = pos
    size, pos = read_uvarint(buf, pos, end)
    if size > end - pos:
        raise DecodeError(
            f"tagged field {tag} at byte {start} declares {size} bytes "
            f"but only {end - pos} remain",
            start,
        )
    return tag, size, pos


def write_tagged_field(out: bytearray, tag: int, payload: bytes | bytearray) -> None:
    """Append one tagged field: tag, size, payload."""
    write_uvarint(out, tag)
    write_uvarint(out, len(payload))
    out += payload
