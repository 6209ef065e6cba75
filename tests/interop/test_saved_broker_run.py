"""A saved run with broker lifecycles (heartbeats=on) and a fence still opens: dump-log decodes
RegisterBroker (with its lifecycle fields), Fence/Unfence or BrokerRegistrationChange,
PartitionChange and ProducerIds records, and the shell shows the same image from the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.operations import CreateTopics, NewTopic
from kafka_format import read_log_dir
from kraftsim.cli import main
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
)
from shell.file_source import open_files
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.save import save_simulation


def _fenced_run() -> tuple[KRaftCluster, int]:
    c = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=3))
    assert c.config.brokers_settings.lifecycle
    c.start()
    assert c.wait(c.submit(CreateTopics((NewTopic("t", 4, 3),))))
    c.sim.run_for(500)
    producer = Producer(c, "p", "t", 0, acks=-1, idempotent=True)
    producer.send(3)
    assert c.run_until(lambda: producer.idle, 10_000)
    leader = c.partition_leader("t", 0)
    assert leader is not None
    c.sim.crash(leader)
    c.sim.run_for(12_000)  # the session expires: fenced, leaderships moved
    c.sim.restart(leader)
    assert c.run_until(lambda: c.idle() and c.brokers_unfenced(), 30_000)
    assert c.sim.violation is None
    return c, leader


def test_a_saved_run_with_a_fence_reads_back(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    c, crashed = _fenced_run()
    nodes = save_simulation(c.sim, tmp_path / "run")
    controller_dir = next(n for n in nodes if n.name == "controller-3000")
    decoded = read_log_dir(controller_dir)
    assert not decoded.errors
    records = [r for d in decoded.batches for r in d.batch.records]
    kinds = {type(r) for r in records}
    assert {RegisterBrokerRecord, PartitionChangeRecord, ProducerIdsRecord} <= kinds
    assert kinds & {FenceBrokerRecord, BrokerRegistrationChangeRecord}
    assert kinds & {UnfenceBrokerRecord, BrokerRegistrationChangeRecord}
    registrations = [r for r in records if isinstance(r, RegisterBrokerRecord)
                     and r.broker_id == crashed]
    assert len(registrations) == 2  # the first start and the restart: a new incarnation
    assert registrations[0].incarnation_id != registrations[1].incarnation_id
    assert all(r.fenced for r in registrations)  # a broker registers fenced
    new_leaders = {r.leader for r in records if isinstance(r, PartitionChangeRecord)}
    assert new_leaders - {-2, -1, crashed}  # -2: leader unchanged; a new leader was elected

    # the shell over the saved files shows the image the brokers published
    for node in ("broker-0", "controller-3001"):
        files = open_files(str(tmp_path / "run" / node), None)
        live = c.loader(0).published if node == "broker-0" else \
            c.controller(3001).committed_image()  # type: ignore[union-attr]
        assert live is not None
        assert files.image.brokers == live.brokers
        assert files.image.topic("t") == live.topic("t")

    segment = controller_dir / "__cluster_metadata-0" / "00000000000000000000.log"
    assert main(["dump-log", str(segment)]) == 0
    out = capsys.readouterr().out
    for name in ("REGISTER_BROKER_RECORD", "PARTITION_CHANGE_RECORD", "PRODUCER_IDS_RECORD"):
        assert name in out
    assert main(["shell", "--log-dir", str(tmp_path / "run" / "broker-1"), "--format",
                 "json", "-c", f"cat /image/cluster/brokers/{crashed}"]
                ) == 0
    shown = json.loads(capsys.readouterr().out)[f"/image/cluster/brokers/{crashed}"]
    assert shown["id"] == crashed and shown["fenced"] is False
    assert shown["epoch"] == registrations[1].broker_epoch
