"""Kafka's primitive encodings, written out by hand for tests that build bytes from a schema."""

from __future__ import annotations

import struct


def i8(v: int) -> bytes:
    """An int8."""
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    """An int16, big-endian."""
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    """An int32, big-endian."""
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    """An int64, big-endian."""
    return struct.pack(">q", v)


def uvarint(v: int) -> bytes:
    """An unsigned varint."""
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def s16(text: str | None) -> bytes:
    """A string before flexible versions: int16 length (-1: null), UTF-8."""
    if text is None:
        return i16(-1)
    data = text.encode()
    return i16(len(data)) + data


def cs(text: str | None) -> bytes:
    """A compact string: unsigned varint length + 1 (0: null), UTF-8."""
    if text is None:
        return b"\x00"
    data = text.encode()
    return uvarint(len(data) + 1) + data


def b32(data: bytes | None) -> bytes:
    """Bytes before flexible versions: int32 length (-1: null)."""
    return i32(-1) if data is None else i32(len(data)) + data


def cb(data: bytes) -> bytes:
    """Compact bytes."""
    return uvarint(len(data) + 1) + data
