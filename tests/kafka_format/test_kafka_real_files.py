"""Real Kafka files: decode them, check what they hold, and re-encode them byte for byte."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import google_crc32c
import msgspec
import pytest

from kafka_format import (
    DecodedBatch,
    LogDecodeResult,
    encode_log,
    read_log_dir,
    read_node_dir,
    read_snapshot_file,
)
from kafka_format.node_state import (
    format_meta_properties,
    format_quorum_state,
    parse_meta_properties,
    parse_quorum_state,
)
from metadata import schema as rec
from raft.batch import LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord

from .conftest import METADATA_DIR, segment

T = TypeVar("T")
DATASETS = ("bootstrap-txn", "noop-heavy", "topics-configs", "topic-deletes", "partition-v1")


def records_with_versions(result: LogDecodeResult) -> list[tuple[int, Any, int]]:
    """(offset, record, version) of every data record."""
    out = []
    for decoded in result.batches:
        if decoded.is_control:
            continue
        for index, (record, facts) in enumerate(
            zip(decoded.batch.records, decoded.facts, strict=True)
        ):
            out.append((decoded.batch.base_offset + index, record, facts.version))
    return out


def of_type(data: list[tuple[int, Any, int]], cls: type[T]) -> list[T]:
    """The records of one type, in log order."""
    return [record for _, record, _ in data if isinstance(record, cls)]


def all_kafka_files(root: Path) -> list[Path]:
    found = sorted(root.glob(f"*/{METADATA_DIR}/*.log"))
    found += sorted(root.glob(f"*/{METADATA_DIR}/*.checkpoint"))
    found += sorted(root.glob("*/bootstrap.checkpoint"))
    return found


def test_every_real_file_round_trips_byte_for_byte(kafka_data: Path) -> None:
    paths = all_kafka_files(kafka_data)
    assert len(paths) == 11
    for path in paths:
        data = path.read_bytes()
        if path.suffix == ".log":
            result = segment(path.parents[1].name)[1]
            batches: tuple[DecodedBatch, ...] = result.batches
            assert result.error is None, result.error.describe()
        else:
            snapshot = read_snapshot_file(path).result
            assert snapshot.error is None, snapshot.error.describe()
            batches = snapshot.batches
        assert encode_log(batches) == data, path
        # Kafka wrote every value canonically: re-encoding never fell back to raw bytes.
        for decoded in batches:
            for facts in decoded.facts:
                assert facts.raw_value is None and facts.unknown_tagged_fields == ()


def test_quorum_state_and_meta_properties_round_trip(kafka_data: Path) -> None:
    for path in sorted(kafka_data.glob(f"*/{METADATA_DIR}/quorum-state")):
        text = path.read_text()
        state = parse_quorum_state(text)
        assert state.leader_id == 1 and state.leader_epoch == 1
        assert format_quorum_state(state) == text
    for path in sorted(kafka_data.glob("*/meta.properties")):
        text = path.read_text()
        meta = parse_meta_properties(text)
        assert meta.node_id == 1 and meta.version == 1
        assert format_meta_properties(meta) == text


def test_bootstrap_txn(kafka_data: Path) -> None:
    _, result = segment("bootstrap-txn")
    assert result.error is None
    assert len(result.batches) == 2
    first = result.batches[0]
    assert first.is_control and first.batch.base_offset == 0 and first.batch.epoch == 1
    (leader_change,) = first.batch.control_records
    assert isinstance(leader_change, LeaderChangeMessage)
    assert leader_change.leader_id == 1 and leader_change.voters == (1,)
    data = records_with_versions(result)
    assert [offset for offset, _, _ in data] == [1, 2, 3, 4]
    assert [record for _, record, _ in data] == [
        rec.BeginTransactionRecord(name="Bootstrap records"),
        rec.FeatureLevelRecord(name="metadata.version", feature_level=20),
        rec.ZkMigrationStateRecord(zk_migration_state=0),
        rec.EndTransactionRecord(),
    ]
    node = read_node_dir(kafka_data / "bootstrap-txn")
    assert node.meta is not None and node.meta.directory_id == "h6pDfZcK7RCGV0SBTRYdAA"
    assert node.bootstrap is not None and node.bootstrap.snapshot is not None
    assert node.bootstrap.snapshot.records == (
        rec.FeatureLevelRecord(name="metadata.version", feature_level=20),
    )


def test_bootstrap_txn_cut_inside_the_end_transaction_batch(kafka_data: Path) -> None:
    data, _ = segment("bootstrap-txn")
    from kafka_format import decode_log

    cut = decode_log(data[:-1], source="cut.log", first_offset=0)
    assert len(cut.batches) == 1
    assert isinstance(cut.batches[0].batch.control_records[0], LeaderChangeMessage)
    assert cut.error is not None
    assert cut.error.kind == "truncated"
    assert (cut.error.batch_index, cut.error.batch_offset, cut.error.batch_position) == (1, 1, 91)
    assert cut.valid_bytes == 91
    assert cut.error.describe() == (
        "cut.log: batch 1 (base offset 1) starting at byte 91: byte 99: truncated: "
        "batch declares 133 bytes after its length field but only 132 remain")
    header_cut = msgspec.structs.replace(cut.error, batch_offset=None, batch_position=None)
    assert header_cut.describe().startswith("cut.log: batch 1: byte 99: truncated: ")


def test_noop_heavy(kafka_data: Path) -> None:
    data, result = segment("noop-heavy")
    assert result.error is None
    assert len(result.batches) == 17_670
    assert result.batches[-1].last_offset == 17_672
    # Every batch's CRC-32C, computed here independently of the decoder.
    for decoded in result.batches:
        start = decoded.position
        covered = data[start + 21 : start + decoded.size]
        assert google_crc32c.value(covered) == decoded.crc
    types = Counter(type(record).__name__ for _, record, _ in records_with_versions(result))
    assert types["NoOpRecord"] == 17_666
    brokers = of_type(records_with_versions(result), rec.RegisterBrokerRecord)
    assert [(broker.broker_id, broker.fenced) for broker in brokers] == [(1, True)]
    log_dir = read_log_dir(kafka_data / "noop-heavy")
    assert [s.snapshot_id.end_offset for s in log_dir.snapshots] == [7205, 14403]
    for snapshot_file in log_dir.snapshots:
        decoded_snapshot = snapshot_file.result
        assert decoded_snapshot.error is None
        assert isinstance(decoded_snapshot.header, SnapshotHeaderRecord)
        assert isinstance(decoded_snapshot.footer, SnapshotFooterRecord)
        assert decoded_snapshot.snapshot is not None
        assert decoded_snapshot.snapshot.snapshot_id.epoch == 1
        assert [type(r).__name__ for r in decoded_snapshot.snapshot.records] == [
            "FeatureLevelRecord", "ZkMigrationStateRecord", "RegisterBrokerRecord",
        ]  # fmt: skip


def test_topics_configs(kafka_data: Path) -> None:
    _, result = segment("topics-configs")
    assert result.error is None
    data = records_with_versions(result)
    counts = Counter((type(record).__name__, version) for _, record, version in data)
    assert counts[("TopicRecord", 0)] == 63
    assert counts[("PartitionRecord", 0)] == 151
    assert counts[("PartitionChangeRecord", 0)] == 151
    assert counts[("ProducerIdsRecord", 0)] == 1
    topic_configs = [r for r in of_type(data, rec.ConfigRecord) if r.resource_type == 2]
    assert len(topic_configs) == 375
    names = {r.name for _, r, _ in data if isinstance(r, rec.TopicRecord)}
    assert {"__consumer_offsets", "connect-offsets", "orders", "customers", "products"} <= names
    offsets_partitions = [
        r for _, r, _ in data
        if isinstance(r, rec.PartitionRecord)
        and r.topic_id == next(t.topic_id for _, t, _ in data
                               if isinstance(t, rec.TopicRecord) and t.name == "__consumer_offsets")
    ]  # fmt: skip
    assert len(offsets_partitions) == 50
    (snapshot_file,) = read_log_dir(kafka_data / "topics-configs").snapshots
    snapshot = snapshot_file.result.snapshot
    assert snapshot is not None
    assert sum(isinstance(r, rec.TopicRecord) for r in snapshot.records) == 60


def test_topic_deletes(kafka_data: Path) -> None:
    _, result = segment("topic-deletes")
    assert result.error is None
    assert len(result.batches) == 3600 and result.batches[-1].last_offset == 3619
    data = records_with_versions(result)
    topics = [r for _, r, _ in data if isinstance(r, rec.TopicRecord)]
    assert [t.name for t in topics] == ["test-topic"] * 3
    assert len({t.topic_id for t in topics}) == 3
    removed = [r.topic_id for _, r, _ in data if isinstance(r, rec.RemoveTopicRecord)]
    assert len(removed) == 2 and set(removed) < {t.topic_id for t in topics}
    versions = {(type(r).__name__, v) for _, r, v in data}
    assert ("PartitionRecord", 2) in versions
    assert ("RegisterBrokerRecord", 3) in versions
    assert ("RegisterControllerRecord", 0) in versions
    changes = [(r, v) for _, r, v in data if isinstance(r, rec.PartitionChangeRecord)]
    assert len(changes) == 3 and all(v == 2 for _, v in changes)
    features = {r.name: r.feature_level for r in of_type(data, rec.FeatureLevelRecord)}
    assert features["metadata.version"] == 29 and len(features) >= 5
    broker = next(r for _, r, _ in data if isinstance(r, rec.RegisterBrokerRecord))
    assert len(broker.log_dirs) == 1
    (snapshot_file,) = read_log_dir(kafka_data / "topic-deletes").snapshots
    snapshot = snapshot_file.result.snapshot
    assert snapshot is not None and snapshot.snapshot_id.end_offset == 46533
    surviving = [r for r in snapshot.records if isinstance(r, rec.TopicRecord)]
    assert [t.name for t in surviving] == ["test-topic"]


def test_partition_v1(kafka_data: Path) -> None:
    _, result = segment("partition-v1")
    assert result.error is None
    data = records_with_versions(result)
    counts = Counter((type(record).__name__, version) for _, record, version in data)
    assert counts[("PartitionRecord", 1)] > 0 and counts[("PartitionChangeRecord", 1)] > 0
    assert sum(n for (name, _), n in counts.items() if name == "RegisterBrokerRecord") == 3
    assert counts[("RegisterControllerRecord", 0)] == 3
    partitions = [r for _, r, _ in data if isinstance(r, rec.PartitionRecord)]
    assert all(len(p.directories) == len(p.replicas) for p in partitions)
    features = [r for _, r, _ in data if isinstance(r, rec.FeatureLevelRecord)]
    assert rec.FeatureLevelRecord(name="metadata.version", feature_level=20) in features


@pytest.mark.parametrize("dataset", DATASETS)
def test_log_dir_reads_segments_and_snapshots_in_order(kafka_data: Path, dataset: str) -> None:
    log_dir = read_log_dir(kafka_data / dataset)
    assert log_dir.errors == ()
    assert [s.base_offset for s in log_dir.segments] == [0]
    ends = [s.snapshot_id.end_offset for s in log_dir.snapshots]
    assert ends == sorted(ends)
    assert all(s.result.ok for s in log_dir.snapshots)
    offsets = [b.batch.base_offset for b in log_dir.batches]
    assert offsets == sorted(offsets) and offsets[0] == 0
