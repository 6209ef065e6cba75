"""Hypothesis stateful tests: environment events as rules, the raft invariants as @invariant.

The mutation tests switch on a deliberately broken raft behaviour and require
the same state machine to find a violation.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from raft import RaftConfig
from raft.mutations import Mutation
from sim.counter import ReplicatedCounter
from sim.faults import Heal, Isolate, Partition
from sim.invariants import RaftInvariants
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import InvariantViolation, Simulation

NODES = st.integers(min_value=0, max_value=5)


class RaftWorld(RuleBasedStateMachine):
    """A 5-voter, 1-observer quorum driven by environment events."""

    mutations: frozenset[Mutation] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self.sim: Simulation
        self.raft_checks: RaftInvariants

    @initialize(seed=st.integers(min_value=0, max_value=2**16), pre_vote=st.booleans())
    def start(self, seed: int, pre_vote: bool) -> None:
        config = RaftSimConfig(seed=seed, voters=5, observers=1, duration_ms=10**9,
                               append_every_ms=10**9, snapshot_every=5,
                               raft=RaftConfig(pre_vote=pre_vote), mutations=self.mutations)
        self.sim, self.raft_checks = build_raft_sim(config)

    @property
    def nodes(self) -> list[int]:
        return sorted(self.sim.slots)

    @rule(ms=st.integers(min_value=1, max_value=2500))
    def tick(self, ms: int) -> None:
        self.sim.run_for(ms)

    @rule(events=st.integers(min_value=1, max_value=30))
    def deliver(self, events: int) -> None:
        for _ in range(events):
            self.sim.step()

    @rule()
    def drop(self) -> None:
        self.sim.drop_next_delivery()

    @rule(count=st.integers(min_value=1, max_value=5))
    def append(self, count: int) -> None:
        leader = self.sim.leader_slot()
        if leader is None:
            return
        for app in leader.apps:
            if isinstance(app, ReplicatedCounter):
                self.sim.act("append", lambda a=app: a.increment(self.sim.now, count) and None)

    @rule(node=NODES)
    def crash(self, node: int) -> None:
        self.sim.crash(node)

    @rule()
    def crash_leader(self) -> None:
        leader = self.sim.leader_id()
        if leader is not None:
            self.sim.crash(leader)

    @rule()
    def isolate_leader(self) -> None:
        self.sim.apply_fault(Isolate(at_ms=self.sim.now, node="leader"))

    @rule(node=NODES)
    def restart(self, node: int) -> None:
        self.sim.restart(node)

    @rule(node=NODES)
    def shutdown(self, node: int) -> None:
        self.sim.shutdown(node)

    @rule(cut=st.integers(min_value=1, max_value=5), order=st.permutations(list(range(6))))
    def partition(self, cut: int, order: list[int]) -> None:
        groups = (tuple(sorted(order[:cut])), tuple(sorted(order[cut:])))
        self.sim.apply_fault(Partition(at_ms=self.sim.now, groups=groups))

    @rule()
    def heal(self) -> None:
        self.sim.apply_fault(Heal(at_ms=self.sim.now))

    @precondition(lambda self: hasattr(self, "sim"))
    @invariant()
    def raft_invariants_hold(self) -> None:
        if self.sim.violation is not None:
            raise self.sim.violation
        try:
            self.raft_checks.check(self.sim, list(self.sim.slots.values()))
        except InvariantViolation:
            raise


RaftWorld.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None,
                                        suppress_health_check=[HealthCheck.too_slow])
TestRaftWorld = RaftWorld.TestCase


@pytest.mark.slow
@pytest.mark.parametrize("mutation", list(Mutation))
def test_each_injected_raft_bug_is_caught(mutation: Mutation) -> None:
    class Broken(RaftWorld):
        mutations = frozenset({mutation})

    with pytest.raises((InvariantViolation, Flaky)) as caught:
        run_state_machine_as_test(
            Broken, settings=settings(max_examples=2000, stateful_step_count=25, deadline=None,
                                      suppress_health_check=list(HealthCheck), database=None,
                                      report_multiple_bugs=False,
                                      phases=[Phase.generate]))
    print(f"{mutation.value}: {caught.value}")
