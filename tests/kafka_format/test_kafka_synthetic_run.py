"""A simulated run written in Kafka's layout and read back: the same batches and records."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format import (
    EncodeError,
    MetaProperties,
    QuorumState,
    decode_log,
    decode_snapshot,
    encode_batch,
    encode_batches,
    encode_snapshot,
    files,
    read_log_dir,
    read_node_dir,
    record_version,
    to_decoded_batch,
    write_node_log,
)
from kafka_format.files import segment_file_name, snapshot_file_name
from metadata import schema as rec
from metadata import versions as mv
from raft.batch import Batch, KRaftVersionRecord, LeaderChangeMessage
from raft.snapshot import Snapshot, SnapshotId

from .samples import TOPIC_A, sample_control_records, sample_record

ELR_LEVEL = mv.ELR


def all_records(level: int) -> list[rec.MetadataRecord]:
    """One record of every modelled type, as Kafka would write it at ``level``."""
    out = []
    for api_key in sorted(rec.RECORD_TYPES):
        if api_key == rec.RegisterControllerRecord.API_KEY and level < mv.LEVELS["3.7-IV0"]:
            continue  # Kafka registers controllers from 3.7-IV0 on
        if api_key == rec.BrokerRegistrationChangeRecord.API_KEY:
            version = 2 if level >= mv.DIRECTORIES else 1
        else:
            version = record_version(sample_record(api_key, 0), level)
        out.append(sample_record(api_key, version))
    return out


def simulated_run(level: int) -> tuple[list[Batch], Snapshot]:
    records = all_records(level)
    leader_change = LeaderChangeMessage(leader_id=1, voters=(1, 2, 3), granting_voters=(1, 2))
    batches = [
        Batch(0, 1, (), (leader_change,), 1_000),
        Batch(1, 1, (rec.BeginTransactionRecord(name="create orders"), *records[:5]), (), 1_500),
    ]
    offset = batches[-1].end_offset
    for start in range(5, len(records), 4):
        batches.append(Batch(offset, 1, tuple(records[start : start + 4]), (), 2_000 + offset))
        offset = batches[-1].end_offset
    batches.append(Batch(offset, 1, (rec.EndTransactionRecord(),), (), 3_000))
    # A new leader's epoch starts with one control batch: LeaderChange, then (with
    # kraft.version 1) KRaftVersion and Voters, as Kafka's LeaderState writes it.
    controls = sample_control_records()
    batches.append(Batch(batches[-1].end_offset, 2, (), (controls[0], *controls[3:]), 4_000))
    abort = rec.AbortTransactionRecord(reason="Controller failover")
    batches.append(Batch(batches[-1].end_offset, 2, (abort,), (), 5_000))
    first_noop = batches[-1].end_offset
    batches.extend(
        Batch(first_noop + i, 2, (rec.NoOpRecord(),), (), 6_000 + 500 * i) for i in range(50)
    )
    snapshot = Snapshot(SnapshotId(batches[-1].end_offset, 2), tuple(records), 30_500)
    return batches, snapshot


@pytest.mark.parametrize("level", [ELR_LEVEL, mv.LATEST_PRODUCTION, mv.LEVELS["3.6-IV2"]])
def test_run_written_and_read_back(tmp_path: Path, level: int) -> None:
    batches, snapshot = simulated_run(level)
    state = QuorumState(leader_id=1, leader_epoch=2, voted_id=1, data_version=1)
    meta = MetaProperties(version=1, cluster_id="kraftsim-cluster", node_id=1,
                          directory_id=TOPIC_A)  # fmt: skip
    bootstrap = Snapshot(SnapshotId(0, 0), (rec.FeatureLevelRecord("metadata.version", level),))
    written = write_node_log(tmp_path, batches, [snapshot], metadata_version=level,
                             quorum_state=state, meta=meta, bootstrap=bootstrap)  # fmt: skip
    assert {p.name for p in written} >= {segment_file_name(0), snapshot_file_name(
        snapshot.snapshot_id), "quorum-state", "meta.properties", "bootstrap.checkpoint"}

    node = read_node_dir(tmp_path)
    assert node.errors == () and node.log.errors == ()
    assert node.meta == meta and node.log.quorum_state == state
    assert node.bootstrap is not None and node.bootstrap.snapshot == bootstrap
    assert [decoded.batch for decoded in node.log.batches] == batches
    for decoded in node.log.batches:
        if decoded.is_control:
            assert all(facts.version == 0 for facts in decoded.facts)
            continue
        for record, facts in zip(decoded.batch.records, decoded.facts, strict=True):
            assert facts.version == record_version(record, level)
    (snapshot_file,) = node.log.snapshots
    assert snapshot_file.result.snapshot == snapshot
    assert snapshot_file.snapshot_id == snapshot.snapshot_id


def test_every_modelled_type_is_in_the_latest_run() -> None:
    batches, _ = simulated_run(ELR_LEVEL)
    written = {type(r) for b in batches for r in b.records}
    assert written == set(rec.RECORD_TYPES.values())
    controls = {type(r).__name__ for b in batches for r in b.control_records}
    assert {"LeaderChangeMessage", "KRaftVersionRecord", "VotersRecord"} <= controls


def test_segments_roll_at_the_size_limit(tmp_path: Path) -> None:
    batches, _ = simulated_run(ELR_LEVEL)
    write_node_log(tmp_path, batches, metadata_version=ELR_LEVEL, segment_bytes=1_000)
    log_dir = read_log_dir(tmp_path)
    assert len(log_dir.segments) > 3
    for segment in log_dir.segments:
        assert segment.result.error is None
        assert segment.result.batches[0].batch.base_offset == segment.base_offset
        assert segment.result.total_bytes <= 1_000 or len(segment.result.batches) == 1
    assert [d.batch for d in log_dir.batches] == batches


def test_decoded_batches_are_written_back_byte_for_byte(tmp_path: Path, kafka_data: Path) -> None:
    source = kafka_data / "bootstrap-txn"
    node = read_node_dir(source)
    assert node.bootstrap is not None
    write_node_log(tmp_path, node.log.batches, metadata_version=20, bootstrap=node.bootstrap)
    original = source / "__cluster_metadata-0" / segment_file_name(0)
    copy = tmp_path / "__cluster_metadata-0" / segment_file_name(0)
    assert copy.read_bytes() == original.read_bytes()
    assert (tmp_path / "bootstrap.checkpoint").read_bytes() == (
        source / "bootstrap.checkpoint"
    ).read_bytes()


def test_record_versions_follow_a_metadata_version_upgrade() -> None:
    partition = sample_record(3, 0)
    batches = [
        Batch(0, 1, (partition,), (), 0),
        Batch(1, 1, (rec.FeatureLevelRecord(name="metadata.version", feature_level=ELR_LEVEL),),
              (), 0),
        Batch(2, 1, (sample_record(3, 2),), (), 0),
    ]  # fmt: skip
    result = decode_log(encode_batches(batches, mv.LEVELS["3.6-IV2"]))
    assert [d.facts[0].version for d in result.batches] == [0, 0, 2]
    snapshot = Snapshot(SnapshotId(10, 1), batches[1].records + batches[2].records)
    decoded = decode_snapshot(encode_snapshot(snapshot, 1), snapshot_id=snapshot.snapshot_id)
    assert [f.version for b in decoded.batches for f in b.facts] == [0, 0, 2, 0]


def test_batch_bytes_match_kafkas_conventions() -> None:
    batch = Batch(5, 3, (rec.NoOpRecord(), rec.NoOpRecord()), (), 1_234)
    data = encode_batch(batch, ELR_LEVEL)
    decoded = decode_log(data, first_offset=5)
    assert decoded.error is None
    (only,) = decoded.batches
    assert only.batch == batch
    header = only.header
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert header.base_timestamp == header.max_timestamp == 1_234
    assert header.compression == "none" and not header.is_control
    assert to_decoded_batch(batch, ELR_LEVEL) == only


def test_snapshot_layout() -> None:
    snapshot = Snapshot(SnapshotId(100, 4), tuple(rec.NoOpRecord() for _ in range(25)), 99)
    data = encode_snapshot(snapshot, ELR_LEVEL, records_per_batch=10,
                           control_records=(KRaftVersionRecord(kraft_version=1),))  # fmt: skip
    result = decode_snapshot(data, snapshot_id=snapshot.snapshot_id)
    assert result.error is None and result.snapshot == snapshot
    assert [len(b.facts) for b in result.batches] == [2, 10, 10, 5, 1]
    assert [b.batch.base_offset for b in result.batches] == [0, 2, 12, 22, 27]
    assert all(b.batch.epoch == 4 for b in result.batches)
    assert result.control_records == (KRaftVersionRecord(kraft_version=1),)
    assert result.header is not None and result.header.last_contained_log_timestamp == 99


def test_unwritable_content_is_an_encode_error() -> None:
    with_dirs = sample_record(3, 1)
    with pytest.raises(EncodeError):
        encode_batch(Batch(0, 1, (with_dirs,), (), 0), mv.LEVELS["3.6-IV2"])
    with pytest.raises(EncodeError):
        encode_batch(Batch(0, 1, (42,), (), 0), ELR_LEVEL)
    with pytest.raises(EncodeError):
        encode_batch(Batch(0, 1, (rec.TopicRecord(name="t", topic_id="not a uuid"),), (), 0),
                     ELR_LEVEL)  # fmt: skip


def test_a_segment_under_another_name_or_missing(tmp_path: Path) -> None:
    """A segment copied to a name that is not its base offset still reads, batches and
    offsets intact; the name gives no base offset, shown as -1. A missing segment keeps the
    base offset of its name and reads as unreadable, with no byte read."""
    data = encode_batches([Batch(5, 1, (rec.NoOpRecord(),), (), 1_000)], mv.LATEST_PRODUCTION)
    copy = tmp_path / "copy.log"
    copy.write_bytes(data)
    segment = files.read_segment_file(copy)
    assert segment.base_offset == -1 and segment.result.error is None
    assert [b.batch.base_offset for b in segment.result.batches] == [5]
    named = tmp_path / segment_file_name(5)
    named.write_bytes(data)
    assert files.read_segment_file(named).base_offset == 5
    missing = files.read_segment_file(tmp_path / segment_file_name(9))
    assert missing.base_offset == 9 and missing.result.error is not None
    assert missing.result.error.kind == "unreadable" and missing.result.batches == ()
    assert (missing.result.valid_bytes, missing.result.total_bytes) == (0, 0)
