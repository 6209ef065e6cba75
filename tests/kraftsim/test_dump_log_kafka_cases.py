"""``kraftsim dump-log`` in the cases Kafka's own DumpLogSegmentsTest checks: the line before
the batches, ``--skip-record-metadata`` leaving control records out, a metadata record that
does not decode skipped with the dump going on, a cut tail counted, and data records with and
without keys."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kafka_format.batch_format import encode_batches
from kafka_format.data_log import DataBatch, DataRecord, encode_data_batch, marker_record
from kafka_format.files import write_partition_dir
from kraftsim.dump_log import main
from metadata.schema import PartitionChangeRecord, RegisterBrokerRecord, TopicRecord
from raft.batch import (
    Batch,
    KRaftVersionRecord,
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    Voter,
    VotersRecord,
)

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
RECORDS = (RegisterBrokerRecord(broker_id=0, broker_epoch=10),
           RegisterBrokerRecord(broker_id=1, broker_epoch=20),
           TopicRecord(name="test-topic", topic_id=TOPIC_ID),
           PartitionChangeRecord(topic_id=TOPIC_ID, partition_id=0, leader=1, isr=(0, 1, 2)))
LEADER = LeaderChangeMessage(leader_id=1, voters=(1,), granting_voters=(1,))


def _dump(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _segment(tmp_path: Path, data: bytes, base: int = 0) -> Path:
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir(exist_ok=True)
    path = directory / f"{base:020d}.log"
    path.write_bytes(data)
    return path


def _metadata_log() -> bytes:
    return encode_batches([Batch(0, 1, control_records=(LEADER,)), Batch(1, 1, RECORDS)], 21)


def _bogus_batch(base_offset: int, epoch: int) -> bytes:
    """A batch whose frame and CRC are whole but whose one record's value starts with frame
    version 10000 (Kafka's test writes the varints 10000, 10000)."""
    value = bytes([0x90, 0x4E, 0x90, 0x4E])
    return encode_data_batch(DataBatch(base_offset, epoch, 0, 0, 0, -1, -1, -1,
                                       (DataRecord(None, value),)))


def test_a_segment_prints_its_starting_offset(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = _segment(tmp_path, encode_batches([Batch(40, 1, control_records=(LEADER,))], 21), 40)
    status, out, _ = _dump(capsys, "--cluster-metadata-decoder", "--files", str(log))
    assert status == 0
    assert out.splitlines()[:2] == [f"Dumping {log} (log segment)", "Log starting offset: 40"]


def test_metadata_records_with_and_without_their_metadata(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _segment(tmp_path, _metadata_log())
    status, out, _ = _dump(capsys, "--cluster-metadata-decoder", "--files", str(log))
    assert status == 0 and "Log starting offset: 0" in out
    assert "TOPIC_RECORD" in out and "REGISTER_BROKER_RECORD" in out
    assert "| offset: 3 CreateTime: 0 keySize: -1 " in out
    status, out, _ = _dump(capsys, "--cluster-metadata-decoder", "--skip-record-metadata",
                           "--files", str(log))
    lines = out.splitlines()
    assert status == 0 and "| offset:" not in out
    # Kafka's tool: a control record's line is empty, a record without a key starts " payload:"
    assert lines[3] == ""
    assert lines[5].startswith(' payload: {"type":"REGISTER_BROKER_RECORD"')
    assert lines[7].startswith(' payload: {"type":"TOPIC_RECORD","version":0,"data":'
                               '{"name":"test-topic"')


def test_a_record_that_does_not_decode_is_skipped_and_the_dump_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    again = encode_batches([Batch(6, 2, RECORDS)], 21)
    log = _segment(tmp_path, _metadata_log() + _bogus_batch(5, 2) + again)
    status, out, err = _dump(capsys, "--cluster-metadata-decoder", "--skip-record-metadata",
                             "--files", str(log))
    assert " payload: Error at 5, skipping. unknown metadata frame version 10000" in out
    after = out[out.index("skipping"):]
    assert "baseOffset: 6 lastOffset: 9 count: 4" in after and "TOPIC_RECORD" in after
    assert status == 1  # kraftsim still says the file holds something Kafka would not write
    assert "batch 2 (base offset 5)" in err and err.count("error:") == 1
    status, out, _ = _dump(capsys, "--format", "json", str(log))
    document = json.loads(out)
    assert [b["baseOffset"] for b in document["batches"]] == [0, 1, 5, 6]
    skipped = document["batches"][2]["records"][0]
    assert skipped["offset"] == 5 and skipped["error"].startswith("Error at 5, skipping.")
    assert document["batches"][3]["records"][2]["type"] == "TOPIC_RECORD"
    assert document["error"]["batchOffset"] == 5


def test_max_bytes_still_bounds_the_dump_past_a_record_that_does_not_decode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reading on past a skipped record keeps to --max-bytes: the batch beyond is left out."""
    head = _metadata_log() + _bogus_batch(5, 2) + encode_batches([Batch(6, 2, RECORDS)], 21)
    log = _segment(tmp_path, head + encode_batches([Batch(10, 2, RECORDS[:1])], 21))
    status, out, err = _dump(capsys, "--max-bytes", str(len(head)), str(log))
    assert "Error at 5, skipping." in out
    assert "baseOffset: 6 lastOffset: 9 count: 4" in out and "baseOffset: 10 " not in out
    assert status == 1 and err.count("error:") == 1
    status, out, _ = _dump(capsys, str(log))
    assert "baseOffset: 10 " in out


def test_an_epoch_without_its_leader_change_is_printed_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kafka's tool reads epochs as they are; kraftsim prints every batch and still reports
    the epoch that no LeaderChange opened (the CRC does not cover it)."""
    data = _metadata_log() + encode_batches([Batch(5, 2, RECORDS[:1]), Batch(6, 3, RECORDS[1:2])],
                                            21)
    log = _segment(tmp_path, data)
    status, out, err = _dump(capsys, str(log))
    assert status == 1
    assert "baseOffset: 5 " in out and "baseOffset: 6 " in out
    assert '"brokerId":1' in out[out.index("baseOffset: 6 "):]
    assert err.count("error:") == 2 and "batch 2 (base offset 5)" in err \
        and "batch 3 (base offset 6)" in err


def test_a_control_batch_whose_epoch_decreases_is_printed_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A LeaderChange batch in an epoch lower than the last is printed as it is, and named."""
    leader = LeaderChangeMessage(leader_id=2, voters=(1, 2), granting_voters=(2,))
    data = _metadata_log() + encode_batches([Batch(5, 1, RECORDS[:1]),
                                             Batch(6, 0, control_records=(leader,))], 21)
    log = _segment(tmp_path, data)
    status, out, err = _dump(capsys, str(log))
    assert status == 1
    after = out[out.index("baseOffset: 6 "):]
    assert "isControl: true" in after
    assert '| offset: 6 CreateTime: 0 keySize: 4 valueSize: 24 sequence: -1 headerKeys: [] ' \
           'LeaderChange: {"version":0,"leaderId":2,"voters":[{"voterId":1},{"voterId":2}],' \
           '"grantingVoters":[{"voterId":2}]}' in after
    assert err.count("error:") == 1 and "batch 3 (base offset 6)" in err \
        and "a log's epochs never decrease" in err


def test_damage_in_a_frame_still_stops_the_dump(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bogus = bytearray(_bogus_batch(5, 1))
    bogus[-1] ^= 0xFF  # the CRC no longer matches
    log = _segment(tmp_path, _metadata_log() + bytes(bogus) + encode_batches(
        [Batch(6, 1, RECORDS)], 21))
    status, out, err = _dump(capsys, str(log))
    assert status == 1 and "baseOffset: 5" not in out and "crc-mismatch" in err


def test_a_cut_tail_is_counted_as_kafkas_tool_counts_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _metadata_log()
    first = 12 + struct.unpack_from(">i", data, 8)[0]
    log = _segment(tmp_path, data[:first + 30])
    status, out, err = _dump(capsys, str(log))
    assert status == 1 and "truncated" in err
    assert out.splitlines()[-1] == f"Found 30 invalid bytes at the end of {log.name}"
    status, out, _ = _dump(capsys, "--max-bytes", str(first + 30), str(_segment(
        tmp_path, data)))
    assert status == 0 and "invalid bytes" not in out


def test_a_snapshot_names_its_id_and_skip_leaves_its_control_records_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    voters = VotersRecord(voters=tuple(Voter(voter_id=n, voter_directory_id=f"{'A' * 21}{n}")
                                       for n in (1, 2, 3)))
    data = encode_batches([
        Batch(0, 0, control_records=(SnapshotHeaderRecord(last_contained_log_timestamp=10000),
                                     KRaftVersionRecord(kraft_version=1), voters)),
        Batch(3, 0, RECORDS),
        Batch(7, 0, control_records=(SnapshotFooterRecord(),)),
    ], 21)
    snapshot = tmp_path / "00000000000000000000-0000000000.checkpoint"
    snapshot.write_bytes(data)
    status, out, _ = _dump(capsys, "--cluster-metadata-decoder", "--files", str(snapshot))
    assert status == 0
    assert out.splitlines()[1] == "Snapshot end offset: 0, epoch: 0"
    for shown in ("TOPIC_RECORD", "REGISTER_BROKER_RECORD", "SnapshotHeader", "SnapshotFooter",
                  "KRaftVersion", "KRaftVoters", '"lastContainedLogTimestamp":10000'):
        assert shown in out
    status, out, _ = _dump(capsys, "--cluster-metadata-decoder", "--skip-record-metadata",
                           "--files", str(snapshot))
    assert status == 0 and "Snapshot end offset: 0, epoch: 0" in out
    assert "TOPIC_RECORD" in out and "REGISTER_BROKER_RECORD" in out
    for hidden in ("SnapshotHeader", "SnapshotFooter", "KRaftVersion", "KRaftVoters",
                   "lastContainedLogTimestamp"):
        assert hidden not in out


def test_the_bootstrap_snapshot_says_so(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    data = encode_batches([
        Batch(0, 0, control_records=(SnapshotHeaderRecord(last_contained_log_timestamp=0),)),
        Batch(1, 0, RECORDS[:1]), Batch(2, 0, control_records=(SnapshotFooterRecord(),))], 21)
    bootstrap = tmp_path / "bootstrap.checkpoint"
    bootstrap.write_bytes(data)
    status, out, _ = _dump(capsys, str(bootstrap))
    assert status == 0 and out.splitlines()[1] == "KRaft bootstrap snapshot"


def test_data_records_with_and_without_keys_as_kafkas_tool_prints_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kafka's testPrintDataLog batches: keys and values, keys only, values only, neither;
    then a transaction's marker."""
    batches = [
        DataBatch(0, 0, 0, 0, 0, -1, -1, -1, tuple(
            DataRecord(f"message key {i}".encode(), f"message value {i}".encode(), i)
            for i in range(2))),
        DataBatch(2, 0, 0, 0, 0, -1, -1, -1, (DataRecord(b"message key 2", None),)),
        DataBatch(3, 0, 0, 0, 0, -1, -1, -1, (DataRecord(None, b"message value 3"),)),
        DataBatch(4, 0, 0, 0, 0, -1, -1, -1, (DataRecord(None, None),)),
        DataBatch(5, 0, 0x20, 0, 0, 7, 0, -1, (marker_record(True, 3),)),
    ]
    segment = write_partition_dir(tmp_path / "orders-0", batches, [])[0]
    status, out, _ = _dump(capsys, "--print-data-log", "--files", str(segment))
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert status == 0 and "Log starting offset: 0" in out
    assert lines[0].endswith("headerKeys: [] key: message key 0 payload: message value 0")
    assert lines[2].endswith("headerKeys: [] key: message key 2")
    assert lines[3].endswith("headerKeys: [] payload: message value 3")
    assert lines[4].endswith("headerKeys: []")
    assert lines[5].endswith("endTxnMarker: COMMIT coordinatorEpoch: 3")
    status, out, _ = _dump(capsys, "--skip-record-metadata", "--files", str(segment))
    records = [line for line in out.splitlines()[2:] if not line.startswith("baseOffset:")]
    assert records == ["| key: message key 0 payload: message value 0",
                       "| key: message key 1 payload: message value 1",
                       "| key: message key 2", " payload: message value 3", "", ""]
