"""Shrinking a failing swarm run to a short reproduction: a deterministic greedy loop.

Each step proposes a smaller setup and keeps it when the run still fails the
same way (the same invariant, or again does not settle); passes repeat until
one changes nothing or the budget of reruns is spent. In order:

1. drop each fault in turn;
2. keep only the first k operations, the fewest that still fail;
3. end the schedule right after its last fault or operation, or at half of it;
4. fewer controllers, then fewer brokers (faults naming a removed node go; a
   reassignment's target shrinks with the brokers, and without brokers the
   reassignments go, as a run without brokers draws none);
5. settings back to Kafka's defaults (NoOps, snapshots, linger, pre-vote,
   fetch size), one at a time.

The shrunk setup is a set of explicit parameters, so its replay command
needs no drawing: it reruns exactly the reproduction. The same seed keeps
the simulation's own randomness (election jitter, placement) the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from experiments.swarm_run import Outcome, simulate
from experiments.swarm_setup import REASSIGN_KINDS, SwarmSetup

DEFAULTS = {"noop_ms": 500, "snapshot_every": 0, "linger_ms": 25, "pre_vote": True,
            "fetch_records": 1000}
"""Kafka's defaults (kraftsim's ControllerConfig/RaftConfig) the shrinker tries."""


class ShrinkResult(msgspec.Struct, frozen=True):
    """The smallest failing setup found, its outcome, and what it took."""

    setup: SwarmSetup
    outcome: Outcome
    runs: int
    """Simulations run while shrinking."""
    steps: int
    """Proposals that were kept."""


def size(setup: SwarmSetup) -> int:
    """How big a reproduction is: faults + operations + nodes."""
    return len(setup.faults) + len(setup.ops) + setup.controllers + setup.brokers


def shrink(seed: int, mode: str, mutations: frozenset[str], setup: SwarmSetup,
           outcome: Outcome, settle_ms: int, budget: int) -> ShrinkResult:
    """Shrink a failing ``setup`` whose run gave ``outcome``; at most ``budget`` reruns."""
    target = outcome.signature()
    best, best_outcome = setup, outcome
    runs = steps = 0

    def still_fails(candidate: SwarmSetup) -> Outcome | None:
        nonlocal runs
        runs += 1
        result = simulate(seed, mode, mutations, candidate, settle_ms)
        return result if result.signature() == target else None

    changed = True
    while changed and runs < budget:
        changed = False
        for propose in (_fewer_faults, _fewer_ops, _shorter, _smaller_cluster, _defaults):
            for candidate in propose(best):
                if runs >= budget:
                    break
                if candidate == best:
                    continue
                result = still_fails(candidate)
                if result is not None:
                    best, best_outcome = candidate, result
                    steps += 1
                    changed = True
                    break  # propose again from the smaller setup in the next pass
    return ShrinkResult(best, best_outcome, runs, steps)


Proposer = Callable[[SwarmSetup], Iterator[SwarmSetup]]


def _fewer_faults(setup: SwarmSetup) -> Iterator[SwarmSetup]:
    if len(setup.faults) > 1:
        yield msgspec.structs.replace(setup, faults=())
    for i in range(len(setup.faults)):
        yield msgspec.structs.replace(setup, faults=setup.faults[:i] + setup.faults[i + 1:])


def _fewer_ops(setup: SwarmSetup) -> Iterator[SwarmSetup]:
    for k in range(len(setup.ops)):
        yield msgspec.structs.replace(setup, ops=setup.ops[:k])


def _shorter(setup: SwarmSetup) -> Iterator[SwarmSetup]:
    last = max([f.at_ms for f in setup.faults] + [op.at_ms for op in setup.ops] + [0])
    for horizon in (last + 1, setup.horizon_ms // 2):
        if 0 < horizon < setup.horizon_ms:
            yield _with_horizon(setup, horizon)


def _with_horizon(setup: SwarmSetup, horizon: int) -> SwarmSetup:
    return msgspec.structs.replace(
        setup, horizon_ms=horizon, faults=tuple(f for f in setup.faults if f.at_ms < horizon),
        ops=tuple(op for op in setup.ops if op.at_ms < horizon))


def _smaller_cluster(setup: SwarmSetup) -> Iterator[SwarmSetup]:
    for controllers in range(1, setup.controllers):
        yield _resized(setup, controllers, setup.brokers)
    for brokers in range(setup.brokers):
        yield _resized(setup, setup.controllers, brokers)


def _resized(setup: SwarmSetup, controllers: int, brokers: int) -> SwarmSetup:
    nodes = {3000 + i for i in range(controllers)} | set(range(brokers))
    faults = []
    for fault in setup.faults:
        named = fault.nodes()
        if fault.kind == "partition":
            groups = [[n for n in map(int, g.split(",")) if n in nodes]
                      for g in fault.target.split("|")]
            groups = [g for g in groups if g]
            if len(groups) < 2:
                continue
            fault = msgspec.structs.replace(
                fault, target="|".join(",".join(map(str, g)) for g in groups))
        elif any(n not in nodes for n in named):
            continue
        faults.append(fault)
    ops = setup.ops if brokers else tuple(op for op in setup.ops
                                          if op.kind not in REASSIGN_KINDS)
    return msgspec.structs.replace(setup, controllers=controllers, brokers=brokers,
                                   faults=tuple(faults), ops=ops)


def _defaults(setup: SwarmSetup) -> Iterator[SwarmSetup]:
    for name, value in DEFAULTS.items():
        if getattr(setup, name) != value:
            yield msgspec.structs.replace(setup, **{name: value})
