"""The failover experiment's clock (RecoveryProbe): offsets cut from logs, and the moments a
new leader, its first commit, availability and full recovery are reached after a fault."""

from __future__ import annotations

from collections.abc import Sequence

from controller import ControllerConfig
from controller.operations import CreateTopics, NewTopic
from experiments.recovery import RecoveryProbe
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault_target
from sim.world import Monitor, NodeSlot, Simulation


def _cluster(*after: Monitor) -> tuple[KRaftCluster, RecoveryProbe]:
    probe = RecoveryProbe()
    cluster = KRaftCluster(ClusterConfig(seed=13, controllers=3, brokers=2, controller=
                                         ControllerConfig(max_records_per_batch=10)), None,
                           [probe, *after])
    probe.attach(cluster)
    cluster.start()
    handle = cluster.submit(CreateTopics((NewTopic("t", 20, 2),)))
    assert cluster.wait(handle) and cluster.run_until(cluster.idle, 30_000)
    return cluster, probe


def test_offsets_cut_from_a_log_are_counted_and_a_new_log_is_not() -> None:
    cluster, probe = _cluster()
    slot = cluster.sim.slots[cluster.config.controller_ids[0]]
    log = slot.storage.log
    end = log.end_offset
    probe.check(cluster.sim, [slot])
    log.truncate_to(end - 3)  # (what a follower does to a divergent suffix)
    probe.check(cluster.sim, [slot])
    assert probe.truncated_offsets == 3
    probe.check(cluster.sim, [slot])  # counted once
    assert probe.truncated_offsets == 3
    cluster.sim.wipe(slot.node_id)  # a wiped disk is another log: nothing was cut
    probe.check(cluster.sim, [cluster.sim.slots[slot.node_id]])
    assert probe.truncated_offsets == 3


def test_a_crashed_leader_is_replaced_then_the_cluster_recovers_in_order() -> None:
    cluster, probe = _cluster()
    sim = cluster.sim
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    old_node, old_epoch = leader.node_id, leader.raft.epoch
    probe.arm(old_epoch, sim.now)
    assert probe.since_fault(probe.leader_at) is None
    sim.apply_fault(parse_fault_target("crash", str(old_node), sim.now))
    assert cluster.run_until(lambda: probe.available_at is not None, 30_000)
    moments = (probe.fault_at, probe.leader_at, probe.hw_at, probe.available_at)
    assert None not in moments and list(moments) == sorted(moments)  # type: ignore[type-var]
    active = cluster.active_controller()
    assert active is not None and (active.claimed_epoch or 0) > old_epoch
    assert not active.transaction_open
    sim.restart(old_node)
    assert cluster.run_until(lambda: probe.recovered_at is not None, 30_000)
    recovered, available, fault = probe.recovered_at, probe.available_at, probe.fault_at
    assert recovered is not None and available is not None and fault is not None
    assert recovered >= available
    assert probe.since_fault(recovered) == recovered - fault


class _FirstCaughtUp(Monitor):
    """After the probe, every event: the first moment, once the probe saw the cluster
    available, that every reachable node has caught up (asked of every node each time)."""

    def __init__(self) -> None:
        self.cluster: KRaftCluster | None = None
        self.probe: RecoveryProbe | None = None
        self.at: int | None = None

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        cluster, probe = self.cluster, self.probe
        if cluster is None or probe is None or probe.available_at is None or self.at is not None:
            return
        active = cluster.active_controller()
        if active is not None and not active.transaction_open and cluster.caught_up(active):
            self.at = sim.now


def test_recovery_is_the_first_moment_every_node_has_caught_up() -> None:
    """The probe asks only the node that lagged until it moves, and then that node first:
    the moment it names is still the first one at which no node lags."""
    first = _FirstCaughtUp()
    cluster, probe = _cluster(first)
    first.cluster, first.probe = cluster, probe
    sim = cluster.sim
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    for i in range(3):  # more for the crashed node to catch up on once back
        assert cluster.wait(cluster.submit(CreateTopics((NewTopic(f"u{i}", 20, 2),))))
    old_epoch = leader.raft.epoch
    probe.arm(old_epoch, sim.now)
    sim.apply_fault(parse_fault_target("crash", str(leader.node_id), sim.now))

    def new_leader() -> bool:
        active = cluster.active_controller()
        return active is not None and (active.claimed_epoch or 0) > old_epoch

    assert cluster.run_until(new_leader, 30_000)
    sim.restart(leader.node_id)  # back before the cluster is available: it lags a while
    assert cluster.run_until(lambda: probe.recovered_at is not None, 30_000)
    assert first.at is not None and probe.recovered_at == first.at
