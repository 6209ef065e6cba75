"""A Hypothesis state machine of a whole KRaft cluster, to subclass in your own tests.

:class:`ClusterMachine` starts a small cluster (3 controllers, 2 brokers,
10 records per batch, so that a topic of a few dozen partitions is a
multi-batch transaction) and offers rules for client operations (create a
topic, possibly failing the leader over while its transaction is open;
delete, alter, fence, unfence, register) and for faults and time (crash,
restart, isolate, heal, tick). After every step it checks every invariant of
the catalogue (the online raft and transaction checkers of
:mod:`sim.invariants`, no controller fault) and that acknowledged means
durable: an operation once reported committed keeps its batches in the
committed history and in every node's log past its high watermark.

Subclass it to add rules and invariants of your own, to switch a planted bug
on (``mutations``) or to change the cluster (:meth:`cluster_config`);
:func:`find_failure` runs a machine and returns the shrunk failing steps.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    INVARIANT_MARKER,
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
from sim.testing import strategies
from sim.world import InvariantViolation, Simulation

ACKNOWLEDGED_DURABLE = "AcknowledgedDurable"
"""The invariant's name when an acknowledged operation lost a batch."""


NODES = (0, 1, 3000, 3001, 3002)
"""The nodes the fault rules draw: the default cluster's brokers and controllers. In a
cluster of another size a drawn id is mapped onto one of its nodes (:meth:`node`)."""


class ClusterMachine(RuleBasedStateMachine):
    """A cluster driven by operations and faults, every invariant checked after each step.

    Class attributes a subclass may change: ``controllers``, ``brokers``,
    ``max_records_per_batch``, ``fetch_max_records`` and ``mutations`` (the
    deliberate bugs to plant, see :data:`sim.cluster.ALL_MUTATIONS`). Override
    :meth:`cluster_config` for anything else. ``failing_steps`` holds the
    number of operation and fault steps of the last failing run.
    """

    controllers: ClassVar[int] = 3
    brokers: ClassVar[int] = 2
    max_records_per_batch: ClassVar[int] = 10
    fetch_max_records: ClassVar[int] = 20
    mutations: ClassVar[frozenset[str]] = frozenset()
    failing_steps: ClassVar[int | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.cluster: KRaftCluster
        self.steps = 0
        self.topics = 0
        self.pending: list[OperationHandle] = []
        self.acknowledged: list[tuple[OperationHandle, tuple[Batch, ...]]] = []

    # ------------------------------------------------------------------ the cluster
    @property
    def node_ids(self) -> tuple[int, ...]:
        """Every node of the cluster: brokers 0.., then controllers 3000.."""
        config = ClusterConfig(controllers=self.controllers, brokers=self.brokers)
        return (*config.broker_ids, *config.controller_ids)

    def node(self, drawn: int) -> int:
        """A drawn node id, or in a cluster without it the node at the same place."""
        ids = self.node_ids
        return drawn if drawn in ids else ids[NODES.index(drawn) % len(ids)]

    def cluster_config(self, seed: int) -> ClusterConfig:
        """The cluster a run starts (override to change more than the class attributes)."""
        return ClusterConfig(seed=seed, controllers=self.controllers, brokers=self.brokers,
                             controller=ControllerConfig(
                                 max_records_per_batch=self.max_records_per_batch),
                             raft=RaftConfig(fetch_max_records=self.fetch_max_records),
                             mutations=self.mutations)

    @initialize(seed=strategies.SEEDS)
    def start(self, seed: int) -> None:
        """Start the cluster: elect a leader, register and unfence the brokers."""
        self.cluster = KRaftCluster(self.cluster_config(seed))
        self.cluster.start()

    @property
    def sim(self) -> Simulation:
        """The cluster's simulation (clock, nodes, network, faults)."""
        return self.cluster.sim

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has run (invariants wait for it)."""
        return hasattr(self, "cluster")

    def submit(self, operation: Operation) -> OperationHandle:
        """Submit an operation to the active controller; its outcome is checked later."""
        self.steps += 1
        handle = self.cluster.submit(operation)
        self.pending.append(handle)
        return handle

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
    @rule(partitions=strategies.PARTITIONS, failover=strategies.FAILOVERS)
    def create_topic(self, partitions: int, failover: str | None) -> None:
        """Create a topic; optionally fail the leader over while its transaction is open."""
        self.topics += 1
        self.submit(CreateTopics((NewTopic(f"t{self.topics}", partitions, 2),)))
        if failover is not None and self._mid_transaction():
            old = self.sim.leader_id()
            self.sim.apply_fault(parse_fault_target(failover, "leader", self.sim.now))
            self.cluster.run_until(lambda: (a := self.cluster.active_controller()) is not None
                                   and a.node_id != old, 15_000)
            self.cluster.run_until(self.cluster.idle, 5_000)

    @rule(which=st.integers(min_value=1, max_value=8))
    def delete_topic(self, which: int) -> None:
        """Delete topic ``t{which}`` (it may not exist)."""
        self.submit(DeleteTopics((f"t{which}",)))

    @rule(which=st.integers(min_value=1, max_value=8), ms=st.integers(min_value=1, max_value=9))
    def alter_config(self, which: int, ms: int) -> None:
        """Set ``retention.ms`` of topic ``t{which}``."""
        self.submit(IncrementalAlterConfigs(TOPIC_RESOURCE, f"t{which}",
                                            (ConfigChange("retention.ms", str(ms)),)))

    @rule(broker=st.integers(min_value=0, max_value=2), fence=st.booleans())
    def fence_or_unfence(self, broker: int, fence: bool) -> None:
        """Fence or unfence a broker (one id past the cluster's brokers is refused)."""
        self.submit(FenceBroker(broker) if fence else UnfenceBroker(broker))

    @rule(broker=st.integers(min_value=0, max_value=2))
    def register_broker(self, broker: int) -> None:
        """Register a broker again (or one the cluster does not run)."""
        self.submit(RegisterBroker(broker))

    # ------------------------------------------------------------------ faults and time
    @rule(ms=strategies.TICK_MS)
    def tick(self, ms: int) -> None:
        """Let simulated time pass."""
        self.steps += 1
        self.sim.run_for(ms)

    @rule(node=st.sampled_from(NODES))
    def crash(self, node: int) -> None:
        """Crash a node: its unflushed appends are lost."""
        self.steps += 1
        self.sim.crash(self.node(node))

    @rule(node=st.sampled_from(NODES))
    def restart(self, node: int) -> None:
        """Restart a crashed or stopped node from its disk."""
        self.steps += 1
        self.sim.restart(self.node(node))

    @rule(node=st.sampled_from(NODES))
    def isolate(self, node: int) -> None:
        """Cut every link to and from a node."""
        self.steps += 1
        self.sim.apply_fault(Isolate(at_ms=self.sim.now, node=self.node(node)))

    @rule()
    def heal(self) -> None:
        """Restore every link."""
        self.steps += 1
        self.sim.apply_fault(Heal(at_ms=self.sim.now))

    # ------------------------------------------------------------------ invariants
    def fail(self, invariant_name: str, message: str) -> None:
        """Report a broken invariant of your own (records the step count, raises)."""
        raise self._failing(InvariantViolation(invariant_name, message))

    def _failing(self, violation: InvariantViolation) -> InvariantViolation:
        type(self).failing_steps = self.steps
        return violation

    @precondition(lambda self: self.started)
    @invariant()
    def every_invariant_holds(self) -> None:
        """Every online raft and transaction invariant held, and no controller faulted."""
        violation = self.sim.violation
        if violation is None and self.cluster.controller_faults:
            node, at, message = self.cluster.controller_faults[0]
            violation = InvariantViolation("ControllerFault", f"controller {node} at {at} ms: "
                                                              f"{message}")
        if violation is not None:
            raise self._failing(violation)

    @precondition(lambda self: self.started)
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
                if batch is None:
                    self.fail(ACKNOWLEDGED_DURABLE, f"{handle!r} acknowledged but offset "
                                                    f"{offset} is not committed")
                assert batch is not None
                batches.append(batch)
                offset = batch.end_offset
            self.acknowledged.append((handle, tuple(batches)))
        self.pending = [h for h in self.pending if not h.done]
        for handle, held in self.acknowledged:
            for batch in held:
                if history.get(batch.base_offset) != batch:
                    self.fail(ACKNOWLEDGED_DURABLE,
                              f"{handle!r}: committed batch at {batch.base_offset} replaced")
                self._held_by_every_node(handle, batch)

    def _held_by_every_node(self, handle: OperationHandle, batch: Batch) -> None:
        for slot in self.sim.slots.values():
            raft = slot.raft
            if raft is None or not slot.running or raft.high_watermark is None:
                continue
            log = raft.log
            if raft.high_watermark <= batch.last_offset or batch.base_offset < log.start_offset:
                continue  # not committed there yet, or folded into its snapshot
            if log.batches[log.index_of(batch.base_offset)] != batch:
                self.fail(ACKNOWLEDGED_DURABLE, f"{handle!r}: node {slot.node_id} holds another "
                                                f"batch at {batch.base_offset}")


ClusterMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25,
                                            deadline=None,
                                            suppress_health_check=list(HealthCheck))


def _is_invariant(machine: type[RuleBasedStateMachine], step: str) -> bool:
    """Whether a printed step (``state.NAME(...)``) calls an invariant or the teardown."""
    name = step.removeprefix("state.").split("(")[0]
    method = getattr(machine, name, None)
    return name == "teardown" or getattr(method, INVARIANT_MARKER, None) is not None


@dataclasses.dataclass(frozen=True)
class Failure:
    """What :func:`find_failure` found: the broken invariant and the shrunk steps."""

    invariant: str
    message: str
    steps: tuple[str, ...]
    """The minimal failing run as Python calls (``state.crash(node=3000)``, ...)."""

    def __str__(self) -> str:
        return "\n".join([f"{self.invariant}: {self.message}", *self.steps])


SEARCH_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
"""The Hypothesis phases of a bug search: every phase but ``explain``, whose line tracing
of every run after the first failure multiplies the cost of shrinking."""


def find_failure(machine: type[RuleBasedStateMachine], *, max_examples: int = 300,
                 steps: int = 8, **overrides: Any) -> Failure | None:
    """Search ``machine`` for a broken invariant; the shrunk failing run, or None.

    A failure is an :class:`~sim.world.InvariantViolation` (the catalogue's,
    or one of :meth:`ClusterMachine.fail`) or an ``AssertionError`` of your
    own invariants; anything else propagates.

    Deterministic (``derandomize``, no example database) so that a test using
    it gives the same answer on every machine. ``steps`` bounds the rules per
    run; other Hypothesis ``settings`` may be passed as keywords.

    Without Hypothesis' explain phase (:data:`SEARCH_PHASES`): once a run has
    failed, that phase traces every later run line by line, shrinking included,
    which makes each cluster step 5-10 times slower; the shrunk steps are the same.
    """
    options: dict[str, Any] = dict(
        max_examples=max_examples, stateful_step_count=steps, deadline=None, database=None,
        derandomize=True, suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
        phases=SEARCH_PHASES)
    options.update(overrides)
    try:
        run_state_machine_as_test(machine, settings=settings(**options))
    except (InvariantViolation, AssertionError) as failure:
        notes = getattr(failure, "__notes__", [])
        lines = [line.strip() for note in notes for line in str(note).splitlines()]
        shown = tuple(line for line in lines if line.startswith("state.")
                      and not _is_invariant(machine, line))
        if isinstance(failure, InvariantViolation):
            return Failure(failure.invariant, failure.message, shown)
        return Failure(type(failure).__name__, str(failure), shown)
    return None
