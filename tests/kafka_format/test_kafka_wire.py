"""Wire primitives, and values Kafka would never write that must still survive a round trip."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_format import DecodeError, decode_log, encode_log, wire
from kafka_format.batch_format import assemble_batch, plain_facts
from metadata import schema as rec
from raft.batch import Batch


@given(st.integers(0, 2**32 - 1))
def test_unsigned_varint_round_trip(value: int) -> None:
    out = bytearray()
    wire.write_uvarint(out, value)
    assert len(out) <= 5
    assert wire.read_uvarint(bytes(out), 0, len(out)) == (value, len(out))


@given(st.integers(-(2**31), 2**31 - 1))
def test_zigzag_varint_round_trip(value: int) -> None:
    out = bytearray()
    wire.write_varint(out, value)
    assert wire.read_varint(bytes(out), 0, len(out)) == (value, len(out))


@given(st.integers(-(2**63), 2**63 - 1))
def test_zigzag_varlong_round_trip(value: int) -> None:
    out = bytearray()
    wire.write_varlong(out, value)
    assert wire.read_varlong(bytes(out), 0, len(out)) == (value, len(out))


def test_known_varint_bytes() -> None:
    out = bytearray()
    for value in (0, -1, 1, -2, 63, -64, 64):
        wire.write_varint(out, value)
    assert bytes(out) == bytes([0, 1, 2, 3, 126, 127, 128, 1])


@pytest.mark.parametrize(
    ("reader", "data"),
    [
        (wire.read_uvarint, b""),
        (wire.read_uvarint, b"\x80\x80"),
        (wire.read_uvarint, b"\xff\xff\xff\xff\xff\x01"),  # six bytes
        (wire.read_varlong, b"\xff" * 11),
        (wire.read_int32, b"\x00\x00\x01"),
        (wire.read_uuid, bytes(15)),
        (wire.read_compact_string, b"\x00"),  # null where a string is required
        (wire.read_compact_string, b"\x05ab"),
        (wire.read_compact_string, b"\x03\xff\xfe"),  # not UTF-8
        (wire.read_compact_nullable_string, b"\xff\xff\xff\xff\x0f"),  # 4 GiB string
    ],
)
def test_bad_primitives(reader: Callable[[bytes, int, int], object], data: bytes) -> None:
    with pytest.raises(DecodeError):
        reader(data, 0, len(data))


def test_reads_never_pass_the_given_end() -> None:
    data = b"\x00\x00\x00\x07" + b"\x05abcd"
    with pytest.raises(DecodeError):
        wire.read_int32(data, 0, 3)
    with pytest.raises(DecodeError):
        wire.read_compact_string(data, 4, 8)


@pytest.mark.parametrize(("reader", "size"), [
    (wire.read_int8, 1), (wire.read_bool, 1), (wire.read_int16, 2), (wire.read_uint16, 2),
    (wire.read_int32, 4), (wire.read_int64, 8), (wire.read_uuid, 16),
])
def test_fixed_width_reads_stop_at_a_nonzero_position(
        reader: Callable[[bytes, int, int], tuple[object, int]], size: int) -> None:
    """Each fixed-width read at byte 3 needs ``size`` bytes before the end it is given,
    whatever the buffer holds after it: one short is refused as truncated."""
    data = bytes(3 + size + 4)
    assert reader(data, 3, 3 + size)[1] == 3 + size
    with pytest.raises(DecodeError) as short:
        reader(data, 3, 3 + size - 1)
    assert short.value.kind == "truncated" and short.value.position == 3


def test_write_range_errors() -> None:
    with pytest.raises(ValueError):
        wire.write_uvarint(bytearray(), 2**32)
    with pytest.raises(ValueError):
        wire.write_varint(bytearray(), 2**31)
    with pytest.raises(ValueError):
        wire.write_uuid(bytearray(), "too short")


def _batch_with_value(value: bytes) -> bytes:
    """A one-record data batch (offset 0, epoch 1) whose record value is ``value``."""
    body = bytearray([0, 0, 0, 1])  # attributes, timestamp delta, offset delta, null key
    wire.write_varint(body, len(value))
    body += value
    body.append(0)  # no headers
    section = bytearray()
    wire.write_varint(section, len(body))
    section += body
    batch = Batch(0, 1, (rec.NoOpRecord(),), (), 5)
    return assemble_batch(batch, 0, 5, (-1, -1, -1), 1, bytes(section))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (bytes([1, 0x94, 0x00, 0, 0]), rec.NoOpRecord()),  # apiKey 20 as a two-byte varint
        (bytes([1, 23, 0, 1, 0, 1, 0]), rec.BeginTransactionRecord()),  # Name=null written out
        (bytes([1, 27, 0]) + bytes(4) + bytes(16) + bytes([2, 1, 1, 0]),
         rec.RegisterControllerRecord(controller_id=0, zk_migration_ready=True)),  # bool byte 2
    ],
)
def test_non_canonical_values_keep_their_bytes(value: bytes, expected: rec.MetadataRecord) -> None:
    data = _batch_with_value(value)
    result = decode_log(data)
    assert result.error is None, result.error
    (decoded,) = result.batches
    assert decoded.batch.records == (expected,)
    assert decoded.facts[0].raw_value == value
    assert encode_log(result.batches) == data


def test_canonical_value_has_plain_facts() -> None:
    data = _batch_with_value(bytes([1, 20, 0, 0]))
    (decoded,) = decode_log(data).batches
    assert decoded.facts == (plain_facts(0),)
