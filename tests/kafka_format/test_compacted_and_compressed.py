"""Data segments as real brokers leave them: compacted batches and compressed records.

A compacted topic (``__consumer_offsets``, ``__transaction_state``) keeps each
batch's header, base offset and last offset delta, and drops records from
inside it: the records left keep their offset deltas, with gaps, and a batch
may be left with no record at all. Producers compress the records section
with gzip, snappy (snappy-java's framing), lz4 or zstd.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import cramjam
import msgspec
import pytest

from kafka_format import compression, wire
from kafka_format.batch_format import crc32c_of_bytes
from kafka_format.data_log import DataBatch, DataRecord, decode_data_log, encode_data_log
from kafka_format.errors import DecodeError
from kafka_format.files import write_partition_dir
from kafka_format.log_indexes import OffsetIndexEntry, encode_offset_index
from kraftsim.dump_data_log import batch_facts, dump_data_segment, record_facts
from kraftsim.dump_side_files import dump_side_file

TIMESTAMP_TYPE_FLAG = 0x08


def _compacted() -> DataBatch:
    """Offsets 100-109 from producer 4 (sequence 20 on); 103, 107 remain; 109 was last."""
    return DataBatch(100, 3, 0, 5_000, 5_009, 4, 0, 20, (
        DataRecord(b"k3", b"v3", 3, offset_delta=3),
        DataRecord(b"k7", None, 7, offset_delta=7)), last_offset_delta=9)


def test_compacted_batch_keeps_its_offsets_and_sequences() -> None:
    batch = _compacted()
    decoded = decode_data_log(encode_data_log([batch]), "seg")
    assert decoded.error is None and decoded.batches[0].records == batch.records
    again = decoded.batches[0]
    assert again.last_offset == 109 and [again.record_offset(i) for i in range(2)] == [103, 107]
    facts = batch_facts(again)
    assert (facts["baseOffset"], facts["lastOffset"], facts["count"]) == (100, 109, 2)
    assert (facts["baseSequence"], facts["lastSequence"]) == (20, 29)  # base + last delta
    records = [record_facts(again, i, r) for i, r in enumerate(again.records)]
    assert [(r["offset"], r["sequence"], r["CreateTime"]) for r in records] == [
        (103, 23, 5_003), (107, 27, 5_007)]


def test_a_batch_compaction_emptied_keeps_its_offsets() -> None:
    empty = DataBatch(50, 1, 0, 10, 10, 9, 2, 0, (), last_offset_delta=4)
    following = DataBatch(55, 1, 0, 11, 11, -1, -1, -1, (DataRecord(None, b"x"),))
    decoded = decode_data_log(encode_data_log([empty, following]), "seg")
    assert decoded.error is None
    assert [(b.base_offset, b.last_offset, len(b.records)) for b in decoded.batches] == [
        (50, 54, 0), (55, 55, 1)]


@pytest.mark.parametrize("deltas,last", [((2, 2), 5), ((3, 1), 5), ((0, 6), 5)],
                         ids=["repeated", "backwards", "past-the-last"])
def test_offset_deltas_must_grow_within_the_batch(deltas: tuple[int, int], last: int) -> None:
    batch = DataBatch(0, 0, 0, 0, 0, -1, -1, -1, tuple(
        DataRecord(None, b"v", 0, offset_delta=d) for d in deltas), last_offset_delta=last)
    result = decode_data_log(encode_data_log([batch]), "seg")
    assert result.batches == () and result.error is not None
    assert result.error.kind == "corrupt" and "offset delta" in result.error.message


@pytest.mark.parametrize("codec,name", [(1, "gzip"), (2, "snappy"), (3, "lz4"), (4, "zstd")])
def test_compressed_batches_round_trip(codec: int, name: str) -> None:
    records = tuple(DataRecord(f"k{i}".encode(), b"value " * (i + 1), i, ((b"h", b"x"),))
                    for i in range(40))
    batch = DataBatch(7, 2, codec, 1_000, 1_039, -1, -1, -1, records)
    data = encode_data_log([batch, DataBatch(47, 2, 0, 2_000, 2_000, -1, -1, -1,
                                             (DataRecord(None, b"plain"),))])
    result = decode_data_log(data, "seg")
    assert result.error is None
    assert [b.records for b in result.batches] == [records, (DataRecord(None, b"plain"),)]
    assert result.batches[0].compression == name
    assert encode_data_log(result.batches) == data


def test_snappy_reads_framed_streams_of_several_blocks_and_raw_blocks() -> None:
    payload = bytes(range(256)) * 300  # 76,800 bytes: three 32 KiB blocks
    framed = compression.compress(compression.SNAPPY, payload)
    assert framed.startswith(compression.SNAPPY_MAGIC)
    assert compression.decompress(compression.SNAPPY, framed, 0) == payload
    blocks, pos = [], 16  # snappy-java's blocks: a 4-byte length, then raw snappy
    while pos < len(framed):
        length = int.from_bytes(framed[pos:pos + 4], "big")
        blocks.append(len(cramjam.snappy.decompress_raw(framed[pos + 4:pos + 4 + length])))
        pos += 4 + length
    assert blocks == [32_768, 32_768, 11_264]  # snappy-java's 32 KiB blocks
    raw = bytes(cramjam.snappy.compress_raw(payload))
    assert compression.decompress(compression.SNAPPY, raw, 0) == payload


def test_damaged_compressed_records_are_reported_at_the_records() -> None:
    batch = DataBatch(0, 0, compression.LZ4, 0, 0, -1, -1, -1, (DataRecord(None, b"v" * 50),))
    good = encode_data_log([batch])
    cut_stream = bytearray(good)
    cut_stream[-4:] = b"\x00\x00\x00\x00"  # the frame's end is gone
    cut_stream[17:21] = crc32c_of_bytes(bytes(cut_stream[21:])).to_bytes(4, "big")
    result = decode_data_log(bytes(cut_stream), "seg")
    assert result.error is not None and result.error.position == 61
    assert result.error.kind == "corrupt"


def test_dump_prints_log_append_time_and_the_compacted_offsets(tmp_path: Path) -> None:
    stamped = DataBatch(110, 3, TIMESTAMP_TYPE_FLAG, 6_000, 6_500, -1, -1, -1,
                        (DataRecord(None, b"a"), DataRecord(None, b"b", 3)))
    written = write_partition_dir(tmp_path / "orders-0", [_compacted(), stamped], [])
    out = io.StringIO()
    assert dump_data_segment(str(written[0]), "text", True, out) is None
    lines = out.getvalue().splitlines()
    assert lines[1] == "Log starting offset: 0"  # the segment's name, as kafka-dump-log says
    assert "baseOffset: 100 lastOffset: 109 count: 2 baseSequence: 20 lastSequence: 29" in lines[2]
    assert lines[3].startswith("| offset: 103 CreateTime: 5003 ") and "sequence: 23" in lines[3]
    assert lines[3].endswith("key: k3 payload: v3")  # a plain topic's records, not decoded
    assert lines[4].startswith("| offset: 107 CreateTime: 5007 ")
    assert " LogAppendTime: 6500 " in lines[5] and "CreateTime" not in lines[5]
    assert lines[6].startswith("| offset: 110 LogAppendTime: 6500 ")
    assert lines[7].startswith("| offset: 111 LogAppendTime: 6500 ")
    out = io.StringIO()
    dump_data_segment(str(written[0]), "json", True, out)
    document = json.loads(out.getvalue())
    assert [r["offset"] for r in document["batches"][0]["records"]] == [103, 107]


@pytest.mark.parametrize("cut,position", [(10, 0), (18, 16), (-2, 20)],
                         ids=["header", "block-length", "block"])
def test_a_cut_snappy_stream_is_truncated_where_it_stops(cut: int, position: int) -> None:
    framed = compression.compress(compression.SNAPPY, b"x" * 100)
    with pytest.raises(DecodeError) as caught:
        compression.decompress(compression.SNAPPY, framed[:cut], 0)
    assert (caught.value.kind, caught.value.position) == ("truncated", position)


def test_a_plain_batch_decodes_to_itself_with_its_size() -> None:
    batch = DataBatch(3, 1, 0, 10, 11, 9, 0, 0, (DataRecord(b"k", b"v"), DataRecord(None, b"w", 1)))
    data = encode_data_log([batch])
    decoded = decode_data_log(data).batches[0]
    assert decoded == msgspec.structs.replace(batch, size=len(data), crc=decoded.crc)
    assert decoded.last_offset_delta is None and decoded.size == len(data)


@pytest.mark.parametrize("length,kind", [(-3, "corrupt"), (200, "truncated")])
def test_a_record_length_out_of_its_batch(length: int, kind: str) -> None:
    """The record's length (its first varint, at byte 61) negative, or past the batch's end."""
    data = bytearray(encode_data_log([DataBatch(0, 0, 0, 0, 0, -1, -1, -1,
                                                (DataRecord(None, b"abc"),))]))
    length_varint = bytearray()
    wire.write_varint(length_varint, length)
    data[61:62] = length_varint
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    data[17:21] = crc32c_of_bytes(bytes(data[21:])).to_bytes(4, "big")
    result = decode_data_log(bytes(data), "seg")
    assert result.error is not None and (result.error.kind, result.error.position) == (kind, 61)


def test_sequences_and_times_at_their_edges() -> None:
    at_zero = DataBatch(0, 0, 0, 0, 5, 1, 0, 0, (DataRecord(None, b"a"), DataRecord(None, b"b", 5)))
    facts = [record_facts(at_zero, i, r) for i, r in enumerate(at_zero.records)]
    assert [(f["sequence"], f["CreateTime"]) for f in facts] == [(0, 0), (1, 5)]
    wrapping = DataBatch(0, 0, 0, 1, 1, 1, 0, 2**31 - 1,
                         (DataRecord(None, b"a"), DataRecord(None, b"b")))
    assert [record_facts(wrapping, i, r)["sequence"] for i, r in enumerate(wrapping.records)] \
        == [2**31 - 1, 0]
    assert batch_facts(wrapping)["lastSequence"] == 0


def test_text_and_json_keep_non_ascii_payloads(tmp_path: Path) -> None:
    segment = write_partition_dir(tmp_path / "orders-0", [DataBatch(
        0, 0, 0, 1, 1, -1, -1, -1, (DataRecord(None, "café ☕".encode()),))])[0]
    out = io.StringIO()
    dump_data_segment(str(segment), "text", True, out)
    assert "payload: café ☕" in out.getvalue()
    out = io.StringIO()
    dump_data_segment(str(segment), "json", True, out)
    assert "café ☕" in out.getvalue() and json.loads(out.getvalue())["error"] is None


def test_an_emptied_batch_last_in_the_segment(tmp_path: Path) -> None:
    """Compaction can leave the last batch with no record: 61 bytes, the header alone. It
    reads, keeps its offsets and its size, and the index beside it may point at it."""
    first = DataBatch(0, 0, 0, 0, 0, -1, -1, -1, (DataRecord(None, b"a"), DataRecord(None, b"b")))
    emptied = DataBatch(2, 0, 0, 0, 0, 4, 0, 2, (), last_offset_delta=2)
    segment = write_partition_dir(tmp_path / "orders-0", [first, emptied])[0]
    data = segment.read_bytes()
    batches = decode_data_log(data).batches
    assert [(b.base_offset, b.last_offset, b.size) for b in batches] == [
        (0, 1, len(data) - 61), (2, 4, 61)]
    assert batches[1].position == len(data) - 61
    index = segment.with_suffix(".index")
    index.write_bytes(encode_offset_index([OffsetIndexEntry(4, len(data) - 61)], 0))
    out = io.StringIO()
    assert dump_side_file(str(index), "offset index", "text", out, io.StringIO()) is None


def test_snappy_header_alone_is_an_empty_stream() -> None:
    framed = compression.compress(compression.SNAPPY, b"")
    assert compression.decompress(compression.SNAPPY, framed, 0) == b""


def test_a_snappy_block_longer_than_the_stream_names_both_sizes() -> None:
    """A framed block that declares more bytes than the stream holds: the error gives the
    declared length and what is left, at the byte after the block's length."""
    framed = compression.compress(compression.SNAPPY, b"x" * 100)
    with pytest.raises(DecodeError) as caught:
        compression.decompress(compression.SNAPPY, framed[:-2], 1_000)
    declared = int.from_bytes(framed[16:20], "big")
    remain = len(framed) - 2 - 20
    assert (caught.value.kind, caught.value.position) == ("truncated", 1_020)
    assert caught.value.message == f"snappy block of {declared} bytes, {remain} remain"
