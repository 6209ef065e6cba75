"""The files beside a partition's segments: indexes, producer snapshots, text checkpoints.

Byte layouts as Kafka writes them (OffsetIndex, TimeIndex, ProducerStateManager's
``ProducerSnapshot`` v1, CheckpointFile, PartitionMetadataFile).
"""

from __future__ import annotations

import struct

import google_crc32c
import pytest

from kafka_format.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    OffsetEntry,
    PartitionMetadata,
    decode_checkpoint,
    decode_partition_metadata,
    encode_checkpoint,
    encode_partition_metadata,
)
from kafka_format.errors import DecodeFailure
from kafka_format.log_indexes import (
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    TimeIndexEntry,
    base_offset_of,
    decode_offset_index,
    decode_producer_snapshot,
    decode_time_index,
    encode_offset_index,
    encode_producer_snapshot,
    encode_time_index,
)

PRODUCER = ProducerSnapshotEntry(producer_id=1000, producer_epoch=2, last_sequence=9,
                                 last_offset=41, offset_delta=4, timestamp=1_700_000_000_000,
                                 coordinator_epoch=3, current_txn_first_offset=37)


def test_offset_index_entries_are_relative_and_stop_at_the_preallocated_zeros() -> None:
    entries = [OffsetIndexEntry(100, 0), OffsetIndexEntry(180, 4_096), OffsetIndexEntry(260, 8_200)]
    data = encode_offset_index(entries, base_offset=100)
    assert data[:16] == struct.pack(">iiii", 0, 0, 80, 4_096)
    preallocated = data + bytes(8 * 50)
    assert decode_offset_index(preallocated, 100).entries == tuple(entries)
    assert decode_offset_index(bytes(8 * 4), 100).entries == (OffsetIndexEntry(100, 0),)
    assert decode_offset_index(b"", 100).entries == ()
    cut = decode_offset_index(data[:-3], 100, "idx")
    assert cut.entries == tuple(entries[:2]) and cut.error is not None
    assert (cut.error.kind, cut.error.position) == ("truncated", 16)


def test_time_index_entries() -> None:
    entries = [TimeIndexEntry(5_000, 120), TimeIndexEntry(5_100, 150)]
    data = encode_time_index(entries, base_offset=100)
    assert data == struct.pack(">qiqi", 5_000, 20, 5_100, 50)
    assert decode_time_index(data + bytes(12 * 3), 100).entries == tuple(entries)
    assert base_offset_of("00000000000000000100.timeindex") == 100
    assert base_offset_of("leader-epoch-checkpoint") is None


def test_producer_snapshot_bytes_are_kafkas() -> None:
    data = encode_producer_snapshot([PRODUCER])
    body = struct.pack(">iqhiqiqiq", 1, 1000, 2, 9, 41, 4, 1_700_000_000_000, 3, 37)
    assert data == struct.pack(">hI", 1, google_crc32c.value(body)) + body
    assert len(data) == 2 + 4 + 4 + 46
    assert decode_producer_snapshot(data).entries == (PRODUCER,)
    assert PRODUCER.first_sequence == 5 and PRODUCER.has_batch
    wrapped = ProducerSnapshotEntry(1, 0, 2, 10, 5, 0, -1)
    assert wrapped.first_sequence == 2**31 - 3  # Kafka's decrementSequence wraps
    assert not ProducerSnapshotEntry(1, 0, -1, -1, 0, 0, -1).has_batch


@pytest.mark.parametrize("damage,kind", [
    (lambda d: d[:1], "truncated"),
    (lambda d: struct.pack(">h", 2) + d[2:], "unsupported"),
    (lambda d: d[:-1], "truncated"),
    (lambda d: d[:-1] + bytes([d[-1] ^ 1]), "crc-mismatch"),
    (lambda d: d[:6] + struct.pack(">i", -1) + d[10:], "corrupt"),
    # Kafka's CRC covers everything after it up to the file's end: a byte after the last
    # producer entry breaks it.
    (lambda d: d + b"\x00", "crc-mismatch"),
], ids=["no-version", "version-2", "cut-entry", "flipped-bit", "negative-count",
        "trailing-byte"])
def test_a_damaged_producer_snapshot_yields_no_producer(damage: object, kind: str) -> None:
    data = encode_producer_snapshot([PRODUCER, PRODUCER])
    result = decode_producer_snapshot(damage(data), "snap")  # type: ignore[operator]
    assert result.entries == () and result.error is not None and result.error.kind == kind


def test_checkpoints_read_as_kafkas_checkpoint_file() -> None:
    epochs = [EpochEntry(0, 0), EpochEntry(3, 170)]
    text = encode_checkpoint(epochs)
    assert text == "0\n2\n0 0\n3 170\n"
    assert decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT).entries == tuple(epochs)
    offsets = [OffsetEntry("__consumer_offsets", 12, 4), OffsetEntry("orders", 0, 99)]
    text = encode_checkpoint(offsets)
    assert text == "0\n2\n__consumer_offsets 12 4\norders 0 99\n"
    result = decode_checkpoint(text, "replication-offset-checkpoint")
    assert result.entries == tuple(offsets) and result.version == 0
    for empty in ("", "0\n"):  # Kafka creates cleaner-offset-checkpoint empty
        assert decode_checkpoint(empty, "cleaner-offset-checkpoint").error is None


@pytest.mark.parametrize("text,kind,position", [
    ("1\n0\n", "unsupported", 0),
    ("x\n0\n", "corrupt", 0),
    ("0\ntwo\n", "corrupt", 2),
    ("0\n2\n0 0\n", "truncated", 8),
    ("0\n1\n0 0\n1 5\n", "corrupt", 8),
    ("0\n2\n0 0\n1\n", "corrupt", 8),
    ("0\n1\n0 0 7\n", "corrupt", 4),  # an epoch line has exactly two fields
], ids=["version", "bad-version", "bad-count", "fewer", "more", "malformed", "three-fields"])
def test_damaged_checkpoints(text: str, kind: str, position: int) -> None:
    result = decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT, "ck")
    assert result.error is not None
    assert (result.error.kind, result.error.position) == (kind, position)


def test_partition_metadata() -> None:
    metadata = PartitionMetadata(0, "NjQ4FrvzSYmOXRjin9mJvw")
    text = encode_partition_metadata(metadata)
    assert text == "version: 0\ntopic_id: NjQ4FrvzSYmOXRjin9mJvw"
    assert decode_partition_metadata(text) == metadata
    for bad in ("version: -1\ntopic_id: NjQ4FrvzSYmOXRjin9mJvw", "version: 0\n",
                "version: 0\ntopic_id NjQ4FrvzSYmOXRjin9mJvw", "version: 0\ntopic_id: nope"):
        assert isinstance(decode_partition_metadata(bad), DecodeFailure), bad
    # as Kafka's reader: a newer version is read (downgrades), the names are not checked
    assert decode_partition_metadata("version: 1\ntopic: NjQ4FrvzSYmOXRjin9mJvw") == \
        PartitionMetadata(1, "NjQ4FrvzSYmOXRjin9mJvw")


def test_an_index_of_one_entry_then_zeros() -> None:
    """The zeros Kafka preallocates end the entries even right after the first one, and a
    first entry at the base offset itself is an entry."""
    offsets = encode_offset_index([OffsetIndexEntry(100, 0)], 100) + bytes(8 * 2)
    assert decode_offset_index(offsets, 100).entries == (OffsetIndexEntry(100, 0),)
    times = encode_time_index([TimeIndexEntry(7, 100)], 100) + bytes(12 * 2)
    assert decode_time_index(times, 100).entries == (TimeIndexEntry(7, 100),)
    cut = decode_time_index(encode_time_index([TimeIndexEntry(7, 101), TimeIndexEntry(9, 102)],
                                              100)[:-5], 100, "tix")
    assert cut.entries == (TimeIndexEntry(7, 101),) and cut.error is not None
    assert (cut.error.kind, cut.error.position) == ("truncated", 12)
    assert "7 bytes after the last whole 12-byte entry" in cut.error.message


def test_producer_snapshot_edges() -> None:
    assert decode_producer_snapshot(encode_producer_snapshot([])).entries == ()
    assert decode_producer_snapshot(encode_producer_snapshot([])).error is None
    version_only = decode_producer_snapshot(struct.pack(">h", 1), "snap")
    assert version_only.error is not None
    assert (version_only.error.kind, version_only.error.position) == ("truncated", 2)
    at_zero = ProducerSnapshotEntry(5, 0, 3, 0, 3, 0, -1)
    assert at_zero.has_batch and at_zero.first_sequence == 0  # a last offset of 0 is a batch


@pytest.mark.parametrize("text,position", [
    ("version: x\ntopic_id: NjQ4FrvzSYmOXRjin9mJvw", 0),
    ("version: -7\ntopic_id: NjQ4FrvzSYmOXRjin9mJvw", 0),
    ("version: 0\ntopic_id: nope", 11),
], ids=["not-a-number", "version-minus-7", "bad-id"])
def test_partition_metadata_errors_say_where(text: str, position: int) -> None:
    failure = decode_partition_metadata(text, "pm")
    assert isinstance(failure, DecodeFailure) and failure.position == position
