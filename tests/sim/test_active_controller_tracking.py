"""The active controller a cluster reports is, after every event, the one a scan finds.

The cluster finds it again only when a controller says its activation changed (it
claimed or renounced an epoch, failed, or stopped) or a controller process started;
these tests step through crashes, restarts, graceful shutdowns, pauses, partitions
and a fatal fault, and compare with a scan of every controller after each event.
"""

from __future__ import annotations

import msgspec

from controller import QuorumController
from controller.operations.base import Generated, OperationContext
from metadata.schema import RemoveTopicRecord
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_faults

FAULTS = parse_faults(["crash:leader@3000;restart:3000@4500;restart:3001@4500;"
                       "restart:3002@4500;shutdown:leader@6000;restart:3000@7000;"
                       "restart:3001@7000;restart:3002@7000;pause:leader@9000+2500;"
                       "partition:3000|3001,3002,0,1@13000;heal@15000"])


def _scanned_active(cluster: KRaftCluster) -> QuorumController | None:
    """The running controller that claimed the newest epoch, by looking at every one."""
    best: QuorumController | None = None
    for node_id in cluster.config.controller_ids:
        controller = cluster.controller(node_id)
        if controller is None or controller.claimed_epoch is None or controller.fault is not None:
            continue
        if best is None or controller.claimed_epoch > (best.claimed_epoch or 0):
            best = controller
    return best


def _step_and_compare(cluster: KRaftCluster, until_ms: int) -> set[int]:
    """Run to ``until_ms`` one event at a time; the active controllers seen."""
    sim = cluster.sim
    seen: set[int] = set()
    while sim.queue.peek_time() is not None and sim.now <= until_ms and sim.step():
        active = cluster.active_controller()
        assert active is _scanned_active(cluster), sim.events
        if active is not None:
            seen.add(active.node_id)
    return seen


def test_the_active_controller_follows_crashes_shutdowns_pauses_and_partitions() -> None:
    seen: set[int] = set()
    for seed in range(2):
        cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=2,
                                             faults=FAULTS))
        seen |= _step_and_compare(cluster, 18_000)
        assert cluster.sim.violation is None
    assert len(seen) >= 2  # the faults moved the activation around


class _RemoveUnknownTopic(msgspec.Struct, frozen=True):
    """A buggy operation: its record cannot apply, so the active controller fails."""

    def describe(self) -> str:
        return "RemoveUnknownTopic"

    def generate(self, ctx: OperationContext) -> Generated:
        return Generated([RemoveTopicRecord("AAAAAAAAAAAAAAAAAAAABg")])


def test_a_fatal_fault_ends_the_activation_at_once() -> None:
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=1))
    assert cluster.start()
    active = cluster.active_controller()
    assert active is not None and active is _scanned_active(cluster)
    cluster.submit(_RemoveUnknownTopic())
    assert active.fault is not None
    assert cluster.active_controller() is None  # asked in the same event's aftermath
    assert _step_and_compare(cluster, cluster.sim.now + 5_000) - {active.node_id}
    assert cluster.active_controller() is not None
