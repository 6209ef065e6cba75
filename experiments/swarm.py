"""The swarm experiment: random clusters, workloads and fault kinds; verdicts that hold.

Each run draws from its seed (see ``swarm_setup``) a cluster of 1-7
controllers and 0-5 brokers with its own batch and fetch sizes, linger,
pre-vote, NoOp interval and snapshot interval, a workload of creates (topics
filling several batches), deletes, config changes and (with brokers)
partition reassignments and cancels, and a fault schedule from a random
subset of the fault kinds. The write mode is an axis of the
grid, so runs of the same index share their world across the three modes.

Every run terminates (see ``swarm_run``): after ``horizon-ms`` the faults are
healed and the cluster must settle within ``settle-ms``. Its verdict is
``ok``, ``violation`` (an invariant failed, an acknowledged operation is
missing from the final state, or a reassignment broke one of the rules of
``swarm_reassign``), ``outside_model`` (faults Raft does not
promise to survive: wiped controllers' disks) or ``non_terminating``. In
non-atomic mode partial visibility is Kafka's as-built behaviour: it is
counted (``partial_visibility``), not judged, as in the visibility and
failover experiments.

A run that fails is shrunk (``shrink``) to the smallest setup that still
fails the same way, and the row carries that reproduction's replay command.
"""

from __future__ import annotations

import time
from typing import IO, Any

from experiments.common import HEAD_COLUMNS, MODES, MUTATIONS_PARAM, params_json
from experiments.common import replay_command as common_replay
from experiments.model import Column, Experiment, Param, Row, RunSpec
from experiments.shrink import ShrinkResult, shrink, size
from experiments.swarm_run import Outcome, simulate
from experiments.swarm_setup import (
    DRAWN,
    MAX_BROKERS,
    MAX_CONTROLLERS,
    draw_setup,
    encode_faults,
    setup_params,
)
from sim.settings import mutation_names

PARAMS: tuple[Param, ...] = (
    Param("scenario", str, ("swarm",), "the one scenario", choices=("swarm",)),
    Param("mode", str, MODES, "write mode of the operations", choices=MODES),
    Param("controllers", str, (DRAWN,), "controllers, 1-7 (drawn: from the seed)"),
    Param("brokers", str, (DRAWN,), "brokers, 0-5 (drawn: from the seed)"),
    Param("batch-records", str, (DRAWN,), "max records per batch (drawn: from the seed)"),
    Param("fetch-records", str, (DRAWN,), "records a fetch carries at most (drawn: from the "
                                          "seed)"),
    Param("linger-ms", str, (DRAWN,), "append linger of the leader (drawn: from the seed)"),
    Param("pre-vote", str, (DRAWN,), "on or off (drawn: from the seed)"),
    Param("noop-ms", str, (DRAWN,), "NoOp interval, 0: off (drawn: from the seed)"),
    Param("snapshot-every", str, (DRAWN,), "snapshot after this many records, 0: never "
                                           "(drawn: from the seed)"),
    Param("horizon-ms", str, (DRAWN,), "faults and operations happen within this many ms "
                                       "(drawn: from the seed)"),
    Param("ops", str, (DRAWN,), "keep the first N drawn operations (drawn: all)"),
    Param("faults", str, (DRAWN,), "the fault schedule, ';'-separated, ',' written '/', "
                                   "times after the workload starts; none; or drawn"),
    Param("settle-ms", int, (60_000,), "after the horizon, the cluster must settle within "
                                       "this many simulated ms", minimum=1000),
    Param("shrink", str, ("on",), "shrink a failing run to a short reproduction",
          choices=("on", "off")),
    Param("shrink-budget", int, (60,), "reruns a shrink may take at most", minimum=0),
    MUTATIONS_PARAM,
)

COLUMNS: tuple[Column, ...] = (
    *HEAD_COLUMNS,
    Column("verdict", "string", "ok, violation, outside_model or non_terminating"),
    Column("model", "string", "in, or why the faults are outside the model"),
    Column("controllers", "long", "controllers (voters)"),
    Column("brokers", "long", "brokers (observers)"),
    Column("batch_records", "long", "max records per batch"),
    Column("fetch_records", "long", "records a fetch carries at most"),
    Column("linger_ms", "long", "append linger of the controller leader"),
    Column("pre_vote", "bool", "KIP-996 pre-vote on"),
    Column("noop_ms", "long", "NoOp interval (0: off)"),
    Column("snapshot_every", "long", "snapshot every this many records (0: never)"),
    Column("horizon_ms", "long", "faults and operations happen within this many ms"),
    Column("fault_kinds", "string", "the fault kinds switched on, '+'-joined"),
    Column("faults", "string", "the fault schedule (ms after the workload starts)"),
    Column("fault_count", "long", "faults in the schedule"),
    Column("faults_applied", "long", "faults that fired (restarts and heals included)"),
    Column("wiped_controllers", "long", "controllers whose disk was wiped"),
    Column("operations", "long", "operations in the workload"),
    Column("acknowledged", "long", "operations acknowledged as committed"),
    Column("failed_ops", "long", "operations that failed (refused, or lost in a failover)"),
    Column("aborted", "long", "transactions aborted in the committed log"),
    Column("shrink_runs", "long", "simulations the shrinker ran (0: not shrunk)"),
    Column("shrunk_size", "long", "faults + operations + nodes of the shortest "
                                  "reproduction", nullable=True),
    Column("shrunk_faults", "string", "the shortest reproduction's faults", nullable=True),
    Column("shrunk_replay", "string", "a command that reruns the shortest reproduction",
           nullable=True),
    Column("partial_visibility", "long", "images published inside a multi-batch operation "
                                         "(a violation except in non-atomic mode)"),
    Column("valid", "string", "true: every invariant held; false: one failed; unknown: the "
                              "run did not settle"),
    Column("invariant", "string", "the invariant that failed", nullable=True),
    Column("message", "string", "what failed, or why the run did not settle", nullable=True),
    Column("events", "long", "events the simulation processed"),
    Column("simulated_ms", "long", "simulated milliseconds at the end of the run"),
    Column("wall_ms", "long", "wall-clock milliseconds the run (and its shrink) took (not "
                              "deterministic)"),
    Column("fingerprint", "string", "SHA-256 of the run's trace (first 16 hex digits)"),
    Column("replay", "string", "a command that reruns this row without Spark and writes "
                               "its trace"),
)


def replay_command(spec: RunSpec) -> str:
    """A shell command that reruns ``spec``; ``drawn`` parameters are left out."""
    params = {k: v for k, v in spec.params.items() if v != DRAWN}
    defaults = {p.name: p.default[0] for p in PARAMS if len(p.default) == 1}
    params = {k: v for k, v in params.items()
              if k in ("scenario", "mode") or defaults.get(k) != v}
    return common_replay(RunSpec(spec.experiment, params, spec.master_seed, spec.index,
                                 spec.seed))


def run_swarm(spec: RunSpec, trace_out: IO[bytes] | None = None) -> Row:
    """Run one swarm row (and shrink it if it fails); the columns are :data:`COLUMNS`."""
    started = time.perf_counter()
    p = spec.params
    mode, mutations = str(p["mode"]), mutation_names(str(p.get("mutations", "none")))
    settle_ms = int(p["settle-ms"])
    setup = draw_setup(spec.seed, p)
    outcome = simulate(spec.seed, mode, mutations, setup, settle_ms, trace_out)
    shrunk: ShrinkResult | None = None
    if outcome.failing and p["shrink"] == "on" and int(p["shrink-budget"]) > 0:
        shrunk = shrink(spec.seed, mode, mutations, setup, outcome, settle_ms,
                        int(p["shrink-budget"]))
    verdict, model = outcome.verdict, outcome.model
    if shrunk is not None and outcome.verdict == "outside_model" \
            and shrunk.outcome.model == "in":
        # the wipe was not needed: the failure reproduces inside the model
        verdict = "violation" if shrunk.outcome.valid == "false" else "non_terminating"
        model = "in (shrunk: " + model + ")"
    wall_ms = round((time.perf_counter() - started) * 1000)
    return _row(spec, setup, outcome, shrunk, verdict, model, wall_ms)


def check_axes(axes: dict[str, tuple[Any, ...]]) -> None:
    """Raise ExperimentError for a given value that cannot be used (before Spark starts)."""
    for name in ("controllers", "brokers", "batch-records", "fetch-records", "linger-ms",
                 "pre-vote", "noop-ms", "snapshot-every", "horizon-ms", "ops", "faults"):
        for value in axes.get(name, ()):
            if value != DRAWN:
                params = {name: value}
                if name == "faults":
                    params["controllers"] = str(MAX_CONTROLLERS)
                    params["brokers"] = str(MAX_BROKERS)
                draw_setup(0, params)


def shrunk_spec(spec: RunSpec, result: ShrinkResult) -> RunSpec:
    """The RunSpec of a shrunk reproduction: every drawn value given, no further shrink."""
    params = {**spec.params, **setup_params(result.setup), "shrink": "off"}
    return RunSpec(spec.experiment, params, spec.master_seed, spec.index, spec.seed)


def _row(spec: RunSpec, setup: Any, outcome: Outcome, shrunk: ShrinkResult | None,
         verdict: str, model: str, wall_ms: int) -> Row:
    values: dict[str, Any] = {
        "experiment": spec.experiment, "scenario": spec.scenario,
        "mode": str(spec.params["mode"]), "master_seed": spec.master_seed,
        "run_index": spec.index, "seed": spec.seed, "params": params_json(spec.params),
        "verdict": verdict, "model": model,
        "controllers": setup.controllers, "brokers": setup.brokers,
        "batch_records": setup.batch_records, "fetch_records": setup.fetch_records,
        "linger_ms": setup.linger_ms, "pre_vote": setup.pre_vote, "noop_ms": setup.noop_ms,
        "snapshot_every": setup.snapshot_every, "horizon_ms": setup.horizon_ms,
        "fault_kinds": "+".join(setup.kinds) or "none",
        "faults": encode_faults(setup.faults), "fault_count": len(setup.faults),
        "faults_applied": outcome.faults_applied,
        "wiped_controllers": outcome.wiped_controllers,
        "operations": len(setup.ops), "acknowledged": outcome.acknowledged,
        "failed_ops": outcome.failed_ops, "aborted": outcome.transactions_aborted,
        "shrink_runs": shrunk.runs if shrunk is not None else 0,
        "shrunk_size": size(shrunk.setup) if shrunk is not None else None,
        "shrunk_faults": encode_faults(shrunk.setup.faults) if shrunk is not None else None,
        "shrunk_replay": replay_command(shrunk_spec(spec, shrunk)) if shrunk is not None
        else None,
        "partial_visibility": outcome.partial_visibility,
        "valid": outcome.valid, "invariant": outcome.invariant, "message": outcome.message,
        "events": outcome.events, "simulated_ms": outcome.simulated_ms, "wall_ms": wall_ms,
        "fingerprint": outcome.fingerprint, "replay": replay_command(spec),
    }
    return {c.name: values[c.name] for c in COLUMNS}


SWARM = Experiment(name="swarm", doc=__doc__ or "", params=PARAMS, columns=COLUMNS,
                   run=run_swarm)
"""The swarm experiment."""
