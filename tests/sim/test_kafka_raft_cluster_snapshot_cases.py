"""Metadata snapshots in a running cluster, following Kafka's RaftClusterSnapshotTest
(core/src/test/scala/integration/kafka/server/).

Kafka's test starts three controllers and three brokers with
``metadata.log.max.record.bytes.between.snapshots`` at 10 bytes (a snapshot after nearly
every record) and ``metadata.max.idle.interval.ms`` at 0 (no NoOpRecords), waits until every
node's raft log has a snapshot, and reads each one whole: not empty, every batch either
control records or data records. Here the controllers snapshot after every committed record
(``ControllerConfig.snapshot_every_records=1``, kraftsim's count of records standing for
Kafka's bytes) with no NoOps (``noop_interval_ms=0``); a snapshot is the image's records
(:mod:`metadata.snapshot`), read whole by rebuilding the image from them, which must equal the
controller's committed image at the snapshot's last offset, and holds no marker (control)
record.

kraftsim's brokers make no snapshot of their own (their loader only publishes images; see
docs/architecture.md): a broker's raft log holds a snapshot once it fetched one from the
leader, so the port checks the brokers through that path: a broker whose disk is wiped
comes back from the leader's snapshot (FetchSnapshot) and publishes the same image as the
controllers.

Not ported: none; the one method of the class is here (with the brokers' half as above).
"""

from __future__ import annotations

from controller import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from metadata.schema import is_marker
from metadata.snapshot import image_from_records
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 60_000
NODES = 3


def test_snapshots_generated() -> None:
    """testSnapshotsGenerated: every controller's log gets a snapshot, not empty, holding
    no control record, whose records rebuild the controller's committed image; a broker
    started from an empty disk installs the leader's snapshot and catches up."""
    config = ClusterConfig(seed=3, brokers=NODES, controllers=NODES,
                           controller=ControllerConfig(snapshot_every_records=1,
                                                       noop_interval_ms=0))
    cluster = KRaftCluster(config)
    assert cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("foo", 3, 3),)))
    assert cluster.wait(handle, WAIT_MS) and handle.error is None

    def controllers_snapshotted() -> bool:
        return all((slot := cluster.sim.slots[c]).raft is not None
                   and slot.raft.log.snapshot is not None for c in config.controller_ids)
    assert cluster.run_until(controllers_snapshotted, WAIT_MS)
    assert cluster.run_until(cluster.idle, WAIT_MS)
    assert len(cluster.sim.slots) == 2 * NODES

    for node in config.controller_ids:
        raft = cluster.sim.slots[node].raft
        controller = cluster.controller(node)
        assert raft is not None and controller is not None
        snapshot = raft.log.snapshot
        assert snapshot is not None and snapshot.records
        assert not any(is_marker(record) for record in snapshot.records)
        last = snapshot.snapshot_id.last_contained_offset
        rebuilt = image_from_records(snapshot.records, last, snapshot.snapshot_id.epoch)
        assert rebuilt.topic("foo") is not None
        assert rebuilt.same_content(controller.offsets.point_at(last).image)

    # a broker's half: a wiped broker comes back from the leader's snapshot
    cluster.sim.wipe(0)
    cluster.sim.restart(0)
    assert cluster.run_until(lambda: (raft := cluster.sim.slots[0].raft) is not None
                             and raft.log.snapshot is not None, WAIT_MS)
    assert cluster.run_until(cluster.brokers_unfenced, WAIT_MS)
    assert cluster.run_until(cluster.idle, WAIT_MS)
    active = cluster.active_controller()
    loader = cluster.loader(0)
    assert active is not None and loader is not None and loader.published is not None
    assert loader.published.same_content(active.committed_image())
    assert cluster.sim.violation is None
