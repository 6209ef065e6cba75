"""Damaged input: every flipped byte, every cut, forged lengths and counts.

Whatever the damage, decoding returns the good prefix plus one error naming
the batch and byte, or decodes fully; it never raises, hangs or allocates
according to a forged size.
"""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path

import google_crc32c
import pytest

from kafka_format import (
    DecodeError,
    LogDecodeResult,
    decode_log,
    decode_metadata_record,
    decode_snapshot,
    encode_decoded_batch,
    encode_log,
)
from kafka_format.snapshot_codec import BOOTSTRAP_SNAPSHOT_ID

from .conftest import segment

# bootstrap-txn's log: batch 0 is bytes 0-90 (LeaderChange), batch 1 bytes 91-235.
BATCH_STARTS = (0, 91)
BATCH_ENDS = (91, 236)


def assert_prefix_plus_error(data: bytes, result: LogDecodeResult) -> None:
    """Good batches are exactly the bytes they cover; an error follows the last of them."""
    position = 0
    for decoded in result.batches:
        assert decoded.position == position
        assert encode_decoded_batch(decoded) == data[position : position + decoded.size]
        position += decoded.size
    assert result.valid_bytes == position
    if result.error is None:
        assert position == len(data)
    else:
        assert result.error.batch_index == len(result.batches)
        assert result.error.batch_position == position
        assert position <= result.error.position <= len(data)
        assert result.error.describe()


def with_crc(batch: bytes) -> bytes:
    """The batch with its CRC recomputed (to forge content that passes the checksum)."""
    crc = google_crc32c.value(batch[21:])
    return batch[:17] + struct.pack(">I", crc) + batch[21:]


def batch_index_of(position: int) -> int:
    return 0 if position < BATCH_ENDS[0] else 1


def test_every_flipped_byte(kafka_data: Path) -> None:
    data, original = segment("bootstrap-txn")
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        result = decode_log(bytes(damaged), source="flipped.log", first_offset=0)
        assert_prefix_plus_error(bytes(damaged), result)
        index = batch_index_of(position)
        field = position - BATCH_STARTS[index]
        if 12 <= field < 16:
            # partitionLeaderEpoch is outside the CRC: the batch reads as valid, epoch changed.
            assert result.error is None
            assert result.batches[index].batch.epoch != original.batches[index].batch.epoch
            continue
        assert result.error is not None, position
        assert result.error.batch_index == index
        assert len(result.batches) == index
        if field == 16:
            assert result.error.kind == "unsupported"
        elif field >= 17:
            assert result.error.kind == "crc-mismatch"


def test_every_cut(kafka_data: Path) -> None:
    data, _ = segment("bootstrap-txn")
    for length in range(len(data) + 1):
        result = decode_log(data[:length], source="cut.log", first_offset=0)
        assert_prefix_plus_error(data[:length], result)
        if length in (0, *BATCH_ENDS):
            assert result.error is None
        else:
            assert result.error is not None and result.error.kind == "truncated"
        assert len(result.batches) == sum(length >= end for end in BATCH_ENDS)


def test_snapshot_flips_and_cuts(kafka_data: Path) -> None:
    data = (kafka_data / "bootstrap-txn" / "bootstrap.checkpoint").read_bytes()
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        result = decode_snapshot(bytes(damaged), snapshot_id=BOOTSTRAP_SNAPSHOT_ID)
        assert (result.error is None) == (result.snapshot is not None)
    for length in range(len(data)):
        result = decode_snapshot(data[:length], snapshot_id=BOOTSTRAP_SNAPSHOT_ID, source="s")
        assert result.snapshot is None and result.error is not None
        assert result.error.kind in ("truncated", "missing-header", "missing-footer")


def test_missing_footer_names_the_file_and_last_batch(kafka_data: Path) -> None:
    data = (kafka_data / "bootstrap-txn" / "bootstrap.checkpoint").read_bytes()
    without_footer = data[:174]  # header batch + data batch, whole
    result = decode_snapshot(without_footer, snapshot_id=BOOTSTRAP_SNAPSHOT_ID, source="b.ckpt")
    assert result.error is not None and result.error.kind == "missing-footer"
    assert (result.error.batch_index, result.error.batch_offset) == (1, 1)
    assert result.header is not None and len(result.batches) == 2
    assert "b.ckpt" in result.error.describe()
    no_header = decode_snapshot(data[83:], snapshot_id=BOOTSTRAP_SNAPSHOT_ID)
    assert no_header.error is not None and no_header.error.kind == "missing-header"


def test_random_multi_byte_damage_never_escapes(kafka_data: Path) -> None:
    data = (kafka_data / "topic-deletes" / "__cluster_metadata-0" /
            "00000000000000046533-0000000004.checkpoint").read_bytes()  # fmt: skip
    rng = random.Random(868)
    for _ in range(400):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        cut = bytes(damaged[: rng.randint(0, len(damaged))])
        result = decode_log(cut)
        assert_prefix_plus_error(cut, result)
        decode_snapshot(cut, snapshot_id=BOOTSTRAP_SNAPSHOT_ID)


def _first_data_batch(kafka_data: Path) -> bytearray:
    data, _ = segment("bootstrap-txn")
    return bytearray(data[91:236])


def _decode_quickly(data: bytes) -> LogDecodeResult:
    started = time.perf_counter()
    result = decode_log(data, source="forged.log")
    assert time.perf_counter() - started < 1.0
    assert result.batches == () and result.error is not None
    return result


def test_forged_batch_length(kafka_data: Path) -> None:
    batch = _first_data_batch(kafka_data)
    batch[8:12] = struct.pack(">i", 0x7FFFFFFF)
    result = _decode_quickly(bytes(batch))
    assert result.error is not None and result.error.kind == "truncated"
    batch[8:12] = struct.pack(">i", 3)
    assert _decode_quickly(bytes(batch)).error is not None


@pytest.mark.parametrize("count", [2**31 - 1, 5, -1])
def test_forged_record_count_with_valid_crc(kafka_data: Path, count: int) -> None:
    batch = _first_data_batch(kafka_data)
    batch[57:61] = struct.pack(">i", count)
    batch[23:27] = struct.pack(">i", count - 1)  # keep lastOffsetDelta consistent
    result = _decode_quickly(with_crc(bytes(batch)))
    assert result.error is not None and result.error.kind == "corrupt"


def test_a_record_count_that_disagrees_with_the_last_offset_delta(kafka_data: Path) -> None:
    batch = _first_data_batch(kafka_data)
    count = struct.unpack_from(">i", batch, 57)[0]
    batch[57:61] = struct.pack(">i", count + 1)  # lastOffsetDelta (byte 23) left as it was
    result = _decode_quickly(with_crc(bytes(batch)))
    assert result.error is not None and result.error.kind == "corrupt"
    assert result.error.position == 57
    assert f"record count {count + 1} and last offset delta {count - 1} disagree" in \
        result.error.message


def test_an_unknown_metadata_frame_version_is_named_at_its_byte() -> None:
    with pytest.raises(DecodeError, match="unknown metadata frame version 2") as refused:
        decode_metadata_record(bytes([2, 3, 0]))
    assert refused.value.position == 0


def test_forged_record_length_and_array_count_with_valid_crc(kafka_data: Path) -> None:
    batch = _first_data_batch(kafka_data)
    # The first record's length varint (zig-zag) at byte 61: claim ~134M bytes.
    forged = bytes(batch[:61]) + bytes([0xFE, 0xFF, 0xFF, 0x7F]) + bytes(batch[62:])
    forged = forged[:8] + struct.pack(">i", len(forged) - 12) + forged[12:]
    assert _decode_quickly(with_crc(forged)).error is not None
    # Inside the BeginTransaction value (frame at byte 67): its tagged-field count (70),
    # the tagged field's size (72) and the string's length (73), each forged to 127.
    batch = _first_data_batch(kafka_data)
    assert batch[67:74] == bytes([1, 23, 0, 1, 0, 18, 18])
    for position in (70, 72, 73):
        forged_value = bytearray(batch)
        forged_value[position] = 0x7F
        result = _decode_quickly(with_crc(bytes(forged_value)))
        assert result.error is not None and result.error.kind == "corrupt"
        assert "127" in result.error.message or "126" in result.error.message


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_a_compression_type_kafka_does_not_have_is_reported_as_unsupported(
        kafka_data: Path, codec: int) -> None:
    batch = _first_data_batch(kafka_data)
    batch[21:23] = struct.pack(">h", codec)
    result = _decode_quickly(with_crc(bytes(batch)))
    assert result.error is not None and result.error.kind == "unsupported"
    assert f"compression type {codec} is not one of Kafka's" in result.error.message
    assert result.error.position == 21  # the attributes


def test_records_that_do_not_decompress_are_named_where_they_start(kafka_data: Path) -> None:
    """A batch that says zstd (as Kafka's reader, kraftsim decompresses a compressed
    metadata batch) over records that are not a zstd frame."""
    batch = _first_data_batch(kafka_data)
    batch[21:23] = struct.pack(">h", 4)  # zstd
    result = _decode_quickly(with_crc(bytes(batch)))
    assert result.error is not None
    assert "do not decompress" in result.error.message
    assert result.error.position == 61  # the records section


def test_garbage_of_every_small_size_never_escapes() -> None:
    rng = random.Random(7)
    for size in range(0, 300):
        garbage = bytes(rng.randrange(256) for _ in range(size))
        result = decode_log(garbage)
        assert_prefix_plus_error(garbage, result)


def test_good_prefix_is_re_encodable(kafka_data: Path) -> None:
    data, _ = segment("noop-heavy")
    cut = data[: len(data) // 2]
    result = decode_log(cut, first_offset=0)
    assert result.error is not None and result.error.kind == "truncated"
    assert encode_log(result.batches) == cut[: result.valid_bytes]
