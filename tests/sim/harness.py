"""A small driver for raft scenarios: start a quorum, commit, fault, and check progress."""

from __future__ import annotations

import random

from controller.operations import RegisterBroker
from raft.mutations import Mutation
from sim.cluster import ClusterConfig, KRaftCluster
from sim.counter import ReplicatedCounter
from sim.invariants import RaftInvariants
from sim.network import LinkConfig
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import NodeSlot, Simulation


class RaftScenario:
    """A quorum of ``voters`` (ids 0..) and ``observers`` with a seeded network."""

    def __init__(self, seed: int, voters: int, observers: int = 0, *,
                 snapshot_every: int = 20,
                 mutations: frozenset[Mutation] = frozenset()) -> None:
        rng = random.Random(f"scenario/{seed}")
        network = LinkConfig(latency_ms=rng.randint(0, 3), jitter_ms=rng.randint(0, 10))
        config = RaftSimConfig(seed=seed, voters=voters, observers=observers,
                               duration_ms=10**9, append_every_ms=10**9,
                               snapshot_every=snapshot_every, network=network,
                               mutations=mutations)
        self.sim: Simulation
        self.invariants: RaftInvariants
        self.sim, self.invariants = build_raft_sim(config)
        self.seed = seed

    def ok(self) -> None:
        assert self.sim.violation is None, (self.seed, str(self.sim.violation))

    def leader(self) -> NodeSlot | None:
        slot = self.sim.leader_slot()
        if slot is None or slot.raft is None or slot.raft.high_watermark is None:
            return None
        return slot

    def wait_for_leader(self, timeout_ms: int = 30_000, *, other_than: int | None = None,
                        min_epoch: int = 0, among: tuple[int, ...] | None = None) -> NodeSlot:
        def found() -> bool:
            slot = self.leader()
            return (slot is not None and slot.node_id != other_than and slot.raft is not None
                    and slot.raft.epoch >= min_epoch
                    and (among is None or slot.node_id in among))

        assert self.sim.run_until_true(found, timeout_ms), (self.seed, "no leader elected")
        self.ok()
        slot = self.leader()
        assert slot is not None
        return slot

    def leader_hw(self) -> int:
        slot = self.leader()
        assert slot is not None and slot.raft is not None
        return slot.raft.high_watermark or 0

    def commit(self, count: int = 5, timeout_ms: int = 30_000,
               nodes: list[int] | None = None) -> int:
        """Append ``count`` values one by one on the leader; wait until they commit."""
        slot = self.wait_for_leader(timeout_ms)
        self.sim.run_for(50)  # the leader claims its epoch once it has replayed
        for _ in range(count):
            slot = self.wait_for_leader(timeout_ms)
            counter = next(a for a in slot.apps if isinstance(a, ReplicatedCounter))
            self.sim.act("append", lambda c=counter: c.increment(self.sim.now) and None)
            self.sim.run_for(5)
        assert slot.raft is not None
        target = slot.raft.log.end_offset
        watch = nodes if nodes is not None else [slot.node_id]

        def committed() -> bool:
            return all(self.sim.slots[n].raft is not None
                       and (self.sim.slots[n].raft.high_watermark or 0) >= target  # type: ignore[union-attr]
                       for n in watch)

        assert self.sim.run_until_true(committed, timeout_ms), (self.seed, "no progress")
        self.ok()
        return target

    def assert_progress(self) -> None:
        """The scenario ends with the high watermark advancing on every running node."""
        before = self.leader_hw() if self.leader() else 0
        running = [n for n, s in self.sim.slots.items() if s.running]
        target = self.commit(5, nodes=running)
        assert target > before
        self.ok()


def racked_cluster(seed: int, brokers: int = 3) -> KRaftCluster:
    """Three controllers and ``brokers`` brokers, each broker's registration amended with
    its rack ``rack/<id>`` (as Kafka's broker.rack; the same incarnation keeps its epoch
    and state), then every broker caught up (Kafka's ensureConsistentKRaftMetadata)."""
    cluster = KRaftCluster(ClusterConfig(seed=seed, brokers=brokers))
    assert cluster.start()
    active = cluster.active_controller()
    assert active is not None
    for broker in cluster.config.broker_ids:
        incarnation = active.image.brokers[broker].incarnation_id
        handle = cluster.submit(RegisterBroker(broker, rack=f"rack/{broker}",
                                               incarnation_id=incarnation))
        assert cluster.wait(handle) and handle.error is None
    assert cluster.run_until(cluster.idle, 60_000)
    return cluster
