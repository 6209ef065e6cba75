"""Arbitrary bytes into the readers of a broker's log directory: a result or a DecodeError /
DecodeFailure, never another exception (Kafka files come from disks that crash)."""

from __future__ import annotations

import contextlib
import struct

from hypothesis import given
from hypothesis import strategies as st

from kafka_format import compression
from kafka_format.batch_format import crc32c_of_bytes
from kafka_format.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    decode_checkpoint,
    decode_partition_metadata,
)
from kafka_format.data_log import DataBatch, DataRecord, decode_data_log, encode_data_log
from kafka_format.errors import DecodeError
from kafka_format.log_indexes import (
    decode_offset_index,
    decode_producer_snapshot,
    decode_time_index,
)
from kafka_format.offsets_log import decode_record

SHORT = st.binary(max_size=300)


@given(SHORT, st.integers(0, 2**40))
def test_indexes_and_producer_snapshots_never_crash(data: bytes, base: int) -> None:
    for result in (decode_offset_index(data, base), decode_time_index(data, base)):
        assert all(entry.offset >= base - 2**31 for entry in result.entries)
    snapshot = decode_producer_snapshot(data)
    assert (snapshot.error is None) or snapshot.entries == ()


@given(st.text(max_size=200), st.sampled_from([LEADER_EPOCH_CHECKPOINT,
                                               "replication-offset-checkpoint"]))
def test_checkpoints_never_crash(text: str, kind: str) -> None:
    result = decode_checkpoint(text, kind)
    assert result.error is None or result.error.position <= len(text.encode("utf-8"))
    decode_partition_metadata(text)


@given(st.integers(-1, 18), SHORT, st.integers(-1, 6), st.one_of(st.none(), SHORT))
def test_offsets_records_decode_or_say_why(record_type: int, key: bytes, version: int,
                                           value: bytes | None) -> None:
    """Every known record type and value version, then arbitrary bytes."""
    with contextlib.suppress(DecodeError):
        decode_record(struct.pack(">h", record_type) + key,
                      None if value is None else struct.pack(">h", version) + value)


@given(st.sampled_from(compression.CODECS), SHORT)
def test_garbage_in_a_compressed_batch_is_a_failure(codec: int, garbage: bytes) -> None:
    """A batch whose records section is garbage under each codec: reported, never raised."""
    plain = bytearray(encode_data_log([DataBatch(0, 0, 0, 0, 0, -1, -1, -1,
                                                 (DataRecord(None, b"x"),))]))
    data = plain[:61] + garbage
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">h", data, 21, codec)
    struct.pack_into(">I", data, 17, crc32c_of_bytes(bytes(data[21:])))
    result = decode_data_log(bytes(data))
    assert result.error is not None or len(result.batches) == 1
