"""``kraftsim shell`` over damaged or misplaced Kafka files: one clear line, never a wrong image.

Damaged copies are built in ``tmp_path`` from the real files, which are never modified.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from kafka_format import files
from kafka_format.data_log import DataBatch, DataRecord
from kafka_format.log_codec import decode_log
from kafka_format.log_indexes import OffsetIndexEntry, encode_offset_index
from kraftsim.cli import main
from metadata.schema import FeatureLevelRecord, PartitionChangeRecord
from metadata.versions import METADATA_VERSION_FEATURE
from raft.batch import Batch
from shell.file_source import open_files

METADATA_DIR = "__cluster_metadata-0"
LOG = f"{METADATA_DIR}/00000000000000000000.log"


def run_shell(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["shell", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def log_without_its_start(kafka_data: Path, target: Path, cut_index: int) -> Path:
    """topics-configs' log from batch ``cut_index`` on, named by its base offset."""
    data = (kafka_data / "topics-configs" / LOG).read_bytes()
    cut = decode_log(data).batches[cut_index]
    directory = target / METADATA_DIR
    directory.mkdir(parents=True)
    segment = directory / files.segment_file_name(cut.batch.base_offset)
    segment.write_bytes(data[cut.position:])
    return segment


def test_a_log_without_its_start_and_no_snapshot_is_an_error(
        kafka_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    segment = log_without_its_start(kafka_data, tmp_path, 40)
    base = files.parse_segment_name(segment.name)
    code, out, err = run_shell(capsys, "--log-dir", str(tmp_path), "-c", "ls /image/topics")
    assert code == 1 and out == ""
    assert err.strip() == (
        f"kraftsim shell: error: {tmp_path / METADATA_DIR}: the log starts at offset {base} "
        f"and no snapshot covers what comes before it (from offset 0, 0): the records that "
        f"built the state are missing, so no image can be shown")


@pytest.mark.parametrize("overlap", [50, 0])
def test_a_log_without_its_start_loads_from_a_snapshot_that_covers_it(
        kafka_data: Path, tmp_path: Path, overlap: int) -> None:
    """Kafka's own case: the segments before the snapshot were deleted. The log starts
    inside what the snapshot holds (about ``overlap`` offsets before its end) or exactly
    at its end: nothing is missing either way."""
    checkpoint = next((kafka_data / "topics-configs" / METADATA_DIR).glob("*.checkpoint"))
    end = files.parse_snapshot_name(checkpoint.name)
    assert end is not None
    data = (kafka_data / "topics-configs" / LOG).read_bytes()
    batches = decode_log(data).batches
    index = next(i for i, d in enumerate(batches)
                 if d.batch.base_offset >= end.end_offset - overlap)
    assert overlap or batches[index].batch.base_offset == end.end_offset
    log_without_its_start(kafka_data, tmp_path, index)
    shutil.copy(checkpoint, tmp_path / METADATA_DIR)
    source = open_files(str(tmp_path), None)
    whole = open_files(str(kafka_data / "topics-configs"), None)
    assert source.errors == [] and source.warnings == []
    assert source.image.same_content(whole.image)


def test_a_segment_that_does_not_start_at_0_opens_with_snapshot(
        kafka_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--snapshot SEGMENT`` takes the base offset from the name, as dump-log does."""
    segment = log_without_its_start(kafka_data, tmp_path, 40)
    base = files.parse_segment_name(segment.name)
    code, out, err = run_shell(capsys, "--snapshot", str(segment), "-c", "cat /local/node")
    assert code == 0, err
    assert f"the segment starts at offset {base}; what came before it is not in this file" \
        in err
    assert out.startswith(f"Kafka files {segment}: read to offset 17026")


def test_a_flipped_epoch_stops_the_log_with_a_warning(
        kafka_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray((kafka_data / "topics-configs" / LOG).read_bytes())
    batch = decode_log(bytes(data)).batches[200]
    struct.pack_into(">i", data, batch.position + 12, 5)
    (tmp_path / METADATA_DIR).mkdir()
    (tmp_path / LOG).write_bytes(bytes(data))
    code, out, err = run_shell(capsys, "--log-dir", str(tmp_path), "-c", "cat /local/node")
    assert code == 0
    assert "batch 200" in err and "partitionLeaderEpoch 5 after 1" in err
    (warning,) = [line for line in err.splitlines() if "batch 200" in line]
    assert warning.endswith(" (showing what comes before it)")
    assert f"read to offset {batch.batch.base_offset - 1}," in out


def test_an_empty_folder_is_an_error(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_shell(capsys, "--log-dir", str(tmp_path), "-c", "ls /image")
    assert code == 1 and out == ""
    assert err.strip() == (f"kraftsim shell: error: {tmp_path}: no KRaft metadata log here "
                           f"(neither a {METADATA_DIR} directory nor .log segments or "
                           f".checkpoint snapshots)")


def test_a_save_folder_one_level_up_is_an_error_with_a_hint(
        kafka_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "run.txt"
    script.write_text("cluster controllers=1 brokers=1 seed=3\n")
    saved = tmp_path / "saved"
    assert main(["run", str(script), "--save", str(saved)]) == 0
    capsys.readouterr()
    code, out, err = run_shell(capsys, "--log-dir", str(saved), "-c", "ls /image")
    assert code == 1 and out == ""
    assert err.strip().endswith(f"it holds node directories (broker-0, controller-3000): give "
                                f"one of them, e.g. --log-dir {saved / 'broker-0'}")
    code, out, _ = run_shell(capsys, "--log-dir", str(saved / "broker-0"), "-c",
                             "ls /image/cluster/brokers")
    assert code == 0 and out.split() == ["0"]


def test_a_checkpoint_alone_has_the_snapshots_provenance(
        kafka_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Loaded as a snapshot: its last contained offset and epoch, and the header's time
    (replayed batch by batch it would carry the offsets inside the file)."""
    checkpoint = kafka_data / "topic-deletes" / METADATA_DIR / \
        "00000000000000046533-0000000004.checkpoint"
    code, out, err = run_shell(capsys, "--snapshot", str(checkpoint), "-c",
                               "cat /image/provenance")
    assert code == 0 and err == ""
    assert out.startswith("offset 46532, epoch 4, time ")


def test_records_the_loader_cannot_apply_are_counted(tmp_path: Path) -> None:
    """One record, then two, that name an unknown topic: the warning counts them."""
    for count, noun in ((1, "record"), (2, "records")):
        folder = tmp_path / str(count)
        batches = [Batch(0, 1, (FeatureLevelRecord(METADATA_VERSION_FEATURE, 7),)),
                   *(Batch(1 + n, 1, (PartitionChangeRecord(
                       partition_id=n, topic_id="AAAAAAAAAAAAAAAAAAAAAA", leader=1),))
                     for n in range(count))]
        files.write_node_log(folder, batches, metadata_version=7)
        source = open_files(str(folder), None)
        assert source.errors == []
        [warning] = source.warnings
        assert warning.startswith(f"the loader could not apply {count} {noun} (the first at "
                                  f"offset 1: ")


def test_a_data_partition_or_a_side_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    """A data partition's directory or segment, or an index beside a segment, given as the
    metadata log: nothing loads, and a warning says what the path is instead."""
    orders = tmp_path / "orders-3"
    segment = files.write_partition_dir(orders, [DataBatch(0, 0, 0, 1, 1, -1, -1, -1, (
        DataRecord(None, b"a plain value"),))])[0]
    index = tmp_path / "__cluster_metadata-0" / "00000000000000000000.index"
    index.parent.mkdir()
    index.write_bytes(encode_offset_index([OffsetIndexEntry(5, 0)], 0))
    for log_dir, snapshot in ((str(orders), None), (None, str(segment)),
                              (None, str(index))):
        source = open_files(log_dir, snapshot)
        assert not source.batches
        hints = [w for w in source.warnings if "dump-log" in w]
        assert len(hints) == 1
        expected = ("is an offset index file" if snapshot == str(index) else
                    "partition 3 of topic orders: a data partition, not the metadata log")
        assert expected in hints[0]


def test_an_empty_segment_has_read_nothing(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A log that holds no batch yet (a node that has just started): nothing read."""
    (tmp_path / METADATA_DIR).mkdir()
    (tmp_path / LOG).write_bytes(b"")
    code, out, err = run_shell(capsys, "--log-dir", str(tmp_path), "-c", "cat /local/node")
    assert (code, err) == (0, "")
    assert out == f"Kafka files {tmp_path}: read to offset -1, image at offset -1\n"
