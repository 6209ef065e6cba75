"""KRaftCluster.lagging: the node that keeps a cluster from having caught up stays behind
until an event touches it (what the failover experiment's recovery probe relies on)."""

from __future__ import annotations

from collections.abc import Sequence

from controller import QuorumController
from controller.operations import CreateTopics, NewTopic
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import Crash, Restart
from sim.world import Monitor, NodeSlot, Simulation


class _Watch(Monitor):
    """After every event: a node found lagging before, untouched since, still lags."""

    def __init__(self) -> None:
        self.cluster: KRaftCluster | None = None
        self.last: tuple[QuorumController, int] | None = None
        self.kept = 0  # events that left a lagging node untouched
        self.lagged = 0  # events after which a node other than the active one lagged

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        cluster = self.cluster
        active = cluster.active_controller() if cluster is not None else None
        if cluster is None or active is None:
            self.last = None
            return
        node = cluster.lagging(active)
        assert (node is None) == cluster.caught_up(active)
        # node_lags agrees with lagging, node by node: the first node it names is the
        # first lagging one in the cluster's order (never the active controller)
        lags = [n for n in sim.slots if cluster.node_lags(active, n)]
        if node is not None and node != active.node_id:
            assert lags[0] == node
        elif node is None:
            assert lags == []
        if self.last is not None and self.last[0] is active \
                and all(slot.node_id != self.last[1] for slot in touched):
            assert node is not None, f"node {self.last[1]} caught up untouched"
            self.kept += 1
        self.last = None if node is None or node == active.node_id else (active, node)
        self.lagged += self.last is not None


def test_a_lagging_node_lags_until_an_event_touches_it() -> None:
    watch = _Watch()
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=2),
                           extra_monitors=[watch])
    watch.cluster = cluster
    assert cluster.start()
    for i in range(3):
        handle = cluster.submit(CreateTopics((NewTopic(f"t{i}", 30, 2),)))
        assert cluster.wait(handle)
    active = cluster.active_controller()
    assert active is not None
    cluster.sim.apply_fault(Crash(at_ms=cluster.sim.now, node=active.node_id))
    cluster.run_until(lambda: cluster.active_controller() is not None, 30_000)
    cluster.sim.apply_fault(Restart(at_ms=cluster.sim.now, node=active.node_id))
    assert cluster.run_until(cluster.idle, 30_000)
    assert cluster.sim.violation is None
    assert watch.lagged > 0 and watch.kept > 0  # the property was put to the test
    final = cluster.active_controller()
    assert final is not None and cluster.lagging(final) is None
