"""``dump-log``: what it prints for real files, and one clear line for each bad one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kraftsim.dump_log import main

from .conftest import FIRST_SEGMENT, METADATA_DIR, REPO_ROOT


def bootstrap_log(kafka_data: Path) -> Path:
    return kafka_data / "bootstrap-txn" / METADATA_DIR / FIRST_SEGMENT


def test_text_output(kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(bootstrap_log(kafka_data))]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[1] == "Log starting offset: 0"  # kafka-dump-log's line before the batches
    # kafka-dump-log's key names, in its order
    assert lines[2] == (
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1738908227548 size: 91 "
        "magic: 2 compresscodec: none crc: 3440531446 isvalid: true")
    assert lines[3] == (
        "| offset: 0 CreateTime: 1738908227548 keySize: 4 valueSize: 19 sequence: -1 "
        'headerKeys: [] LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
        '"grantingVoters":[{"voterId":1}]}')
    assert ('| offset: 1 CreateTime: 1738908227638 keySize: -1 valueSize: 24 sequence: -1 '
            'headerKeys: [] payload: {"type":"BEGIN_TRANSACTION_RECORD","version":0,'
            '"data":{"name":"Bootstrap records"}}') in lines
    assert '{"name":"metadata.version","featureLevel":20}' in out


def test_kafkas_flags_are_accepted(kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = bootstrap_log(kafka_data)
    assert main([str(log)]) == 0
    expected = capsys.readouterr().out
    assert main(["--files", str(log), "--cluster-metadata-decoder", "--print-data-log",
                 "--deep-iteration"]) == 0
    assert capsys.readouterr().out == expected
    checkpoint = log.parent.parent / "bootstrap.checkpoint"
    assert main(["--files", f"{log},{checkpoint}", "--skip-record-metadata"]) == 0
    out = capsys.readouterr().out
    assert f"Dumping {checkpoint}" in out and "KRaft bootstrap snapshot" in out
    # as kafka-dump-log: a record without a key prints " payload: …", a control record nothing
    assert '\n payload: {"type":"BEGIN_TRANSACTION_RECORD"' in out
    assert "| offset:" not in out and "SnapshotHeader" not in out and "LeaderChange" not in out


def test_json_output(kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "00000000000000046533-0000000004.checkpoint"
    snapshot = kafka_data / "topic-deletes" / METADATA_DIR / name
    assert main([str(snapshot), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "snapshot" and document["error"] is None
    assert document["snapshotEndOffset"] == 46533 and document["snapshotEpoch"] == 4
    records = [r for batch in document["batches"] for r in batch["records"]]
    assert records[0]["type"] == "SnapshotHeader"
    assert records[-1]["type"] == "SnapshotFooter"
    partition = next(r for r in records if r["type"] == "PARTITION_RECORD")
    assert partition["version"] == 2
    assert {"partitionId", "topicId", "leaderEpoch", "directories"} <= set(partition["data"])


def test_every_real_file(kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = sorted(kafka_data.glob(f"*/{METADATA_DIR}/*")) + sorted(kafka_data.glob("*/*.*"))
    paths = [p for p in paths if p.name != "README.md"]
    assert main([*map(str, paths), "--batches-only"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.count("Dumping ") == len(paths)


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "00000000000000000000.log"
    assert main([str(missing)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and str(missing) in err and "No such file" in err


def test_damaged_file(kafka_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "00000000000000000000.log"
    cut.write_bytes(bootstrap_log(kafka_data).read_bytes()[:200])
    garbage = tmp_path / "00000000000000000010-0000000001.checkpoint"
    garbage.write_bytes(b"\x00" * 7 + b"\xff" * 100)
    assert main([str(cut), str(garbage)]) == 1
    out, err = capsys.readouterr()
    assert "LeaderChange" in out  # the good batch is still printed
    errors = err.splitlines()
    assert len(errors) == 2
    assert str(cut) in errors[0] and "batch 1 (base offset 1)" in errors[0]
    assert "truncated" in errors[0] and "byte 99" in errors[0]
    assert str(garbage) in errors[1] and "batch 0" in errors[1]


def test_runs_as_a_module(kafka_data: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kraftsim.dump_log", str(bootstrap_log(kafka_data)), "/nonexistent"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "END_TRANSACTION_RECORD" in done.stdout
    assert done.stderr.startswith("kraftsim dump-log: error: /nonexistent")
    assert "Traceback" not in done.stderr


def test_max_bytes_reads_the_whole_batches_within(kafka_data: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    log = str(bootstrap_log(kafka_data))  # a LeaderChange batch, then the bootstrap transaction
    assert main(["--max-bytes", "100", log]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.count("baseOffset: ") == 1 and "LeaderChange" in out
    assert main(["--max-bytes", "100000", log]) == 0
    assert capsys.readouterr().out.count("baseOffset: ") == 2


def test_a_brokers_text_log_is_named_for_what_it_is(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    server_log = tmp_path / "server.log"
    server_log.write_text("[2024-05-01 10:00:00,000] INFO Kafka version: 3.7.0 "
                          "(org.apache.kafka.common.utils.AppInfoParser)\n" * 3)
    assert main([str(server_log)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "batch 0" in err[0]
    assert err[1] == (f"kraftsim dump-log: {server_log} holds text, not record batches (a "
                      f"broker's own log, such as server.log?)")
