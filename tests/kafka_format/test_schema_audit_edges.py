"""Edges of the schema audit's fixes (test_kafka_schema_audit_cases.py) that its cases left
open, found by a mutation round over them: the 32767-byte string limit at exactly the
limit on the generic codec's paths, what a TransactionLogValue may hold short of null,
a snapshot's footer as kafka-dump-log prints it, compressed batches written back (and
compressed again once their stored section is dropped), and Kafka's control record
type names in a data log.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from kafka_format import (
    decode_log,
    decode_metadata_record,
    encode_decoded_batch,
    encode_log,
    encode_metadata_record,
    transaction_log,
)
from kafka_format.errors import DecodeError
from kafka_format.files import METADATA_PARTITION_DIR, write_node_log
from kraftsim.dump_log import main as dump_log
from metadata.schema import ConfigRecord, TopicRecord

from .kafka_bytes import cs, i8, i16, i32, i64, s16, uvarint
from .test_kafka_schema_audit_cases import (
    COMPRESSORS,
    CONTROL,
    LEADER_CHANGE,
    LIMIT,
    TOPIC_ID,
    TOPIC_ID_BYTES,
    _txn_value,
    batch,
    compressed_batch,
    config_record,
    dumped_control_record,
    metadata_value,
    topic_record,
)

METADATA_DIR = "__cluster_metadata-0"
SNAPSHOT = "00000000000000046533-0000000004.checkpoint"
"""A snapshot Kafka wrote (kafka-data/topic-deletes)."""


# --- strings of exactly 32767 bytes -----------------------------------------------------------


def test_a_record_with_a_string_of_exactly_kafkas_limit_and_an_unknown_tag_round_trips() -> None:
    """A 32767-byte string is the longest Kafka reads and writes: a TopicRecord whose name
    is that long, carrying a tag kraftsim does not model (read and written by the generic
    codec, not the fast paths), decodes and is written back byte for byte."""
    name = "x" * LIMIT
    value = metadata_value(2, 0, cs(name) + TOPIC_ID_BYTES
                           + uvarint(1) + uvarint(9) + uvarint(1) + b"\x07")
    decoded = decode_metadata_record(value)
    assert decoded.record == TopicRecord(name, TOPIC_ID)
    assert decoded.unknown_tagged_fields == ((9, b"\x07"),)
    assert encode_metadata_record(decoded.record, 0, decoded.unknown_tagged_fields) == value


# --- __transaction_state: empty is not null ---------------------------------------------------


@pytest.mark.parametrize(("version", "partitions"), [
    (0, i32(1) + i16(0) + i32(0)),
    (1, uvarint(2) + cs("") + uvarint(1) + b"\x00"),
])
def test_a_transaction_value_with_an_empty_topic_name_and_no_partition_ids_is_read(
        version: int, partitions: bytes) -> None:
    """Kafka's reader refuses only null: a zero-length topic name and a zero-length
    PartitionIds array are read as such."""
    value = transaction_log.decode_value(_txn_value(version, partitions))
    assert value.TransactionPartitions == (("", ()),)
    assert value.TransactionLastUpdateTimestampMs == 500


def test_a_transaction_value_cut_after_a_topic_name_is_truncated_where_its_ids_belong() -> None:
    """The topic itself is whole: the error points at the end, where PartitionIds should
    start, and says nothing remains."""
    data = i16(0) + i64(7) + i16(1) + i32(60000) + i8(1) + i32(1) + s16("t")
    with pytest.raises(DecodeError) as caught:
        transaction_log.decode_value(data)
    assert caught.value.kind == "truncated"
    assert caught.value.position == len(data)
    assert "only 0 remain" in caught.value.message


# --- a snapshot's header and footer -----------------------------------------------------------


def test_dump_log_prints_a_kafka_snapshots_header_and_footer_as_kafka_does(
        kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-dump-log: `` SnapshotHeader {json}`` and `` SnapshotFooter {"version":0}``, each
    with its generated JSON converter; ``--format json`` carries the same data."""
    snapshot = kafka_data / "topic-deletes" / METADATA_DIR / SNAPSHOT
    assert dump_log([str(snapshot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    controls = [line.split("headerKeys: [] ", 1)[1] for line in lines
                if line.startswith("| offset: ") and "Snapshot" in line]
    assert controls == [
        'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1775494929413}',
        'SnapshotFooter {"version":0}']
    assert dump_log([str(snapshot), "--format", "json"]) == 0
    records = [r for b in json.loads(capsys.readouterr().out)["batches"] for r in b["records"]]
    assert records[-1] == {**records[-1], "type": "SnapshotFooter", "data": {"version": 0}}


# --- compressed batches written back -----------------------------------------------------------


def _compressed_log(codec: int, name: str) -> bytes:
    return (batch(0, 1, [LEADER_CHANGE], attributes=CONTROL)
            + compressed_batch(1, 1, [topic_record("t1"), config_record(3)], codec,
                               COMPRESSORS[name][1]))


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_a_node_log_with_a_compressed_batch_is_rewritten_byte_for_byte(
        tmp_path: Path, name: str) -> None:
    """write_node_log writes decoded batches back as they were read: a compressed batch
    keeps the section Kafka's compressor wrote (kraftsim's would differ)."""
    log = _compressed_log(COMPRESSORS[name][0], name)
    result = decode_log(log, first_offset=0)
    assert result.ok
    write_node_log(tmp_path, result.batches, metadata_version=20)
    segment = tmp_path / METADATA_PARTITION_DIR / "00000000000000000000.log"
    assert segment.read_bytes() == log


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_a_compressed_batch_without_its_stored_section_is_compressed_again(name: str) -> None:
    """A batch whose stored section is dropped (as one whose records change must) is
    written compressed with its own codec, by both encoders alike, and reads back."""
    log = _compressed_log(COMPRESSORS[name][0], name)
    first, compressed = decode_log(log, first_offset=0).batches
    dropped = msgspec.structs.replace(compressed, compressed_records=None)
    written = encode_log([first, dropped])
    assert written[:first.size] == log[:first.size]
    assert written[first.size:] == encode_decoded_batch(dropped)
    again = decode_log(written, first_offset=0)
    assert again.ok
    assert again.batches[1].header.compression == name
    assert again.batches[1].batch.records == (
        TopicRecord("t1", TOPIC_ID), ConfigRecord(2, "t", "cleanup.policy", "xxx"))


# --- control record types in a data log -------------------------------------------------------


@pytest.mark.parametrize(("type_id", "shown"), [
    (0, "ABORT(0)"), (1, "COMMIT(1)"), (2, "LEADER_CHANGE(2)"), (3, "SNAPSHOT_HEADER(3)"),
    (4, "SNAPSHOT_FOOTER(4)"), (5, "KRAFT_VERSION(5)"), (6, "KRAFT_VOTERS(6)"),
    (7, "UNKNOWN(7)"), (-1, "UNKNOWN(-1)"), (256, "UNKNOWN(256)"),
])
@pytest.mark.parametrize("after_type", [b"", b"\x00"])
def test_a_data_log_control_record_that_is_no_marker_is_named_by_kafkas_control_type(
        tmp_path: Path, type_id: int, shown: str, after_type: bytes,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A control record of a data partition whose value holds no transaction marker (a
    one-byte value: a marker needs six) is named by Kafka's ControlRecordType and the id
    its key holds as an int16 at byte 2 (bytes after it, as Kafka, ignored)."""
    line = dumped_control_record(tmp_path, i16(0) + i16(type_id) + after_type, b"\x00", capsys)
    assert line.endswith(f"headerKeys: [] controlType: {shown}")


@pytest.mark.parametrize("key", [None, b"", i16(0), i16(0) + b"\x02"])
def test_a_data_log_control_record_whose_key_holds_no_type_is_unknown(
        tmp_path: Path, key: bytes | None, capsys: pytest.CaptureFixture[str]) -> None:
    """A control key shorter than Kafka's four bytes (version, type) names no type: the
    record is printed as ``controlType: unknown`` (Kafka's reader refuses it)."""
    line = dumped_control_record(tmp_path, key, i16(0) + i32(7), capsys)
    assert line.endswith("headerKeys: [] controlType: unknown")
