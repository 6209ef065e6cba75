"""Cluster start-up: True once a controller is active and every broker unfenced, False
at the deadline, never a hang."""

from __future__ import annotations

import pytest

from sim.brokers import BrokerSettings
from sim.cluster import ClusterConfig, KRaftCluster
from sim.startup import start_cluster


def _cluster(lifecycle: bool = False) -> KRaftCluster:
    return KRaftCluster(ClusterConfig(seed=1, controllers=3, brokers=3,
                                      brokers_settings=BrokerSettings(lifecycle=lifecycle)))


@pytest.mark.parametrize("quorum_first", [False, True])
def test_a_start_registers_and_unfences_every_broker(quorum_first: bool) -> None:
    cluster = _cluster()
    assert start_cluster(cluster, quorum_first=quorum_first)
    assert cluster.brokers_unfenced() and cluster.active_controller() is not None
    assert cluster.sim.now < 5_000


def test_without_registration_only_the_nodes_start_and_no_time_passes() -> None:
    cluster = _cluster()
    assert start_cluster(cluster, register_brokers=False) is False
    assert cluster.sim.now == 0 and not cluster.brokers_unfenced()


@pytest.mark.timeout(120)
def test_a_quorum_first_start_gives_up_at_its_deadline() -> None:
    """The quorum is active (about 1,050 ms) but the brokers' registration is not done
    by the deadline: start-up says so at the deadline, without resubmitting the
    registrations over and over at that same millisecond (one event each)."""
    cluster = _cluster()
    assert start_cluster(cluster, quorum_first=True, timeout_ms=1080) is False
    assert cluster.sim.now == 1080 and not cluster.brokers_unfenced()
    assert cluster.sim.trace.lines < 1_000
