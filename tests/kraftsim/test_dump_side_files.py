"""``kraftsim dump-log`` over a partition directory as a broker leaves it: the segment
and, beside it, the offset and time indexes, a producer snapshot and the checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_format.checkpoints import EpochEntry, OffsetEntry, encode_checkpoint
from kafka_format.data_log import DataBatch, DataRecord, decode_data_log
from kafka_format.files import write_partition_dir
from kafka_format.log_indexes import (
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    TimeIndexEntry,
    encode_offset_index,
    encode_producer_snapshot,
    encode_time_index,
)
from kraftsim.dump_log import main

BASE = "00000000000000000000"


@pytest.fixture
def partition(tmp_path: Path) -> Path:
    """``orders-0``: three batches of producer 7, with every side file Kafka writes."""
    directory = tmp_path / "orders-0"
    batches = [DataBatch(base, 0, 0, 1_000 + base, 1_000 + base + 1, 7, 0, base,
                         (DataRecord(None, b"a"), DataRecord(None, b"b", 1)))
               for base in (0, 2, 4)]
    segment = write_partition_dir(directory, batches)[0]
    decoded = decode_data_log(segment.read_bytes()).batches
    (directory / f"{BASE}.index").write_bytes(encode_offset_index(
        [OffsetIndexEntry(b.last_offset, b.position) for b in decoded[1:]], 0) + bytes(80))
    (directory / f"{BASE}.timeindex").write_bytes(encode_time_index(
        [TimeIndexEntry(b.max_timestamp, b.last_offset) for b in decoded], 0))
    (directory / "00000000000000000006.snapshot").write_bytes(encode_producer_snapshot([
        ProducerSnapshotEntry(7, 0, 5, 5, 1, 1_005, -1),
        ProducerSnapshotEntry(8, 1, -1, -1, 0, 900, 4, 3)]))
    (directory / "leader-epoch-checkpoint").write_text(encode_checkpoint([EpochEntry(0, 0)]))
    (directory / "partition.metadata").write_text("version: 0\ntopic_id: NjQ4FrvzSYmOXRjin9mJvw")
    (tmp_path / "replication-offset-checkpoint").write_text(
        encode_checkpoint([OffsetEntry("orders", 0, 6)]))
    (tmp_path / "cleaner-offset-checkpoint").write_text("")
    return directory


def test_every_side_file_prints_as_kafka_dump_log_would(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [partition / f"{BASE}.index", partition / f"{BASE}.timeindex",
             partition / "00000000000000000006.snapshot", partition / "leader-epoch-checkpoint",
             partition / "partition.metadata", partition.parent / "replication-offset-checkpoint",
             partition.parent / "cleaner-offset-checkpoint"]
    assert main(list(map(str, files))) == 0
    out, err = capsys.readouterr()
    assert err == ""
    sections = out.split("Dumping ")[1:]
    assert [s.splitlines()[0].rsplit(" (", 1)[1] for s in sections] == [
        "offset index)", "time index)", "producer snapshot)", "leader-epoch-checkpoint)",
        "partition.metadata)", "replication-offset-checkpoint)", "cleaner-offset-checkpoint)"]
    index, time_index, snapshot, epochs, metadata, offsets, cleaner = (
        s.splitlines()[1:] for s in sections)
    assert index[0] == "offset: 3 position: 77" and index[1].startswith("offset: 5 position: ")
    assert len(index) == 2  # the preallocated zeros are not entries
    assert time_index == ["timestamp: 1001 offset: 1", "timestamp: 1003 offset: 3",
                          "timestamp: 1005 offset: 5"]
    assert snapshot == [
        "producerId: 7 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1005 firstSequence: 4 lastSequence: 5 lastOffset: 5 "
        "offsetDelta: 1 timestamp: 1005",
        "producerId: 8 producerEpoch: 1 coordinatorEpoch: 4 currentTxnFirstOffset: "
        "OptionalLong[3] lastTimestamp: 900 "]
    assert epochs == ["version: 0", "epoch: 0 startOffset: 0"]
    assert metadata == ["version: 0", "topic_id: NjQ4FrvzSYmOXRjin9mJvw"]
    assert offsets == ["version: 0", "topic: orders partition: 0 offset: 6"]
    assert cleaner == []


def test_indexes_that_disagree_with_the_segment_are_reported(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = partition / f"{BASE}.index"
    index.write_bytes(encode_offset_index([OffsetIndexEntry(4, 77)], 0))
    time_index = partition / f"{BASE}.timeindex"
    time_index.write_bytes(encode_time_index(
        [TimeIndexEntry(1_003, 3), TimeIndexEntry(999, 5), TimeIndexEntry(1_100, 4)], 0))
    assert main([str(index), str(time_index)]) == 1
    out, err = capsys.readouterr()
    assert "offset: 4 position: 77" in out
    lines = err.splitlines()
    assert lines[:2] == [f"Mismatches in :{index.absolute()}", "  Index offset: 4, log offset: 3"]
    assert f"Found timestamp mismatch in :{time_index.absolute()}" in lines
    assert "  Index timestamp: 999, log timestamp: 1005" in lines
    assert "  Index timestamp: 999, Previously indexed timestamp: 1003" in lines
    assert "Indexed offset: 4, found log offset: 5" in lines
    assert sum("kraftsim dump-log: error:" in line for line in lines) == 2


def test_a_damaged_producer_snapshot_fails(partition: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = partition / "00000000000000000006.snapshot"
    snapshot.write_bytes(snapshot.read_bytes()[:-1])
    assert main([str(snapshot)]) == 1
    out, err = capsys.readouterr()
    assert out == f"Dumping {snapshot} (producer snapshot)\n"
    assert "truncated" in err and str(snapshot) in err


def test_json_documents(partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "json", str(partition / "00000000000000000006.snapshot"),
                 str(partition / f"{BASE}.index"),
                 str(partition / "leader-epoch-checkpoint")]) == 0
    snapshot, index, epochs = map(json.loads, capsys.readouterr().out.splitlines())
    assert snapshot["kind"] == "producer snapshot" and snapshot["error"] is None
    assert snapshot["entries"][0] == {
        "producerId": 7, "producerEpoch": 0, "coordinatorEpoch": -1,
        "currentTxnFirstOffset": None, "lastTimestamp": 1005, "firstSequence": 4,
        "lastSequence": 5, "lastOffset": 5, "offsetDelta": 1, "timestamp": 1005}
    assert snapshot["entries"][1]["currentTxnFirstOffset"] == 3
    assert index["entries"][0] == {"offset": 3, "position": 77} and index["problems"] == []
    assert epochs["entries"] == [{"epoch": 0, "startOffset": 0}] and epochs["version"] == 0


def test_unknown_files_are_ignored_and_missing_ones_fail(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = partition / "notes.txt"
    notes.write_text("hello")
    assert main([str(notes)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "ignoring" in err and str(notes) in err
    assert main([str(partition / "00000000000000000099.snapshot")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_verify_index_only_prints_no_entry_but_still_checks(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = partition / f"{BASE}.index"
    assert main(["--verify-index-only", str(index)]) == 0
    assert capsys.readouterr().out == f"Dumping {index} (offset index)\n"
    index.write_bytes(encode_offset_index([OffsetIndexEntry(4, 77)], 0))
    assert main(["--verify-index-only", str(index)]) == 1
    out, err = capsys.readouterr()
    assert "offset: " not in out and "  Index offset: 4, log offset: 3" in err


def test_index_sanity_check_is_the_brokers_start_up_check(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index, time_index = partition / f"{BASE}.index", partition / f"{BASE}.timeindex"
    assert main(["--index-sanity-check", str(index), str(time_index)]) == 0
    out = capsys.readouterr().out
    assert f"{index} passed sanity check." in out and f"{time_index} passed sanity check." in out
    index.write_bytes(index.read_bytes() + b"\x00\x00\x00")  # not whole entries
    time_index.write_bytes(encode_time_index([TimeIndexEntry(900, 1), TimeIndexEntry(800, 3)], 0))
    assert main(["--index-sanity-check", str(index), str(time_index)]) == 1
    out, err = capsys.readouterr()
    assert "passed sanity check" not in out
    assert "not a whole number of 8-byte entries" in err
    assert "the last timestamp 800 is below the first 900" in err
    backwards = partition / "00000000000000000010.index"
    backwards.write_bytes(encode_offset_index([OffsetIndexEntry(12, 0), OffsetIndexEntry(9, 70)],
                                              10))
    assert main(["--index-sanity-check", str(backwards)]) == 1
    assert "below the base offset" in capsys.readouterr().err


def test_kafkas_decoder_flags(partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    segment = str(partition / f"{BASE}.log")
    assert main([segment, "--value-decoder-class", "kafka.serializer.StringDecoder",
                 "--key-decoder-class", "--max-message-size", "1000"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([segment, "--value-decoder-class", "com.example.AvroDecoder"])
    assert "com.example.AvroDecoder" in capsys.readouterr().err


def test_max_bytes_reads_only_the_whole_batches_within(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    segment = str(partition / f"{BASE}.log")
    assert main(["--max-bytes", "160", segment]) == 0  # batches end at 77, 154, 231
    out, err = capsys.readouterr()
    assert err == "" and out.count("baseOffset: ") == 2
    for bad in ("0", "-5", "many"):
        with pytest.raises(SystemExit):
            main(["--max-bytes", bad, segment])
        assert "--max-bytes" in capsys.readouterr().err


def test_side_file_edges(partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty index says so; an entry pointing between batches is reported with log offset
    -1; a transaction open at offset 0 prints as OptionalLong[0]."""
    empty = partition / "00000000000000000050.index"
    empty.write_bytes(b"")
    assert main([str(empty)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"{empty} is empty."
    index = partition / f"{BASE}.index"
    index.write_bytes(encode_offset_index([OffsetIndexEntry(3, 40)], 0))
    assert main([str(index)]) == 1
    assert "  Index offset: 3, log offset: -1" in capsys.readouterr().err
    snapshot = partition / "00000000000000000009.snapshot"
    snapshot.write_bytes(encode_producer_snapshot([ProducerSnapshotEntry(7, 0, 1, 1, 1, 5, 2, 0)]))
    assert main([str(snapshot)]) == 0
    assert "currentTxnFirstOffset: OptionalLong[0] " in capsys.readouterr().out


def test_index_sanity_check_in_json_and_on_a_missing_file(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = partition / f"{BASE}.index"
    assert main(["--index-sanity-check", "--format", "json", str(index)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == {"file": str(index), "kind": "offset index", "sanityCheck": True,
                        "error": None}
    missing = partition / "00000000000000000077.timeindex"
    assert main(["--index-sanity-check", str(missing)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and str(missing) in err and "unreadable" in err


def test_json_of_an_open_transaction_at_0_and_of_a_damaged_file(
        partition: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = partition / "00000000000000000009.snapshot"
    snapshot.write_bytes(encode_producer_snapshot([ProducerSnapshotEntry(7, 0, 1, 1, 1, 5, 2, 0)]))
    damaged = partition / "00000000000000000010.snapshot"
    damaged.write_bytes(snapshot.read_bytes()[:-1])
    assert main(["--format", "json", str(snapshot), str(damaged)]) == 1
    good, bad = map(json.loads, capsys.readouterr().out.splitlines())
    assert good["entries"][0]["currentTxnFirstOffset"] == 0 and good["error"] is None
    assert bad["entries"] == [] and bad["error"]["kind"] == "truncated"
