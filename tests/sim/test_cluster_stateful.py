"""The system Hypothesis stateful test: operations and faults as rules, every invariant online.

Besides the online invariants, the machine checks that acknowledged means
durable: once a client is told "committed", the operation's batches stay in
the committed history and in the log of every node that has committed past
them, whatever faults follow.

The mutation tests switch on one deliberately broken behaviour of the controller or the
broker loader and require this same state machine to catch it and shrink the failing
sequence to at most 15 steps.
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
    precondition,
    rule,
    run_state_machine_as_test,
)

from controller import ControllerConfig
from controller.handle import OperationHandle, OperationStatus
from controller.operations import (
    ConfigChange,
    CreateTopics,
    DeleteTopics,
    FenceBroker,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
    RegisterBroker,
    UnfenceBroker,
)
from metadata.delta import TOPIC_RESOURCE
from raft import RaftConfig
from raft.batch import Batch
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import Heal, Isolate, parse_fault_target
from sim.world import InvariantViolation

NODES = [0, 1, 3000, 3001, 3002]


class ClusterWorld(RuleBasedStateMachine):
    """3 controllers and 2 brokers; small batches and fetches so transactions span rounds."""

    mutations: ClassVar[frozenset[str]] = frozenset()
    failing_steps: ClassVar[int | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.cluster: KRaftCluster
        self.steps = 0
        self.topics = 0
        self.pending: list[OperationHandle] = []
        self.acknowledged: list[tuple[OperationHandle, tuple[Batch, ...]]] = []

    @initialize(seed=st.integers(min_value=0, max_value=15))
    def start(self, seed: int) -> None:
        config = ClusterConfig(seed=seed, controllers=3, brokers=2,
                               controller=ControllerConfig(max_records_per_batch=10),
                               raft=RaftConfig(fetch_max_records=20),
                               mutations=self.mutations)
        self.cluster = KRaftCluster(config)
        self.cluster.start()

    @property
    def sim(self):  # type: ignore[no-untyped-def]
        return self.cluster.sim

    def _submit(self, op: Operation) -> None:
        self.steps += 1
        self.pending.append(self.cluster.submit(op))

    def _mid_transaction(self) -> bool:
        """Run until a transaction is open and a broker has loaded part of it."""
        c = self.cluster

        def buffering() -> bool:
            return c.transaction_window_open() and any(
                (loader := c.loader(b)) is not None and loader.batch_loader.state.value in (
                    "STARTED_TRANSACTION", "CONTINUED_TRANSACTION")
                for b in c.config.broker_ids)

        return c.run_until(buffering, 2_000) or c.run_until(c.transaction_window_open, 1)

    # ------------------------------------------------------------------ operations
    @rule(partitions=st.integers(min_value=1, max_value=60),
          failover=st.sampled_from([None, "crash", "isolate", "shutdown"]))
    def create_topic(self, partitions: int, failover: str | None) -> None:
        """Create a topic; optionally fail the leader over while its transaction is open."""
        self.topics += 1
        self._submit(CreateTopics((NewTopic(f"t{self.topics}", partitions, 2),)))
        if failover is not None and self._mid_transaction():
            old = self.sim.leader_id()
            self.sim.apply_fault(parse_fault_target(failover, "leader", self.sim.now))
            self.cluster.run_until(lambda: (a := self.cluster.active_controller()) is not None
                                   and a.node_id != old, 15_000)
            self.cluster.run_until(self.cluster.idle, 5_000)

    @rule(which=st.integers(min_value=1, max_value=8))
    def delete_topic(self, which: int) -> None:
        self._submit(DeleteTopics((f"t{which}",)))

    @rule(which=st.integers(min_value=1, max_value=8), ms=st.integers(min_value=1, max_value=9))
    def alter_config(self, which: int, ms: int) -> None:
        self._submit(IncrementalAlterConfigs(TOPIC_RESOURCE, f"t{which}",
                                             (ConfigChange("retention.ms", str(ms)),)))

    @rule(broker=st.integers(min_value=0, max_value=2), fence=st.booleans())
    def fence_or_unfence(self, broker: int, fence: bool) -> None:
        self._submit(FenceBroker(broker) if fence else UnfenceBroker(broker))

    @rule(broker=st.integers(min_value=0, max_value=2))
    def register_broker(self, broker: int) -> None:
        self._submit(RegisterBroker(broker))

    # ------------------------------------------------------------------ faults and time
    @rule(ms=st.integers(min_value=1, max_value=3000))
    def tick(self, ms: int) -> None:
        self.steps += 1
        self.sim.run_for(ms)

    @rule(node=st.sampled_from(NODES))
    def crash(self, node: int) -> None:
        self.steps += 1
        self.sim.crash(node)

    @rule(node=st.sampled_from(NODES))
    def restart(self, node: int) -> None:
        self.steps += 1
        self.sim.restart(node)

    @rule(node=st.sampled_from(NODES))
    def isolate(self, node: int) -> None:
        self.steps += 1
        self.sim.apply_fault(Isolate(at_ms=self.sim.now, node=node))

    @rule()
    def heal(self) -> None:
        self.steps += 1
        self.sim.apply_fault(Heal(at_ms=self.sim.now))

    # ------------------------------------------------------------------ invariants
    @precondition(lambda self: hasattr(self, "cluster"))
    @invariant()
    def every_invariant_holds(self) -> None:
        violation = self.sim.violation
        if violation is None and self.cluster.controller_faults:
            node, at, message = self.cluster.controller_faults[0]
            violation = InvariantViolation("ControllerFault", f"controller {node} at {at} ms: "
                                                              f"{message}")
        if violation is not None:
            type(self).failing_steps = self.steps
            raise violation

    @precondition(lambda self: hasattr(self, "cluster"))
    @invariant()
    def acknowledged_operations_are_durable(self) -> None:
        """An operation acknowledged as committed never loses a batch (acknowledged = durable)."""
        history = self.cluster.history
        for handle in [h for h in self.pending if h.status is OperationStatus.COMMITTED]:
            self.pending.remove(handle)
            batches: list[Batch] = []
            offset = handle.first_offset
            while 0 <= offset <= handle.last_offset:
                batch = history.get(offset)
                self._durable(batch is not None, f"{handle!r} acknowledged but offset {offset} "
                                                 f"is not committed")
                assert batch is not None
                batches.append(batch)
                offset = batch.end_offset
            self.acknowledged.append((handle, tuple(batches)))
        self.pending = [h for h in self.pending if not h.done]
        for handle, batches in self.acknowledged:
            for batch in batches:
                self._durable(history.get(batch.base_offset) == batch,
                              f"{handle!r}: committed batch at {batch.base_offset} replaced")
                for slot in self.sim.slots.values():
                    raft = slot.raft
                    if raft is None or not slot.running or raft.high_watermark is None:
                        continue
                    log = raft.log
                    if raft.high_watermark <= batch.last_offset or batch.base_offset < (
                            log.start_offset):
                        continue  # not committed there yet, or folded into its snapshot
                    held = log.batches[log.index_of(batch.base_offset)]
                    self._durable(held == batch, f"{handle!r}: node {slot.node_id} holds another "
                                                 f"batch at {batch.base_offset}")

    def _durable(self, ok: bool, message: str) -> None:
        if not ok:
            type(self).failing_steps = self.steps
            raise InvariantViolation("AcknowledgedDurable", message)


ClusterWorld.TestCase.settings = settings(max_examples=40, stateful_step_count=25,
                                          deadline=None,
                                          suppress_health_check=list(HealthCheck))
TestClusterWorld = ClusterWorld.TestCase

MUTATIONS = ["forget-failover-abort", "publish-every-commit", "abort-keeps-delta",
             "leak-after-abort", "revert-to-lso"]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_injected_bug_is_caught_and_shrunk(mutation: str) -> None:
    class Broken(ClusterWorld):
        mutations = frozenset({mutation})

    with pytest.raises(InvariantViolation) as caught:
        run_state_machine_as_test(Broken, settings=settings(
            max_examples=300, stateful_step_count=8, deadline=None, database=None, derandomize=True,
            suppress_health_check=list(HealthCheck), report_multiple_bugs=False))
    steps = Broken.failing_steps
    print(f"{mutation}: caught as {caught.value.invariant} after {steps} steps")
    assert steps is not None and steps <= 15


def test_a_lost_acknowledged_batch_is_reported() -> None:
    world = ClusterWorld()
    world.start(seed=1)
    world.create_topic(partitions=5, failover=None)
    world.tick(2_000)
    world.acknowledged_operations_are_durable()
    handle, batches = world.acknowledged[-1]
    assert handle.status is OperationStatus.COMMITTED
    slot = world.sim.slots[3001]
    assert slot.raft is not None
    log = slot.raft.log
    index = log.index_of(batches[0].base_offset)
    log._batches[index] = Batch(batches[0].base_offset, batches[0].epoch)  # a bit flip on disk
    with pytest.raises(InvariantViolation, match="node 3001 holds another batch"):
        world.acknowledged_operations_are_durable()
    world.teardown()
