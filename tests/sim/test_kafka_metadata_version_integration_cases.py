"""metadata.version across a running cluster, following Kafka's MetadataVersionIntegrationTest
(core/src/test/scala/integration/kafka/server/).

Kafka's ClusterTest starts a KRaft cluster (one controller, one broker by default) formatted
at a given metadata.version, reads the finalized levels back with describeFeatures (a
broker's answer, from its metadata cache) and upgrades with updateFeatures. Here a
:class:`~sim.cluster.KRaftCluster` of the same shape is bootstrapped at the version
(``ControllerConfig.bootstrap_metadata_version``); describeFeatures is the broker's published
image (its ``metadata_version``); updateFeatures is
:class:`~controller.operations.UpdateFeatures` with one upgrade.

testDefaultIsLatestVersion differs by design: Kafka's ClusterTest defaults to
``MetadataVersion.latestTesting()``; a fresh kraftsim cluster is at its LATEST_PRODUCTION
(4.0-IV0, metadata/versions.py), the level its experiments were calibrated at, below the
highest level it knows. The port checks kraftsim's default and that the latest known level
is reachable from it.

Not ported: none; each method (and each of testBasicMetadataVersionUpgrade's versions) is
here.
"""

from __future__ import annotations

import pytest

from controller import ControllerConfig
from controller.operations import FeatureUpdate, UpdateFeatures
from metadata.image import MetadataImage
from metadata.versions import (
    LATEST_PRODUCTION,
    LEVELS,
    METADATA_VERSION_FEATURE,
    SUPPORTED_FEATURES,
)
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 60_000


def _cluster(metadata_version: int | None = None) -> KRaftCluster:
    """Kafka's default ClusterTest shape: one controller, one broker, started."""
    controller = ControllerConfig() if metadata_version is None else \
        ControllerConfig(bootstrap_metadata_version=metadata_version)
    cluster = KRaftCluster(ClusterConfig(seed=5, brokers=1, controllers=1,
                                         controller=controller))
    assert cluster.start()
    return cluster


def _broker_image(cluster: KRaftCluster) -> MetadataImage:
    loader = cluster.loader(0)
    assert loader is not None and loader.published is not None
    return loader.published


def _finalized_metadata_version(cluster: KRaftCluster) -> int:
    """describeFeatures' finalized metadata.version (its min and max levels are the one
    level), as the broker answers it."""
    return _broker_image(cluster).metadata_version


def _upgrade(cluster: KRaftCluster, level: int) -> None:
    """updateFeatures(metadata.version -> level, UPGRADE), which must succeed."""
    while True:
        assert cluster.run_until_active(WAIT_MS) is not None
        handle = cluster.submit(UpdateFeatures((FeatureUpdate(METADATA_VERSION_FEATURE,
                                                              level),)))
        assert cluster.wait(handle, WAIT_MS)
        if handle.error is None or not handle.error.retriable:
            break
    assert handle.error is None, handle.error


@pytest.mark.parametrize("version", ["3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0"])
def test_basic_metadata_version_upgrade(version: str) -> None:
    """testBasicMetadataVersionUpgrade: the broker reports the bootstrapped version, then,
    after an upgrade to 3.5-IV1, the new one."""
    cluster = _cluster(LEVELS[version])
    assert cluster.run_until(lambda: _finalized_metadata_version(cluster) == LEVELS[version],
                             WAIT_MS)
    _upgrade(cluster, LEVELS["3.5-IV1"])
    assert cluster.run_until(
        lambda: _finalized_metadata_version(cluster) == LEVELS["3.5-IV1"], WAIT_MS)


def test_upgrade_same_version() -> None:
    """testUpgradeSameVersion: an upgrade to the version in force (3.3-IV0) succeeds and
    leaves it."""
    cluster = _cluster(LEVELS["3.3-IV0"])
    _upgrade(cluster, LEVELS["3.3-IV0"])
    assert cluster.run_until(cluster.idle, WAIT_MS)
    assert _finalized_metadata_version(cluster) == LEVELS["3.3-IV0"]


def test_default_is_latest_version() -> None:
    """testDefaultIsLatestVersion: a cluster formatted without a version is at kraftsim's
    default (LATEST_PRODUCTION; Kafka's test kit: latestTesting, see the module docs), and
    can upgrade to the latest level kraftsim knows."""
    cluster = _cluster()
    assert cluster.run_until(lambda: _finalized_metadata_version(cluster) == LATEST_PRODUCTION,
                             WAIT_MS)
    latest = SUPPORTED_FEATURES[METADATA_VERSION_FEATURE][1]
    _upgrade(cluster, latest)
    assert cluster.run_until(lambda: _finalized_metadata_version(cluster) == latest, WAIT_MS)
