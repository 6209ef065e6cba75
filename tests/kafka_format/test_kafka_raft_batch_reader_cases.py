"""Cases of Kafka's BatchBuilderTest, RecordsBatchReaderTest (raft/.../internals) and
RaftSnapshotWriterTest (metadata/.../image/writer).

Kafka's raft client builds its batches with a BatchBuilder (records serialized into one
record batch v2 at a base offset, leader epoch and append time) and reads them back with a
RecordsBatchReader, from memory or from a segment file. kraftsim's raft batches are
``raft.Batch`` objects; the file format (kafka_format) turns them into Kafka's bytes
(``encode_batch``, ``encode_batches``) and back (``decode_log``, ``read_segment_file``).
The cases run there, with metadata records standing in for Kafka's string serde.

Kafka's RaftSnapshotWriter writes a controller's snapshot records in batches of at
most a given count and freezes the snapshot when closed with ``freeze``; kraftsim's
``snapshot_batches`` splits a Snapshot's records the same way, and ``write_snapshot_file``
freezes by writing ``.part`` and renaming it.

Covered elsewhere: RecordsBatchReaderTest.testLeaderChangeControlBatch
(test_kafka_record_batch_cases::test_a_leader_change_control_batch_reads_back);
RaftSnapshotWriterTest.testCloseWithoutFreeze, a snapshot not frozen is never read as one
(test_kafka_snapshot_file_cases::
test_a_write_leaves_no_partial_file_and_a_partial_file_is_not_read).

Not ported:

- The compression parameter of testBuildBatch, testReadFromMemoryRecords and
  testReadFromFileRecords: kraftsim writes its metadata batches uncompressed (Kafka's
  metadata log default); reading every compression type is
  test_kafka_record_batch_cases::test_every_compression_type_reads_back.
- testBuildBatch's refusal of an append after ``build()`` and ``bytesNeeded``, and
  BatchBuilderTest.testHasRoomForUncompressed: a builder's byte budget (kraftsim encodes
  a whole Batch at once, bounded by its record count, not bytes).
- The buffer supplier and close listener of RecordsBatchReaderTest's reader (pooled
  buffers, no reader object to close).
"""

from __future__ import annotations

from pathlib import Path

from kafka_format import decode_log
from kafka_format.batch_format import encode_batch, encode_batches
from kafka_format.files import (
    read_segment_file,
    read_snapshot_file,
    segment_file_name,
    write_snapshot_file,
)
from kafka_format.snapshot_codec import snapshot_batches
from metadata.schema import ConfigRecord, NoOpRecord
from metadata.versions import LATEST_PRODUCTION
from raft import Batch, LeaderChangeMessage, Snapshot, SnapshotId


def _config(name: str) -> ConfigRecord:
    return ConfigRecord(resource_type=4, resource_name="", name=name, value=name)


def _batches() -> list[Batch]:
    """Two leaders' batches: each epoch opens with its LeaderChange, then data batches of
    various sizes and append times."""
    out: list[Batch] = []
    offset = 0
    for epoch, sizes in ((1, (3, 1)), (2, (2, 4))):
        change = Batch(offset, epoch, control_records=(LeaderChangeMessage(epoch, (1, 2), (1, 2)),),
                       append_time_ms=100 * epoch)
        out.append(change)
        offset = change.end_offset
        for size in sizes:
            batch = Batch(offset, epoch, tuple(_config(f"c{offset + n}") for n in range(size)),
                          append_time_ms=100 * epoch + offset)
            out.append(batch)
            offset = batch.end_offset
    return out


def test_a_built_batch_reads_back_with_its_offset_epoch_time_and_records() -> None:
    """BatchBuilderTest.testBuildBatch: five records at base offset 57, leader epoch 15 and
    a log append time make one data batch of five records whose base offset, partition
    leader epoch and max timestamp are those, in the order appended."""
    records = tuple(_config(name) for name in ("a", "ap", "app", "appl", "apple"))
    batch = Batch(57, 15, records, append_time_ms=1_700_000_000_000)
    result = decode_log(encode_batch(batch, LATEST_PRODUCTION))
    assert result.ok
    [decoded] = result.batches
    assert len(decoded.facts) == 5 and not decoded.is_control
    assert (decoded.batch.base_offset, decoded.batch.epoch, decoded.last_offset) == (57, 15, 61)
    assert decoded.header.max_timestamp == 1_700_000_000_000
    assert decoded.records == records and decoded.batch == batch


def test_batches_read_back_from_memory_in_order_and_nothing_more() -> None:
    """RecordsBatchReaderTest.testReadFromMemoryRecords: batches of several epochs, sizes
    and times, encoded one after another, are read back as the same batches, in order,
    and the reading ends after the last."""
    batches = _batches()
    result = decode_log(encode_batches(batches, LATEST_PRODUCTION), leader_epochs=True)
    assert result.ok and result.valid_bytes == result.total_bytes
    assert [d.batch for d in result.batches] == batches


def test_batches_read_back_from_a_segment_file(tmp_path: Path) -> None:
    """RecordsBatchReaderTest.testReadFromFileRecords: the same batches written to a
    segment file named by its base offset are read back from the file the same way."""
    batches = _batches()
    path = tmp_path / segment_file_name(0)
    path.write_bytes(encode_batches(batches, LATEST_PRODUCTION))
    segment = read_segment_file(path)
    assert segment.result.ok
    assert [d.batch for d in segment.result.batches] == batches


def test_a_control_batch_and_a_data_batch_keep_their_kinds() -> None:
    """RecordsBatchReaderTest.testLeaderChangeControlBatch, next to data: a control batch
    reads back with its control records and no data, a NoOp data batch with its record."""
    control = Batch(0, 3, control_records=(LeaderChangeMessage(5, (5, 6), (5,)),))
    data = Batch(1, 3, (NoOpRecord(),))
    decoded = decode_log(encode_batches([control, data], LATEST_PRODUCTION)).batches
    assert [(d.is_control, d.records) for d in decoded] == [
        (True, control.control_records), (False, (NoOpRecord(),))]


def test_a_snapshot_writer_fills_batches_up_to_its_count_then_freezes(tmp_path: Path) -> None:
    """RaftSnapshotWriterTest.testFreezeAndClose: three records written with a batch size of
    two make the batches [r0, r1] and [r2] between the header and the footer; frozen, the
    snapshot is a whole ``.checkpoint`` (no ``.part`` left) that reads back the records."""
    records = (_config("r0"), _config("r1"), _config("r2"))
    snapshot = Snapshot(SnapshotId(10, 2), records, 5)
    data = [b.records for b in snapshot_batches(snapshot, records_per_batch=2)
            if not b.is_control]
    assert data == [records[:2], records[2:]]
    path = write_snapshot_file(tmp_path, snapshot, metadata_version=LATEST_PRODUCTION,
                               records_per_batch=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    read = read_snapshot_file(path)
    assert read.result.snapshot == snapshot
    assert [d.batch.records for d in read.result.batches if not d.is_control] == data
