"""The compression codecs of Kafka record batches (attribute bits 0-2).

A compressed batch keeps its 61-byte header as is and compresses the records
section that follows it, as one stream:

- 1, gzip: a gzip stream;
- 2, snappy: snappy-java's framed stream (the 8-byte magic ``\\x82SNAPPY\\x00``,
  two int32 (version 1, compatible version 1), then blocks, each an int32
  length and a raw snappy block); a stream without the magic is one raw block,
  which snappy-java reads as well;
- 3, lz4: an LZ4 frame;
- 4, zstd: a Zstandard frame.

Pure: bytes in, bytes out. Damaged input raises
:class:`~kafka_format.errors.DecodeError` at the position given by the caller
(the compressed section's first byte).
"""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam

from kafka_format.errors import DecodeError, EncodeError

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
"""Kafka's compression type ids."""
CODECS = (GZIP, SNAPPY, LZ4, ZSTD)
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
_SNAPPY_HEADER = SNAPPY_MAGIC + struct.pack(">ii", 1, 1)
_SNAPPY_BLOCK = 32 * 1024
"""snappy-java's default block size, which Kafka's producer uses."""
_LENGTH = struct.Struct(">i")


def _snappy_framed(data: bytes, position: int) -> bytes:
    if not data.startswith(SNAPPY_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    if len(data) < len(_SNAPPY_HEADER):
        raise DecodeError("snappy stream header cut short", position, "truncated")
    out = bytearray()
    pos = len(_SNAPPY_HEADER)
    while pos < len(data):
        if len(data) - pos < _LENGTH.size:
            raise DecodeError("snappy block length cut short", position + pos, "truncated")
        length = _LENGTH.unpack_from(data, pos)[0]
        pos += _LENGTH.size
        if length < 0 or pos + length > len(data):
            raise DecodeError(f"snappy block of {length} bytes, {len(data) - pos} remain",
                              position + pos, "truncated")
        out += cramjam.snappy.decompress_raw(data[pos:pos + length])
        pos += length
    return bytes(out)


def decompress(codec: int, data: bytes, position: int) -> bytes:
    """The records section of a batch compressed with ``codec``; ``position`` is where the
    compressed bytes start, for the error."""
    try:
        if codec == GZIP:
            return gzip.decompress(data)
        if codec == SNAPPY:
            return _snappy_framed(data, position)
        if codec == LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (OSError, EOFError, zlib.error, cramjam.DecompressionError) as exc:
        raise DecodeError(f"the records do not decompress: {exc}", position) from None
    raise DecodeError(f"compression type {codec} is not one of Kafka's", position, "unsupported")


def compress(codec: int, data: bytes) -> bytes:
    """``data`` compressed as Kafka's producer would with ``codec`` (not byte for byte: the
    compressors' versions and levels differ, but any Kafka reads it back)."""
    if codec == GZIP:
        return gzip.compress(data, mtime=0)
    if codec == SNAPPY:
        blocks = [bytes(cramjam.snappy.compress_raw(data[i:i + _SNAPPY_BLOCK]))
                  for i in range(0, len(data), _SNAPPY_BLOCK)]
        return _SNAPPY_HEADER + b"".join(_LENGTH.pack(len(b)) + b for b in blocks)
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise EncodeError(f"compression type {codec} is not one of Kafka's")
