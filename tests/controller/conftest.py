"""Helpers to build small clusters for controller tests."""

from __future__ import annotations

from controller import ControllerConfig, WriteMode
from raft import RaftConfig
from sim.cluster import ClusterConfig, KRaftCluster


def cluster(seed: int = 1, *, batch: int = 10, fetch: int = 1000, brokers: int = 3,
            mode: WriteMode | None = None, mutations: frozenset[str] = frozenset(),
            metadata_version: int = 22, noop_ms: int = 500,
            snapshot_every: int = 0) -> KRaftCluster:
    """A started 3-controller cluster with registered, unfenced brokers."""
    config = ClusterConfig(
        seed=seed, brokers=brokers,
        controller=ControllerConfig(max_records_per_batch=batch, write_mode=mode,
                                    bootstrap_metadata_version=metadata_version,
                                    noop_interval_ms=noop_ms,
                                    snapshot_every_records=snapshot_every),
        raft=RaftConfig(fetch_max_records=fetch), mutations=mutations)
    c = KRaftCluster(config)
    c.start()
    assert c.sim.violation is None
    return c
