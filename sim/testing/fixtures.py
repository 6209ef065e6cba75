"""pytest fixtures for kraftsim: a started cluster for each test.

Loaded automatically when kraftsim is installed (the ``pytest11`` entry point
``kraftsim``; turn it off with ``-p no:kraftsim``), or by hand with
``pytest_plugins = ["sim.testing.fixtures"]`` in a ``conftest.py``.

``kraft_cluster`` is a started :class:`~sim.cluster.KRaftCluster` (a leader
elected, the brokers registered and unfenced); override
``kraft_cluster_config`` to choose its size, settings, faults or mutations.
After the test, the fixture fails it if an invariant was violated on the way,
so that a test need not check. This module needs pytest only, not Hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sim.cluster import ClusterConfig, KRaftCluster


@pytest.fixture
def kraft_cluster_config() -> ClusterConfig:
    """The configuration ``kraft_cluster`` starts: 3 controllers, 3 brokers, seed 0."""
    from sim.cluster import ClusterConfig

    return ClusterConfig(seed=0, controllers=3, brokers=3)


@pytest.fixture
def kraft_cluster(kraft_cluster_config: ClusterConfig) -> Iterator[KRaftCluster]:
    """A started cluster; the test fails afterwards if any invariant was violated."""
    from sim.cluster import KRaftCluster

    cluster = KRaftCluster(kraft_cluster_config)
    cluster.start()
    if cluster.active_controller() is None:
        pytest.fail(f"the cluster did not elect a leader within 60 s of simulated time "
                    f"(seed {kraft_cluster_config.seed})")
    yield cluster
    violation = cluster.sim.violation
    if violation is not None:
        pytest.fail(f"invariant violated during the test at {cluster.sim.now} ms: {violation}",
                    pytrace=False)
