"""``--save`` of a consume-transform-produce run: its ``__consumer_offsets`` partitions hold
Kafka's OffsetCommitKey / OffsetCommitValue bytes, which ``dump-log`` decodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker.replica_manager import ReplicaManager
from broker.txn.group import CONSUMER_OFFSETS_TOPIC, decode_offset
from kafka_format.files import read_data_segment
from kafka_format.offsets_log import decode_record, encode_offset_commit
from kraftsim.dump_log import main
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_world import EosSettings, EosWorld, eos_monitors
from sim.save import save_simulation


def test_offset_commit_bytes_are_kafkas() -> None:
    key, value = encode_offset_commit("g", "in", 2, 40, -1, "", 1_234)
    assert key == b"\x00\x01" + b"\x00\x01g" + b"\x00\x02in" + b"\x00\x00\x00\x02"
    assert value == (b"\x00\x03" + (40).to_bytes(8, "big") + b"\xff\xff\xff\xff"
                     + b"\x00\x00" + (1_234).to_bytes(8, "big"))
    record = decode_record(key, value)
    assert (record.record_type, record.value_version) == (1, 3)
    assert record.key == {"group": "g", "topic": "in", "partition": 2}
    assert record.value == {"offset": 40, "leaderEpoch": -1, "metadata": "",
                            "commitTimestamp": 1_234}


def test_a_saved_eos_run_has_kafkas_offset_records(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, EosSettings(records=10), txn, eos)
    assert world.setup()
    cluster.sim.run_for(500)
    world.start()
    assert cluster.sim.run_until_true(world.finished, 120_000)
    cluster.sim.run_for(2_000)
    save_simulation(cluster.sim, tmp_path / "run")
    checked = 0
    for broker in cluster.config.broker_ids:
        manager = next(a for a in cluster.sim.slots[broker].apps
                       if isinstance(a, ReplicaManager))
        for replica in manager.replicas.values():
            if replica.topic != CONSUMER_OFFSETS_TOPIC or not replica.log.entries:
                continue
            segment = (tmp_path / "run" / f"broker-{broker}"
                       / f"{replica.topic}-{replica.partition_id}" / "00000000000000000000.log")
            records = [r for b in read_data_segment(segment).batches if not b.is_control
                       for r in b.records]
            commits = [decode_offset(e.value) for e in replica.log.entries if e.control < 0]
            assert len(records) == len(commits) > 0
            for record, commit in zip(records, commits, strict=True):
                assert commit is not None and record.key is not None
                decoded = decode_record(record.key, record.value)
                (group, topic, partition), offset = commit
                assert decoded.key == {"group": group, "topic": topic, "partition": partition}
                assert decoded.value is not None and decoded.value["offset"] == offset
            assert main(["--format", "json", str(segment)]) == 0
            document = json.loads(capsys.readouterr().out)
            keys = [r["key"] for b in document["batches"] for r in b["records"]
                    if "key" in r and isinstance(r["key"], dict)]
            assert len(keys) == len(commits) and all(k["type"] == "1" for k in keys)
            checked += 1
    assert checked > 0
