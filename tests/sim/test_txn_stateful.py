"""Transactional producers, coordinators and faults as Hypothesis rules, invariants online.

Three controllers and three brokers; topic ``t`` of two partitions (RF 3,
min.insync.replicas 2) and ``__transaction_state`` of three. Two
transactional ids each have a current producer instance; a new instance
fences the old one, which stays around as a zombie and keeps trying.
Coordinators crash (also right after an EndTxn), data leaders crash, brokers
restart. A consume-transform-produce loop (group ``loop``) reads topic ``in``
into ``t`` with its offsets in its transactions; it aborts a transaction or
crashes and restarts when a rule says so. Every invariant of
``sim/invariants/producer_txn.py`` (ExactlyOnce included, and the raft,
metadata-transaction and broker ones) is checked after every event.

The mutation searches switch on one deliberately broken behaviour
(:class:`broker.txn.mutations.TxnMutation`) and require this machine to catch
it and shrink the failing sequence.

:class:`TwoPcWorld` adds a KIP-939 two-phase-commit producer (transactional
id ``c``): it prepares transactions, its application restarts with
KeepPreparedTxn and completes what the external transaction manager recorded
(or a state it did not record: an abort), an admin force-terminates it;
PreparedTxnSurvives is checked with everything else. Its searches catch the
2PC mutations.

The producers' protocol (classic, or the pre-registration variant of seed 002)
is drawn per example, all instances of an example speaking it.

:class:`Tv2World` and :class:`Tv2EosWorld` run the classic producers (and the loop) on
a cluster formatted at 4.0-IV2, which finalizes transaction.version 2: they speak
KIP-890 part 2 (no AddPartitionsToTxn or AddOffsetsToTxn, the partition leaders add
the partitions, every EndTxn bumps the epoch). Every world's leaders verify
transactional produces (KIP-890 part 1).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

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

from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.mutations import TWO_PC_MUTATIONS, TxnMutation
from controller.config import ControllerConfig
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE
from metadata.versions import LEVELS
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_clients import EosLoop, EosProducer
from sim.faults import parse_fault
from sim.fork import Frozen
from sim.group_cluster import GroupCluster
from sim.invariants.producer_txn import ExactlyOnceInvariant, ProducerTxnInvariants
from sim.testing import SEARCH_PHASES
from sim.txn_admin import TxnAdmin
from sim.txn_clients import (
    PROTOCOLS,
    PreparedTxnState,
    TransactionalProducer,
    TxnProducerState,
)
from sim.txn_cluster import TxnCluster
from sim.world import InvariantViolation, Simulation

BROKERS = [0, 1, 2]
IDS = ["a", "b"]
TXN_TIMEOUT_MS = 5_000
CONFIG = TxnCoordinatorConfig(num_partitions=3, abort_timed_out_interval_ms=1_000,
                              two_phase_commit_enable=True, max_timeout_ms=10_000)
PARTS = st.lists(st.tuples(st.integers(0, 1), st.integers(1, 3)), min_size=1, max_size=2,
                 unique_by=lambda x: x[0])


SET_UPS: OrderedDict[tuple[object, ...], Frozen[dict[str, Any]]] = OrderedDict()
"""Worlds as :meth:`TxnWorld.start` left them, by world class, mutations, seed and
protocol (the most recently used few): an example whose draws match one forks it
(:mod:`sim.fork`) instead of setting it up again, and runs exactly as on a fresh world."""
SET_UPS_KEPT = 16


class TxnWorld(RuleBasedStateMachine):
    """See the module docs."""

    mutations: ClassVar[frozenset[TxnMutation]] = frozenset()
    failing_steps: ClassVar[int | None] = None
    protocols: ClassVar[tuple[str, ...]] = PROTOCOLS
    release: ClassVar[str] = "4.0-IV0"
    """The metadata.version the cluster is formatted at (4.0-IV2: transaction.version 2,
    KIP-890 part 2's implicit partition adds)."""
    set_up_fields: ClassVar[tuple[str, ...]] = (
        "cluster", "txns", "monitor", "exactly_once", "current", "zombies", "instances")
    """What :meth:`start` sets up (no callback in it may hold the world itself)."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster: KRaftCluster
        self.txns: TxnCluster
        self.monitor = ProducerTxnInvariants(lso_bound_ms=TXN_TIMEOUT_MS + 1_000 + 30_000)
        self.exactly_once = ExactlyOnceInvariant(self.monitor)
        self.current: dict[str, TransactionalProducer] = {}
        self.zombies: dict[str, list[TransactionalProducer]] = {i: [] for i in IDS}
        self.instances = 0
        self.steps = 0
        self.protocol = "classic"

    @initialize(seed=st.integers(min_value=0, max_value=3), draw=st.data())
    def start(self, seed: int, draw: st.DataObject) -> None:
        self.protocol = self.protocols[0] if len(self.protocols) == 1 else \
            draw.draw(st.sampled_from(self.protocols), label="protocol")
        world = next(c for c in type(self).__mro__ if c.__name__ != "Mutated")
        key = (world, self.mutations, seed, self.protocol)
        set_up = SET_UPS.get(key)
        if set_up is None:
            self._set_up(seed)
            # the example runs on a fork too: a frozen world's forks go on from its trace
            # as it is when they are made, so the original must not run on
            set_up = Frozen({name: getattr(self, name) for name in self.set_up_fields})
            SET_UPS[key] = set_up
            while len(SET_UPS) > SET_UPS_KEPT:
                SET_UPS.popitem(last=False)
        else:
            SET_UPS.move_to_end(key)
        vars(self).update(set_up.fork())

    def _set_up(self, seed: int) -> None:
        self.cluster = KRaftCluster(ClusterConfig(
            seed=seed, controllers=3, brokers=3,
            controller=ControllerConfig(bootstrap_metadata_version=LEVELS[self.release])),
            extra_monitors=[self.monitor, self.exactly_once])
        c = self.cluster
        c.start()
        assert c.wait(c.submit(CreateTopics((NewTopic("t", 2, 3),))))
        assert c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, "t", (ConfigChange("min.insync.replicas", "2"),))))
        self.txns = TxnCluster(c, CONFIG, self.mutations, on_transition=self.monitor.transition)
        assert self.txns.start()
        self._set_up_more()
        c.sim.run_for(500)
        for txn_id in IDS:
            self.current[txn_id] = self._instance(txn_id)
        c.sim.run_for(2_000)

    def _instance(self, txn_id: str) -> TransactionalProducer:
        self.instances += 1
        monitor, sim = self.monitor, self.cluster.sim
        producer = TransactionalProducer(
            self.txns, txn_id, f"{txn_id}{self.instances}", TXN_TIMEOUT_MS,
            on_initialized=lambda p: monitor.initialized(p.transactional_id, p.instance,
                                                         sim.now),
            on_sent=self.monitor.sent, on_committed=self.monitor.commit_acknowledged,
            protocol=self.protocol)
        producer.init_transactions()
        return producer

    def _set_up_more(self) -> None:
        """More of the world, for subclasses."""

    def _step(self) -> None:
        self.steps += 1
        if self.cluster.sim.violation is not None:
            type(self).failing_steps = self.steps
            raise self.cluster.sim.violation

    def _fault(self, text: str) -> None:
        self.monitor.disturbed(self.cluster.sim.now)
        self.cluster.sim.apply_fault(parse_fault(f"{text}@{self.cluster.sim.now}"))

    # ------------------------------------------------------------------ producers
    @rule(which=st.sampled_from(IDS), parts=PARTS, commit=st.booleans())
    def transact(self, which: str, parts: list[tuple[int, int]], commit: bool) -> None:
        self.current[which].transaction([("t", p, n) for p, n in parts], commit)
        self._step()

    @rule(which=st.sampled_from(IDS))
    def new_instance(self, which: str) -> None:
        old = self.current[which]
        self.zombies[which].append(old)
        self.current[which] = new = self._instance(which)
        self.cluster.sim.run_until_true(lambda: new.idle, 10_000)  # the app restarts
        self._step()

    @rule(which=st.sampled_from(IDS), parts=PARTS)
    def zombie_transacts(self, which: str, parts: list[tuple[int, int]]) -> None:
        for zombie in self.zombies[which][-1:]:
            zombie.transaction([("t", p, n) for p, n in parts], True)
        self._step()

    # ------------------------------------------------------------------ faults
    @rule(which=st.sampled_from(IDS))
    def crash_coordinator_after_end_txn(self, which: str) -> None:
        producer = self.current[which]
        producer.transaction([("t", 0, 1), ("t", 1, 1)], True)
        sim = self.cluster.sim
        sim.run_until_true(lambda: producer.state in (
            TxnProducerState.COMMITTING_TRANSACTION, TxnProducerState.ABORTING_TRANSACTION),
            3_000)
        coordinator = self.txns.find_coordinator(which)
        if coordinator is not None:
            self._fault(f"crash:{coordinator}")
        self._step()

    @rule(broker=st.sampled_from(BROKERS))
    def crash(self, broker: int) -> None:
        self._fault(f"crash:{broker}")
        self._step()

    @rule()
    def crash_a_data_leader(self) -> None:
        leader = self.cluster.partition_leader("t", 0)
        if leader is not None:
            self._fault(f"crash:{leader}")
        self._step()

    @rule()
    def restart_all(self) -> None:
        # At once, even before the controller has fenced the crashed ones: their logs
        # survive on disk and they lead nothing until caught up with a new incarnation.
        for broker in BROKERS:
            if not self.cluster.sim.slots[broker].running:
                self._fault(f"restart:{broker}")
        self._step()

    @rule(ms=st.sampled_from([10, 300, 3_000, 20_000]))
    def run(self, ms: int) -> None:
        """Every ready producer, zombies included, keeps transacting while time passes."""
        for txn_id in IDS:
            for producer in (*self.zombies[txn_id][-1:], self.current[txn_id]):
                producer.transaction([("t", producer.transactions % 2, 1)], True)
        self.cluster.sim.run_for(ms)
        self._step()

    @invariant()
    def no_violation(self) -> None:
        violation = self.cluster.sim.violation if hasattr(self, "cluster") else None
        if violation is not None:
            type(self).failing_steps = self.steps
            raise violation


class TwoPcWorld(TxnWorld):
    """TxnWorld with a KIP-939 two-phase-commit producer; see the module docs."""

    def __init__(self) -> None:
        super().__init__()
        self.two_pc: TransactionalProducer | None = None
        self.recorded: PreparedTxnState | None = None  # the external transaction manager

    def _two_pc_instance(self, keep: bool) -> TransactionalProducer:
        self.instances += 1
        m, sim = self.monitor, self.cluster.sim

        def initialized(p: TransactionalProducer) -> None:
            m.initialized(p.transactional_id, p.instance, sim.now)
            if p.kept_init:
                state = p.prepared_state or PreparedTxnState()
                m.kept(p.transactional_id, (state.producer_id, state.epoch))

        m.two_phase("c")
        producer = TransactionalProducer(
            self.txns, "c", f"c{self.instances}", TXN_TIMEOUT_MS, enable_2pc=True,
            on_initialized=initialized, on_sent=m.sent, on_committed=m.commit_acknowledged,
            on_prepared=lambda q, st: m.prepared_txn(
                "c", f"c/{q.instance}/{q.transactions}", st.producer_id, st.epoch),
            on_complete=lambda q, st, c: m.completing("c", (st.producer_id, st.epoch), c))
        producer.init_transactions(keep_prepared_txn=keep)
        return producer

    def _producer_2pc(self) -> TransactionalProducer:
        if self.two_pc is None:
            self.two_pc = new = self._two_pc_instance(keep=True)
            self.cluster.sim.run_until_true(lambda: new.idle, 10_000)
        return self.two_pc

    @rule(parts=PARTS)
    def prepare_2pc(self, parts: list[tuple[int, int]]) -> None:
        producer = self._producer_2pc()
        sim = self.cluster.sim
        if producer.transaction_prepared([("t", p, n) for p, n in parts]):
            sim.run_until_true(lambda: producer.idle, 10_000)
            if producer.state == TxnProducerState.PREPARED_TRANSACTION:
                self.recorded = producer.prepared_state
        self._step()

    @rule(parts=PARTS, down_ms=st.sampled_from([100, 20_000]))
    def restart_2pc_application_after_prepare(self, parts: list[tuple[int, int]],
                                              down_ms: int) -> None:
        """The key 2PC moment: the application dies right after prepareTransaction and
        comes back ``down_ms`` later (past the producer's timeout: no matter for 2PC)."""
        self.prepare_2pc(parts)
        self.cluster.sim.run_for(down_ms)
        self._step()
        self.restart_2pc_application()

    @rule()
    def restart_2pc_application(self) -> None:
        self.two_pc = new = self._two_pc_instance(keep=True)
        self.cluster.sim.run_until_true(lambda: new.idle, 10_000)
        self._step()

    @rule(matching=st.booleans())
    def complete_2pc(self, matching: bool) -> None:
        producer = self._producer_2pc()
        if producer.state == TxnProducerState.PREPARED_TRANSACTION and producer.idle:
            state = self.recorded if matching and self.recorded is not None \
                else PreparedTxnState(-7, -7)
            producer.complete_transaction(state)
            self.cluster.sim.run_for(300)
        self._step()

    @rule()
    def force_terminate_2pc(self) -> None:
        monitor = self.monitor
        monitor.force_terminated("c")
        TxnAdmin(self.txns).force_terminate_transaction(   # within max_timeout_ms
            "c", lambda error: monitor.force_terminate_done("c"), timeout_ms=10_000)
        self.cluster.sim.run_for(300)
        self._step()


class EosTxnWorld(TxnWorld):
    """The same world with a consume-transform-produce loop (group ``loop``) reading topic
    ``in`` into ``t``, its offsets in its transactions; rules make it abort a transaction
    or restart (its old instance crashed, or left running as a zombie). ExactlyOnce is
    checked after every event."""

    set_up_fields = (*TxnWorld.set_up_fields, "loop")

    def __init__(self) -> None:
        super().__init__()
        self.loop: EosLoop

    def _set_up_more(self) -> None:
        c = self.cluster
        groups = GroupCluster(c, mutations=self.mutations)
        assert groups.start()
        assert c.wait(c.submit(CreateTopics((NewTopic("in", 1, 3),))))
        Producer(c, "input", "in", 0, acks=-1, idempotent=True, batch_size=10).send(200)
        self.loop = EosLoop(self.txns, groups, "loop", ("in", 0), "t", 2, batch=3,
                            protocol=self.protocol, txn_timeout_ms=TXN_TIMEOUT_MS,
                            on_producer=_watching(self.monitor, self.exactly_once, c.sim))
        self.exactly_once.watch("loop", ("in", 0), "t")
        self.loop.start()

    @rule()
    def loop_aborts_its_next_transaction(self) -> None:
        self.loop.abort_next = True
        self._step()

    @rule(zombie=st.booleans())
    def loop_restarts(self, zombie: bool) -> None:
        self.loop.crash_producer(zombie)
        self._step()


def _watching(monitor: ProducerTxnInvariants, eos: ExactlyOnceInvariant,
              sim: Simulation) -> Callable[[EosProducer], None]:
    """What the loop calls with each producer it makes: its callbacks feed the checkers."""

    def watch(producer: EosProducer) -> None:
        acked = producer.on_committed

        def sent(value: str, now: int) -> None:
            monitor.sent(value, now)
            eos.sent(value, now)

        def committed(txn: str) -> None:
            monitor.commit_acknowledged(txn)
            if acked is not None:
                acked(txn)

        producer.on_initialized = lambda p: monitor.initialized(p.transactional_id, p.instance,
                                                                sim.now)
        producer.on_sent, producer.on_committed = sent, committed

    return watch


SHRUNK_STEPS = 15
"""At most this many steps in the shrunk failing run of a mutation search. On an idle
machine the shrunk runs take 1-4 steps; Hypothesis stops shrinking after five minutes of
wall time, which a saturated machine can reach (one run stopped at 10 steps)."""


def _machine(mutations: frozenset[TxnMutation], world: type[TxnWorld] = TxnWorld,
             protocols: tuple[str, ...] = PROTOCOLS) -> type[TxnWorld]:
    return type("Mutated", (world,), {"mutations": mutations, "protocols": protocols,
                                      "failing_steps": None})


def _search(machine: type[TxnWorld], examples: int, steps: int) -> None:
    # No example database: every run does the same (derandomized) search. No explain
    # phase (SEARCH_PHASES): it traces every run after the first failure line by line,
    # which made each mutation search run into Hypothesis' five-minute shrink limit.
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
        database=None, phases=SEARCH_PHASES, suppress_health_check=list(HealthCheck),
        print_blob=False, report_multiple_bugs=False))


def _run(mutations: frozenset[TxnMutation], examples: int, steps: int,
         world: type[TxnWorld] = TxnWorld, protocols: tuple[str, ...] = PROTOCOLS) -> None:
    _search(_machine(mutations, world, protocols), examples, steps)


def _caught_and_shrunk(mutation: TxnMutation, world: type[TxnWorld],
                       protocols: tuple[str, ...] = PROTOCOLS) -> None:
    """The search with ``mutation`` fails on an invariant, and its shrunk run is short
    (``failing_steps`` of the last failing run: Hypothesis replays the shrunk one last)."""
    machine = _machine(frozenset({mutation}), world, protocols)
    with pytest.raises(InvariantViolation) as caught:
        _search(machine, examples=100, steps=15)
    steps = machine.failing_steps
    print(f"{mutation}: caught as {caught.value.invariant}, shrunk to {steps} steps")
    assert steps is not None and steps <= SHRUNK_STEPS, steps


def test_transactions_hold_their_invariants_under_faults() -> None:
    _run(frozenset(), examples=3, steps=20)


def test_pre_registration_holds_the_invariants_under_faults() -> None:
    _run(frozenset(), examples=3, steps=20, protocols=("pre-registration",))


def test_exactly_once_holds_under_faults() -> None:
    _run(frozenset(), examples=2, steps=12, world=EosTxnWorld)


class Tv2World(TxnWorld):
    """The same producers on a cluster formatted at 4.0-IV2: they speak transaction
    version 2 (no AddPartitionsToTxn, the leaders add the partitions, an epoch bump per
    EndTxn)."""

    release = "4.0-IV2"


class Tv2EosWorld(EosTxnWorld):
    """The consume-transform-produce world at 4.0-IV2 (TxnOffsetCommit v5, no
    AddOffsetsToTxn)."""

    release = "4.0-IV2"


def test_tv2_transactions_hold_their_invariants_under_faults() -> None:
    _run(frozenset(), examples=3, steps=20, world=Tv2World, protocols=("classic",))


def test_tv2_exactly_once_holds_under_faults() -> None:
    _run(frozenset(), examples=2, steps=12, world=Tv2EosWorld, protocols=("classic",))


@pytest.mark.slow
def test_transactions_hold_their_invariants_longer() -> None:
    _run(frozenset(), examples=25, steps=40)


@pytest.mark.slow
def test_pre_registration_holds_the_invariants_longer() -> None:
    _run(frozenset(), examples=25, steps=40, protocols=("pre-registration",))


def test_two_phase_commit_holds_its_invariants_under_faults() -> None:
    _run(frozenset(), examples=2, steps=20, world=TwoPcWorld, protocols=("classic",))


@pytest.mark.slow
def test_two_phase_commit_holds_its_invariants_longer() -> None:
    _run(frozenset(), examples=12, steps=30, world=TwoPcWorld, protocols=("classic",))


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(TWO_PC_MUTATIONS))
def test_an_injected_2pc_bug_is_caught_and_shrunk(mutation: TxnMutation) -> None:
    _caught_and_shrunk(mutation, TwoPcWorld, protocols=("classic",))


@pytest.mark.slow
@pytest.mark.parametrize("mutation", [m for m in TxnMutation if m not in TWO_PC_MUTATIONS])
def test_an_injected_transaction_bug_is_caught_and_shrunk(mutation: TxnMutation) -> None:
    world = EosTxnWorld if mutation == TxnMutation.OFFSETS_OUTSIDE_TXN else TxnWorld
    _caught_and_shrunk(mutation, world)


class _Classic:
    """A stand-in for Hypothesis' data object that always draws the classic protocol."""

    protocol = "classic"

    def draw(self, strategy: object, label: object = None) -> str:
        return self.protocol


class _PreRegistration(_Classic):
    """The same, drawing the pre-registration protocol."""

    protocol = "pre-registration"


def test_an_example_on_a_forked_set_up_runs_as_on_a_fresh_one() -> None:
    """SET_UPS: the same steps on a world set up afresh and on forks of a cached set-up
    give the same trace, event for event."""

    def run(world: EosTxnWorld) -> tuple[str, int]:
        world.transact("a", [(0, 2), (1, 1)], True)
        world.crash_a_data_leader()
        world.run(3_000)
        world.loop_restarts(zombie=True)
        world.restart_all()
        world.run(3_000)
        world.no_violation()
        return world.cluster.sim.trace.fingerprint, world.cluster.sim.events

    fresh = EosTxnWorld()
    fresh.protocol = "classic"
    fresh._set_up(seed=1)
    expected = run(fresh)
    SET_UPS.clear()
    for _ in range(2):  # the first example sets it up and freezes it, the second forks
        world = EosTxnWorld()
        world.start(seed=1, draw=_Classic())  # type: ignore[arg-type]
        assert run(world) == expected
    assert len(SET_UPS) == 1


def test_a_transaction_state_leader_restarted_at_once_keeps_its_replica() -> None:
    # Found by the longer search once it drew protocols: before broker partition logs
    # survived a restart, a __transaction_state replica came back empty and diverged
    # (ReplicasAgree at __transaction_state-2 offset 0).
    world = TxnWorld()
    world.start(seed=0, draw=_Classic())  # type: ignore[arg-type]
    steps: list[tuple[str, dict[str, object]]] = [
        ("crash_a_data_leader", {}),
        ("transact", {"commit": True, "parts": [(1, 2)], "which": "b"}),
        ("crash_coordinator_after_end_txn", {"which": "a"}), ("run", {"ms": 10}),
        ("crash_coordinator_after_end_txn", {"which": "b"}), ("crash_a_data_leader", {}),
        ("crash_coordinator_after_end_txn", {"which": "b"}), ("restart_all", {}),
        ("transact", {"commit": True, "parts": [(0, 2), (1, 3)], "which": "a"}),
        ("transact", {"commit": False, "parts": [(1, 3)], "which": "a"}),
        ("crash_a_data_leader", {}), ("run", {"ms": 3000}), ("run", {"ms": 3000}),
        ("run", {"ms": 20000}), ("new_instance", {"which": "b"})]
    for name, kwargs in steps:
        getattr(world, name)(**kwargs)
        world.no_violation()


def test_a_force_terminate_retrying_through_a_crash_may_abort_a_later_prepared_txn() -> None:
    # Found by a random search of the 2PC world: the second forceTerminateTransaction of
    # "c" was sent right after a crash and retried for 8 s while the coordinator was
    # unavailable; it landed 90 ms after a new 2PC transaction was prepared and aborted
    # it, as Kafka's admin would. The checker took the termination to cover only the
    # transaction prepared when it was sent (PreparedTxnSurvives, a false alarm). (Seed 13:
    # the raft leader's BeginQuorumEpoch heartbeat moved seed 0's timings off the race,
    # Kafka's striped placement seed 1's, and brokers unfenced within 10 ms of catching up
    # left seed 3's termination unfinished at the end; seeds 10, 12, 20, 22 and 27 meet
    # it too. Since the coordinators send their markers when queued rather than at the
    # next tick the termination ends a few ms after the last step: a run step of 100 ms.)
    world = TwoPcWorld()
    world.start(seed=13, draw=_Classic())  # type: ignore[arg-type]
    steps: list[tuple[str, dict[str, object]]] = [
        ("force_terminate_2pc", {}), ("crash_a_data_leader", {}),
        ("force_terminate_2pc", {}), ("new_instance", {"which": "a"}),
        ("restart_2pc_application_after_prepare", {"down_ms": 100, "parts": [(0, 1)]}),
        ("run", {"ms": 100})]
    for name, kwargs in steps:
        getattr(world, name)(**kwargs)
        world.no_violation()
    assert "c/c4/1" in world.monitor.terminated  # the termination did reach it
    assert not world.monitor.terminating  # and is done


def test_a_two_phase_abort_completed_at_once_is_completed_once() -> None:
    # Found by a random search of the 2PC world: after a forced termination, completing
    # the prepared transaction with a non-matching state wrote PrepareAbort; its
    # CompleteAbort append was answered inside PrepareAbort's answer (the one replica in
    # the ISR had it at once), and the broker then answered PrepareAbort's append again:
    # the coordinator stopped on "completing PrepareAbort, pending CompleteAbort"
    # (ReplicaManager._complete_produces is now safe to call from its own callbacks).
    world = TwoPcWorld()
    world.start(seed=0, draw=_Classic())  # type: ignore[arg-type]
    steps: list[tuple[str, dict[str, object]]] = [
        ("restart_2pc_application_after_prepare", {"down_ms": 100, "parts": [(0, 1)]}),
        ("restart_2pc_application", {}), ("force_terminate_2pc", {}),
        ("complete_2pc", {"matching": False})]
    for name, kwargs in steps:
        getattr(world, name)(**kwargs)
        world.no_violation()


def test_a_force_terminate_fences_an_application_restarted_twice_after_its_prepare() -> None:
    # Found by a random search of the 2PC world: the application restarted twice after
    # its prepare (kept identity epoch 2), the force-terminate fenced at epoch 1 and its
    # retry bumped to 2, the very identity the last application held: that application's
    # abort was taken for a retry, and its next prepared transaction, with the
    # force-terminate's 1 ms timeout and no 2PC, was aborted by the timeout
    # (PreparedTxnSurvives). The fence now reaches the kept identity.
    world = TwoPcWorld()
    world.start(seed=0, draw=_Classic())  # type: ignore[arg-type]
    steps: list[tuple[str, dict[str, object]]] = [
        ("restart_2pc_application_after_prepare", {"down_ms": 100, "parts": [(0, 1)]}),
        ("restart_2pc_application_after_prepare", {"down_ms": 100, "parts": [(0, 1)]}),
        ("force_terminate_2pc", {}), ("complete_2pc", {"matching": False}),
        ("restart_2pc_application_after_prepare", {"down_ms": 20_000, "parts": [(0, 1)]})]
    for name, kwargs in steps:
        getattr(world, name)(**kwargs)
        world.no_violation()


@pytest.mark.parametrize("protocol, seed, steps", [
    (_Classic, 0, [("new_instance", {"which": "a"}), ("new_instance", {"which": "a"}),
                   ("new_instance", {"which": "a"}), ("loop_restarts", {"zombie": False}),
                   ("crash_coordinator_after_end_txn", {"which": "a"})]),
    (_PreRegistration, 1, [
        ("run", {"ms": 10}), ("new_instance", {"which": "b"}),
        ("transact", {"commit": False, "parts": [(0, 1)], "which": "b"}),
        ("transact", {"commit": False, "parts": [(0, 1), (1, 1)], "which": "a"}),
        ("crash_a_data_leader", {}), ("new_instance", {"which": "b"}),
        ("loop_restarts", {"zombie": False}),
        ("crash_coordinator_after_end_txn", {"which": "a"})]),
])
def test_an_answer_to_a_producer_closed_meanwhile_is_dropped(
        protocol: type[_Classic], seed: int, steps: list[tuple[str, dict[str, object]]]
        ) -> None:
    # Found by random searches of the exactly-once world: a coordinator's answer reached a
    # producer instance, whose handling was scheduled for the same moment, and the
    # instance was closed in between (the loop restarted): the handler then finished an
    # operation the close had dropped (IndexError in the client). An answer is now
    # handled only if the instance still waits for it when the handling runs.
    world = EosTxnWorld()
    world.start(seed=seed, draw=protocol())  # type: ignore[arg-type]
    for name, kwargs in steps:
        getattr(world, name)(**kwargs)
        world.no_violation()
