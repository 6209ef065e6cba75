"""The deterministic world: nodes on a simulated network, driven by one event queue.

A :class:`Simulation` owns the clock, the event queue, the network and one
:class:`NodeSlot` per node (its disk survives the node's crashes). It runs the
raft nodes and the state machines ("apps") on them, applies faults, writes
the trace and runs every monitor (invariant checker) after every event. The
only randomness is ``random.Random`` instances seeded from the run's seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import partial
from heapq import heappop
from typing import Any, Protocol

import msgspec

from metadata.requests import NodeMessage
from raft import Envelope, RaftConfig, RaftNode, RaftProtocolError, RaftStorage, Role
from raft.mutations import Mutation
from sim.faults import (
    LEADER,
    Block,
    Crash,
    FaultSpec,
    Heal,
    Isolate,
    NodeRef,
    Partition,
    Restart,
    Shutdown,
    Wipe,
)
from sim.network import LinkConfig, Network
from sim.scheduler import EventQueue
from sim.seeds import named_random, seed_later, stream_key
from sim.trace import Trace


class NodeStatus(StrEnum):
    """Whether a node's process is running."""

    RUNNING = "running"
    PAUSED = "paused"
    CRASHED = "crashed"
    STOPPED = "stopped"


class App(Protocol):
    """A state machine hosted on a node, with timers of its own.

    An app that talks to other nodes' apps (brokers and the controller's broker
    service) also has ``handle_message(NodeMessage, now)`` and
    ``drain_outbox() -> list[NodeMessage]``; the world delivers those messages
    over the same simulated network as raft's, so partitions and crashes act on
    them too.
    """

    def next_deadline(self) -> int | None:
        """The earliest simulated time at which :meth:`poll` has work.

        An app whose answer is always None may say so with a class attribute
        ``has_timers = False``: the world then never asks (it asks after every event).
        """

    def poll(self, now: int) -> None:
        """Run whatever is due at ``now``."""

    def close(self, now: int) -> None:
        """The process stops (crash or shutdown): whatever waits on it is failed."""


class InvariantViolation(Exception):
    """An invariant does not hold; ``invariant`` names it."""

    def __init__(self, invariant: str, message: str) -> None:
        super().__init__(f"{invariant}: {message}")
        self.invariant = invariant
        self.message = message


class Monitor:
    """Looks at the world after every event; an invariant raises InvariantViolation."""

    def on_boot(self, sim: Simulation, slot: NodeSlot) -> None:
        """A node (re)started; its raft node exists, its apps do not yet."""

    def on_started(self, sim: Simulation, slot: NodeSlot) -> None:
        """A node (re)started and its apps exist."""

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Check what the last event may have changed (``touched`` nodes, global state)."""


class NodeSlot:
    """One node: its durable storage and, while it runs, its process."""

    def __init__(self, node_id: int, is_voter: bool) -> None:
        self.node_id = node_id
        self.is_voter = is_voter
        self.storage = RaftStorage()
        self.incarnation = 0
        self.status = NodeStatus.STOPPED
        self.raft: RaftNode | None = None
        self.apps: list[App] = []
        self.inbox: list[tuple[Any, ...]] = []
        self.wake_at: int | None = None
        self.wipe_count = 0
        self.drains: list[Callable[[], list[NodeMessage]]] = []  # the apps' drain_outbox
        self.deadlines: list[Callable[[], int | None]] = []  # next_deadline of apps with timers
        self.handlers: list[Callable[[NodeMessage, int], None]] = []  # their handle_message
        self.crash_fence = 0  # messages sent by incarnations below this died in a crash
        self.shutting_down = False  # a controlled shutdown is under way

    @property
    def running(self) -> bool:
        """True while the process runs (not paused, crashed or stopped)."""
        return self.status is NodeStatus.RUNNING


AppFactory = Callable[["Simulation", NodeSlot], list[App]]
"""Builds the apps of a freshly started node (registering raft listeners as needed)."""


class WorldConfig(msgspec.Struct, frozen=True, kw_only=True):
    """What every simulation needs: seed, node ids, raft and network settings."""

    seed: int
    voter_ids: tuple[int, ...]
    observer_ids: tuple[int, ...] = ()
    raft: RaftConfig = RaftConfig()
    network: LinkConfig = LinkConfig()
    mutations: frozenset[Mutation] = frozenset()


_DELIVER, _WAKE, _ACTION = 0, 1, 2
_LEADER, _RUNNING = Role.LEADER, NodeStatus.RUNNING  # read after every event
_PAUSED = NodeStatus.PAUSED  # (module constants: an Enum member via its class costs more)

MAX_EVENTS_AT_ONE_TIME = 100_000
"""More events than this without the clock moving fail the run with TimeAdvances: a
livelock (a timer that keeps firing at the time it fires at, a message answered by
itself), which would otherwise run forever. The simulations' longest burst at one
millisecond is a few dozen events."""


def _deliver_to_apps(slot: NodeSlot, env: NodeMessage, now: int) -> None:
    """Hand a non-raft message to every app of the node that takes messages."""
    for handle in slot.handlers:
        handle(env, now)


class Simulation:
    """A deterministic world of raft nodes; see the module docs."""

    def __init__(self, config: WorldConfig, app_factory: AppFactory | None = None,
                 monitors: Sequence[Monitor] = (), trace: Trace | None = None) -> None:
        self.config = config
        self.queue = EventQueue()
        self._streams: list[tuple[tuple[object, ...], random.Random]] = []
        self.rng = self.stream("world")
        self.network = Network(self.stream("network"), config.network)
        self.app_factory = app_factory
        self.monitors: list[Monitor] = list(monitors)
        self.trace = trace or Trace()
        self.slots: dict[int, NodeSlot] = {}
        for node_id in config.voter_ids:
            self.slots[node_id] = NodeSlot(node_id, True)
        for node_id in config.observer_ids:
            if node_id in self.slots:
                raise ValueError(f"node id {node_id} is both a voter and an observer")
            self.slots[node_id] = NodeSlot(node_id, False)
        self.voter_ids = tuple(config.voter_ids)
        self.events = 0
        self.violation: InvariantViolation | None = None
        self.violation_event: int | None = None
        self.faults_applied: list[str] = []
        self.wipes = 0
        self._touched: list[NodeSlot] = []
        self._line: dict[str, Any] = {}  # the trace line of the event in progress
        self._in_event = False
        self._monitoring = False  # monitors are checking the event just processed
        self._leader_cache: tuple[int, NodeSlot | None] | None = None
        self._leaders: dict[int, NodeSlot] = {}  # the running leaders after the last event
        self._clock_at = -1  # the time of the last event, and how many events came at it
        self._events_at_clock = 0

    # ------------------------------------------------------------------ seeds
    def stream(self, *names: object) -> random.Random:
        """The random stream ``names`` of this run (:func:`sim.seeds.named_random`)."""
        rng = named_random(self.config.seed, *names)
        self._streams.append((names, rng))
        return rng

    def reseed(self, seed: int) -> None:
        """From now on the run is the run of ``seed``: every stream made so far starts
        over as that seed's stream of the same name, later ones are drawn from it.

        A booted world shared by many runs (:mod:`sim.fork`) becomes each run's own.
        """
        self.config = msgspec.structs.replace(self.config, seed=seed)
        for names, rng in self._streams:
            seed_later(rng, stream_key(seed, *names))  # seeded at its first draw, if any

    # ------------------------------------------------------------------ clock
    @property
    def now(self) -> int:
        """Current simulated time in ms."""
        return self.queue.now

    def start(self) -> None:
        """Start every node."""
        for slot in self.slots.values():
            self._boot(slot)
        self._after_event("start", {})

    def schedule(self, at_ms: int, action: Callable[[], None], label: str,
                 marks_touched: bool = False) -> None:
        """Run ``action`` at ``at_ms`` as an event of its own, traced as ``label``.

        An action changes any node it likes, so after it every node is looked at (its
        messages sent, its next wake-up, the invariants); one that calls :meth:`touch`
        on each node it changes says so with ``marks_touched``, and only those are.
        """
        self.queue.schedule(at_ms, (_ACTION, action, label, marks_touched))

    def step(self) -> bool:
        """Process one event; False when the queue is empty or an invariant failed."""
        if self.violation is not None or not self.queue:
            return False
        now, event = self.queue.pop()
        return self._run_event(now, event)

    def _run_event(self, now: int, event: tuple[Any, ...]) -> bool:
        """Process one popped event (see :meth:`step`)."""
        self._in_event = True
        try:
            kind = event[0]
            if kind == _DELIVER:
                self._deliver(event, now)
            elif kind == _WAKE:
                if not self._wake(event[1], event[2], now):
                    return True  # a superseded timer: not an event at all
            else:
                self._line = {"i": self.events, "t": now, "ev": "action", "what": event[2]}
                event[1]()
                if not event[3]:
                    self._touched = list(self.slots.values())
            self._after_event(None, None)
        finally:
            self._in_event = False
        return self.violation is None

    def act(self, label: str, action: Callable[[], None]) -> None:
        """Run an outside input (a client request, a fault) now, as an event of its own."""
        if self._in_event:
            action()
            return
        if self.violation is not None:
            return
        self._in_event = True
        try:
            self._line = {"i": self.events, "t": self.queue.now, "ev": "action", "what": label}
            action()
            self._touched = list(self.slots.values())
            self._after_event(None, None)
        finally:
            self._in_event = False

    def run_until(self, time_ms: int) -> bool:
        """Process every event up to ``time_ms``; the clock ends at ``time_ms``.

        Returns False if an invariant failed.
        """
        self._run_events(time_ms, None)
        if self.violation is None and self.queue.now < time_ms:
            self.queue.now = time_ms
        return self.violation is None

    def run_for(self, duration_ms: int) -> bool:
        """Process events for ``duration_ms`` of simulated time."""
        return self.run_until(self.now + duration_ms)

    def run_until_true(self, predicate: Callable[[], bool], timeout_ms: int) -> bool:
        """Run until ``predicate()`` holds (checked after each event) or the timeout passes.

        Returns whether the predicate holds. Never runs past ``now + timeout_ms``.
        """
        queue = self.queue
        deadline = queue.now + timeout_ms
        if self._run_events(deadline, predicate):
            return True
        if self.violation is None:
            queue.now = max(queue.now, deadline)
        return predicate()

    def _run_events(self, deadline: int, predicate: Callable[[], bool] | None) -> bool:
        """Process the events due by ``deadline`` until ``predicate()`` holds (asked before
        each event; never, when None) or an invariant fails; returns whether it held.

        :meth:`step` and :meth:`_run_event`, inline: this loop runs every event.
        """
        queue, deliver, wake, after = self.queue, self._deliver, self._wake, self._after_event
        heap = queue.heap
        while True:
            if predicate is not None and predicate():
                return True
            if self.violation is not None or not heap or heap[0][0] > deadline:
                return False
            at, _, event = heappop(heap)
            queue.now = at
            self._in_event = True
            try:
                kind = event[0]
                if kind == _DELIVER:
                    deliver(event, at)
                elif kind == _WAKE:
                    if not wake(event[1], event[2], at):
                        continue  # a superseded timer: not an event at all
                else:
                    self._line = {"i": self.events, "t": at, "ev": "action", "what": event[2]}
                    event[1]()
                    if not event[3]:
                        self._touched = list(self.slots.values())
                after(None, None)
            finally:
                self._in_event = False

    # ------------------------------------------------------------------ events
    def _deliver(self, event: tuple[Any, ...], now: int) -> None:
        _, env, src_inc, dst_inc = event
        slot = self.slots[env.dst]
        msg = env.message
        self._line = {"i": self.events, "t": now, "ev": "deliver", "src": env.src,
                      "dst": env.dst, "msg": type(msg).__name__, "epoch": msg.epoch}
        if slot.incarnation != dst_inc or src_inc < self.slots[env.src].crash_fence:
            self._line["lost"] = "restarted"
            return
        blocked = self.network.blocked  # Network.can_deliver, inline: it runs every delivery
        if blocked and (env.src, env.dst) in blocked:
            self._line["lost"] = "partition"
            return
        if slot.status is _PAUSED:
            slot.inbox.append(event)
            self._line["lost"] = "paused"
            return
        if slot.raft is None or slot.status is not _RUNNING:
            self._line["lost"] = "down"
            return
        try:
            if isinstance(env, NodeMessage):
                _deliver_to_apps(slot, env, now)
            else:
                slot.raft.handle(env, now)
        except RaftProtocolError as exc:
            self._fail(InvariantViolation("LogMatching", str(exc)))
        except InvariantViolation as violation:
            self._fail(violation)
        touched = self._touched
        if slot not in touched:
            touched.append(slot)

    def _wake(self, node_id: int, incarnation: int, now: int) -> bool:
        slot = self.slots[node_id]
        if slot.incarnation != incarnation or slot.status is not _RUNNING \
                or slot.wake_at != now:
            return False
        self._line = {"i": self.events, "t": now, "ev": "wake", "node": node_id}
        slot.wake_at = None
        try:
            assert slot.raft is not None
            slot.raft.poll(now)
            for app in slot.apps:
                app.poll(now)
        except RaftProtocolError as exc:
            self._fail(InvariantViolation("LogMatching", str(exc)))
        except InvariantViolation as violation:
            self._fail(violation)
        self.touch(slot)
        return True

    def _call(self, slot: NodeSlot, fn: Callable[[], object]) -> None:
        try:
            fn()
        except RaftProtocolError as exc:
            self._fail(InvariantViolation("LogMatching", str(exc)))
        except InvariantViolation as violation:
            self._fail(violation)

    def _fail(self, violation: InvariantViolation) -> None:
        if self.violation is None:
            self.violation = violation
            self.violation_event = self.events

    def _after_event(self, label: str | None, extra: dict[str, Any] | None) -> None:
        touched = self._touched if label is None else list(self.slots.values())
        self._touched = []
        queue = self.queue
        now = queue.now
        leaders = self._leaders
        for slot in touched:
            raft = slot.raft
            if raft is not None:
                sent = raft.outbox
                if sent:
                    raft.outbox = []  # RaftNode.drain_outbox, inline
                    self._send(slot, sent, now)
                for drain in slot.drains:
                    messages = drain()
                    if messages:
                        self._send(slot, messages, now)
                if slot.shutting_down and any(getattr(app, "shutdown_complete", False)
                                              for app in slot.apps):
                    self._stop(slot)
                    raft = slot.raft
                elif slot.status is _RUNNING:  # its next wake-up, if earlier than the queued one
                    deadline = raft.next_deadline()
                    for next_deadline in slot.deadlines:
                        app_deadline = next_deadline()
                        if app_deadline is not None and (deadline is None
                                                         or app_deadline < deadline):
                            deadline = app_deadline
                    if deadline is not None:
                        if deadline < now:
                            deadline = now
                        wake_at = slot.wake_at
                        if wake_at is None or deadline < wake_at:
                            slot.wake_at = deadline
                            queue.schedule(deadline, (_WAKE, slot.node_id, slot.incarnation))
            # Only a touched node can have become or stopped being a running leader.
            if raft is not None and raft.role is _LEADER and slot.status is _RUNNING:
                leaders[slot.node_id] = slot
            else:
                leaders.pop(slot.node_id, None)
        # The event's trace line: "i" and "t" first, as the handlers above build it.
        out = self._line if label is None else {"i": self.events, "t": now, "ev": label,
                                                 **(extra or {})}
        if "i" not in out:  # a line made without them: they still come first
            out = {"i": self.events, "t": now, **out}
        self._line = {}
        if len(touched) == 1:
            raft = touched[0].raft
            if raft is not None:
                out["state"] = raft.describe()
        self.trace.write(out)
        self.events += 1
        if now != self._clock_at:
            self._clock_at, self._events_at_clock = now, 1
        else:
            self._events_at_clock += 1
            if self._events_at_clock > MAX_EVENTS_AT_ONE_TIME:
                self._fail(InvariantViolation(
                    "TimeAdvances", f"{self._events_at_clock:,} events at {now} ms without "
                                    f"the clock moving: a livelock"))
        if self.violation is None:
            self._monitoring = True
            try:
                for monitor in self.monitors:
                    monitor.check(self, touched)
            except InvariantViolation as violation:
                self._fail(violation)  # the first failing monitor ends the checks
            finally:
                self._monitoring = False
        if self.violation is not None:
            self.trace.write({"i": self.events, "t": now, "ev": "violation",
                              "invariant": self.violation.invariant,
                              "message": self.violation.message})

    def _send(self, slot: NodeSlot, envelopes: Sequence[Envelope | NodeMessage],
              now: int) -> None:
        slots, transmit, schedule = self.slots, self.network.transmit, self.queue.schedule
        incarnation = slot.incarnation
        for env in envelopes:
            dst = slots.get(env.dst)
            if dst is None:
                continue
            for at in transmit(env.src, env.dst, now):
                schedule(at, (_DELIVER, env, incarnation, dst.incarnation))

    def drop_next_delivery(self) -> bool:
        """Lose the message that would arrive next (a test's fault); False if none is in flight."""
        deliveries = [entry for entry in self.queue.entries() if entry[2][0] == _DELIVER]
        if not deliveries:
            return False
        self.queue.remove(min(deliveries))
        return True

    def touch(self, slot: NodeSlot) -> None:
        """Mark a node as changed by the current action (its messages get sent)."""
        if slot not in self._touched:
            self._touched.append(slot)

    # ------------------------------------------------------------------ nodes
    def _boot(self, slot: NodeSlot) -> None:
        slot.incarnation += 1
        slot.wake_at = None
        slot.inbox = []
        rng = self.stream("node", slot.node_id, slot.incarnation)
        slot.raft = RaftNode(slot.node_id, self.voter_ids, slot.storage, rng, self.now,
                             config=self.config.raft, incarnation=slot.incarnation,
                             mutations=self.config.mutations)
        slot.status = NodeStatus.RUNNING
        for monitor in self.monitors:  # (a lone voter leads as it boots: its checks run now)
            self._call(slot, partial(monitor.on_boot, self, slot))
        slot.apps = self.app_factory(self, slot) if self.app_factory else []
        slot.drains = [d for app in slot.apps if (d := getattr(app, "drain_outbox", None))]
        slot.deadlines = [app.next_deadline for app in slot.apps
                          if getattr(app, "has_timers", True)]
        slot.handlers = [h for app in slot.apps
                         if (h := getattr(app, "handle_message", None))]
        for monitor in self.monitors:
            monitor.on_started(self, slot)
        self.touch(slot)

    def _down(self, slot: NodeSlot, status: NodeStatus) -> None:
        for app in slot.apps:
            app.close(self.now)
        slot.raft = None
        slot.apps = []
        slot.drains = []
        slot.deadlines = []
        slot.handlers = []
        slot.status = status
        slot.inbox = []
        slot.shutting_down = False
        slot.incarnation += 1  # every connection of the old process is gone
        self._leaders.pop(slot.node_id, None)  # even when a node the event did not touch

    def crash(self, node_id: int) -> None:
        """Hard crash: the process stops and unflushed appends are lost."""
        if not self._in_event:
            self.act(f"crash {node_id}", lambda: self.crash(node_id))
            return
        slot = self.slots[node_id]
        if slot.status in (NodeStatus.RUNNING, NodeStatus.PAUSED):
            slot.storage.crash()
            self._down(slot, NodeStatus.CRASHED)
            slot.crash_fence = slot.incarnation

    def shutdown(self, node_id: int) -> None:
        """Graceful shutdown: a leader resigns, the log is flushed, then the process stops.

        A node with an app that shuts down in a controlled way (a broker: its
        leaderships move first) stops once that app says it is done.
        """
        if not self._in_event:
            self.act(f"shutdown {node_id}", lambda: self.shutdown(node_id))
            return
        slot = self.slots[node_id]
        if slot.status is NodeStatus.RUNNING and not slot.shutting_down:
            waiting = False  # every app is told (a broker's replica manager and lifecycle)
            for app in slot.apps:
                begin = getattr(app, "begin_controlled_shutdown", None)
                if begin is not None and begin(self.now):
                    waiting = True
            if waiting:
                slot.shutting_down = True
                self.touch(slot)
                return
        self._stop(slot)

    def _stop(self, slot: NodeSlot) -> None:
        if slot.raft is not None and slot.status is NodeStatus.RUNNING:
            slot.raft.resign(self.now)
            slot.raft.flush_all(self.now)
            self._send(slot, slot.raft.drain_outbox(), self.now)
        if slot.status in (NodeStatus.RUNNING, NodeStatus.PAUSED):
            self._down(slot, NodeStatus.STOPPED)

    def wipe(self, node_id: int) -> None:
        """Kill the node and wipe its disk; it stays down until restarted."""
        if not self._in_event:
            self.act(f"wipe {node_id}", lambda: self.wipe(node_id))
            return
        slot = self.slots[node_id]
        self.crash(node_id)
        slot.storage.wipe()
        slot.wipe_count += 1
        self.wipes += 1

    def restart(self, node_id: int) -> None:
        """Start a crashed or stopped node from what its disk holds."""
        if not self._in_event:
            self.act(f"restart {node_id}", lambda: self.restart(node_id))
            return
        slot = self.slots[node_id]
        if slot.status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
            self._boot(slot)

    def pause(self, node_id: int) -> None:
        """Freeze a running node: messages wait and timers stand still."""
        if not self._in_event:
            self.act(f"pause {node_id}", lambda: self.pause(node_id))
            return
        slot = self.slots[node_id]
        if slot.status is NodeStatus.RUNNING:
            slot.status = NodeStatus.PAUSED
            self._leaders.pop(slot.node_id, None)

    def resume(self, node_id: int) -> None:
        """Unfreeze a paused node; what waited is delivered now, in order."""
        if not self._in_event:
            self.act(f"resume {node_id}", lambda: self.resume(node_id))
            return
        slot = self.slots[node_id]
        if slot.status is not NodeStatus.PAUSED:
            return
        slot.status = NodeStatus.RUNNING
        waiting, slot.inbox = slot.inbox, []
        for event in waiting:
            self.queue.schedule(self.now, event)
        slot.wake_at = None
        self.touch(slot)

    def leader_slot(self) -> NodeSlot | None:
        """The running leader of the highest epoch, if any.

        Between events (and while monitors check one) the answer is computed
        once per event; an event in progress always looks afresh.
        """
        if self._in_event and not self._monitoring:
            return self._find_leader()
        leaders = self._leaders
        if len(leaders) < 2:  # the common case: no leader, or one (a stale one is deposed)
            for slot in leaders.values():
                return slot
            return None
        cached = self._leader_cache
        if cached is not None and cached[0] == self.events:
            return cached[1]
        best = self._find_leader()
        self._leader_cache = (self.events, best)
        return best

    def _find_leader(self) -> NodeSlot | None:
        best: NodeSlot | None = None
        for slot in self.slots.values():
            raft = slot.raft
            if raft is not None and slot.status is _RUNNING \
                    and raft.role is _LEADER \
                    and (best is None or best.raft is None or raft.epoch > best.raft.epoch):
                best = slot
        return best

    def leader_id(self) -> int | None:
        """Id of :meth:`leader_slot`, if any."""
        slot = self.leader_slot()
        return slot.node_id if slot else None

    # ------------------------------------------------------------------ faults
    def resolve(self, target: NodeRef) -> int | None:
        """A node id from a fault's node (``leader`` resolves to the current leader)."""
        if target == LEADER:
            return self.leader_id()
        node_id = int(target)
        if node_id not in self.slots:
            raise ValueError(f"no node {node_id}")
        return node_id

    def schedule_fault(self, spec: FaultSpec) -> None:
        """Queue a fault at its time."""
        self.schedule(spec.at_ms, lambda: self.apply_fault(spec), f"fault {spec.render()}")

    def apply_fault(self, spec: FaultSpec) -> None:
        """Apply a fault now (``leader`` resolves to the current leader, else it is skipped)."""
        if not self._in_event:
            self.act(f"fault {spec.render()}", lambda: self.apply_fault(spec))
            return
        all_nodes = list(self.slots)
        if isinstance(spec, Heal):
            self.network.heal()
        elif isinstance(spec, Partition):
            self.network.partition([list(group) for group in spec.groups], all_nodes)
        elif isinstance(spec, Block):
            self.network.block(spec.src, spec.dst)
        else:
            node = self.resolve(spec.node)
            if node is None:
                self.faults_applied.append(f"{spec.render()} (skipped: no leader)")
                return
            if isinstance(spec, Crash):
                self.crash(node)
            elif isinstance(spec, Shutdown):
                self.shutdown(node)
            elif isinstance(spec, Restart):
                self.restart(node)
            elif isinstance(spec, Wipe):
                self.wipe(node)
            elif isinstance(spec, Isolate):
                self.network.isolate(node, all_nodes)
            else:
                self.pause(node)
                self.schedule(self.now + spec.duration_ms, lambda: self.resume(node),
                              f"resume {node}")
            self.faults_applied.append(f"{spec.render()} (node {node})")
            return
        self.faults_applied.append(spec.render())
