"""``kraftsim dump-log`` over a ``__consumer_offsets`` segment: each record's key and value
as Kafka's ``--offsets-decoder`` prints them, and a record that does not decode named on
its own line without stopping the dump."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_format.data_log import DataBatch, DataRecord
from kafka_format.files import write_partition_dir
from kafka_format.offsets_log import encode_offset_commit
from kraftsim.cli import main as cli_main
from kraftsim.dump_log import main
from tests.kafka_format.kafka_bytes import i16, i32, i64, s16

OFFSET_KEY = i16(1) + s16("billing") + s16("orders") + i32(0)
OFFSET_VALUE = i16(3) + i64(42) + i32(0) + s16("") + i64(1_700_000_000_000)
SUBSCRIPTION = i16(0) + i32(1) + s16("orders") + i32(-1)
ASSIGNMENT = i16(0) + i32(1) + s16("orders") + i32(1) + i32(0) + i32(-1)
GROUP_VALUE = (i16(3) + s16("consumer") + i32(1) + s16("range") + s16("m-1") + i64(1_000)
               + i32(1) + s16("m-1") + s16(None) + s16("app") + s16("/10.0.0.1")
               + i32(300_000) + i32(45_000) + i32(len(SUBSCRIPTION)) + SUBSCRIPTION
               + i32(len(ASSIGNMENT)) + ASSIGNMENT)
RECORDS: list[tuple[bytes | None, bytes | None]] = [
    (OFFSET_KEY, OFFSET_VALUE),
    (i16(2) + s16("billing"), GROUP_VALUE),
    (OFFSET_KEY, None),
    (i16(17) + s16("streams"), b"\x00\x00\x00"),
    (OFFSET_KEY, OFFSET_VALUE[:12]),
    (None, b"x"),
    (i16(3) + s16("kip848"), i16(0) + i32(9) + b"\x00"),
]

OFFSET_JSON = {"type": "1", "data": {"group": "billing", "topic": "orders", "partition": 0}}
EXPECTED_CONTENT = [
    'key: {"type":"1","data":{"group":"billing","topic":"orders","partition":0}} '
    'payload: {"version":"3","data":{"offset":42,"leaderEpoch":0,"metadata":"",'
    '"commitTimestamp":1700000000000}}',
    'key: {"type":"2","data":{"group":"billing"}} payload: {"version":"3","data":{'
    '"protocolType":"consumer","generation":1,"protocol":"range","leader":"m-1",'
    '"currentStateTimestamp":1000,"members":[{"memberId":"m-1","groupInstanceId":null,'
    '"clientId":"app","clientHost":"/10.0.0.1","rebalanceTimeout":300000,'
    '"sessionTimeout":45000,"subscription":{"topics":["orders"],"userData":null},'
    '"assignment":{"assignedPartitions":[{"topic":"orders","partitions":[0]}],'
    '"userData":null}}]}}',
    'key: {"type":"1","data":{"group":"billing","topic":"orders","partition":0}} '
    'payload: <DELETE>',
    "key: Unknown record type 17 at offset 3, skipping.",
    'key: {"type":"1","data":{"group":"billing","topic":"orders","partition":0}} '
    "payload: Error at offset 4, skipping. Value: OffsetCommitValue version 3: int32 "
    "needs 4 bytes at byte 10 but only 2 remain",
    "key: Error at offset 5, skipping. The record has no key.",
    'key: {"type":"3","data":{"groupId":"kip848"}} payload: {"version":"0","data":{'
    '"epoch":9}}',
]


def _write(directory: Path) -> Path:
    batches = [DataBatch(offset, 0, 0, 1_000, 1_000, -1, -1, -1, (DataRecord(key, value),))
               for offset, (key, value) in enumerate(RECORDS)]
    return write_partition_dir(directory, batches)[0]


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    return _write(tmp_path / "__consumer_offsets-0")


def _record_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("| ")]


def test_consumer_offsets_records_print_as_kafkas_offsets_decoder(
        segment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(segment)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = _record_lines(out)
    assert lines[0] == ("| offset: 0 CreateTime: 1000 keySize: 23 valueSize: 24 sequence: -1 "
                        "headerKeys: [] " + EXPECTED_CONTENT[0])
    assert [line.split("headerKeys: [] ", 1)[1] for line in lines] == EXPECTED_CONTENT


def test_skip_record_metadata_leaves_key_and_payload(
        segment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["dump-log", "--skip-record-metadata", str(segment)]) == 0
    assert _record_lines(capsys.readouterr().out) == [f"| {c}" for c in EXPECTED_CONTENT]


def test_json_output_carries_the_same_key_and_payload(
        segment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "json", str(segment)]) == 0
    records = [b["records"][0] for b in json.loads(capsys.readouterr().out)["batches"]]
    assert records[0]["key"] == OFFSET_JSON
    assert records[0]["payload"] == {"version": "3", "data": {
        "offset": 42, "leaderEpoch": 0, "metadata": "", "commitTimestamp": 1_700_000_000_000}}
    group = records[1]["payload"]["data"]["members"][0]
    assert group["subscription"] == {"topics": ["orders"], "userData": None}
    assert records[2]["payload"] == "<DELETE>"
    assert records[3] == {**records[3], "key": "Unknown record type 17 at offset 3, skipping."}
    assert "payload" not in records[3]
    assert records[4]["key"] == OFFSET_JSON
    assert records[4]["payload"].startswith("Error at offset 4, skipping. Value: ")
    assert records[6]["key"] == {"type": "3", "data": {"groupId": "kip848"}}


def test_offsets_decoder_flag_decodes_a_segment_anywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    segment = _write(tmp_path / "copied-0")
    assert main(["--skip-record-metadata", str(segment)]) == 0
    assert _record_lines(capsys.readouterr().out)[2] == "| key: \x00\x01\x00\x07billing" \
        "\x00\x06orders\x00\x00\x00\x00"  # a plain topic's record: key and value as text
    assert main(["--offsets-decoder", "--transaction-log-decoder", "--skip-record-metadata",
                 str(segment)]) == 0
    assert _record_lines(capsys.readouterr().out) == [f"| {c}" for c in EXPECTED_CONTENT]


def test_non_ascii_group_names_print_as_they_are(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    key, value = encode_offset_commit("café-☕", "orders", 0, 5, -1, "", 1)
    segment = write_partition_dir(tmp_path / "__consumer_offsets-0", [
        DataBatch(0, 0, 0, 1, 1, -1, -1, -1, (DataRecord(key, value),))])[0]
    assert main([str(segment)]) == 0
    assert '"group":"café-☕"' in capsys.readouterr().out
