"""Brokers, producers and faults as Hypothesis rules, with the broker invariants online.

Three controllers and three brokers with heartbeats; one topic of two
partitions, RF 3, min.insync.replicas 2, clean election. Idempotent acks=all
producers lose a share of their answers (so they retry), brokers crash,
restart, get isolated or shut down in a controlled way. Every invariant of
``sim/invariants/brokers.py`` (and the raft and transaction ones) is checked
after every event.

The mutation tests switch on one deliberately broken broker-layer behaviour
and require this machine to catch it and shrink the failing sequence.
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

from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault
from sim.world import InvariantViolation

BROKERS = [0, 1, 2]


class BrokerWorld(RuleBasedStateMachine):
    """See the module docs."""

    mutations: ClassVar[frozenset[str]] = frozenset()
    failing_steps: ClassVar[int | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.cluster: KRaftCluster
        self.producers: list[Producer] = []
        self.steps = 0

    @initialize(seed=st.integers(min_value=0, max_value=7))
    def start(self, seed: int) -> None:
        self.cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=3,
                                                  mutations=self.mutations))
        c = self.cluster
        c.start()
        assert c.wait(c.submit(CreateTopics((NewTopic("t", 2, 3),))))
        assert c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, "t", (ConfigChange("min.insync.replicas", "2"),))))
        c.sim.run_for(500)
        self.producers = [Producer(c, f"p{p}", "t", p, acks=-1, idempotent=True,
                                   response_loss=0.3) for p in (0, 1)]

    def _step(self) -> None:
        self.steps += 1
        if self.cluster.sim.violation is not None:
            self.failing_steps = self.steps
            type(self).failing_steps = self.steps
            raise self.cluster.sim.violation

    @rule(which=st.integers(0, 1), count=st.integers(1, 20))
    def produce(self, which: int, count: int) -> None:
        self.producers[which].send(count)
        self._step()

    @rule(broker=st.sampled_from(BROKERS),
          fault=st.sampled_from(["crash", "restart", "isolate", "shutdown"]))
    def fault(self, broker: int, fault: str) -> None:
        self.cluster.sim.apply_fault(parse_fault(f"{fault}:{broker}@{self.cluster.sim.now}"))
        self._step()

    @rule()
    def crash_a_leader(self) -> None:
        leader = self.cluster.partition_leader("t", 0)
        if leader is not None:
            self.cluster.sim.crash(leader)
        self._step()

    @rule()
    def heal(self) -> None:
        self.cluster.sim.apply_fault(parse_fault(f"heal@{self.cluster.sim.now}"))
        self._step()

    @rule(ms=st.sampled_from([50, 1_000, 5_000, 12_000]))
    def run(self, ms: int) -> None:
        self.cluster.sim.run_for(ms)
        self._step()

    @invariant()
    def no_violation(self) -> None:
        violation = self.cluster.sim.violation if hasattr(self, "cluster") else None
        if violation is not None:
            raise violation


def _run(mutations: frozenset[str], examples: int, steps: int) -> None:
    machine = type("Mutated", (BrokerWorld,), {"mutations": mutations})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
        suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False))


def test_brokers_hold_their_invariants_under_faults() -> None:
    _run(frozenset(), examples=4, steps=25)


@pytest.mark.slow
@pytest.mark.parametrize("mutation", ["hw-ignores-isr", "fence-keeps-leader",
                                      "sequence-check-off"])
def test_an_injected_broker_bug_is_caught_and_shrunk(mutation: str) -> None:
    with pytest.raises(InvariantViolation):
        _run(frozenset({mutation}), examples=60, steps=30)
    machine_steps = BrokerWorld.failing_steps
    assert machine_steps is None or machine_steps <= 30
