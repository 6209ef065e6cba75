"""A saved kraftsim run is a Kafka metadata log: it decodes to exactly what was simulated."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.operations import CreateTopics, DeleteTopics, NewTopic
from kafka_format import read_log_dir
from kraftsim.cli import main
from shell.file_source import open_files
from sim.cluster import ClusterConfig, KRaftCluster
from sim.demo import run_demo
from sim.save import save_simulation
from tests.controller.conftest import cluster as started_cluster


def test_a_saved_run_decodes_to_the_simulated_records(tmp_path: Path) -> None:
    c: KRaftCluster = started_cluster(seed=21, batch=20, snapshot_every=40)
    for op in (CreateTopics((NewTopic("a", 30, 3),)), CreateTopics((NewTopic("b", 2, 1),)),
               DeleteTopics(("b",))):
        assert c.wait(c.submit(op))
    assert c.run_until(c.idle, 10_000)
    nodes = save_simulation(c.sim, tmp_path / "run")
    assert [n.name for n in nodes] == ["broker-0", "broker-1", "broker-2", "controller-3000",
                                      "controller-3001", "controller-3002"]
    for node_dir in nodes:
        node_id = int(node_dir.name.split("-")[1])
        log = c.sim.slots[node_id].storage.log
        decoded = read_log_dir(node_dir)
        assert not decoded.errors
        flushed = [b for b in log.batches if b.end_offset <= log.flushed_end]
        assert [d.batch for d in decoded.batches] == flushed
        if log.snapshot is not None:
            [snapshot] = decoded.snapshots
            assert snapshot.result.snapshot is not None
            assert snapshot.result.snapshot.records == log.snapshot.records


def test_the_shell_opens_a_saved_demo_with_its_abort(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    saved: list[list[Path]] = []
    result = run_demo(7, after=lambda sim: saved.append(save_simulation(sim, tmp_path / "d")))
    assert not result.invariant_violations
    for node in ("broker-0", "controller-3002"):
        topic = open_files(str(tmp_path / "d" / node), None).image.topic("orders")
        assert topic is not None and len(topic.partitions) == 1000
    assert main(["dump-log", str(tmp_path / "d" / "controller-3001" / "__cluster_metadata-0" /
                                 "00000000000000000000.log")]) == 0
    out = capsys.readouterr().out
    assert ('payload: {"type":"ABORT_TRANSACTION_RECORD","version":0,'
            '"data":{"reason":"Controller failover"}}') in out


def test_save_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    c = KRaftCluster(ClusterConfig(seed=1))
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep").write_text("")
    with pytest.raises(FileExistsError):
        save_simulation(c.sim, tmp_path / "x")


def test_a_saved_run_holds_the_controllers_registrations(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each controller's RegisterControllerRecord (KIP-919) is in the saved log and in the
    controllers' snapshot: ``dump-log`` prints them with each process's incarnation id, and
    the metadata shell over a saved node lists the three controllers."""
    c: KRaftCluster = started_cluster(seed=22, batch=20, snapshot_every=40)
    assert c.wait(c.submit(CreateTopics((NewTopic("a", 40, 3),))))
    assert c.run_until(c.idle, 10_000)
    incarnations = {}
    for node in c.config.controller_ids:
        manager = c.registration_manager(node)
        assert manager is not None
        incarnations[node] = manager.incarnation_id
    save_simulation(c.sim, tmp_path / "run")
    controller_dir = tmp_path / "run" / "controller-3000" / "__cluster_metadata-0"
    (checkpoint,) = controller_dir.glob("*.checkpoint")
    segment = tmp_path / "run" / "broker-0" / "__cluster_metadata-0" / \
        "00000000000000000000.log"
    for path in (segment, checkpoint):
        assert main(["dump-log", str(path)]) == 0
        out = capsys.readouterr().out
        for node, incarnation in incarnations.items():
            assert (f'"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{{"controllerId":'
                    f'{node},"incarnationId":"{incarnation}"') in out, (path.name, node)
    for node in ("broker-1", "controller-3001"):
        image = open_files(str(tmp_path / "run" / node), None).image
        assert {n: r.incarnation_id for n, r in image.controllers.items()} == incarnations
