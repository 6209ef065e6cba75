"""More of Kafka's KafkaMetadataLogTest (core/src/test/scala/kafka/raft): the snapshot ids
the log accepts, and how a node directory written in Kafka's layout opens.

Kafka's ``createNewSnapshot`` checks the id as a fetch position against the log; in
kraftsim that check belongs to ``RaftLog.set_snapshot`` (the node names the epoch of
the last record, so only a direct caller of the log can ask for a contradicting id).
Opening a directory is kraftsim's file source (``shell.file_source.open_files``), which
starts where a Kafka node would and refuses what a Kafka node refuses to start from.

Covered elsewhere: testCreateSnapshot*, testValidate*, testTruncateFullyToLatestSnapshot
(test_kafka_metadata_log_cases); testCreateReplicatedLogTruncatesFully (a snapshot ahead
of the log: tests/shell/test_file_source); the log without its start and no snapshot
(tests/shell/test_file_source_damage); testUnexpectedAppendOffset (test_log).

Skipped, with the reason:

- testConfig, testMaxBatchSize: kraftsim has no segment-size floor to validate and bounds
  batches by record count (``max_records_per_batch``), not bytes.
- testHighWatermarkOffsetMetadata: offset metadata is a segment file position.
- testTruncateBelowHighWatermark: the log keeps no high watermark (the node does; as
  MockLogTest's case of the same name, see test_kafka_mock_log_cases).
- testTopicId: one log, no topic id.
- testReadMissingSnapshot, testDeleteNonExistentSnapshot, testTruncateWillRemoveOlderSnapshot,
  testSnapshotDeletionWithInvalidSnapshotState, testDeleteSnapshots: the simulated log keeps
  one snapshot and drops the log before it at once; there is no deletion by id.
- testAdvanceLogStartOffsetAfterCleaning, testSoftRetentionLimit,
  testSegmentsLessThanLatestSnapshot: retention and the cleaner are not modelled (the log
  before a snapshot goes when the snapshot is taken).
- Deleting partial and older snapshot files on open (testCleanupPartialSnapshots,
  testCleanupOlderSnapshots): kraftsim reads a directory and never changes it; what is
  ported is that such files are not read as snapshots.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format import files
from metadata.schema import FeatureLevelRecord
from metadata.versions import METADATA_VERSION_FEATURE
from raft import Batch, RaftLog, RaftLogError, Snapshot, SnapshotId
from shell.file_source import FileSource, open_files

LEVEL = 7
RECORD = FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVEL)


def _log(*runs: tuple[int, int]) -> RaftLog:
    """A log of single-record batches: ``(epoch, count)`` runs."""
    log = RaftLog()
    for epoch, count in runs:
        for _ in range(count):
            log.append(Batch(log.end_offset, epoch, ("r",)), flushed=True)
    return log


# ---------------------------------------------------------------------- snapshot ids the log takes


@pytest.mark.parametrize(("runs", "snapshot_id", "kind"), [
    (((1, 10),), SnapshotId(10, 2), "diverging"),  # testCreateSnapshotMuchLaterEpoch
    (((2, 10),), SnapshotId(10, 1), "diverging"),  # testCreateSnapshotDivergingEpoch
    (((1, 5), (3, 5)), SnapshotId(1, 2), "diverging"),  # testCreateSnapshotWithMissingEpoch
    (((1, 5), (3, 5)), SnapshotId(5, 2), "diverging"),
])
def test_a_snapshot_id_the_log_contradicts_is_refused(
        runs: tuple[tuple[int, int], ...], snapshot_id: SnapshotId, kind: str) -> None:
    """An epoch the log does not hold up to the snapshot's end is refused, with the
    position the log answers instead, and nothing changes."""
    log = _log(*runs)
    end, length = log.end_offset, len(log)
    with pytest.raises(RaftLogError, match=rf"snapshot \(end offset {snapshot_id.end_offset}, "
                                           rf"epoch {snapshot_id.epoch}\) contradicts the log: "
                                           rf"a fetch there is {kind}"):
        log.set_snapshot(Snapshot(snapshot_id, ()))
    assert log.snapshot is None and log.start_offset == 0
    assert (log.end_offset, len(log)) == (end, length)


def test_a_snapshot_at_the_log_start_must_keep_the_held_snapshots_epoch() -> None:
    """testCreateSnapshotOlderEpoch: once (10, 2) is held, (10, 1) is refused; the same id
    again is taken (kraftsim replaces the held snapshot by the new one)."""
    log = _log((2, 10), (2, 5))
    first = Snapshot(SnapshotId(10, 2), ("state",))
    log.set_snapshot(first)
    with pytest.raises(RaftLogError, match="a fetch there is snapshot, the log answers end "
                                           "offset 10, epoch 2"):
        log.set_snapshot(Snapshot(SnapshotId(10, 1), ()))
    assert log.snapshot is first and (log.start_offset, log.end_offset) == (10, 15)
    again = Snapshot(SnapshotId(10, 2), ("state again",))
    log.set_snapshot(again)
    assert log.snapshot is again


@pytest.mark.parametrize("snapshot_id", [SnapshotId(5, 1), SnapshotId(6, 3), SnapshotId(10, 3),
                                         SnapshotId(5, 3)])
def test_a_snapshot_id_the_log_agrees_with_is_taken(snapshot_id: SnapshotId) -> None:
    """The ids Kafka's check lets through, including (5, 3): epoch 3 starts at 5, so a
    fetch at 5 in epoch 3 is valid."""
    log = _log((1, 5), (3, 5))
    log.set_snapshot(Snapshot(snapshot_id, ()))
    assert log.start_offset == snapshot_id.end_offset and log.end_offset == 10
    assert log.end_offset_and_epoch().epoch == 3


# ---------------------------------------------------------------------- opening a directory


def _write(folder: Path, first: int, runs: tuple[tuple[int, int], ...],
           snapshots: tuple[SnapshotId, ...] = ()) -> Path:
    """A node directory: single-record batches from offset ``first`` in ``(epoch, count)``
    runs, and a snapshot file for each id."""
    batches: list[Batch] = []
    offset = first
    for epoch, count in runs:
        for _ in range(count):
            batches.append(Batch(offset, epoch, (RECORD,)))
            offset += 1
    files.write_node_log(folder, batches, [Snapshot(s, (RECORD,)) for s in snapshots],
                         metadata_version=LEVEL)
    return folder / files.METADATA_PARTITION_DIR


def _opened(folder: Path) -> FileSource:
    source = open_files(str(folder), None)
    assert source.errors == [], source.errors
    return source


@pytest.mark.parametrize("snapshot_id", [SnapshotId(10, 0), SnapshotId(5, 1), SnapshotId(10, 1)])
def test_a_snapshot_not_ahead_of_the_log_leaves_the_log_whole(tmp_path: Path,
                                                              snapshot_id: SnapshotId) -> None:
    """testDoesntTruncateFully: a snapshot of an older epoch, or of the same epoch ending
    inside or at the log's end, is not a reason to drop the log: it is replayed whole."""
    _write(tmp_path, 0, ((1, 10),), (snapshot_id,))
    source = _opened(tmp_path)
    assert source.warnings == []
    assert (source.read_to, source.image.offset) == (9, 9)


def test_partial_and_deleted_snapshot_files_are_never_read(tmp_path: Path) -> None:
    """testCleanupPartialSnapshots: ``.checkpoint.part`` files (named as Kafka's writer
    names them while it writes) and ``.checkpoint.deleted`` ones are not snapshots, even
    one whose id would be ahead of the log; the whole snapshot at (1, 1) is the only one."""
    partition = _write(tmp_path, 0, ((1, 10),), (SnapshotId(1, 1),))
    whole = (partition / files.snapshot_file_name(SnapshotId(1, 1))).read_bytes()
    for snapshot_id, suffix in ((SnapshotId(0, 0), "-8034217.checkpoint.part"),
                                (SnapshotId(1, 1), "-1.checkpoint.part"),
                                (SnapshotId(2, 2), "-42.checkpoint.part"),
                                (SnapshotId(20, 2), ".checkpoint.deleted")):
        name = files.snapshot_file_name(snapshot_id).removesuffix(".checkpoint") + suffix
        assert files.parse_snapshot_leftover_name(name) is not None
        (partition / name).write_bytes(whole)
    log = files.read_log_dir(tmp_path)
    assert [s.snapshot_id for s in log.snapshots] == [SnapshotId(1, 1)]
    source = _opened(tmp_path)
    assert source.warnings == [] and (source.read_to, source.image.offset) == (9, 9)


def test_of_several_snapshots_the_newest_that_covers_the_log_start_is_loaded(
        tmp_path: Path) -> None:
    """testCleanupOlderSnapshots: older snapshots stay unread next to the newest one; a
    log whose first segments are gone goes on from that newest snapshot."""
    _write(tmp_path, 10, ((1, 20),), (SnapshotId(1, 0), SnapshotId(2, 1), SnapshotId(10, 1),
                                      SnapshotId(15, 1)))
    source = _opened(tmp_path)
    assert source.warnings == []
    assert (source.read_to, source.image.offset) == (29, 29)
    assert [b.base_offset for b in source.batches if b.base_offset >= 10] == list(range(15, 30))


def test_a_log_that_starts_after_every_snapshot_is_refused_naming_the_newest(
        tmp_path: Path) -> None:
    """testStartupWithInvalidSnapshotState: the log starts at 10 and the newest snapshot
    ends at 5. Kafka refuses to open such a log; kraftsim shows no image and says which
    snapshot falls short and by how much."""
    partition = _write(tmp_path, 10, ((1, 5),), (SnapshotId(3, 1), SnapshotId(5, 1)))
    source = open_files(str(tmp_path), None)
    assert source.errors == [
        f"{partition}: the log starts at offset 10 and no snapshot covers what comes before it "
        f"(the newest, {files.snapshot_file_name(SnapshotId(5, 1))}, ends at offset 5, 5 "
        f"offsets short): the records that built the state are missing, so no image can be "
        f"shown"]
