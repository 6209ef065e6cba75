"""A cluster started from a snapshot at offset 0 keeps its content."""

from __future__ import annotations

from controller import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from metadata.schema import FeatureLevelRecord, PartitionRecord, TopicRecord
from raft import Snapshot, SnapshotId
from sim.cluster import ClusterConfig, KRaftCluster

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def test_a_cluster_started_from_a_snapshot_at_offset_zero_keeps_its_content() -> None:
    bootstrap = Snapshot(SnapshotId(0, 0), (
        FeatureLevelRecord("metadata.version", 22),
        TopicRecord("from-snapshot", TOPIC_ID),
        PartitionRecord(0, TOPIC_ID, (3000,), (3000,), leader=3000, leader_epoch=0,
                        partition_epoch=0),
    ))
    c = KRaftCluster(ClusterConfig(seed=5, brokers=2,
                                   controller=ControllerConfig(max_records_per_batch=10)),
                     initial_snapshot=bootstrap)
    c.start()
    handle = c.submit(CreateTopics((NewTopic("later", 3, 1),)))
    assert c.wait(handle, 10_000) and handle.error is None, handle.error
    assert c.run_until(c.idle, 10_000), c.sim.violation
    active = c.active_controller()
    assert active is not None
    assert active.activations and active.activations[0][1] == []  # no bootstrap written
    for node in c.config.controller_ids:
        controller = c.controller(node)
        assert controller is not None
        image = controller.committed_image()
        assert image.topic("from-snapshot") is not None and image.topic("later") is not None
        assert image.metadata_version == 22
    for node in c.config.broker_ids:
        loader = c.loader(node)
        assert loader is not None and loader.published is not None
        assert loader.published.topic("from-snapshot") is not None
        assert loader.published.topic("later") is not None
