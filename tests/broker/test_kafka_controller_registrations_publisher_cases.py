"""Controller registrations as a publisher of a metadata loader sees them, following the
cases of Kafka's ControllerRegistrationsPublisherTest
(metadata/src/test/java/org/apache/kafka/image/publisher/).

Kafka's ControllerRegistrationsPublisher keeps the controllers of the last image its loader
published (from a snapshot, or from log deltas that changed the cluster). kraftsim's
publishers are callables subscribed to a :class:`~broker.MetadataLoader`, handed each
published image with its manifest; the one here keeps ``image.controllers`` (the
registrations read from RegisterControllerRecords, which kraftsim's controllers write from
metadata.version 3.7-IV0 as Kafka's do; here they are made by hand, as Kafka's test makes
them).
Kafka's test image is metadata.version 3.6-IV2 with controllers 0 (ready for a ZooKeeper
migration), 1 and 2 (not ready), as its RecordTestUtils.createTestControllerRegistration
builds them: incarnation ids, a CONTROLLER and a CONTROLLER_SSL listener, metadata.version
supported from 3.0-IV1 to 3.6-IV1.

Not ported:

- testName: kraftsim's publishers are callables without names.
"""

from __future__ import annotations

import pytest

from broker import Manifest, MetadataImage, MetadataLoader
from metadata.image import ControllerRegistration
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    FeatureLevelRecord,
    MetadataRecord,
    RegisterControllerRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from raft import Batch, Snapshot, SnapshotId

PLAINTEXT, SSL = 0, 1
"""Kafka's SecurityProtocol ids."""


def _controller_registration(controller_id: int, zk_migration_ready: bool
                             ) -> RegisterControllerRecord:
    """Kafka's RecordTestUtils.createTestControllerRegistration."""
    return RegisterControllerRecord(
        controller_id=controller_id,
        incarnation_id=f"test-incarnation-{controller_id}",
        zk_migration_ready=zk_migration_ready,
        end_points=(BrokerEndpoint("CONTROLLER", "localhost", 8000 + controller_id, PLAINTEXT),
                    BrokerEndpoint("CONTROLLER_SSL", "localhost", 9000 + controller_id, SSL)),
        features=(BrokerFeature(METADATA_VERSION_FEATURE, MINIMUM_KRAFT, LEVELS["3.6-IV1"]),))


TEST_RECORDS: tuple[MetadataRecord, ...] = (
    FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.6-IV2"]),
    _controller_registration(0, True),
    _controller_registration(1, False),
    _controller_registration(2, False),
)
"""Kafka's TEST_DELTA."""


class ControllerRegistrationsPublisher:
    """Keeps the controller registrations of each image it is handed."""

    def __init__(self) -> None:
        self.controllers: dict[int, ControllerRegistration] = {}

    def __call__(self, image: MetadataImage, manifest: Manifest) -> None:
        self.controllers = dict(image.controllers.items())


def test_initial_controllers() -> None:
    """testInitialControllers: a publisher of a loader that has published nothing knows no
    controller; neither does the empty image."""
    publisher = ControllerRegistrationsPublisher()
    MetadataLoader(1).subscribe(publisher)
    assert publisher.controllers == {}
    assert dict(MetadataImage.EMPTY.controllers.items()) == {}


@pytest.mark.parametrize("from_snapshot", [False, True])
def test_on_metadata_update(from_snapshot: bool) -> None:
    """testOnMetadataUpdate: from a snapshot or from a log delta, the publisher holds
    controllers 0, 1 and 2, only 0 ready for a ZooKeeper migration, each as registered."""
    loader = MetadataLoader(1)
    publisher = ControllerRegistrationsPublisher()
    loader.subscribe(publisher)
    loader.handle_commit((), 101)  # the high watermark: the loader publishes once there
    if from_snapshot:
        loader.handle_load_snapshot(Snapshot(SnapshotId(101, 10), TEST_RECORDS))
    else:
        loader.handle_commit((Batch(97, 10, TEST_RECORDS),), 101)
    assert loader.published_offset == 100
    assert set(publisher.controllers) == {0, 1, 2}
    assert publisher.controllers[0].zk_migration_ready
    assert not publisher.controllers[1].zk_migration_ready
    assert not publisher.controllers[2].zk_migration_ready
    second = publisher.controllers[2]
    assert (second.incarnation_id, [(e.name, e.port) for e in second.endpoints],
            second.features) == ("test-incarnation-2", [("CONTROLLER", 8002),
                                                        ("CONTROLLER_SSL", 9002)],
                                 (BrokerFeature(METADATA_VERSION_FEATURE, 1, 13),))
