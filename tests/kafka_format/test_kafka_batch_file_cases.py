"""Files of batches framed by a snapshot header and footer, following Kafka's
``BatchFileWriterReaderTest`` (metadata/util: how ``bootstrap.checkpoint`` is written)
and ``SnapshotWriterReaderTest`` (raft/snapshot).

Ported: a bootstrap file holds a control batch with the header (version 0, last
contained log timestamp 0) at offset 0, the records at offset 1 on, and a control batch
with the footer (version 0) last, all at epoch 0 (BatchFileWriterReaderTest.testHeaderFooter);
an empty snapshot holds its header and footer alone, the header carrying the
snapshot's last contained log timestamp (SnapshotWriterReaderTest.testSnapshotDelimiters);
a snapshot of three batches of three records reads back with its records in order
between its delimiters (testWritingSnapshot).

Not ported:
- SnapshotWriterReaderTest.testAbortedSnapshot and testAppendToFrozenSnapshot: kraftsim
  has no snapshot writer object to append to, abort or freeze; a snapshot is encoded
  whole and written through a ``.part`` file (a cut write leaving no snapshot is
  ``test_kafka_snapshot_file_cases.py``'s testAbortedSnapshot case).
"""

from __future__ import annotations

from pathlib import Path

from kafka_format import read_snapshot_file, write_snapshot_file
from kafka_format.files import (
    BOOTSTRAP_FILE,
    read_bootstrap_checkpoint,
    read_bootstrap_directory,
    write_bootstrap_file,
)
from kafka_format.snapshot_codec import BOOTSTRAP_SNAPSHOT_ID
from metadata.bootstrap import BootstrapMetadata
from metadata.schema import FeatureLevelRecord, NoOpRecord, TopicRecord
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE
from raft.batch import SnapshotFooterRecord, SnapshotHeaderRecord
from raft.snapshot import Snapshot, SnapshotId

BAR = TopicRecord("bar", "cxBT72dK4si8Ied1iP4wBA")
MAGIC_TIMESTAMP = 0xDEADBEEF
METADATA_VERSION = LEVELS["3.9-IV0"]


def test_header_footer(tmp_path: Path) -> None:
    """BatchFileWriterReaderTest.testHeaderFooter: header, one record, footer, each in a
    batch of its own, at offsets 0, 1 and 2."""
    path = write_snapshot_file(tmp_path, Snapshot(BOOTSTRAP_SNAPSHOT_ID, (BAR,)),
                               metadata_version=METADATA_VERSION, name=BOOTSTRAP_FILE)
    result = read_bootstrap_checkpoint(path)
    assert result.error is None
    batches = [decoded.batch for decoded in result.batches]
    assert [(b.base_offset, b.last_offset, b.is_control) for b in batches] == [
        (0, 0, True), (1, 1, False), (2, 2, True)]
    assert all(b.epoch == 0 for b in batches)
    header, = batches[0].control_records
    assert header == SnapshotHeaderRecord(last_contained_log_timestamp=0)
    assert header.version == 0
    assert batches[1].records == (BAR,)
    assert batches[2].control_records == (SnapshotFooterRecord(version=0),)


def test_a_bootstrap_file_is_framed_the_same_way(tmp_path: Path) -> None:
    """The bootstrap file kraftsim writes (Kafka's BootstrapDirectory through its
    BatchFileWriter): the same framing, its records in one batch, read back whole."""
    records = (FeatureLevelRecord(METADATA_VERSION_FEATURE, METADATA_VERSION), BAR)
    bootstrap = BootstrapMetadata.from_records(records, "test")
    write_bootstrap_file(tmp_path, bootstrap)
    result = read_bootstrap_checkpoint(tmp_path)
    assert result.error is None and result.snapshot is not None
    assert result.snapshot.records == records
    assert [(d.batch.base_offset, d.batch.is_control) for d in result.batches] == [
        (0, True), (1, False), (3, True)]
    assert read_bootstrap_directory(tmp_path).records == records


def test_snapshot_delimiters(tmp_path: Path) -> None:
    """SnapshotWriterReaderTest.testSnapshotDelimiters: an empty snapshot is its header,
    with the last contained log timestamp, and its footer: two records."""
    snapshot = Snapshot(SnapshotId(0, 3), (), MAGIC_TIMESTAMP)
    read = read_snapshot_file(write_snapshot_file(tmp_path, snapshot,
                                                  metadata_version=METADATA_VERSION))
    assert read.result.error is None and read.result.snapshot == snapshot
    batches = [decoded.batch for decoded in read.result.batches]
    assert [b.control_records for b in batches] == [
        (SnapshotHeaderRecord(last_contained_log_timestamp=MAGIC_TIMESTAMP),),
        (SnapshotFooterRecord(),)]
    assert sum(len(b.records) + len(b.control_records) for b in batches) == 2


def test_writing_snapshot(tmp_path: Path) -> None:
    """SnapshotWriterReaderTest.testWritingSnapshot: three batches of three records read
    back in order between the header and the footer: eleven records in all."""
    records = tuple(NoOpRecord() for _ in range(9))
    snapshot = Snapshot(SnapshotId(9, 3), records, MAGIC_TIMESTAMP)
    path = write_snapshot_file(tmp_path, snapshot, metadata_version=METADATA_VERSION,
                               records_per_batch=3)
    read = read_snapshot_file(path)
    assert read.result.snapshot == snapshot
    batches = [decoded.batch for decoded in read.result.batches]
    assert batches[0].is_control and batches[-1].is_control
    assert [len(b.records) for b in batches[1:-1]] == [3, 3, 3]
    assert sum(len(b.records) + len(b.control_records) for b in batches) == 11
    assert read.result.header is not None
    assert read.result.header.last_contained_log_timestamp == MAGIC_TIMESTAMP
    assert all(b.epoch == 3 for b in batches)
