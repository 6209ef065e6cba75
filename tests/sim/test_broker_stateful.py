"""Brokers, producers and faults as Hypothesis rules, with the broker invariants online.

Three controllers and three brokers with heartbeats; one topic of two
partitions, RF 3, min.insync.replicas 2, clean election until a rule allows unclean
election (then no longer checked for lost records); one run is formatted at 4.1-IV0, with
eligible leader replicas (KIP-966) on. Two idempotent acks=all
producers (one per partition) lose a share of their answers (so they retry); a
third, plain acks=all producer writes to partition 0 without losing answers (an
idempotent producer refuses to write past a lost batch, OUT_OF_ORDER_SEQUENCE_NUMBER,
so only a plain one writes new records where a lost acknowledged batch was).
Brokers crash, restart, get isolated or shut down in a controlled way; partitions are
reassigned (replicas removed, added back and reordered) and reassignments cancelled. Every
invariant of ``sim/invariants/brokers.py`` (and the raft and transaction ones)
is checked after every event.

The mutation tests switch on one deliberately broken broker-layer behaviour
and require the smaller machine :class:`BrokerCore` (produce, crash a partition
leader, let time pass) to catch it and shrink the failing sequence to at most
15 steps.
"""

from __future__ import annotations

from typing import ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from controller import ControllerConfig
from controller.operations import (
    CreateTopics,
    ElectLeaders,
    IncrementalAlterConfigs,
    NewTopic,
    TopicPartitions,
)
from controller.operations.configs import ConfigChange
from controller.operations.reassignments import (
    AlterPartitionReassignments,
    ReassignablePartition,
    ReassignableTopic,
)
from metadata.delta import TOPIC_RESOURCE
from metadata.versions import LEVELS
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault
from sim.testing import SEARCH_PHASES
from sim.world import InvariantViolation

BROKERS = [0, 1, 2]


class BrokerCore(RuleBasedStateMachine):
    """Producers, partition-leader crashes and time: the rules the mutation searches use."""

    mutations: ClassVar[frozenset[str]] = frozenset()
    failing_steps: ClassVar[int | None] = None
    balance_interval_ms: ClassVar[int] = ControllerConfig().leader_imbalance_check_interval_ms
    unclean_interval_ms: ClassVar[int] = ControllerConfig().unclean_leader_election_interval_ms
    metadata_version: ClassVar[int] = ControllerConfig().bootstrap_metadata_version
    """The bootstrap's metadata.version (from 4.1-IV0 eligible leader replicas are on)."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster: KRaftCluster
        self.producers: list[Producer] = []
        self.steps = 0

    @initialize(seed=st.integers(min_value=0, max_value=7))
    def start(self, seed: int) -> None:
        self.cluster = KRaftCluster(ClusterConfig(
            seed=seed, controllers=3, brokers=3, mutations=self.mutations,
            controller=ControllerConfig(
                leader_imbalance_check_interval_ms=self.balance_interval_ms,
                unclean_leader_election_interval_ms=self.unclean_interval_ms,
                bootstrap_metadata_version=self.metadata_version)))
        c = self.cluster
        c.start()
        assert c.wait(c.submit(CreateTopics((NewTopic("t", 2, 3),))))
        assert c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, "t", (ConfigChange("min.insync.replicas", "2"),))))
        c.sim.run_for(500)
        self.producers = [Producer(c, f"p{p}", "t", p, acks=-1, idempotent=True,
                                   response_loss=0.3) for p in (0, 1)]
        self.producers.append(Producer(c, "plain", "t", 0, acks=-1))

    def _step(self) -> None:
        self.steps += 1
        if self.cluster.sim.violation is not None:
            type(self).failing_steps = self.steps
            raise self.cluster.sim.violation

    @rule(which=st.integers(0, 2), count=st.integers(1, 20))
    def produce(self, which: int, count: int) -> None:
        self.producers[which].send(count)
        self._step()

    @rule()
    def crash_a_leader(self) -> None:
        leader = self.cluster.partition_leader("t", 0)
        if leader is not None:
            self.cluster.sim.crash(leader)
        self._step()

    @rule(count=st.integers(1, 3))
    def crash_leader_after_append(self, count: int) -> None:
        """The plain producer writes, and partition 0's leader crashes in the same instant:
        the window between a leader's append and its followers' next fetch, which random
        timing rarely hits."""
        self.producers[2].send(count)
        self.crash_a_leader()

    @rule(ms=st.sampled_from([50, 1_000, 5_000, 12_000]))
    def run(self, ms: int) -> None:
        self.cluster.sim.run_for(ms)
        self._step()

    @invariant()
    def no_violation(self) -> None:
        violation = self.cluster.sim.violation if hasattr(self, "cluster") else None
        if violation is not None:
            raise violation


class BrokerWorld(BrokerCore):
    """See the module docs: the core rules and every broker fault."""

    @rule(broker=st.sampled_from(BROKERS),
          fault=st.sampled_from(["crash", "restart", "isolate", "shutdown"]))
    def fault(self, broker: int, fault: str) -> None:
        self.cluster.sim.apply_fault(parse_fault(f"{fault}:{broker}@{self.cluster.sim.now}"))
        self._step()

    @rule()
    def heal(self) -> None:
        self.cluster.sim.apply_fault(parse_fault(f"heal@{self.cluster.sim.now}"))
        self._step()

    @rule(partition=st.sampled_from([0, 1, None]))
    def elect_preferred_leaders(self, partition: int | None) -> None:
        """A preferred leader election (clean: every acknowledged record stays), of one
        partition or of all, submitted while the faults go on."""
        wanted = None if partition is None else (TopicPartitions("t", (partition,)),)
        self.cluster.submit(ElectLeaders("PREFERRED", wanted))
        self._step()


    @rule(partition=st.sampled_from([0, 1]),
          replicas=st.none() | st.permutations(BROKERS).flatmap(
              lambda order: st.integers(1, 3).map(lambda n: tuple(order[:n]))))
    def reassign(self, partition: int, replicas: tuple[int, ...] | None) -> None:
        """Reassign a partition to one to three brokers in any order, or cancel its
        reassignment (None), while the faults go on: a replica added back fetches its log
        from scratch, a removed one drops it, and the reassignment completes only once
        every target replica is in sync."""
        self.cluster.submit(AlterPartitionReassignments(
            (ReassignableTopic("t", (ReassignablePartition(partition, replicas),)),)))
        self._step()

    @rule(enabled=st.booleans())
    def allow_unclean_election(self, enabled: bool) -> None:
        """Turn the topic's unclean.leader.election.enable on or off while the faults go
        on: a leaderless partition may then get an out-of-sync leader (its acknowledged
        records are no longer checked from then on)."""
        self.cluster.submit(IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange(
            "unclean.leader.election.enable", str(enabled).lower()),)))
        self._step()


def _run(machine: type[BrokerCore], examples: int, steps: int) -> None:
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
        database=None, suppress_health_check=list(HealthCheck), print_blob=False,
        report_multiple_bugs=False,
        # no explain phase: it traces every run after the first failure line by line
        # and replays the failing one many more times, to annotate a short sequence
        phases=SEARCH_PHASES))


def test_brokers_hold_their_invariants_under_faults() -> None:
    _run(BrokerWorld, examples=4, steps=25)


def test_brokers_hold_their_invariants_with_eligible_leader_replicas() -> None:
    """The same faults on a cluster formatted at 4.1-IV0, with eligible leader replicas on
    (KIP-966): a partition whose ISR empties elects from its ELR, and no acknowledged
    record is lost by it."""
    machine = type("WithElr", (BrokerWorld,), {"metadata_version": LEVELS["4.1-IV0"]})
    _run(machine, examples=4, steps=25)


def test_brokers_hold_their_invariants_while_leaders_rebalance() -> None:
    """The automatic preferred and unclean elections every 2 s (not 300 s) among the
    faults."""
    machine = type("Rebalancing", (BrokerWorld,), {"balance_interval_ms": 2_000,
                                                   "unclean_interval_ms": 2_000})
    _run(machine, examples=4, steps=25)


@pytest.mark.slow
@pytest.mark.parametrize("mutation", ["hw-ignores-isr", "fence-keeps-leader",
                                      "sequence-check-off"])
def test_an_injected_broker_bug_is_caught_and_shrunk(mutation: str) -> None:
    machine = type("Mutated", (BrokerCore,), {"mutations": frozenset({mutation}),
                                               "failing_steps": None})
    with pytest.raises(InvariantViolation) as caught:
        _run(machine, examples=100, steps=8)
    steps = machine.failing_steps
    print(f"{mutation}: caught as {caught.value.invariant} after {steps} steps")
    assert steps is not None and steps <= 15
