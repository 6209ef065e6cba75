"""A Hypothesis state machine of a raft quorum alone (no controllers, no brokers).

:class:`RaftMachine` runs 5 voters and 1 observer hosting the replicated
counter of :mod:`sim.counter`; its rules are environment events (time,
single deliveries, drops, crashes, restarts, shutdowns, partitions) and
appends on the leader; after every step every raft invariant of
:mod:`sim.invariants` is checked. Subclass it as :class:`ClusterMachine`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from raft import RaftConfig
from raft.mutations import Mutation
from sim.counter import ReplicatedCounter
from sim.faults import Heal, Isolate, Partition
from sim.invariants import RaftInvariants
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import Simulation

NODES = st.integers(min_value=0, max_value=5)
"""A node of the quorum: voters 0-4, observer 5."""


class RaftMachine(RuleBasedStateMachine):
    """A 5-voter, 1-observer quorum driven by environment events.

    ``mutations`` plants deliberate raft bugs (:class:`raft.mutations.Mutation`).
    """

    mutations: ClassVar[frozenset[Mutation]] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self.sim: Simulation
        self.raft_checks: RaftInvariants

    @initialize(seed=st.integers(min_value=0, max_value=2**16), pre_vote=st.booleans())
    def start(self, seed: int, pre_vote: bool) -> None:
        """Build the quorum, with or without pre-vote."""
        config = RaftSimConfig(seed=seed, voters=5, observers=1, duration_ms=10**9,
                               append_every_ms=10**9, snapshot_every=5,
                               raft=RaftConfig(pre_vote=pre_vote), mutations=self.mutations)
        self.sim, self.raft_checks = build_raft_sim(config)

    @property
    def nodes(self) -> list[int]:
        """Every node id."""
        return sorted(self.sim.slots)

    @rule(ms=st.integers(min_value=1, max_value=2500))
    def tick(self, ms: int) -> None:
        """Let simulated time pass."""
        self.sim.run_for(ms)

    @rule(events=st.integers(min_value=1, max_value=30))
    def deliver(self, events: int) -> None:
        """Process a few events one by one."""
        for _ in range(events):
            self.sim.step()

    @rule()
    def drop(self) -> None:
        """Lose the next message in flight."""
        self.sim.drop_next_delivery()

    @rule(count=st.integers(min_value=1, max_value=5))
    def append(self, count: int) -> None:
        """Increment the counter on the leader, if there is one."""
        leader = self.sim.leader_slot()
        if leader is None:
            return
        for app in leader.apps:
            if isinstance(app, ReplicatedCounter):
                self.sim.act("append", self._incrementer(app, count))

    def _incrementer(self, counter: ReplicatedCounter, count: int) -> Callable[[], None]:
        def increment() -> None:
            counter.increment(self.sim.now, count)

        return increment

    @rule(node=NODES)
    def crash(self, node: int) -> None:
        """Crash a node."""
        self.sim.crash(node)

    @rule()
    def crash_leader(self) -> None:
        """Crash the leader, if there is one."""
        leader = self.sim.leader_id()
        if leader is not None:
            self.sim.crash(leader)

    @rule()
    def isolate_leader(self) -> None:
        """Cut the leader off."""
        self.sim.apply_fault(Isolate(at_ms=self.sim.now, node="leader"))

    @rule(node=NODES)
    def restart(self, node: int) -> None:
        """Restart a crashed or stopped node."""
        self.sim.restart(node)

    @rule(node=NODES)
    def shutdown(self, node: int) -> None:
        """Shut a node down gracefully."""
        self.sim.shutdown(node)

    @rule(cut=st.integers(min_value=1, max_value=5), order=st.permutations(list(range(6))))
    def partition(self, cut: int, order: list[int]) -> None:
        """Split the nodes in two groups."""
        groups = (tuple(sorted(order[:cut])), tuple(sorted(order[cut:])))
        self.sim.apply_fault(Partition(at_ms=self.sim.now, groups=groups))

    @rule()
    def heal(self) -> None:
        """Restore every link."""
        self.sim.apply_fault(Heal(at_ms=self.sim.now))

    @precondition(lambda self: hasattr(self, "sim"))
    @invariant()
    def raft_invariants_hold(self) -> None:
        """Every raft invariant holds (online, and once more over every node now)."""
        if self.sim.violation is not None:
            raise self.sim.violation
        self.raft_checks.check(self.sim, list(self.sim.slots.values()))


RaftMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
