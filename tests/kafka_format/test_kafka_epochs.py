"""The epochs and offsets that Kafka's layout guarantees and the CRC does not cover.

A batch's CRC covers its attributes and records, not ``baseOffset`` or
``partitionLeaderEpoch``, so a flipped epoch passes the checksum. The layout
still pins it: in a log the epoch never decreases and changes only at a new
leader's first batch (its LeaderChange control batch); in a snapshot every
batch carries the epoch of the file name and the first batch starts at
offset 0. Every real file keeps these rules (checked first); damaged copies
are built in memory or in ``tmp_path``.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafka_format import files
from kafka_format.batch_format import encode_batches
from kafka_format.log_codec import decode_log
from kafka_format.snapshot_codec import decode_snapshot
from metadata.schema import NoOpRecord
from raft.batch import Batch, ControlRecord, KRaftVersionRecord, LeaderChangeMessage
from raft.snapshot import SnapshotId

METADATA_DIR = "__cluster_metadata-0"
LOG = f"{METADATA_DIR}/00000000000000000000.log"
SNAPSHOT = f"{METADATA_DIR}/00000000000000014926-0000000001.checkpoint"


def set_epoch(data: bytes, position: int, epoch: int) -> bytes:
    """The bytes with the batch at ``position`` claiming ``epoch`` (its CRC still holds)."""
    out = bytearray(data)
    struct.pack_into(">i", out, position + 12, epoch)
    return bytes(out)


def positions(data: bytes) -> list[int]:
    return [d.position for d in decode_log(data).batches]


def test_every_real_file_keeps_the_epoch_rules(kafka_data: Path) -> None:
    for folder in sorted(p for p in kafka_data.iterdir() if p.is_dir()):
        log = files.read_log_dir(folder)
        assert log.segments, folder
        for segment in log.segments:
            assert segment.result.error is None, segment.result.error
        for snapshot in log.snapshots:
            assert snapshot.result.error is None, snapshot.result.error
            assert snapshot.result.batches[0].batch.base_offset == 0
            assert {d.batch.epoch for d in snapshot.result.batches} == \
                {snapshot.snapshot_id.epoch}
        if (folder / "bootstrap.checkpoint").is_file():
            assert files.read_bootstrap_checkpoint(folder).error is None


def test_a_raised_epoch_in_a_data_batch_is_refused(kafka_data: Path) -> None:
    data = (kafka_data / "topics-configs" / LOG).read_bytes()
    where = positions(data)[5]
    result = decode_log(set_epoch(data, where, 7), first_offset=0, leader_epochs=True)
    assert result.error is not None and result.error.kind == "corrupt"
    assert (result.error.batch_index, result.error.batch_position) == (5, where)
    assert "partitionLeaderEpoch 7 after 1" in result.error.message
    assert "LeaderChange" in result.error.message
    assert len(result.batches) == 5  # the good prefix is kept
    # without the rule (the old reader) the flip passed unseen: the CRC does not cover it
    assert decode_log(set_epoch(data, where, 7), first_offset=0).error is None


def test_a_lowered_epoch_is_refused(kafka_data: Path) -> None:
    """partition-v1 moves to epoch 2 at batch 1649 and to 3 at batch 2500."""
    data = (kafka_data / "partition-v1" / LOG).read_bytes()
    where = positions(data)
    for index in (2500, 2501):  # the LeaderChange of epoch 3, and a batch after it
        result = decode_log(set_epoch(data, where[index], 1), first_offset=0,
                            leader_epochs=True)
        assert result.error is not None and result.error.batch_index == index
        assert "never decrease" in result.error.message
    # a LeaderChange batch may raise the epoch (a later election); the batch after it,
    # still at epoch 3, then goes down
    raised = decode_log(set_epoch(data, where[2500], 9), first_offset=0, leader_epochs=True)
    assert raised.error is not None and raised.error.batch_index == 2501
    assert "partitionLeaderEpoch 3 after 9" in raised.error.message


def test_the_epoch_carries_across_segments(kafka_data: Path, tmp_path: Path) -> None:
    data = (kafka_data / "partition-v1" / LOG).read_bytes()
    decoded = decode_log(data).batches
    cut = decoded[2000]  # epoch 2, a data batch
    directory = tmp_path / METADATA_DIR
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(data[:cut.position])
    second = directory / files.segment_file_name(cut.batch.base_offset)
    second.write_bytes(data[cut.position:])
    assert files.read_log_dir(tmp_path).segments[1].result.error is None
    second.write_bytes(set_epoch(data[cut.position:], 0, 5))
    log = files.read_log_dir(tmp_path)
    error = log.segments[1].result.error
    assert error is not None and "partitionLeaderEpoch 5 after 2" in error.message


def test_a_snapshot_batch_with_another_epoch_is_refused(kafka_data: Path) -> None:
    data = (kafka_data / "topics-configs" / SNAPSHOT).read_bytes()
    snapshot_id = SnapshotId(14926, 1)
    where = positions(data)[1]
    result = decode_snapshot(set_epoch(data, where, 2), snapshot_id=snapshot_id, source="s")
    assert result.snapshot is None and result.error is not None
    assert result.error.kind == "corrupt" and result.error.batch_index == 1
    assert "partitionLeaderEpoch 2, but every batch of a snapshot carries the epoch of its " \
           "file name (1)" in result.error.message
    assert decode_snapshot(data, snapshot_id=snapshot_id).error is None


def test_a_snapshot_named_for_another_epoch_is_refused(kafka_data: Path,
                                                       tmp_path: Path) -> None:
    data = (kafka_data / "topics-configs" / SNAPSHOT).read_bytes()
    renamed = tmp_path / "00000000000000014926-0000000003.checkpoint"
    renamed.write_bytes(data)
    result = files.read_snapshot_file(renamed).result
    assert result.error is not None and "file name (3)" in result.error.message
    # a name that gives no epoch: the batches need only agree with each other
    other = tmp_path / "copy.checkpoint"
    other.write_bytes(data)
    assert files.read_snapshot_file(other).result.error is None
    other.write_bytes(set_epoch(data, positions(data)[2], 4))
    assert files.read_snapshot_file(other).result.error is not None


def test_a_snapshot_must_start_at_offset_0(kafka_data: Path) -> None:
    data = bytearray((kafka_data / "topics-configs" / SNAPSHOT).read_bytes())
    for where in positions(bytes(data)):  # shift every base offset by 5 (no CRC covers it)
        (offset,) = struct.unpack_from(">q", data, where)
        struct.pack_into(">q", data, where, offset + 5)
    result = decode_snapshot(bytes(data), snapshot_id=SnapshotId(14926, 1), source="s")
    assert result.snapshot is None and result.error is not None
    assert result.error.message == ("the first batch starts at offset 5, but a snapshot's "
                                    "batches start at offset 0")


@pytest.mark.parametrize("folder", ["noop-heavy", "topic-deletes", "topics-configs"])
def test_real_snapshots_still_load_whole(kafka_data: Path, folder: str) -> None:
    for snapshot in files.read_log_dir(kafka_data / folder).snapshots:
        assert snapshot.result.snapshot is not None


def test_a_new_epoch_starts_only_with_a_leader_change_control_batch() -> None:
    """Another control batch (a KRaftVersionRecord alone) cannot open an epoch; one that
    holds the LeaderChange among other control records can."""
    def log(second: tuple[ControlRecord, ...]) -> bytes:
        return encode_batches([
            Batch(0, 1, control_records=(
                LeaderChangeMessage(leader_id=1, voters=(1,), granting_voters=(1,)),)),
            Batch(1, 1, records=(NoOpRecord(),)),
            Batch(2, 2, control_records=second),
            Batch(2 + len(second), 2, records=(NoOpRecord(),)),
        ], 21)

    led = LeaderChangeMessage(leader_id=2, voters=(1, 2), granting_voters=(2,))
    assert decode_log(log((led, KRaftVersionRecord(kraft_version=1))), first_offset=0,
                      leader_epochs=True).error is None
    result = decode_log(log((KRaftVersionRecord(kraft_version=1),)), first_offset=0,
                        leader_epochs=True)
    assert result.error is not None and result.error.batch_index == 2
    assert "partitionLeaderEpoch 2 after 1: a new epoch starts with its leader's " \
           "LeaderChange control batch, and this batch is not one" in result.error.message
