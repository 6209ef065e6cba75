"""A broker's view of the finalized features, following Kafka's ``FinalizedFeatureCacheTest``
(core/src/test/scala/unit/kafka/server/).

Kafka's test drives the ZooKeeper-mode ``ZkMetadataCache``: the broker itself installs the
features it read from ZooKeeper with their ZooKeeper epoch, refusing a stale epoch or a level
outside its supported range. In KRaft (all kraftsim models) a broker's finalized features
are those of the last image its loader published (Kafka's ``KRaftMetadataCache.features``):
the controller refuses unsupported levels before writing them (UpdateFeatures and
registration, ``test_kafka_feature_cases.py``), and the image's offset stands for the epoch.

Ported, in KRaft terms: testEmpty (a broker that has published no image knows no features)
and testUpdateOrThrowSuccess (a committed feature level is in every broker's published
image).

Not ported (ZooKeeper mode, not modelled): testUpdateOrThrowFailedDueToInvalidEpoch (KRaft
has no feature epoch a broker could see go back: its images follow the log's offsets),
testUpdateOrThrowFailedDueToInvalidFeatures (a KRaft broker does not check finalized levels
itself; the controller refuses a level a registered broker does not support) and testClear
(a KRaft broker never clears its features).
"""

from __future__ import annotations

from broker.loader import MetadataLoader
from controller.operations.cluster import FeatureUpdate, UpdateFeatures
from tests.controller.conftest import cluster


def test_empty_then_updated() -> None:
    """FinalizedFeatureCacheTest.testEmpty and testUpdateOrThrowSuccess: before its first
    image a broker has no features; after an UpdateFeatures commits, every broker's
    published image holds the new level, with metadata.version."""
    assert MetadataLoader(0).published is None
    c = cluster(seed=4)
    assert c.wait(c.submit(UpdateFeatures((FeatureUpdate("transaction.version", 2),))))
    assert c.run_until(c.idle, 10_000)
    for broker in c.config.broker_ids:
        loader = c.loader(broker)
        assert loader is not None and loader.published is not None
        assert loader.published.features["transaction.version"] == 2
        assert loader.published.metadata_version == 22
