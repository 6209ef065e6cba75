"""Kafka's own ``bootstrap.checkpoint`` (written by ``kafka-storage format``) read as
BootstrapMetadata, and a cluster bootstrapped from it (BootstrapDirectoryTest's reading
of a binary file, on a real one)."""

from __future__ import annotations

from pathlib import Path

from controller import ControllerConfig
from kafka_format import read_bootstrap_directory
from kafka_format.files import BOOTSTRAP_FILE
from metadata.schema import FeatureLevelRecord
from metadata.versions import LEVELS
from sim.cluster import ClusterConfig, KRaftCluster


def test_a_formatted_nodes_bootstrap_file_starts_a_cluster(kafka_data: Path) -> None:
    directory = kafka_data / "bootstrap-txn"
    bootstrap = read_bootstrap_directory(directory, "3.3-IV0")  # the file wins
    assert bootstrap.metadata_version == LEVELS["3.8-IV0"]
    assert bootstrap.records == (FeatureLevelRecord("metadata.version", LEVELS["3.8-IV0"]),)
    assert bootstrap.source == f"the binary bootstrap metadata file: {directory / BOOTSTRAP_FILE}"
    c = KRaftCluster(ClusterConfig(seed=3, brokers=0, controller=ControllerConfig(
        noop_interval_ms=0)), bootstrap=bootstrap)
    c.start(register_brokers=False)
    active = c.run_until_active()
    assert active is not None
    assert c.run_until(lambda: active.committed_image().metadata_version == LEVELS["3.8-IV0"],
                       10_000), c.sim.violation
