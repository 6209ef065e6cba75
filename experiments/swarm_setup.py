"""What one swarm run does: its cluster, its workload and its faults, drawn or given.

Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012): instead of one
configuration with every feature on, each run draws its own configuration
and switches each fault kind on or off, so that faults which mask each other
in a "kitchen sink" run get runs of their own.

Everything is drawn from the run's seed through named sub-streams
(``random.Random("kraftsim/SEED/swarm/NAME")``): ``config`` (cluster size and
settings), ``workload`` (the client's creates, deletes and config changes),
``reassignments`` (partition reassignments and cancels of the created topics,
merged into the workload by time; none without brokers) and ``faults`` (which
kinds, how many, when, on which node). The reassignments have a stream of their
own so that a seed's other draws stay what they were before the swarm
reassigned. Any drawn value can be given instead as a
parameter (``--param controllers=3``, ``--param faults=crash:3000@400``); the
shrinker uses that to write a reproduction as a replay command.

Times of operations and faults are simulated ms after the workload starts
(when the cluster has elected a controller and registered its brokers). In a
``faults`` parameter items are separated by ``;`` and a partition's commas are
written ``/`` (``partition:3000/0|3001@900``), because ``--param`` splits its
values at commas.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import msgspec

from experiments.common import partitions_for
from experiments.model import ExperimentError, ParamValue

DRAWN = "drawn"
"""A parameter's value when it is drawn from the run's seed."""

FAULT_KINDS = ("crash", "shutdown", "wipe", "pause", "partition", "isolate", "block")
"""The fault kinds a swarm run switches on or off (restart and heal follow them)."""

MAX_CONTROLLERS = 7
MAX_BROKERS = 5
MAX_OPS = 8
MAX_BATCHES = 6
"""A created topic's records fill 1 to MAX_BATCHES batches."""
MAX_FAULTS = 6
MAX_REASSIGNMENTS = 4
"""Reassignments (each perhaps followed by a cancel) a run draws at most."""
REASSIGN_KINDS = ("reassign", "cancel")
"""The operations that reassign a partition or cancel its reassignment."""


class SwarmFault(msgspec.Struct, frozen=True):
    """One fault at ``at_ms`` after the workload starts (see ``sim.faults`` for the kinds)."""

    kind: str
    at_ms: int
    target: str = ""
    duration_ms: int = 0

    def text(self, offset_ms: int = 0) -> str:
        """The fault in kraftsim's fault language, its time shifted by ``offset_ms``."""
        at = self.at_ms + offset_ms
        if self.kind == "heal":
            return f"heal@{at}"
        if self.kind == "pause":
            return f"pause:{self.target}@{at}+{self.duration_ms}"
        return f"{self.kind}:{self.target}@{at}"

    def nodes(self) -> list[int]:
        """The node ids the fault names (``leader`` names none)."""
        out: list[int] = []
        for part in self.target.replace(">", ",").replace("|", ",").split(","):
            if part.isdigit():
                out.append(int(part))
        return out


class WorkOp(msgspec.Struct, frozen=True):
    """One client operation at ``at_ms`` after the workload starts.

    ``kind``: ``create`` (topic ``topic`` whose records fill ``batches``
    batches), ``delete`` (topic ``topic``), ``alter-topic`` (set
    ``retention.ms`` of ``topic`` to ``value``), ``alter-broker`` (set the
    cluster-wide default broker config ``log.retention.ms`` to ``value``),
    ``reassign`` (move partition ``partition`` of ``topic`` to
    :meth:`target`) or ``cancel`` (cancel that partition's reassignment).
    """

    kind: str
    at_ms: int
    topic: str = ""
    batches: int = 0
    value: int = 0
    partition: int = 0
    order: tuple[int, ...] = ()
    """A reassignment's brokers in a random order (a permutation of 0..MAX_BROKERS-1)."""
    replicas: int = 0
    """How many replicas a reassignment's target has (1 to 3; fewer brokers: all)."""

    def target(self, brokers: int) -> tuple[int, ...] | None:
        """A reassignment's target replicas in a cluster of ``brokers`` brokers: the first
        ``min(replicas, brokers)`` brokers of ``order`` that exist (None for a cancel).

        Resolved against the cluster rather than drawn for it, so that a reproduction
        shrunk to fewer brokers keeps the same operations (and still replays the same)."""
        if self.kind != "reassign":
            return None
        present = [b for b in self.order if b < brokers]
        return tuple(present[:min(self.replicas, brokers)])


class SwarmSetup(msgspec.Struct, frozen=True):
    """Everything a swarm run does, drawn from its seed or given as parameters."""

    controllers: int
    brokers: int
    batch_records: int
    fetch_records: int
    linger_ms: int
    pre_vote: bool
    noop_ms: int
    snapshot_every: int
    horizon_ms: int
    """Faults and operations happen within this many ms; then every fault is healed."""
    kinds: tuple[str, ...]
    """The fault kinds switched on (drawn faults use only these)."""
    faults: tuple[SwarmFault, ...]
    ops: tuple[WorkOp, ...]

    @property
    def controller_ids(self) -> list[int]:
        """Node ids of the controllers (Kafka's test-kit numbering, 3000...)."""
        return [3000 + i for i in range(self.controllers)]

    @property
    def broker_ids(self) -> list[int]:
        """Node ids of the brokers (0...)."""
        return list(range(self.brokers))


def encode_faults(faults: tuple[SwarmFault, ...]) -> str:
    """Faults as a ``faults`` parameter value (``none`` when there are none)."""
    if not faults:
        return "none"
    return ";".join(f.text().replace(",", "/") for f in faults)


def decode_faults(text: str) -> tuple[SwarmFault, ...]:
    """Faults from a ``faults`` parameter value; raises ExperimentError when malformed."""
    if text.strip() in ("", "none"):
        return ()
    faults = []
    for item in text.split(";"):
        item = item.strip().replace("/", ",")
        if not item:
            continue
        faults.append(_decode_one(item))
    return tuple(sorted(faults, key=lambda f: f.at_ms))


def _decode_one(item: str) -> SwarmFault:
    head, at_sep, when = item.rpartition("@")
    if not at_sep:
        raise ExperimentError(f"parameter faults: {item!r} has no @TIME")
    duration = 0
    if "+" in when:
        when, _, dur = when.partition("+")
        duration = _int(dur, item)
    at = _int(when, item)
    if head == "heal":
        return SwarmFault("heal", at)
    kind, sep, target = head.partition(":")
    if not sep or kind not in (*FAULT_KINDS, "restart"):
        raise ExperimentError(f"parameter faults: unknown fault {item!r}; kinds: "
                              f"{', '.join((*FAULT_KINDS, 'restart', 'heal'))}")
    if kind == "pause" and duration <= 0:
        raise ExperimentError(f"parameter faults: pause needs +DURATION in {item!r}")
    return SwarmFault(kind, at, target, duration)


def _int(text: str, item: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ExperimentError(f"parameter faults: bad time {text!r} in {item!r}") from None


def _given(params: Mapping[str, ParamValue], name: str) -> str | None:
    value = str(params.get(name, DRAWN))
    return None if value == DRAWN else value


def _given_int(params: Mapping[str, ParamValue], name: str, minimum: int) -> int | None:
    value = _given(params, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ExperimentError(f"parameter {name}: {value!r} is neither an integer nor "
                              f"{DRAWN!r}") from None
    if number < minimum:
        raise ExperimentError(f"parameter {name}: must be at least {minimum}, got {number}")
    return number


def _given_bool(params: Mapping[str, ParamValue], name: str) -> bool | None:
    value = _given(params, name)
    if value is None:
        return None
    if value not in ("on", "off"):
        raise ExperimentError(f"parameter {name}: {value!r} is not on, off or {DRAWN!r}")
    return value == "on"


def draw_setup(seed: int, params: Mapping[str, ParamValue]) -> SwarmSetup:
    """The run's setup: each value given in ``params`` or drawn from ``seed``."""
    config = random.Random(f"kraftsim/{seed}/swarm/config")
    controllers = config.randint(1, MAX_CONTROLLERS)
    brokers = config.randint(0, MAX_BROKERS)
    batch_records = config.choice((4, 5, 8, 10, 16, 25, 50))
    fetch_records = config.choice((1, 3, 10, 20, 50, 200, 1000))
    linger_ms = config.choice((0, 0, 1, 5, 25, 100))
    pre_vote = config.random() < 0.5
    noop_ms = config.choice((0, 100, 500))
    snapshot_every = config.choice((0, 0, 1, 2, 7, 30, 200))
    drawn_horizon = config.randint(2_000, 12_000)
    controllers = _given_int(params, "controllers", 1) or controllers
    given_brokers = _given_int(params, "brokers", 0)
    brokers = brokers if given_brokers is None else given_brokers
    batch_records = _given_int(params, "batch-records", 4) or batch_records
    fetch_records = _given_int(params, "fetch-records", 1) or fetch_records
    given_linger = _given_int(params, "linger-ms", 0)
    linger_ms = linger_ms if given_linger is None else given_linger
    given_pre_vote = _given_bool(params, "pre-vote")
    pre_vote = pre_vote if given_pre_vote is None else given_pre_vote
    given_noop = _given_int(params, "noop-ms", 0)
    noop_ms = noop_ms if given_noop is None else given_noop
    given_snapshot = _given_int(params, "snapshot-every", 0)
    snapshot_every = snapshot_every if given_snapshot is None else given_snapshot
    horizon_ms = _given_int(params, "horizon-ms", 1) or drawn_horizon
    # drawn over the drawn horizon, so that a shorter given one keeps the earlier ops
    workload = draw_workload(random.Random(f"kraftsim/{seed}/swarm/workload"), drawn_horizon)
    if brokers > 0:
        workload = merge_ops(workload, draw_reassignments(
            random.Random(f"kraftsim/{seed}/swarm/reassignments"), workload, batch_records,
            drawn_horizon))
    ops = tuple(op for op in workload if op.at_ms < horizon_ms)
    op_count = _given_int(params, "ops", 0)
    if op_count is not None:
        ops = ops[:op_count]
    fault_rng = random.Random(f"kraftsim/{seed}/swarm/faults")
    kinds = tuple(k for k in FAULT_KINDS if fault_rng.random() < 0.5)
    controller_ids = [3000 + i for i in range(controllers)]
    given_faults = _given(params, "faults")
    if given_faults is None:
        faults = draw_faults(fault_rng, kinds, controller_ids, list(range(brokers)), horizon_ms)
    else:
        faults = decode_faults(given_faults)
        kinds = tuple(k for k in FAULT_KINDS if any(f.kind == k for f in faults))
        nodes = set(controller_ids) | set(range(brokers))
        for fault in faults:
            unknown = [n for n in fault.nodes() if n not in nodes]
            if unknown:
                raise ExperimentError(f"parameter faults: {fault.text()} names node(s) "
                                      f"{unknown} outside the cluster")
    return SwarmSetup(controllers, brokers, batch_records, fetch_records, linger_ms, pre_vote,
                      noop_ms, snapshot_every, horizon_ms, kinds, faults, ops)


def draw_workload(rng: random.Random, horizon_ms: int) -> tuple[WorkOp, ...]:
    """1 to MAX_OPS operations at random moments within the horizon.

    Creates (of topics filling 1 to MAX_BATCHES batches) come first and most
    often; deletes and alters name a topic created by an earlier operation,
    whether or not that one succeeds.
    """
    count = rng.randint(1, MAX_OPS)
    times = sorted(rng.randrange(horizon_ms) for _ in range(count))
    ops: list[WorkOp] = []
    created: list[str] = []
    for index, at in enumerate(times):
        roll = rng.random()
        if not created or roll < 0.55:
            topic = f"t{index}"
            created.append(topic)
            ops.append(WorkOp("create", at, topic, batches=rng.randint(1, MAX_BATCHES)))
        elif roll < 0.7:
            ops.append(WorkOp("delete", at, rng.choice(created)))
        elif roll < 0.88:
            ops.append(WorkOp("alter-topic", at, rng.choice(created), value=1000 + index))
        else:
            ops.append(WorkOp("alter-broker", at, value=1000 + index))
    return tuple(ops)


def draw_reassignments(rng: random.Random, workload: tuple[WorkOp, ...],
                       batch_records: int, horizon_ms: int) -> tuple[WorkOp, ...]:
    """Up to MAX_REASSIGNMENTS reassignments of partitions of the workload's topics.

    Each names a created topic, one of its partitions and a moment after the create
    was submitted (whether or not it succeeds); a fifth are cancels alone (usually
    refused: nothing to cancel), and a third of the reassignments are followed
    within 20 ms by a cancel of the same partition, which may catch it in progress (one
    that adds a replica stays in progress until the new replica has caught up).
    The target replicas are resolved against the cluster (:meth:`WorkOp.target`).
    """
    creates = [op for op in workload if op.kind == "create"]
    if not creates:
        return ()
    ops: list[WorkOp] = []
    for _ in range(rng.randint(0, MAX_REASSIGNMENTS)):
        create = rng.choice(creates)
        at = create.at_ms + rng.randrange(max(1, horizon_ms - create.at_ms))
        partition = rng.randrange(partitions_for(create.batches, batch_records))
        if rng.random() < 0.2:
            ops.append(WorkOp("cancel", at, create.topic, partition=partition))
            continue
        order = tuple(rng.sample(range(MAX_BROKERS), MAX_BROKERS))
        ops.append(WorkOp("reassign", at, create.topic, partition=partition, order=order,
                          replicas=rng.randint(1, 3)))
        if rng.random() < 1 / 3:
            cancel_at = at + rng.randrange(20)
            if cancel_at < horizon_ms:
                ops.append(WorkOp("cancel", cancel_at, create.topic, partition=partition))
    return tuple(ops)


def merge_ops(workload: tuple[WorkOp, ...], more: tuple[WorkOp, ...]) -> tuple[WorkOp, ...]:
    """Both lists in time order (``workload``'s operation first at the same moment)."""
    ranked = [(op.at_ms, 0, i, op) for i, op in enumerate(workload)]
    ranked += [(op.at_ms, 1, i, op) for i, op in enumerate(more)]
    return tuple(op for *_, op in sorted(ranked, key=lambda item: item[:3]))


def draw_faults(rng: random.Random, kinds: tuple[str, ...], controllers: list[int],
                brokers: list[int], horizon_ms: int) -> tuple[SwarmFault, ...]:
    """Up to MAX_FAULTS faults of the switched-on ``kinds`` within the horizon.

    A crash, shutdown or wipe is followed by a restart (usually; otherwise the
    node stays down until the horizon), a partition, isolation or block by a
    heal (usually). ``leader`` targets resolve when the fault fires; a restart
    after one names every controller.
    """
    if not kinds:
        return ()
    nodes = controllers + brokers
    faults: list[SwarmFault] = []
    for _ in range(rng.randint(1, MAX_FAULTS)):
        kind = rng.choice(kinds)
        at = rng.randrange(horizon_ms)
        back = at + 1 + rng.randrange(max(1, horizon_ms // 3))
        undo = rng.random() < 0.8
        if kind in ("crash", "shutdown", "wipe", "pause", "isolate"):
            target = "leader" if rng.random() < 0.4 else str(rng.choice(nodes))
            if kind == "pause":
                faults.append(SwarmFault("pause", at, target, back - at))
                continue
            faults.append(SwarmFault(kind, at, target))
            if not undo or back >= horizon_ms:
                continue
            if kind == "isolate":
                faults.append(SwarmFault("heal", back))
            else:
                restarted = controllers if target == "leader" else [int(target)]
                faults.extend(SwarmFault("restart", back, str(n)) for n in restarted)
        elif kind == "partition":
            if len(nodes) < 2:
                continue
            members = list(nodes)
            rng.shuffle(members)
            cut = rng.randint(1, len(members) - 1)
            left, right = sorted(members[:cut]), sorted(members[cut:])
            faults.append(SwarmFault("partition", at, ",".join(map(str, left)) + "|"
                                     + ",".join(map(str, right))))
            if undo and back < horizon_ms:
                faults.append(SwarmFault("heal", back))
        else:  # block
            if len(nodes) < 2:
                continue
            src, dst = rng.sample(nodes, 2)
            faults.append(SwarmFault("block", at, f"{src}>{dst}"))
            if undo and back < horizon_ms:
                faults.append(SwarmFault("heal", back))
    return tuple(sorted(faults, key=lambda f: f.at_ms))


def setup_params(setup: SwarmSetup) -> dict[str, str]:
    """The parameters that give ``setup`` explicitly (nothing left to draw)."""
    return {
        "controllers": str(setup.controllers), "brokers": str(setup.brokers),
        "batch-records": str(setup.batch_records), "fetch-records": str(setup.fetch_records),
        "linger-ms": str(setup.linger_ms), "pre-vote": "on" if setup.pre_vote else "off",
        "noop-ms": str(setup.noop_ms), "snapshot-every": str(setup.snapshot_every),
        "horizon-ms": str(setup.horizon_ms), "ops": str(len(setup.ops)),
        "faults": encode_faults(setup.faults),
    }
