"""Record batch v2 and its records, in the cases Kafka's own tests check.

Followed: ``DefaultRecordBatchTest``, ``DefaultRecordTest``, the reading parts of
``MemoryRecordsTest``, ``ControlRecordUtilsTest``, ``EndTransactionMarkerTest`` and the
varint/varlong edges of ``ByteUtilsTest`` (clients, ``org.apache.kafka.common``). Each case
is rebuilt here with kraftsim's own codecs: the bytes are computed from the format, and a
bad input is checked for the failure kind and the byte where the reader stops.
Data batches go through :mod:`kafka_format.data_log`; metadata batches through
:func:`kafka_format.decode_log`.

Not ported, with the reason:

- The writer's and the batch object's own API (kraftsim encodes a whole batch at once):
  DefaultRecordBatchTest's testWriteEmptyHeader, buildDefaultRecordBatch, testSetLastOffset,
  testSetNoTimestampTypeNotAllowed, testIncrementSequence, testDecrementSequence; its
  iterators and their buffers (testStreamingIteratorConsistency,
  testSkipKeyValueIteratorCorrectness, testBufferReuseInSkipKeyValueIterator,
  testZstdJniForSkipKeyValueIterator) and DefaultRecordTest's partial reads
  (testInvalidKeySizePartial, testInvalidValueSizePartial, testInvalidNumHeadersPartial,
  testInvalidHeaderKeyPartial, testInvalidHeaderValuePartial): kraftsim reads a batch whole;
  the same damaged fields are read whole in test_a_damaged_record_inside_a_good_batch.
- MemoryRecordsTest's building and filtering (compaction, batch sizes, checksums of built
  batches): testHasRoomForMethod, testHasRoomForMethodWithHeaders, testChecksum,
  testFilterTo, testFilterToPreservesPartitionLeaderEpoch, testFilterToEmptyBatchRetention,
  testEmptyBatchDeletion, testBuildEndTxnMarker, testFilterToBatchDiscard,
  testFilterToAlreadyCompactedLog, testFilterToPreservesProducerInfo,
  testFilterToWithUndersizedBuffer, testFilterToPreservesLogAppendTime, testNextBatchSize.
- ByteUtilsTest's fixed-width and unsigned-int helpers, which no kraftsim format reads with
  its own code path (testReadUnsignedIntLEFromArray, testReadUnsignedIntLEFromInputStream,
  testReadUnsignedInt, testWriteUnsignedIntLEToArray, testWriteUnsignedIntLEToOutputStream,
  testDouble, testReadInt), and its randomized round trips
  (testCorrectnessWriteUnsignedVarint, testCorrectnessReadUnsignedVarint; the edges are
  test_unsigned_varint_edges).
"""

from __future__ import annotations

import struct

import pytest

from kafka_format import DecodeError, decode_log, encode_log, wire
from kafka_format.batch_format import (
    CONTROL_FLAG,
    DELETE_HORIZON_FLAG,
    TRANSACTIONAL_FLAG,
    DecodedBatch,
    crc32c_of_bytes,
    encode_batch,
    plain_facts,
)
from kafka_format.control_records import (
    KRAFT_VOTERS,
    decode_control_record,
    encode_control_key,
    encode_control_value,
)
from kafka_format.data_log import (
    ABORT,
    COMMIT,
    DataBatch,
    DataRecord,
    decode_data_log,
    decode_marker,
    encode_data_batch,
    encode_data_log,
    marker_record,
)
from kraftsim.dump_data_log import batch_facts, record_facts
from kraftsim.dump_log import batch_json
from metadata.schema import NoOpRecord, TopicRecord
from raft.batch import Batch, LeaderChangeMessage, Voter, VotersRecord

INT32_MAX = 2**31 - 1
HEADER = 61
"""Bytes before a batch's first record."""


def _varint(value: int) -> bytes:
    out = bytearray()
    wire.write_varint(out, value)
    return bytes(out)


def _record(body: bytes) -> bytes:
    """A record: its zig-zag length, then the body (attributes onwards)."""
    return _varint(len(body)) + body


def _raw_batch(section: bytes, count: int, *, attributes: int = 0, last_delta: int | None = None,
               magic: int = 2, base_sequence: int = -1) -> bytes:
    """A batch around a records section written by hand, with a correct length and CRC."""
    tail = struct.pack(">hiqqqhii", attributes, count - 1 if last_delta is None else last_delta,
                       1000, 1000, -1, -1, base_sequence, count) + section
    return struct.pack(">qiibI", 0, 49 + len(section), 0, magic, crc32c_of_bytes(tail)) + tail


def _one(batch: DataBatch) -> DataBatch:
    result = decode_data_log(encode_data_batch(batch))
    assert result.error is None and len(result.batches) == 1
    return result.batches[0]


# --- DefaultRecordBatchTest -------------------------------------------------------------------


def test_batch_with_producer_fields_reads_back_each_header_field() -> None:
    """buildDefaultRecordBatchWithProducerId: producer id, epoch, base sequence, offsets."""
    records = (DataRecord(b"a", b"1"), DataRecord(b"b", b"2", 1), DataRecord(b"c", b"3", 2))
    batch = _one(DataBatch(1234567, 0, 0, 1234567, 1234569, 23423, 145, 983, records))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (23423, 145, 983)
    assert (batch.base_offset, batch.last_offset) == (1234567, 1234569)
    assert batch_facts(batch)["lastSequence"] == 985
    assert [record_facts(batch, i, r)["sequence"] for i, r in enumerate(batch.records)] == \
        [983, 984, 985]
    assert [batch.record_offset(i) for i in range(3)] == [1234567, 1234568, 1234569]


def test_sequence_wraps_past_int32_max_in_a_data_batch() -> None:
    """buildDefaultRecordBatchWithSequenceWrapAround: base MAX-1, three records, last 0."""
    records = tuple(DataRecord(k, b"v", i) for i, k in enumerate((b"a", b"b", b"c")))
    batch = _one(DataBatch(0, 0, 0, 1, 3, 23423, 145, INT32_MAX - 1, records))
    assert batch_facts(batch)["lastSequence"] == 0
    assert [record_facts(batch, i, r)["sequence"] for i, r in enumerate(batch.records)] == \
        [INT32_MAX - 1, INT32_MAX, 0]


def test_sequence_wraps_past_int32_max_in_a_metadata_batch() -> None:
    """The same wrap in ``dump-log``'s facts of a metadata batch (it added the count plainly)."""
    noops = (NoOpRecord(), NoOpRecord(), NoOpRecord())
    plain = DecodedBatch(Batch(0, 1, noops, (), 5), (plain_facts(0),) * 3, 0, 5, 23423, 145,
                         INT32_MAX - 1, 0, 0, 0)
    data = encode_log([plain])
    decoded = decode_log(data).batches[0]
    assert decoded.base_sequence == INT32_MAX - 1
    assert batch_json(decoded, False)["lastSequence"] == 0
    unset = decode_log(encode_batch(Batch(0, 1, noops, (), 5), 7)).batches[0]
    assert batch_json(unset, False)["lastSequence"] == -1


def test_size_in_bytes_is_the_header_plus_each_record() -> None:
    """testSizeInBytes: keys, null keys and values, timestamp deltas, a header with a null value.

    Records: 15 bytes (key, value), 14 (delta 30000 takes three bytes, null key), 12 (null
    value), 32 (two headers); 61 + 73 = 134.
    """
    headers = ((b"foo", b"value"), (b"bar", None))
    records = (DataRecord(b"key", b"value"), DataRecord(None, b"value", 30000),
               DataRecord(b"key", None, 60000), DataRecord(b"key", b"value", 60000, headers))
    data = encode_data_batch(DataBatch(0, 0, 0, 10, 60010, -1, -1, -1, records))
    assert len(data) == HEADER + 15 + 14 + 12 + 32 == 134
    batch = _one(DataBatch(0, 0, 0, 10, 60010, -1, -1, -1, records))
    assert batch.size == 134 and batch.records == records
    assert data[HEADER:HEADER + 15] == bytes.fromhex("1c 00 00 00 06") + b"key" + b"\x0a" + \
        b"value" + b"\x00"


def test_a_batch_length_below_the_header_is_corrupt() -> None:
    """testInvalidRecordSize: batchLength forged to 10."""
    good = encode_data_batch(DataBatch(0, 0, 0, 1, 3, -1, -1, -1,
                                       (DataRecord(b"a", b"1"), DataRecord(b"b", b"2", 1))))
    bad = good[:8] + struct.pack(">i", 10) + good[12:]
    for result in (decode_data_log(bad), decode_log(bad)):
        assert result.batches == ()
        assert result.error is not None and (result.error.kind, result.error.position) == \
            ("corrupt", 8)


@pytest.mark.parametrize("count", [0, 2])
def test_a_record_count_that_lies_about_uncompressed_records(count: int) -> None:
    """testInvalidRecordCountTooManyNonCompressedV2, testInvalidRecordCountTooLittleNonCompressedV2:
    one record, count 2 or 0."""
    section = _record(b"\x00\x00\x00\x01\x02v\x00")  # no key, value "v"
    data = _raw_batch(section, count, last_delta=0)
    result = decode_data_log(data)
    assert result.batches == () and result.error is not None
    # Too many: the reader runs off the records; too few: bytes are left where it stops.
    assert result.error.position == (HEADER + len(section) if count == 2 else HEADER)
    assert result.error.kind == ("truncated" if count == 2 else "corrupt")
    metadata = decode_log(data)
    assert metadata.batches == () and metadata.error is not None
    assert metadata.error.kind == "corrupt"


@pytest.mark.parametrize("count", [0, 2])
def test_a_record_count_that_lies_about_compressed_records(count: int) -> None:
    """testInvalidRecordCountTooManyCompressedV2, testInvalidRecordCountTooLittleCompressedV2
    (gzip): named at the records."""
    good = encode_data_batch(DataBatch(0, 0, 1, 1, 1, -1, -1, -1, (DataRecord(None, b"v"),)))
    tail = bytearray(good[21:])
    tail[36:40] = struct.pack(">i", count)  # recordCount, the header's last field
    data = good[:17] + struct.pack(">I", crc32c_of_bytes(bytes(tail))) + bytes(tail)
    result = decode_data_log(data)
    assert result.batches == () and result.error is not None
    assert result.error.position == HEADER and "decompressed records" in result.error.message


def test_a_changed_crc_is_a_crc_mismatch_at_the_crc_field() -> None:
    """testInvalidCrc."""
    good = encode_data_batch(DataBatch(0, 0, 0, 1, 1, -1, -1, -1, (DataRecord(b"a", b"1"),)))
    crc = struct.unpack_from(">I", good, 17)[0]
    bad = good[:17] + struct.pack(">I", crc ^ 1) + good[21:]
    for result in (decode_data_log(bad), decode_log(bad)):
        assert result.error is not None and (result.error.kind, result.error.position) == \
            ("crc-mismatch", 17)


def test_partition_leader_epoch_and_log_append_time_are_outside_the_crc() -> None:
    """testSetPartitionLeaderEpoch, testSetLogAppendTime: the epoch is not covered by the CRC,
    the timestamp type and max timestamp are (a broker re-computes it when it stamps)."""
    batch = DataBatch(0, 15, 0, 1, 1, -1, -1, -1, (DataRecord(b"a", b"1"),))
    data = encode_data_batch(batch)
    moved = data[:12] + struct.pack(">i", 35) + data[16:]
    assert _one(batch).crc == decode_data_log(moved).batches[0].crc
    assert decode_data_log(moved).batches[0].partition_leader_epoch == 35
    stamped = _one(DataBatch(0, 15, 0x08, 1, 9999, -1, -1, -1, (DataRecord(b"a", b"1"),)))
    assert stamped.crc != _one(batch).crc
    facts = batch_facts(stamped)
    assert facts["LogAppendTime"] == 9999 and "CreateTime" not in facts
    assert record_facts(stamped, 0, stamped.records[0])["LogAppendTime"] == 9999


def test_a_control_batch_of_an_end_transaction_marker() -> None:
    """testReadAndWriteControlBatch: one COMMIT marker in a transactional control batch."""
    marker = marker_record(commit=True, coordinator_epoch=15)
    batch = _one(DataBatch(7, 0, TRANSACTIONAL_FLAG | CONTROL_FLAG, 1, 1, 5, 0, -1, (marker,)))
    assert batch.is_control and batch.is_transactional
    assert batch.records[0].key == bytes.fromhex("0000 0001")
    assert batch.records[0].value == bytes.fromhex("0000 0000000f")
    found = decode_marker(batch.records[0])
    assert found is not None and (found.name, found.coordinator_epoch) == ("COMMIT", 15)


# --- DefaultRecordTest -------------------------------------------------------------------------


def test_records_with_every_mix_of_null_key_value_and_headers_round_trip() -> None:
    """testBasicSerde: null and empty keys and values, headers with null and empty values."""
    headers = ((b"foo", b"value"), (b"bar", None), (b"", b""))
    records = (DataRecord(b"hi", b"there", 0, headers), DataRecord(None, b"there", 1, headers),
               DataRecord(b"hi", None, 2, ()), DataRecord(None, None, 3, ()),
               DataRecord(b"", b"", 4, headers))
    data = encode_data_batch(DataBatch(0, 0, 0, 100, 104, -1, -1, -1, records))
    decoded = decode_data_log(data).batches[0]
    assert decoded.records == records
    assert encode_data_log([decoded]) == data


@pytest.mark.parametrize(("body", "kind", "at"), [
    # testBasicSerdeInvalidHeaderCountTooHigh: 2 headers declared, 1 written.
    (b"\x00\x00\x00\x02k\x02v\x04\x02h\x02w", "truncated", 12),
    # testBasicSerdeInvalidHeaderCountTooLow: 0 headers declared, 1 written.
    (b"\x00\x00\x00\x02k\x02v\x00\x02h\x02w", "corrupt", 8),
    # testInvalidKeySize: key of 10 bytes declared, 2 there.
    (b"\x00\x00\x00\x14kv\x00", "truncated", 3),
    # a key of 5 bytes declared where 4 remain in the record (one too many)
    (b"\x00\x00\x00\x0akv\x00\x00", "truncated", 3),
    # testInvalidValueSize.
    (b"\x00\x00\x00\x01\x14v\x00", "truncated", 4),
    # testInvalidNumHeaders: a header count of -1.
    (b"\x00\x00\x00\x01\x02v\x01", "corrupt", 6),
    # testInvalidHeaderKey: a header key of 10 bytes declared.
    (b"\x00\x00\x00\x01\x02v\x02\x14h\x00", "truncated", 7),
    # testNullHeaderKey.
    (b"\x00\x00\x00\x01\x02v\x02\x01\x02w", "corrupt", 7),
    # testInvalidHeaderValue: a header value of 10 bytes declared.
    (b"\x00\x00\x00\x01\x02v\x02\x02h\x14w", "truncated", 9),
    # testUnderflowReadingTimestamp / testUnderflowReadingVarlong: the record ends inside
    # its timestamp delta.
    (b"\x00\xff\xff", "truncated", 1),
    # testInvalidVarlong: a timestamp delta of eleven bytes.
    (b"\x00" + b"\xff" * 10 + b"\x01\x00\x01\x02v\x00", "corrupt", 1),
])
def test_a_damaged_record_inside_a_good_batch(body: bytes, kind: str, at: int) -> None:
    """DefaultRecordTest's invalid records, each the only record of a batch whose CRC holds.

    ``at`` is the failing field's index in the record's body (after its one-byte length)."""
    result = decode_data_log(_raw_batch(_record(body), 1))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == (kind, HEADER + 1 + at)


def test_a_null_header_key_or_negative_header_count_in_a_metadata_batch() -> None:
    """testNullHeaderKey, testInvalidNumHeaders through the metadata log's reader, and
    testBasicSerdeInvalidHeaderCountTooHigh: five headers declared where the bytes left
    hold at most two is refused at the count."""
    value = bytes.fromhex("01 14 00 00")  # NoOpRecord v0: frame 1, apiKey 20, version 0
    for headers, at in ((b"\x02\x01\x02w", 1), (b"\x01", 0), (b"\x0a\x02h\x02w", 0)):
        body = b"\x00\x00\x00\x01" + _varint(len(value)) + value + headers
        result = decode_log(_raw_batch(_record(body), 1))
        assert result.batches == () and result.error is not None
        assert (result.error.kind, result.error.position) == ("corrupt", HEADER + 1 + 9 + at)


def test_a_record_length_beyond_the_batch() -> None:
    """testInvalidSizeOfBodyInBytes: the record declares more bytes than its batch holds."""
    body = b"\x00\x00\x00\x01\x02v\x00"
    result = decode_data_log(_raw_batch(_varint(len(body) + 10) + body, 1))
    assert result.error is not None and result.error.position == HEADER


@pytest.mark.parametrize("at", [HEADER, HEADER + 6], ids=["record", "value"])
def test_a_negative_two_byte_length_in_a_metadata_batch(at: int) -> None:
    """A record's length, or its value's (after attributes, timestamp and offset deltas and
    the null key), of two varint bytes whose zig-zag sign bit is set (the length n written
    as -(n + 1)) is refused at that length, even though the bytes after it are whole."""
    topic = TopicRecord("t" * 61, "AAAAAAAAAAAAAAAAAAAAAA")  # an 82-byte value
    data = bytearray(encode_batch(Batch(0, 1, (topic,), (), 5), 7))
    assert data[at] & 0x80 and data[HEADER + 2:HEADER + 6] == b"\x00\x00\x00\x01"
    data[at] |= 1
    data[17:21] = crc32c_of_bytes(bytes(data[21:])).to_bytes(4, "big")
    result = decode_log(bytes(data))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == ("corrupt", at)
    assert f"at byte {at} has length -" in result.error.message


def test_a_last_record_cut_inside_its_length_at_the_end_of_the_file() -> None:
    """A whole batch (valid CRC) whose last record is one byte: the first of a two-byte
    length, with the file ending there. A clear error at that byte, not a crash."""
    records = (TopicRecord("t" * 20, "AAAAAAAAAAAAAAAAAAAAAQ"), NoOpRecord())
    data = bytearray(encode_batch(Batch(0, 1, records, (), 5), 7))
    second = HEADER + 1 + data[HEADER] // 2  # where the NoOpRecord's record starts
    data[second:] = b"\x80"
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    data[17:21] = crc32c_of_bytes(bytes(data[21:])).to_bytes(4, "big")
    result = decode_log(bytes(data))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == ("corrupt", second)


def test_records_without_a_sequence() -> None:
    """testSerdeNoSequence: base sequence -1 means no sequence for the batch or any record."""
    batch = _one(DataBatch(0, 0, 0, 1, 1, -1, -1, -1, (DataRecord(b"k", b"v"),)))
    assert batch_facts(batch)["lastSequence"] == -1
    assert record_facts(batch, 0, batch.records[0])["sequence"] == -1


# --- MemoryRecordsTest (reading) ---------------------------------------------------------------


def test_batches_iterate_in_order_with_positions_and_sizes() -> None:
    """testIterator: consecutive batches, each with its position, size and offsets."""
    batches = [DataBatch(base, 0, 0, 1, 1, -1, -1, -1,
                         tuple(DataRecord(b"k", bytes([i])) for i in range(n)))
               for base, n in ((0, 3), (3, 1), (4, 2))]
    data = encode_data_log(batches)
    decoded = decode_data_log(data).batches
    assert [(b.base_offset, b.last_offset) for b in decoded] == [(0, 2), (3, 3), (4, 5)]
    assert [b.position for b in decoded] == [0, decoded[0].size,
                                             decoded[0].size + decoded[1].size]
    assert sum(b.size for b in decoded) == len(data)


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_every_compression_type_reads_back(codec: int) -> None:
    """testIterator over none, gzip, snappy, lz4 and zstd: same records, codec named."""
    records = tuple(DataRecord(b"key%d" % i, b"value" * i, i) for i in range(5))
    batch = _one(DataBatch(0, 0, codec, 1, 5, -1, -1, -1, records))
    assert batch.records == records
    assert batch.compression == ("none", "gzip", "snappy", "lz4", "zstd")[codec]


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_an_unknown_compression_type_is_unsupported(codec: int) -> None:
    """testUnsupportedCompress: attribute bits 0-2 naming no codec."""
    data = _raw_batch(b"\x00" * 8, 1, attributes=codec)
    result = decode_data_log(data)
    assert result.error is not None and (result.error.kind, result.error.position) == \
        ("unsupported", 21)


def test_a_batch_with_a_delete_horizon() -> None:
    """testBaseTimestampToDeleteHorizonConversion: attribute bit 6 makes the base timestamp the
    delete horizon; record times stay base + delta (deltas may then be negative)."""
    records = (DataRecord(b"k", None, -500), DataRecord(b"j", b"v", -400))
    batch = _one(DataBatch(0, 0, DELETE_HORIZON_FLAG, 2000, 1600, -1, -1, -1, records))
    assert batch_facts(batch)["deleteHorizonMs"] == "OptionalLong[2000]"
    assert [record_facts(batch, i, r)["CreateTime"] for i, r in enumerate(batch.records)] == \
        [1500, 1600]
    plain = _one(DataBatch(0, 0, 0, 2000, 2000, -1, -1, -1, (DataRecord(b"k", b"v"),)))
    assert batch_facts(plain)["deleteHorizonMs"] == "OptionalLong.empty"


def test_empty_batches_keep_their_offsets_and_producer() -> None:
    """testEmptyBatchRetention: a batch compaction emptied keeps base and last offset, producer
    fields and sequence; the next batch follows its last offset."""
    empty = DataBatch(10, 0, TRANSACTIONAL_FLAG, 1, 1, 5, 2, 20, (), last_offset_delta=4)
    after = DataBatch(15, 0, 0, 1, 1, -1, -1, -1, (DataRecord(b"k", b"v"),))
    decoded = decode_data_log(encode_data_log([empty, after])).batches
    assert decoded[0].records == () and decoded[0].size == HEADER
    assert (decoded[0].base_offset, decoded[0].last_offset) == (10, 14)
    assert (decoded[0].producer_id, decoded[0].producer_epoch, decoded[0].base_sequence) == \
        (5, 2, 20)
    assert batch_facts(decoded[0])["lastSequence"] == 24
    assert decoded[1].base_offset == decoded[0].last_offset + 1


@pytest.mark.parametrize("magic", [0, 1, 3])
def test_other_batch_formats_are_refused_as_unsupported(magic: int) -> None:
    """kraftsim reads magic 2 only: magic 0/1 (message sets) and unknown ones are named."""
    data = _raw_batch(_record(b"\x00\x00\x00\x01\x02v\x00"), 1, magic=magic)
    for result in (decode_data_log(data), decode_log(data)):
        assert result.batches == () and result.error is not None
        assert (result.error.kind, result.error.position) == ("unsupported", 16)
        assert str(magic) in result.error.message


def test_a_leader_change_control_batch_reads_back() -> None:
    """testBuildLeaderChangeMessage: the LeaderChange control batch's key and value."""
    leader = LeaderChangeMessage(leader_id=5, voters=(5, 6, 7), granting_voters=(5, 6))
    data = encode_batch(Batch(0, 3, (), (leader,), 42), 7)
    decoded = decode_log(data).batches[0]
    assert decoded.is_control and decoded.records == (leader,)
    assert decoded.attributes == CONTROL_FLAG and decoded.batch.epoch == 3
    key = data[HEADER + 5:HEADER + 9]  # length, attributes, deltas, key length, then key
    assert key == bytes.fromhex("0000 0002")


# --- ControlRecordUtilsTest --------------------------------------------------------------------


def test_voters_record_reads_back_from_its_key_and_value() -> None:
    """testDeserializeByteData: a VotersRecord under a KRaftVoters key (type 6)."""
    voters = VotersRecord(voters=(Voter(voter_id=0, voter_directory_id="AAAAAAAAAAAAAAAAAAAAAA"),))
    key = encode_control_key(voters)
    value = encode_control_value(voters)
    assert key == struct.pack(">hh", 0, KRAFT_VOTERS)
    decoded = decode_control_record(key + value, 0, 4, 4, 4 + len(value))
    assert decoded.record == voters


def test_a_voter_given_no_kraft_versions_supports_version_0_only() -> None:
    """Kafka's VotersRecord KRaftVersionFeature defaults to MinSupportedVersion 0 and
    MaxSupportedVersion 0: a voter written without them reads back as 0..0."""
    voters = VotersRecord(voters=(Voter(voter_id=0, voter_directory_id="AAAAAAAAAAAAAAAAAAAAAA"),))
    key, value = encode_control_key(voters), encode_control_value(voters)
    decoded = decode_control_record(key + value, 0, 4, 4, 4 + len(value))
    voter = decoded.record.voters[0]
    assert (voter.min_kraft_version, voter.max_kraft_version) == (0, 0)


def test_a_voters_value_under_another_type_is_not_a_voters_record() -> None:
    """testInvalidControlRecordType: the same value under a COMMIT key (type 1)."""
    voters = VotersRecord(voters=(Voter(voter_id=0, voter_directory_id="AAAAAAAAAAAAAAAAAAAAAA"),))
    value = encode_control_value(voters)
    key = struct.pack(">hh", 0, COMMIT)
    decoded = decode_control_record(key + value, 0, 4, 4, 4 + len(value))
    assert not isinstance(decoded.record, VotersRecord)


def test_a_negative_control_key_version_is_refused() -> None:
    """ControlRecordType.parseTypeId: a key version below 0 is corruption."""
    key = struct.pack(">hh", -1, 4)
    with pytest.raises(DecodeError) as caught:
        decode_control_record(key + b"\x00\x00", 0, 4, 4, 6)
    assert caught.value.position == 0


# --- EndTransactionMarkerTest ------------------------------------------------------------------


def test_end_transaction_marker_round_trips() -> None:
    """testSerde: COMMIT with coordinator epoch 79."""
    found = decode_marker(marker_record(commit=True, coordinator_epoch=79))
    assert found is not None and (found.control_type, found.coordinator_epoch) == (COMMIT, 79)


@pytest.mark.parametrize(("key", "value"), [
    (struct.pack(">hh", 0, 3), struct.pack(">hi", 0, 1)),  # testCannotDeserializeUnknownControlType
    (struct.pack(">hh", 0, ABORT), struct.pack(">h", -1)),  # testIllegalNegativeVersion
    (struct.pack(">hh", 0, ABORT), struct.pack(">hi", -1, 1)),  # negative version, 6 bytes
    (struct.pack(">hh", 0, COMMIT), b""),  # testNotEnoughBytes
    (struct.pack(">hh", -1, COMMIT), struct.pack(">hi", 0, 1)),  # negative key version
    (struct.pack(">h", 0), struct.pack(">hi", 0, 1)),  # a key too short for the type
])
def test_invalid_end_transaction_markers_are_not_markers(key: bytes, value: bytes) -> None:
    assert decode_marker(DataRecord(key, value)) is None


def test_a_newer_marker_version_is_read_as_version_zero() -> None:
    """testDeserializeNewerVersion: version 5, the epoch, then two bytes Kafka ignores."""
    record = DataRecord(struct.pack(">hh", 0, COMMIT), struct.pack(">hih", 5, 79, 0))
    found = decode_marker(record)
    assert found is not None and (found.coordinator_epoch, found.version) == (79, 5)


# --- ByteUtilsTest (varints as records use them) -----------------------------------------------


@pytest.mark.parametrize(("value", "encoded"), [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"),
    (1048575, "feff7f"), (-1048576, "ffff7f"), (1048576, "80808001"), (-1048577, "81808001"),
    (134217727, "feffff7f"), (-134217728, "ffffff7f"), (134217728, "8080808001"),
    (-134217729, "8180808001"), (INT32_MAX, "feffffff0f"), (-(2**31), "ffffffff0f"),
])
def test_varint_edges(value: int, encoded: str) -> None:
    """testVarintSerde: each length boundary of the zig-zag varint, both signs."""
    assert _varint(value).hex() == encoded
    data = bytes.fromhex(encoded)
    assert wire.read_varint(data, 0, len(data)) == (value, len(data))
    out = bytearray()
    wire.write_varlong(out, value)  # a varlong of an int32 value has the same bytes
    assert out.hex() == encoded


@pytest.mark.parametrize(("value", "size"), [
    (2**35 - 1, 6), (-(2**35), 6), (2**62 - 1, 9), (-(2**62), 9), (2**63 - 1, 10),
    (-(2**63), 10),
])
def test_varlong_edges(value: int, size: int) -> None:
    """testVarlongSerde, testSizeOfVarlong: the widest values take ten bytes."""
    out = bytearray()
    wire.write_varlong(out, value)
    assert len(out) == size
    assert wire.read_varlong(bytes(out), 0, size) == (value, size)
    if value == 2**63 - 1:
        assert out.hex() == "feffffffffffffffff01"


@pytest.mark.parametrize(("reader", "data"), [
    (wire.read_varint, b"\xff\xff\xff\xff\xff\x01"),  # testInvalidVarint: six bytes
    (wire.read_varlong, b"\xff" * 10 + b"\x01"),  # testInvalidVarlong: eleven bytes
])
def test_overlong_varints_are_refused_at_their_first_byte(reader: object, data: bytes) -> None:
    with pytest.raises(DecodeError) as caught:
        reader(data, 0, len(data))  # type: ignore[operator]
    assert (caught.value.kind, caught.value.position) == ("corrupt", 0)


@pytest.mark.parametrize(("value", "encoded"), [
    (0, "00"), (127, "7f"), (128, "8001"), (16383, "ff7f"), (16384, "808001"),
    (2**32 - 1, "ffffffff0f"),
])
def test_unsigned_varint_edges(value: int, encoded: str) -> None:
    """testUnsignedVarintSerde, testSizeOfUnsignedVarint."""
    out = bytearray()
    wire.write_uvarint(out, value)
    assert out.hex() == encoded
    assert wire.read_uvarint(bytes(out), 0, len(out)) == (value, len(out))


def test_a_record_longer_than_its_fields_is_corrupt() -> None:
    """DefaultRecord.readFrom's "Invalid record size": the first of two records declares two
    bytes more than its fields use; the batch is refused at those bytes (they are not read
    as the next record)."""
    first = _record(b"\x00\x00\x00\x01\x02v\x00" + b"\x00\x00")
    second = _record(b"\x00\x00\x02\x01\x02w\x00")
    result = decode_data_log(_raw_batch(first + second, 2))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == ("corrupt", HEADER + 1 + 7)


def test_a_metadata_record_longer_than_its_fields_is_corrupt_at_its_start() -> None:
    """DefaultRecord.readFrom's "Invalid record size" through the metadata log's reader: a
    NoOpRecord with two bytes left over after its headers is refused at the record."""
    value = bytes.fromhex("01 14 00 00")  # NoOpRecord v0
    body = b"\x00\x00\x00\x01" + _varint(len(value)) + value + b"\x00" + b"\x00\x00"
    result = decode_log(_raw_batch(_record(body), 1))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == ("corrupt", HEADER)


def test_a_metadata_batch_counting_more_records_than_its_bytes_hold() -> None:
    """A record count that the records section cannot hold (every record takes at least
    seven bytes) is refused at the count field, before any record is read."""
    value = bytes.fromhex("01 14 00 00")
    record = _record(b"\x00\x00\x00\x01" + _varint(len(value)) + value + b"\x00")
    result = decode_log(_raw_batch(record, 2))
    assert result.batches == () and result.error is not None
    assert (result.error.kind, result.error.position) == ("corrupt", HEADER - 4)
