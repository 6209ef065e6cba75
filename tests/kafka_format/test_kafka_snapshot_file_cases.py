"""Snapshot files and their names, in the cases Kafka's raft tests check.

Followed: ``SnapshotsTest``, ``FileRawSnapshotTest``, ``RecordsSnapshotWriterTest``
(``raft/src/test/java/org/apache/kafka/snapshot``) and ``RecordsIteratorTest``
(``raft/.../raft/internals``): a snapshot's first control batch (header, then KRaftVersion
and Voters at kraft.version 1), its data batches, the footer last, the file names of a
finished, a partial and a deleted snapshot, and a write that leaves no half file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format import (
    EncodeError,
    decode_log,
    decode_snapshot,
    encode_batch,
    encode_snapshot,
    read_log_dir,
    read_snapshot_file,
    snapshot_file_name,
    write_snapshot_file,
)
from kafka_format.control_records import (
    KRAFT_VERSION,
    KRAFT_VOTERS,
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    control_type_id,
)
from kafka_format.files import parse_snapshot_leftover_name, parse_snapshot_name
from metadata.schema import NoOpRecord, TopicRecord
from raft.batch import (
    Batch,
    KRaftVersionRecord,
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    Voter,
    VoterEndpoint,
    VotersRecord,
)
from raft.snapshot import Snapshot, SnapshotId

SNAPSHOT_ID = SnapshotId(end_offset=100, epoch=10)
RECORDS = tuple(TopicRecord(name=name, topic_id=f"{q}AAAAAAAAAAAAAAAAAAAAQ")
                for name, q in zip("abcdefghi", "ABCDEFGHI", strict=True))
VOTERS = VotersRecord(voters=tuple(
    Voter(voter_id=n, voter_directory_id=f"AAAAAAAAAAAAAAAAAAAAA{d}",
          endpoints=(VoterEndpoint(name="CONTROLLER", host="localhost", port=9990 + n),),
          min_kraft_version=0, max_kraft_version=1)
    for n, d in ((1, "Q"), (2, "g"), (3, "w"))))
METADATA_VERSION = 21


def _snapshot(records: tuple[object, ...] = RECORDS) -> Snapshot:
    return Snapshot(SNAPSHOT_ID, records, 1234)  # type: ignore[arg-type]


def _batches(data: bytes) -> list[Batch]:
    result = decode_log(data, snapshot_epoch=SNAPSHOT_ID.epoch)
    assert result.error is None
    return [decoded.batch for decoded in result.batches]


# --- SnapshotsTest -----------------------------------------------------------------------------


@pytest.mark.parametrize("snapshot_id", [SnapshotId(0, 0), SnapshotId(2**31 - 2, 2**31 - 2),
                                         SnapshotId(7205, 1)])
def test_a_snapshot_name_parses_back_to_its_id(snapshot_id: SnapshotId) -> None:
    """testValidSnapshotFilename: 20 digits of end offset, 10 of epoch."""
    name = snapshot_file_name(snapshot_id)
    assert len(name) == 20 + 1 + 10 + len(".checkpoint")
    assert parse_snapshot_name(name) == snapshot_id
    assert parse_snapshot_leftover_name(name) is None


def test_a_partial_snapshot_name() -> None:
    """testValidPartialSnapshotFilename: Kafka's temporary file is
    ``<id>-<random>.checkpoint.part``."""
    base = snapshot_file_name(SNAPSHOT_ID).removesuffix(".checkpoint")
    for name in (f"{base}-1234567890123.checkpoint.part", f"{base}.checkpoint.part"):
        assert parse_snapshot_leftover_name(name) == (SNAPSHOT_ID, "partial")
        assert parse_snapshot_name(name) is None


def test_a_deleted_snapshot_name() -> None:
    """testValidDeletedSnapshotFilename: ``<id>.checkpoint.deleted``."""
    name = snapshot_file_name(SNAPSHOT_ID) + ".deleted"
    assert parse_snapshot_leftover_name(name) == (SNAPSHOT_ID, "deleted")
    assert parse_snapshot_name(name) is None


@pytest.mark.parametrize("name", [
    "00000000000000000000.log", "00000000000000000000.snapshot", "00000000000000000000.index",
    "00000000000000000000.timeindex", "leader-epoch-checkpoint", "partition.metadata",
    "quorum-state", "bootstrap.checkpoint",
])
def test_names_of_other_files_are_not_snapshots(name: str) -> None:
    """testInvalidSnapshotFilenames."""
    assert parse_snapshot_name(name) is None
    assert parse_snapshot_leftover_name(name) is None


# --- FileRawSnapshotTest -----------------------------------------------------------------------


def test_a_written_snapshot_reads_back(tmp_path: Path) -> None:
    """testWritingSnapshot, testWriteReadSnapshot: the file's size is what was encoded, and
    its records, id and header come back."""
    snapshot = _snapshot()
    path = write_snapshot_file(tmp_path, snapshot, metadata_version=METADATA_VERSION)
    assert path.name == snapshot_file_name(SNAPSHOT_ID)
    assert path.stat().st_size == len(encode_snapshot(snapshot, METADATA_VERSION))
    read = read_snapshot_file(path)
    assert read.result.error is None and read.result.snapshot == snapshot
    assert read.snapshot_id == SNAPSHOT_ID
    assert read.result.header == SnapshotHeaderRecord(last_contained_log_timestamp=1234)
    assert read.result.header.version == 0  # the header data version Kafka writes


def test_a_snapshot_of_many_batches_reads_back(tmp_path: Path) -> None:
    """testBatchWriteReadSnapshot: records split over several batches, offsets following on."""
    records = tuple(NoOpRecord() for _ in range(25))
    path = write_snapshot_file(tmp_path, _snapshot(records), metadata_version=METADATA_VERSION,
                               records_per_batch=10)
    read = read_snapshot_file(path)
    assert read.result.snapshot is not None and read.result.snapshot.records == records
    offsets = [(d.batch.base_offset, d.last_offset) for d in read.result.batches]
    assert offsets == [(0, 0), (1, 10), (11, 20), (21, 25), (26, 26)]


def test_a_write_leaves_no_partial_file_and_a_partial_file_is_not_read(tmp_path: Path) -> None:
    """testAbortedSnapshot, testPartialWriteReadSnapshot: only a whole file is named
    ``.checkpoint``; a ``.checkpoint.part`` left by a cut write is never taken as a snapshot."""
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    path = write_snapshot_file(directory, _snapshot(), metadata_version=METADATA_VERSION)
    assert sorted(p.name for p in directory.iterdir()) == [path.name]
    other = SnapshotId(200, 11)
    cut = encode_snapshot(Snapshot(other, RECORDS, 5), METADATA_VERSION)[:-10]
    (directory / (snapshot_file_name(other) + ".part")).write_bytes(cut)
    (directory / (snapshot_file_name(other) + ".deleted")).write_bytes(cut)
    log = read_log_dir(directory)
    assert [s.snapshot_id for s in log.snapshots] == [SNAPSHOT_ID] and log.errors == ()


def test_writing_the_same_id_again_replaces_the_file(tmp_path: Path) -> None:
    """testCreateSnapshotWithSameId: the second snapshot of an id is the one on disk."""
    write_snapshot_file(tmp_path, _snapshot(), metadata_version=METADATA_VERSION)
    second = _snapshot(RECORDS[:2])
    path = write_snapshot_file(tmp_path, second, metadata_version=METADATA_VERSION)
    assert read_snapshot_file(path).result.snapshot == second
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# --- RecordsSnapshotWriterTest and RecordsIteratorTest -----------------------------------------


def _first_and_last(data: bytes) -> tuple[Batch, Batch, list[Batch]]:
    batches = _batches(data)
    return batches[0], batches[-1], batches[1:-1]


def test_kraft_version_0_has_only_the_header_before_the_records() -> None:
    """testBuilderKRaftVersion0, testControlRecordIterationWithKraftVersion0."""
    data = encode_snapshot(_snapshot(), METADATA_VERSION, records_per_batch=3)
    first, last, middle = _first_and_last(data)
    assert first.control_records == (SnapshotHeaderRecord(last_contained_log_timestamp=1234),)
    assert first.records == ()
    assert [b.records for b in middle] == [RECORDS[0:3], RECORDS[3:6], RECORDS[6:9]]
    assert all(b.control_records == () for b in middle)
    assert last.control_records == (SnapshotFooterRecord(),) and last.records == ()
    assert all(b.epoch == SNAPSHOT_ID.epoch for b in _batches(data))


def test_the_header_and_footer_a_snapshot_writes_are_version_0() -> None:
    """Kafka writes SnapshotHeaderRecord and SnapshotFooterRecord with Version 0
    (ControlRecordUtils.SNAPSHOT_HEADER/FOOTER_CURRENT_VERSION), and so does kraftsim."""
    first, last, _ = _first_and_last(encode_snapshot(_snapshot(), METADATA_VERSION))
    assert [r.version for r in first.control_records] == [0]
    assert [r.version for r in last.control_records] == [0]


def test_kraft_version_1_with_voters() -> None:
    """testKBuilderRaftVersion1WithVoterSet, testControlRecordIterationWithKraftVersion1:
    header, KRaftVersion 1 and Voters in the first batch; the footer alone and last."""
    controls = (KRaftVersionRecord(kraft_version=1), VOTERS)
    data = encode_snapshot(_snapshot(), METADATA_VERSION, records_per_batch=3,
                           control_records=controls)
    first, last, _ = _first_and_last(data)
    assert [control_type_id(r) for r in first.control_records] == \
        [SNAPSHOT_HEADER, KRAFT_VERSION, KRAFT_VOTERS]
    assert first.control_records[1:] == controls
    assert [control_type_id(r) for r in last.control_records] == [SNAPSHOT_FOOTER]
    decoded = decode_snapshot(data, snapshot_id=SNAPSHOT_ID)
    assert decoded.error is None and decoded.control_records == controls
    assert decoded.snapshot == _snapshot()


def test_kraft_version_1_without_voters() -> None:
    """testBuilderKRaftVersion1WithoutVoterSet: header and KRaftVersion only."""
    data = encode_snapshot(_snapshot(), METADATA_VERSION,
                           control_records=(KRaftVersionRecord(kraft_version=1),))
    first, _, _ = _first_and_last(data)
    assert [control_type_id(r) for r in first.control_records] == [SNAPSHOT_HEADER, KRAFT_VERSION]


@pytest.mark.parametrize("controls", [
    (KRaftVersionRecord(kraft_version=0), VOTERS),  # testBuilderKRaftVersion0WithVoterSet
    (KRaftVersionRecord(kraft_version=0),),  # Kafka writes nothing at kraft.version 0
    (VOTERS,),  # voters without the kraft.version they need
    (KRaftVersionRecord(kraft_version=1), VOTERS, VOTERS),
    (KRaftVersionRecord(kraft_version=1), LeaderChangeMessage(leader_id=1, voters=(1,),
                                                              granting_voters=(1,))),
])
def test_control_records_a_snapshot_writer_refuses(controls: tuple[object, ...]) -> None:
    with pytest.raises(EncodeError):
        encode_snapshot(_snapshot(), METADATA_VERSION, control_records=controls)


@pytest.mark.parametrize("record", [
    LeaderChangeMessage(leader_id=1, voters=(1, 2), granting_voters=(1,)),
    SnapshotHeaderRecord(last_contained_log_timestamp=0), SnapshotFooterRecord(),
    KRaftVersionRecord(kraft_version=1), VOTERS,
])
def test_each_raft_control_record_reads_back_alone(record: object) -> None:
    """testWithAllSupportedControlRecords: one control batch of one record, read back equal."""
    decoded = decode_log(encode_batch(Batch(0, 1, (), (record,), 0), METADATA_VERSION))
    assert decoded.error is None and decoded.batches[0].records == (record,)
    assert control_type_id(record) in {LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER,
                                       KRAFT_VERSION, KRAFT_VOTERS}
