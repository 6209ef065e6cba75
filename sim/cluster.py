"""A KRaft cluster in the simulated world: controllers (voters) and brokers (observers).

Node ids follow Kafka's test kit: brokers 0..B-1, controllers 3000..3000+C-1.
Clients submit operations to the active controller in-process (an action
event of the simulation); brokers are registered and unfenced by such
operations when the cluster starts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import IO, TypeVar

import msgspec

from broker import metadata_cache
from broker.loader import MetadataLoader
from broker.log_dir import LogDir
from broker.mutations import BrokerMutation
from broker.replica_manager import ReplicaManager
from broker.txn.mutations import TxnMutation
from controller import ControllerConfig, QuorumController
from controller.errors import ApiError, ControllerFault, not_controller
from controller.handle import OperationHandle
from controller.mutations import ControllerMutation
from controller.operations import Operation
from controller.registration_manager import ControllerRegistrationManager, is_own_registration
from controller.write_mode import WriteMode
from metadata.bootstrap import BootstrapMetadata
from metadata.snapshot import image_from_records
from metadata.versions import CONTROLLER_REGISTRATION
from raft import RaftConfig, Snapshot
from raft.config import ConfigError
from raft.mutations import Mutation
from sim.brokers import BrokerSettings, broker_apps, controller_apps
from sim.faults import FaultSpec, config_record
from sim.invariants import CommittedLog, RaftInvariants
from sim.invariants.brokers import BrokerInvariants
from sim.invariants.partitions import PartitionInvariants
from sim.invariants.transactions import TransactionInvariants
from sim.network import LinkConfig
from sim.startup import DEFAULT_START_TIMEOUT_MS, start_cluster
from sim.timeline import TraceNotes
from sim.trace import Trace
from sim.world import App, Monitor, NodeSlot, Simulation, WorldConfig

T = TypeVar("T")

CONTROLLER_BASE_ID = 3000
"""Controllers are nodes 3000, 3001, ... (Kafka's KafkaClusterTestKit numbering)."""

ALL_MUTATIONS: dict[str, Mutation | ControllerMutation | BrokerMutation | TxnMutation] = {
    m.value: m for m in (*Mutation, *ControllerMutation, *BrokerMutation, *TxnMutation)
}
"""Every deliberate bug of every layer, by name (test-only)."""


@functools.cache
def _controller_ids(count: int) -> tuple[int, ...]:
    return tuple(CONTROLLER_BASE_ID + i for i in range(count))


@functools.cache
def _broker_ids(count: int) -> tuple[int, ...]:
    return tuple(range(count))


class ClusterConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A whole cluster: sizes, settings of each layer, network, faults."""

    seed: int = 0
    controllers: int = 3
    brokers: int = 3
    controller: ControllerConfig = ControllerConfig()
    raft: RaftConfig = RaftConfig()
    network: LinkConfig = LinkConfig()
    faults: tuple[FaultSpec, ...] = ()
    broker_fetch_lag_ms: int = 0
    """Extra delay on every link into a broker (a lagging broker)."""
    mutations: frozenset[str] = frozenset()
    brokers_settings: BrokerSettings = BrokerSettings()
    """Broker lifecycles (registration, heartbeats, fencing) and broker configs."""

    def validate(self) -> ClusterConfig:
        """Return self, or raise ConfigError naming the bad field."""
        if self.controllers < 1:
            raise ConfigError("controllers", f"a cluster needs at least one controller, got "
                                             f"{self.controllers}")
        if self.brokers < 0:
            raise ConfigError("brokers", f"must not be negative, got {self.brokers}")
        if self.broker_fetch_lag_ms < 0:
            raise ConfigError("broker-fetch-lag-ms", "must not be negative")
        starving = self.raft.request_timeout_ms - 2 * self.network.latency_ms
        if self.broker_fetch_lag_ms >= starving:
            raise ConfigError("broker-fetch-lag-ms",
                              f"must be below {starving} (the raft request timeout minus two "
                              f"link latencies: at or above it every fetch of a broker times "
                              f"out), got {self.broker_fetch_lag_ms}")
        unknown = sorted(self.mutations - ALL_MUTATIONS.keys())
        if unknown:
            raise ConfigError("mutations", f"unknown mutation(s): {', '.join(unknown)}")
        self.controller.validate()
        self.brokers_settings.validate()
        self.raft.validate()
        self.network.validate()
        nodes = set(self.controller_ids) | set(self.broker_ids)
        for spec in self.faults:
            for node in spec.nodes():
                if node not in nodes:
                    raise ConfigError("faults", f"{spec.render()} names node {node}; the nodes "
                                                f"are {', '.join(map(str, sorted(nodes)))}")
        return self

    @property
    def controller_ids(self) -> tuple[int, ...]:
        """Node ids of the controllers."""
        return _controller_ids(self.controllers)

    @property
    def broker_ids(self) -> tuple[int, ...]:
        """Node ids (and broker ids) of the brokers."""
        return _broker_ids(self.brokers)

    def layer_mutations(self, kind: type[T]) -> frozenset[T]:
        """The mutations that belong to one layer's enum."""
        return frozenset(m for name in self.mutations
                         if isinstance(m := ALL_MUTATIONS[name], kind))


class KRaftCluster:
    """Controllers and brokers on a simulated network, with every invariant checked online."""

    def __init__(self, config: ClusterConfig, trace_out: IO[bytes] | None = None,
                 extra_monitors: Sequence[Monitor] = (),
                 initial_snapshot: Snapshot | None = None,
                 bootstrap: BootstrapMetadata | None = None,
                 cluster_id: str | None = None) -> None:
        """``initial_snapshot``: a snapshot ending at offset 0 on every node's disk
        before the start (Kafka's formatted ``0-0`` checkpoint); its records are
        the cluster's first state and no bootstrap records are written.
        ``bootstrap``: the controllers' bootstrap records (Kafka's
        ``bootstrap.checkpoint``); None: only the configured metadata.version.
        ``cluster_id``: the controllers' cluster id, which a broker's registration must
        name when it names one (None: not checked; the simulated brokers name none)."""
        self.config = config.validate()
        self.bootstrap = bootstrap
        self.cluster_id = cluster_id
        self._log_dirs: dict[int, tuple[int, LogDir]] = {}
        world = WorldConfig(seed=config.seed, voter_ids=config.controller_ids,
                            observer_ids=config.broker_ids, raft=config.raft,
                            network=config.network,
                            mutations=config.layer_mutations(Mutation))
        self.history = CommittedLog()
        self.raft_invariants = RaftInvariants(self.history)
        self.txn_invariants = TransactionInvariants(self.history)
        self.controller_faults: list[tuple[int, int, str]] = []
        self.broker_invariants = BrokerInvariants()
        self.partition_invariants = PartitionInvariants(self.txn_invariants.reference)
        self.txn_invariants.after_replay.append(self.partition_invariants)
        monitors: list[Monitor] = [self.raft_invariants, self.txn_invariants, *extra_monitors]
        if config.brokers_settings.lifecycle:
            monitors.insert(2, self.broker_invariants)
        if trace_out is not None:  # notes for timeline.html; they leave the fingerprint alone
            monitors.append(TraceNotes(self.txn_invariants))
        self.sim = Simulation(world, self._apps, monitors, Trace(trace_out))
        if initial_snapshot is not None:
            if initial_snapshot.snapshot_id.end_offset != 0:
                raise ValueError("an initial snapshot ends at offset 0")
            for slot in self.sim.slots.values():
                slot.storage.log.install_snapshot(initial_snapshot)
            self.txn_invariants.reference.start_from(image_from_records(
                initial_snapshot.records, -1, initial_snapshot.snapshot_id.epoch))
        self.sim.trace.write({"ev": "config", "config": config_record(config)})
        if config.broker_fetch_lag_ms:
            lagging = msgspec.structs.replace(
                config.network, latency_ms=config.network.latency_ms + config.broker_fetch_lag_ms)
            for broker in config.broker_ids:
                for controller in config.controller_ids:
                    self.sim.network.set_link(controller, broker, lagging)
        for spec in config.faults:
            self.sim.schedule_fault(spec)
        self.handles: list[OperationHandle] = []
        # A node's apps list is replaced at each (re)start: the app found in it is cached.
        self._controllers: dict[int, tuple[list[App], QuorumController | None]] = {}
        self._loaders: dict[int, tuple[list[App], MetadataLoader | None]] = {}
        # The active controller, found again only after a controller's activation changed
        # (a claim, a renounce, a fault, a stop) or a controller process started.
        self._active: QuorumController | None = None
        self._active_known = False
        self._controller_ids = config.controller_ids

    def reseed(self, seed: int) -> None:
        """Go on as the run of ``seed`` (every random stream reseeded; a trace line says so).

        A run that reuses a booted cluster (:mod:`sim.fork`) calls this on its
        fork; a fresh boot of the same configuration calls it at the same point,
        so both runs are the same event for event.
        """
        self.config = msgspec.structs.replace(self.config, seed=seed)
        self.sim.reseed(seed)
        self.sim.trace.write({"i": self.sim.events, "t": self.sim.now, "ev": "reseed",
                              "seed": seed})

    def log_dir(self, node_id: int) -> LogDir:
        """Broker ``node_id``'s partition logs on disk: they outlive crashes and restarts,
        not a wipe of the node's disk."""
        wipes = self.sim.slots[node_id].wipe_count
        held = self._log_dirs.get(node_id)
        if held is None or held[0] != wipes:
            held = self._log_dirs[node_id] = (wipes, LogDir())
        return held[1]

    # ------------------------------------------------------------------ nodes
    def _apps(self, sim: Simulation, slot: NodeSlot) -> list[App]:
        assert slot.raft is not None
        rng = sim.stream("app", slot.node_id, slot.incarnation)
        settings = self.config.brokers_settings
        if slot.is_voter:
            node_id = slot.node_id
            self._active_known = False  # a new controller process
            controller = QuorumController(
                node_id, slot.raft, rng, lambda: sim.now, self.config.controller,
                fatal_handler=lambda fault: self._on_fatal(node_id, fault),
                mutations=self.config.layer_mutations(ControllerMutation),
                bootstrap=self.bootstrap, activation_listener=self._activation_changed,
                cluster_id=self.cluster_id)
            registration = ControllerRegistrationManager(
                controller, sim.stream("controller-registration", node_id, slot.incarnation))
            return [controller, registration,
                    *controller_apps(settings, controller, lambda: sim.now)]
        loader = MetadataLoader(slot.node_id, slot.raft,
                                mutations=self.config.layer_mutations(BrokerMutation))
        return [loader, *broker_apps(settings, slot.node_id, loader, rng, sim.now,
                                     self.config.layer_mutations(BrokerMutation),
                                     self.log_dir(slot.node_id))]

    def _on_fatal(self, node_id: int, fault: ControllerFault) -> None:
        """A controller hit a fatal fault: its process exits (crashes) right away."""
        self.controller_faults.append((node_id, self.sim.now, str(fault)))
        self.sim.schedule(self.sim.now, lambda: self.sim.crash(node_id),
                          f"controller {node_id} exits: {fault}")

    def controller(self, node_id: int) -> QuorumController | None:
        """The controller running on ``node_id``, if it runs."""
        slot = self.sim.slots.get(node_id)
        if slot is None:
            return None
        apps = slot.apps
        cached = self._controllers.get(node_id)
        if cached is not None and cached[0] is apps:  # the same process: O(1)
            return cached[1]
        found = next((a for a in apps if isinstance(a, QuorumController)), None)
        self._controllers[node_id] = (apps, found)
        return found

    def loader(self, node_id: int) -> MetadataLoader | None:
        """The metadata loader of broker ``node_id``, if it runs."""
        slot = self.sim.slots.get(node_id)
        if slot is None:
            return None
        apps = slot.apps
        cached = self._loaders.get(node_id)
        if cached is not None and cached[0] is apps:
            return cached[1]
        found = next((a for a in apps if isinstance(a, MetadataLoader)), None)
        self._loaders[node_id] = (apps, found)
        return found

    def replica_manager(self, node_id: int | None) -> ReplicaManager | None:
        """The replica manager of broker ``node_id``, if it runs (with broker lifecycles)."""
        slot = self.sim.slots.get(node_id) if node_id is not None else None
        if slot is None or not slot.running:
            return None
        return next((a for a in slot.apps if isinstance(a, ReplicaManager)), None)

    def any_running_broker(self) -> int | None:
        """The lowest running broker id whose loader has published (a client's bootstrap)."""
        for broker_id in self.config.broker_ids:
            slot = self.sim.slots[broker_id]
            loader = self.loader(broker_id)
            if slot.running and loader is not None and loader.published is not None:
                return broker_id
        return None

    def partition_leader(self, topic: str, partition: int) -> int | None:
        """The leader a client's metadata names: from a running broker's published image, as
        its metadata cache answers (:func:`broker.metadata_cache.partition_leader`)."""
        broker = self.any_running_broker()
        loader = self.loader(broker) if broker is not None else None
        image = loader.published if loader is not None else None
        return metadata_cache.partition_leader(image, topic, partition) if image is not None \
            else None

    def active_controller(self) -> QuorumController | None:
        """The controller that has claimed leadership in the newest epoch, if any.

        Monitors and run predicates ask after every event, so it is found again only
        when it may have changed: a controller told the cluster its activation changed
        (it claimed, renounced, failed or stopped), or a controller process started.
        """
        if self._active_known:
            return self._active
        best = self._active = self._find_active()
        self._active_known = True
        return best

    def _activation_changed(self) -> None:
        """A controller's claimed epoch or fault changed: look for the active one again."""
        self._active_known = False

    def _find_active(self) -> QuorumController | None:
        best: QuorumController | None = None
        best_epoch = 0
        slots, cached = self.sim.slots, self._controllers
        for node_id in self._controller_ids:
            slot = slots.get(node_id)
            if slot is None:
                continue
            known = cached.get(node_id)  # self.controller(node_id), inline: asked every event
            c = known[1] if known is not None and known[0] is slot.apps else \
                self.controller(node_id)
            if c is None:
                continue
            epoch = c.claimed_epoch
            if epoch is not None and c.fault is None and (best is None or epoch > best_epoch):
                best, best_epoch = c, epoch  # c.active, in the newest epoch (the first on ties)
        return best

    # ------------------------------------------------------------------ clients
    def submit(self, operation: Operation, mode: WriteMode | None = None,
               node_id: int | None = None) -> OperationHandle:
        """Submit ``operation`` now, to ``node_id`` or to the active controller."""
        holder: list[OperationHandle] = []

        def act() -> None:
            target = self.controller(node_id) if node_id is not None else \
                self.active_controller()
            if target is None:
                handle = OperationHandle(0, operation.describe(), node_id or -1, self.sim.now,
                                         (mode or WriteMode.TRANSACTIONAL).value)
                error = not_controller(self.sim.leader_id() if node_id is not None else None)
                handle.fail(error, self.sim.now)
                holder.append(handle)
                return
            handle = target.submit(operation, mode)
            self.txn_invariants.track(handle, target.claimed_epoch or -1)
            holder.append(handle)

        self.sim.act(f"submit {operation.describe()}", act)
        if not holder:  # the run already stopped on a violation
            handle = OperationHandle(0, operation.describe(), -1, self.sim.now, "")
            handle.fail(ApiError("UNKNOWN_SERVER_ERROR", "the simulation stopped"),
                        self.sim.now)
            holder.append(handle)
        self.handles.append(holder[0])
        return holder[0]

    def wait(self, handle: OperationHandle, timeout_ms: int = 60_000) -> bool:
        """Run until ``handle`` is done; False on timeout or violation."""
        return self.sim.run_until_true(lambda: handle.done, timeout_ms) and handle.done

    def run_until_active(self, timeout_ms: int = 60_000) -> QuorumController | None:
        """Run until a controller is active; None on timeout."""
        self.sim.run_until_true(lambda: self.active_controller() is not None, timeout_ms)
        return self.active_controller()

    def start(self, register_brokers: bool = True,
              timeout_ms: int = DEFAULT_START_TIMEOUT_MS) -> bool:
        """Start every node; register and unfence the brokers once a controller is active.

        The one start-up path, :func:`sim.startup.start_cluster` (see there).
        """
        return start_cluster(self, register_brokers=register_brokers, timeout_ms=timeout_ms)

    def registration_manager(self, node_id: int) -> ControllerRegistrationManager | None:
        """The registration manager of controller ``node_id``, if it runs."""
        slot = self.sim.slots.get(node_id)
        if slot is None or not slot.running:
            return None
        return next((a for a in slot.apps if isinstance(a, ControllerRegistrationManager)),
                    None)

    def controllers_registered(self) -> bool:
        """Every running controller the active one can reach both ways has registered its
        process (KIP-919), and every running node so reachable has published those
        registrations (a controller at its last stable offset, a broker in its loader's
        image). A registration is the process's when it has its incarnation id, the one
        test its registration manager applies (so this never waits for a correction the
        manager would not send). True at once when the active controller's latest
        metadata.version (its bootstrap or an upgrade not committed yet included) is below
        3.7-IV0; False with no active controller."""
        active = self.active_controller()
        if active is None:
            return False
        if active.metadata_version < CONTROLLER_REGISTRATION:
            return True
        network = self.sim.network
        reachable = [slot for slot in self.sim.slots.values() if slot.running and (
            slot.node_id == active.node_id or network.connected(active.node_id, slot.node_id))]
        expected = [(m.node_id, m.incarnation_id) for slot in reachable if slot.is_voter
                    and (m := self.registration_manager(slot.node_id)) is not None]
        for slot in reachable:
            controller = self.controller(slot.node_id)
            loader = self.loader(slot.node_id)
            image = controller.committed_image() if controller is not None else \
                loader.published if loader is not None else None
            if image is None or not all(
                    is_own_registration(image.controllers.get(node_id), incarnation)
                    for node_id, incarnation in expected):
                return False
        return True

    def brokers_unfenced(self) -> bool:
        """Every broker is registered and unfenced in the active controller's committed state."""
        active = self.active_controller()
        if active is None:
            return False
        brokers = active.committed_image().brokers
        return all((b := brokers.get(i)) is not None and not b.fenced
                   for i in self.config.broker_ids)

    def idle(self) -> bool:
        """No operation pending, no transaction open, every reachable node caught up.

        Caught up means: every running node the active controller can reach both
        ways has applied (controllers) or published (brokers) every committed
        record except trailing periodic NoOps.
        """
        active = self.active_controller()
        if active is None or active.purgatory or active.transaction_open:
            return False
        if any(not h.done for h in self.handles):
            return False
        reference = self.txn_invariants.reference
        reference.advance()
        return self.caught_up(active)

    def caught_up(self, active: QuorumController) -> bool:
        """No transaction open in the committed log and every reachable node has caught up.

        ``active`` is the active controller; reachable means both ways; caught up
        means applied (controllers) or published (brokers) every committed record
        except trailing periodic NoOps. The reference must have been advanced.
        """
        return self.lagging(active) is None

    def lagging(self, active: QuorumController) -> int | None:
        """Why :meth:`caught_up` is False: the first node that has not caught up, or the
        active controller's id when the committed log has a transaction open or the active
        controller's stable offset is behind; None when caught up.

        A node other than the active one lags until an event touches it (its offsets
        move only in its own events; crashes, restarts and network faults touch every
        node), so a caller may wait for that before asking again.
        """
        reference = self.txn_invariants.reference
        if reference.open is not None:
            return active.node_id
        target = reference.last_meaningful_offset
        if active.offsets.last_stable_offset < target:
            return active.node_id
        for slot in self.sim.slots.values():
            if slot.node_id != active.node_id and self._behind(active, slot, target):
                return slot.node_id
        return None

    def node_lags(self, active: QuorumController, node_id: int) -> bool:
        """Whether node ``node_id`` (not the active controller) is one :meth:`lagging` could
        name: running, reachable both ways from ``active`` and not caught up. The
        reference must have been advanced."""
        slot = self.sim.slots.get(node_id)
        return slot is not None and node_id != active.node_id and self._behind(
            active, slot, self.txn_invariants.reference.last_meaningful_offset)

    def _behind(self, active: QuorumController, slot: NodeSlot, target: int) -> bool:
        """A running node reachable both ways from ``active`` that has not applied or
        published up to ``target``."""
        if not slot.running:
            return False
        network = self.sim.network
        if not network.connected(active.node_id, slot.node_id):
            return False
        controller = self.controller(slot.node_id)
        if controller is not None and controller.offsets.last_committed_offset < target:
            return True
        loader = self.loader(slot.node_id)
        return loader is not None and loader.published_offset < target

    def transaction_window_open(self) -> bool:
        """A Begin is committed and its End/Abort is not (``run-until open-txn``)."""
        reference = self.txn_invariants.reference
        reference.advance()
        return reference.open is not None

    def run_until(self, predicate: Callable[[], bool], timeout_ms: int) -> bool:
        """Run until ``predicate()``; False on timeout or violation."""
        return self.sim.run_until_true(predicate, timeout_ms) and self.sim.violation is None
