"""Raft-only simulations: a quorum running the replicated counter under faults.

:func:`run_raft_sim` is what ``kraftsim raft-sim`` runs: N voters and M
observers, a counter increment every ``append_every_ms`` on the leader, the
faults of the configuration, every raft invariant after every event, and a
summary with the trace fingerprint and a one-line replay command.
"""

from __future__ import annotations

import shlex
import time
from typing import IO, Any

import msgspec

from raft import RaftConfig
from raft.config import ConfigError
from raft.mutations import Mutation
from sim.bounds import (
    INT64_MAX,
    MAX_DURATION_MS,
    MAX_OBSERVERS,
    MAX_RANDOM_FAULTS,
    MAX_SEED,
    MAX_VOTERS,
)
from sim.counter import ReplicatedCounter
from sim.faults import FaultSpec, config_record, random_faults
from sim.invariants import RAFT_INVARIANTS, RaftInvariants
from sim.network import LinkConfig
from sim.seeds import named_random
from sim.trace import Trace
from sim.world import App, NodeSlot, Simulation, WorldConfig


def _within(name: str, value: int, minimum: int, maximum: int, why: str = "") -> None:
    """Raise ConfigError(name, ...) unless minimum <= value <= maximum."""
    if value < minimum:
        raise ConfigError(name, f"{why + ': ' if why else ''}must be at least {minimum}, "
                                f"got {value}")
    if value > maximum:
        raise ConfigError(name, f"must be at most {maximum}, got {value}")


class RaftSimConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A raft-only run. Node ids: voters 0..N-1, observers N..N+M-1.

    Bounds (sim/bounds.py): 1-9 voters, 0-50 observers, at most 30 days of
    simulated time (also for fault times), at most 1000 random faults.
    """

    seed: int = 0
    voters: int = 3
    observers: int = 0
    duration_ms: int = 10_000
    faults: tuple[FaultSpec, ...] = ()
    random_faults: int = 0
    append_every_ms: int = 100
    snapshot_every: int = 50
    randomize: bool = False
    raft: RaftConfig = RaftConfig()
    network: LinkConfig = LinkConfig()
    mutations: frozenset[Mutation] = frozenset()

    def validate(self) -> RaftSimConfig:
        """Return self, or raise ConfigError naming the bad field."""
        _within("seed", self.seed, -MAX_SEED, MAX_SEED)
        _within("voters", self.voters, 1, MAX_VOTERS, "a quorum needs at least one voter")
        _within("observers", self.observers, 0, MAX_OBSERVERS)
        _within("duration", self.duration_ms, 1, MAX_DURATION_MS)
        _within("append_every_ms", self.append_every_ms, 1, MAX_DURATION_MS)
        _within("snapshot_every", self.snapshot_every, 0, INT64_MAX)
        _within("random_faults", self.random_faults, 0, MAX_RANDOM_FAULTS)
        self.raft.validate()
        self.network.validate()
        nodes = self.voters + self.observers
        for spec in self.faults:
            for node in spec.nodes():
                if node >= nodes:
                    raise ConfigError("faults", f"{spec.render()} names node {node}, but the "
                                                f"nodes are 0-{nodes - 1}")
            if not 0 <= spec.at_ms <= MAX_DURATION_MS:
                raise ConfigError("faults", f"{spec.render()}: the time must be within 0-"
                                            f"{MAX_DURATION_MS} ms")
        return self

    def resolved(self) -> RaftSimConfig:
        """The configuration actually run: randomised from the seed if asked."""
        if not self.randomize:
            return self
        rng = named_random(self.seed, "config")
        voters = rng.randint(1, 5)
        network = LinkConfig(latency_ms=rng.randint(0, 5), jitter_ms=rng.randint(0, 10),
                             drop_rate=rng.choice((0.0, 0.0, 0.01, 0.05)),
                             duplicate_rate=rng.choice((0.0, 0.01, 0.05)),
                             reorder_rate=rng.choice((0.0, 0.05)))
        return msgspec.structs.replace(
            self, randomize=False, voters=voters, observers=rng.randint(0, 3),
            random_faults=self.random_faults or rng.randint(0, 4), network=network,
            snapshot_every=rng.choice((0, 20, 50)))


class RaftSimResult(msgspec.Struct, kw_only=True):
    """What a raft-only run did."""

    config: RaftSimConfig
    faults: list[str]
    leaders: list[tuple[int, int, int]]
    high_watermarks: dict[int, int | None]
    committed_value: int
    events: int
    simulated_ms: int
    wall_ms: float
    fingerprint: str
    violation: str | None
    violation_event: int | None
    replay: str


def replay_command(config: RaftSimConfig) -> str:
    """The ``kraftsim raft-sim`` command line that reruns ``config`` exactly."""
    args = ["kraftsim", "raft-sim", "--seed", str(config.seed)]
    defaults = RaftSimConfig()
    if config.randomize:
        args.append("--randomize")
    else:
        for flag, name in (("--voters", "voters"), ("--observers", "observers")):
            if getattr(config, name) != getattr(defaults, name):
                args += [flag, str(getattr(config, name))]
    if config.duration_ms != defaults.duration_ms:
        args += ["--duration", str(config.duration_ms)]
    if config.faults:
        args += ["--faults", ";".join(f.render() for f in config.faults)]
    if config.random_faults:
        args += ["--random-faults", str(config.random_faults)]
    for mutation in sorted(config.mutations):
        args += ["--mutation", mutation.value]
    return shlex.join(args)


def build_raft_sim(config: RaftSimConfig, trace_out: IO[bytes] | None = None
                   ) -> tuple[Simulation, RaftInvariants]:
    """A started simulation for ``config`` (already resolved), with faults and workload queued."""
    config = config.validate()
    voter_ids = tuple(range(config.voters))
    observer_ids = tuple(range(config.voters, config.voters + config.observers))
    world = WorldConfig(seed=config.seed, voter_ids=voter_ids, observer_ids=observer_ids,
                        raft=config.raft, network=config.network, mutations=config.mutations)

    def apps(sim: Simulation, slot: NodeSlot) -> list[App]:
        return [ReplicatedCounter(sim, slot, config.snapshot_every)]

    invariants = RaftInvariants()
    sim = Simulation(world, apps, [invariants], Trace(trace_out))
    sim.trace.write({"ev": "config", "config": config_record(config)})
    faults = config.faults
    if config.random_faults:
        rng = named_random(config.seed, "faults")
        faults = tuple(sorted(
            faults + random_faults(rng, config.random_faults, list(voter_ids),
                                   list(voter_ids + observer_ids), 500,
                                   config.duration_ms * 3 // 4),
            key=lambda f: f.at_ms))
    for spec in faults:
        sim.schedule_fault(spec)
    sim.start()
    _schedule_appends(sim, config.append_every_ms, config.duration_ms)
    return sim, invariants


def _schedule_appends(sim: Simulation, every_ms: int, until_ms: int) -> None:
    def tick() -> None:
        now = sim.now
        leader = sim.leader_slot()
        if leader is not None:
            for app in leader.apps:
                if isinstance(app, ReplicatedCounter):
                    app.increment(now)
            sim.touch(leader)  # the only node an append changes
        if now + every_ms <= until_ms:
            sim.schedule(now + every_ms, tick, "append", marks_touched=True)

    sim.schedule(every_ms, tick, "append", marks_touched=True)


def run_raft_sim(config: RaftSimConfig, trace_out: IO[bytes] | None = None) -> RaftSimResult:
    """Run ``config`` to its end (or its first invariant violation)."""
    replay = replay_command(config)
    config = config.resolved().validate()
    started = time.perf_counter()
    sim, invariants = build_raft_sim(config, trace_out)
    sim.run_until(config.duration_ms)
    wall_ms = (time.perf_counter() - started) * 1000
    values = [app.committed for slot in sim.slots.values() for app in slot.apps
              if isinstance(app, ReplicatedCounter)]
    violation = sim.violation
    return RaftSimResult(
        config=config,
        faults=list(sim.faults_applied),
        leaders=list(invariants.leader_log),
        high_watermarks={n: (s.raft.high_watermark if s.raft else None)
                         for n, s in sim.slots.items()},
        committed_value=max(values, default=0),
        events=sim.events,
        simulated_ms=sim.now,
        wall_ms=wall_ms,
        fingerprint=sim.trace.fingerprint,
        violation=str(violation) if violation else None,
        violation_event=sim.violation_event,
        replay=replay,
    )


def format_summary(result: RaftSimResult) -> str:
    """A readable summary of a raft-only run."""
    config = result.config
    lines = [
        f"kraftsim raft-sim: seed {config.seed}, {config.voters} voters "
        f"(nodes 0-{config.voters - 1}), {config.observers} observers, "
        f"{config.duration_ms} ms simulated",
        "config: " + msgspec.json.encode(config_record(config)).decode(),
        "leaders:",
    ]
    lines += [f"  epoch {epoch}: node {node} elected at {at} ms"
              for epoch, node, at in result.leaders] or ["  (none)"]
    lines.append("faults applied:")
    lines += [f"  {fault}" for fault in result.faults] or ["  (none)"]
    hws = ", ".join(f"node {n}: {'-' if hw is None else hw}"
                    for n, hw in result.high_watermarks.items())
    lines.append(f"high watermarks: {hws}")
    lines.append(f"committed counter value: {result.committed_value}")
    lines.append(f"events: {result.events}, wall time: {result.wall_ms:.0f} ms, "
                 f"trace fingerprint: {result.fingerprint}")
    if result.violation:
        lines.append(f"invariants: VIOLATED at event {result.violation_event}: "
                     f"{result.violation}")
        lines.append(f"replay: {result.replay}")
    else:
        lines.append(f"invariants: all {len(RAFT_INVARIANTS)} held after every event")
    return "\n".join(lines)


def result_to_json(result: RaftSimResult) -> dict[str, Any]:
    """The result as JSON-ready builtins."""
    out: dict[str, Any] = msgspec.to_builtins(result)
    out["config"] = config_record(result.config)
    return out
