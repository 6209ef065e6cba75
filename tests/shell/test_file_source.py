"""Real Kafka files through the simulation's own loader (``--log-dir``, ``--snapshot``)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from controller import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from kafka_format import encode_log, encode_metadata_record, encode_snapshot, files, write_node_log
from kafka_format.batch_format import DecodedBatch, RecordFacts, crc32c
from kraftsim.cli import main
from metadata import delta
from metadata.schema import FeatureLevelRecord, RegisterBrokerRecord
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from raft import Batch
from raft.snapshot import SnapshotId
from shell.file_source import open_files
from sim.cluster import ClusterConfig, KRaftCluster
from tests.shell.shell_recorder import Recorder

LOG = "__cluster_metadata-0/00000000000000000000.log"


def files_shell(log_dir: Path | None = None, snapshot: Path | None = None) -> Recorder:
    rec = Recorder()
    rec.session.files = open_files(str(log_dir) if log_dir else None,
                                   str(snapshot) if snapshot else None)
    return rec


def test_topics_configs_lists_every_topic_with_its_partitions(kafka_data: Path) -> None:
    rec = files_shell(kafka_data / "topics-configs")
    session = rec.session
    assert session.files is not None and session.files.warnings == []
    topics = rec.run("find /image/topics/byName/*/name")
    assert len(topics) == 63
    assert len([p for p in rec.run("ls /image/topics/byName/__consumer_offsets")[0].split()
                if p.isdigit()]) >= 1
    image = session.files.image
    assert len(image.topic("__consumer_offsets").partitions) == 50  # type: ignore[union-attr]
    assert len(image.topic("connect-offsets").partitions) == 25  # type: ignore[union-attr]
    assert rec.run("cat /image/topics/byName/connect-offsets/name") == ["connect-offsets"]
    configs = rec.run("ls /image/configs/TOPIC:connect-offsets")
    assert "cleanup.policy" in " ".join(configs)
    assert rec.run("cat /image/configs/TOPIC:connect-offsets/cleanup.policy") == ["compact"]


def test_topics_configs_log_equals_snapshot_plus_log_after_it(kafka_data: Path) -> None:
    directory = kafka_data / "topics-configs"
    checkpoint = next((directory / "__cluster_metadata-0").glob("*.checkpoint"))
    whole = open_files(str(directory), None)
    from_snapshot = open_files(str(directory), str(checkpoint))
    a, b = whole.image, from_snapshot.image
    assert a.offset == b.offset
    assert (a.topics_by_id, a.topics_by_name, a.configs, a.features, a.next_producer_id) == \
        (b.topics_by_id, b.topics_by_name, b.configs, b.features, b.next_producer_id)
    assert a.brokers == b.brokers  # listeners are a map in Kafka: their order is not content
    assert a.same_content(b)


def test_bootstrap_transaction_shows_metadata_version_20(kafka_data: Path) -> None:
    rec = files_shell(kafka_data / "bootstrap-txn")
    rec.session.format = "json"
    version = json.loads(rec.run("cat /image/features/metadataVersion")[0])
    assert version == {"/image/features/metadataVersion": {"featureLevel": 20,
                                                           "name": "3.8-IV0"}}
    rec.session.format = "text"
    assert rec.run("cat /image/provenance")[0].startswith("offset 4, epoch 1, time 2025-02-07T")


def test_a_log_cut_inside_the_transaction_shows_no_part_of_it(kafka_data: Path,
                                                               tmp_path: Path) -> None:
    data = (kafka_data / "bootstrap-txn" / LOG).read_bytes()
    cut = tmp_path / LOG
    cut.parent.mkdir()
    cut.write_bytes(data[:-6])
    rec = files_shell(tmp_path)
    assert rec.session.files is not None
    assert any("truncated" in warning for warning in rec.session.files.warnings)
    assert rec.run("cat /image/provenance") == ["offset -1, epoch -1 (nothing published yet)"]
    assert rec.session.files.image.features.get("metadata.version") is None


def test_a_log_ending_inside_a_transaction_shows_the_state_before_it(tmp_path: Path) -> None:
    cluster = KRaftCluster(ClusterConfig(seed=7, controllers=3, brokers=2,
                                         controller=ControllerConfig(max_records_per_batch=50)))
    cluster.start()
    cluster.submit(CreateTopics((NewTopic("big", 2000, 2),)))
    assert cluster.run_until(cluster.transaction_window_open, 10_000)
    broker_log = cluster.sim.slots[0].storage.log
    write_node_log(tmp_path, broker_log.batches, metadata_version=MINIMUM_KRAFT)
    rec = files_shell(tmp_path)
    files = rec.session.files
    txn = cluster.txn_invariants.reference.open
    begin = txn.begin_offset if txn is not None else -1
    assert files is not None and files.open_transaction == begin
    assert rec.run("ls /image/topics/byName") == []
    assert rec.run("cat /image/provenance")[0].startswith(f"offset {begin - 1}, epoch 1")
    assert "never ends in the files" in rec.run("cat /local/node")[0]
    assert rec.run("ls /image/cluster/brokers") == ["0", "1"]


def test_lab_commands_say_there_is_no_simulation(kafka_data: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["shell", "--log-dir", str(kafka_data / "partition-v1"), "-c",
                 "ls /image/topics/byName", "-c", "crash leader", "-c", "log 0"])
    assert code == 1
    out, err = capsys.readouterr()
    assert sorted(out.split()) == ["__consumer_offsets", "kafka_topic-2", "kafka_topic-3",
                           "student_topic", "topic_employee"]
    assert err.splitlines()[0].startswith("crash: there is no simulation: this shell shows "
                                          "the Kafka files")
    assert "kraftsim dump-log" in err.splitlines()[1]


def test_unreadable_files_fail_with_one_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shell", "--log-dir", str(tmp_path / "nowhere"), "-c", "ls"]) == 1
    err = capsys.readouterr().err
    assert "No such file or directory" in err and "Traceback" not in err


def test_topic_deletes_keep_only_the_third_incarnation(kafka_data: Path) -> None:
    rec = files_shell(kafka_data / "topic-deletes")
    assert rec.run("ls /image/topics/byName", "ls /image/topics/byId") == [
        "test-topic", "YNY5hm01SZ-bAGeCLAGqWA"]
    assert rec.run("ls /image/topics/byName/test-topic") == ["0", "id", "name"]  # one per line
    rec.session.format = "json"
    partition = json.loads(rec.run("cat /image/topics/byId/*/0")[0])
    value = partition["/image/topics/byId/YNY5hm01SZ-bAGeCLAGqWA/0"]
    assert (value["leader"], value["leaderEpoch"], value["partitionEpoch"]) == (1, 2, 3)
    assert json.loads(rec.run("ls /image/configs")[0]) == {"/image/configs": ["BROKER"]}
    # the log (a cut copy) ends at offset 3619, the checkpoint beside it at 46532 in the same
    # epoch: a Kafka node starts from the checkpoint, and so does the shell, saying why
    rec.session.format = "text"
    assert rec.run("cat /local/node") == [
        f"Kafka files {kafka_data / 'topic-deletes'}: read to offset 46532, image at offset "
        f"46532"]
    assert rec.session.files is not None
    assert [w.split(": ", 1)[1] for w in rec.session.files.warnings] == [
        "this snapshot (end offset 46533, epoch 4) is ahead of the log (end offset 3620, "
        "epoch 4): shown from the snapshot, the log not replayed, as a Kafka node starts "
        "from such a snapshot"]


def test_files_read_leave_nothing_in_the_sharing_caches(kafka_data: Path) -> None:
    """Nothing replays a file's records again: the caches that share what several nodes
    make from the same records do not keep them alive."""
    source = open_files(str(kafka_data / "topics-configs"), None)
    assert len(source.image.topics_by_id) == 63
    assert not delta._records_held and not delta._topics_made


def test_a_kafka_43_broker_registration_shows_in_the_shell_and_dump_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A RegisterBrokerRecord v4 (Kafka 4.3: v3 and a tagged CordonedLogDirs) in a log: the
    shell's image has the broker, dump-log prints the record at its version."""
    level = LEVELS["3.7-IV2"]
    record = RegisterBrokerRecord(broker_id=1, broker_epoch=2, fenced=False,
                                  log_dirs=("A" * 22,))
    cordoned = RecordFacts(3, unknown_tagged_fields=((1, bytes([2]) + bytes(16)),))
    batch = Batch(0, 1, (FeatureLevelRecord(METADATA_VERSION_FEATURE, level), record), (), 5)
    data = bytearray(encode_log([DecodedBatch(batch, (RecordFacts(0), cordoned), 0, 5, -1, -1,
                                              -1, 0, 0, 0)]))
    at = bytes(data).index(encode_metadata_record(record, 3, cordoned.unknown_tagged_fields))
    data[at + 2] = 4  # the record version: v4 is v3 with the tag
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    (tmp_path / "__cluster_metadata-0").mkdir()
    (tmp_path / LOG).write_bytes(bytes(data))
    assert main(["shell", "--log-dir", str(tmp_path), "-c", "ls /image/cluster/brokers"]) == 0
    assert capsys.readouterr().out.split() == ["1"]
    assert main(["dump-log", "--cluster-metadata-decoder", "--files",
                 str(tmp_path / LOG)]) == 0
    assert '{"type":"REGISTER_BROKER_RECORD","version":4,' in capsys.readouterr().out


def noop_heavy_with_snapshot(kafka_data: Path, target: Path, end_offset: int,
                             epoch: int) -> Path:
    """noop-heavy's log (offsets 0-17672, epoch 1) beside the records of its snapshot at
    offset 7205, written as a snapshot ending at ``end_offset`` in ``epoch``."""
    source = kafka_data / "noop-heavy" / "__cluster_metadata-0"
    directory = target / "__cluster_metadata-0"
    directory.mkdir(parents=True)
    log = "00000000000000000000.log"
    (directory / log).write_bytes((source / log).read_bytes())
    read = files.read_snapshot_file(source / "00000000000000007205-0000000001.checkpoint")
    assert read.result.snapshot is not None
    snapshot = msgspec.structs.replace(read.result.snapshot,
                                       snapshot_id=SnapshotId(end_offset, epoch))
    name = files.snapshot_file_name(snapshot.snapshot_id)
    (directory / name).write_bytes(encode_snapshot(snapshot, MINIMUM_KRAFT))
    return target


@pytest.mark.parametrize(("end_offset", "epoch", "shown"), [
    (7205, 1, 17672),  # inside the log: the log is replayed whole
    (17673, 1, 17672),  # at the log's end: the same
    (7205, 2, 7204),  # of a newer epoch than the log's last batch
    (20000, 1, 19999),  # past the log's end
])
def test_a_log_dir_starts_where_a_kafka_node_would(kafka_data: Path, tmp_path: Path,
                                                   end_offset: int, epoch: int,
                                                   shown: int) -> None:
    """A Kafka node truncates its whole log and starts from its newest snapshot when that
    snapshot is ahead of the log: of a newer epoch, or of the same epoch and ending past
    the log's end. Otherwise the log, which starts at offset 0, is replayed whole."""
    folder = noop_heavy_with_snapshot(kafka_data, tmp_path, end_offset, epoch)
    rec = files_shell(folder)
    assert rec.run("cat /local/node") == [
        f"Kafka files {folder}: read to offset {shown}, image at offset {shown}"]
    assert rec.run("ls /image/cluster/brokers") == ["1"]
    assert rec.session.files is not None
    name = files.snapshot_file_name(SnapshotId(end_offset, epoch))
    assert rec.session.files.warnings == ([] if shown == 17672 else [
        f"{folder / '__cluster_metadata-0' / name}: this snapshot (end offset {end_offset}, "
        f"epoch {epoch}) is ahead of the log (end offset 17673, epoch 1): shown from the "
        f"snapshot, the log not replayed, as a Kafka node starts from such a snapshot"])
