"""What every experiment's row has, and the pieces of a run they share.

Columns: the run's identity first (experiment, scenario, mode, seeds, params),
the verdict and the cost last (valid, invariant, events, simulated and wall
ms, the trace fingerprint and the replay command).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from experiments.model import Column, ExperimentError, Param, ParamValue, RunSpec
from sim.cluster import ClusterConfig, KRaftCluster
from sim.settings import SettingError, parse_settings, setting

MODES = ("transactional", "non-atomic", "atomic")
"""Every write mode."""

MAX_OPERATION_RECORDS = 1_000_000
"""The most records one operation of an experiment may write (batches x batch-records)."""


def cluster_param(name: str, default: tuple[ParamValue, ...], doc: str | None = None,
                  minimum: int | None = None) -> Param:
    """An experiment parameter that is a cluster setting (sim/settings.py): its type,
    bounds and help come from the settings table; ``minimum`` may only narrow them."""
    found = setting(name)
    low = found.minimum if minimum is None or found.minimum is None else \
        max(minimum, found.minimum)
    return Param(name, found.kind, default, doc or found.help, choices=found.choices,
                 minimum=low, maximum=found.maximum)


CLUSTER_PARAMS: tuple[Param, ...] = (
    cluster_param("batch-records", (10,), "records per batch (max-records-per-batch)",
                  minimum=4),
    cluster_param("fetch-records", (20,), "records a fetch carries at most"),
    cluster_param("linger-ms", (25,)),
)
"""Parameters of the simulated cluster that every experiment takes."""

CLUSTER_SETTING_PARAMS = ("controllers", "brokers", "batch-records", "fetch-records",
                          "linger-ms", "mode", "mutations", "metadata-version")
"""The experiments' parameters that are cluster settings, by the names rows carry."""

MUTATIONS_PARAM = cluster_param("mutations", ("none",),
                                "deliberate bugs to switch on, joined by '+' "
                                "(e.g. forget-failover-abort), or none")
"""Every experiment's last parameter."""

HEAD_COLUMNS: tuple[Column, ...] = (
    Column("experiment", "string", "the experiment (failover, visibility)"),
    Column("scenario", "string", "the scenario within the experiment"),
    Column("mode", "string", "how multi-batch operations are written: transactional, "
                             "non-atomic or atomic"),
    Column("master_seed", "long", "the sweep's --seed"),
    Column("run_index", "long", "the run's number within its grid cell"),
    Column("seed", "long", "the run's seed: SHA-256 of (experiment, master seed, scenario, "
                           "index)"),
    Column("params", "string", "every parameter of the run as sorted JSON"),
)
"""The identity of a run."""

TAIL_COLUMNS: tuple[Column, ...] = (
    Column("partial_visibility", "long", "images published inside a multi-batch operation "
                                         "(partial-visibility observations)"),
    Column("valid", "string", "true: every invariant held; false: one failed; unknown: the "
                              "run did not settle within its time limit"),
    Column("invariant", "string", "the invariant that failed", nullable=True),
    Column("message", "string", "what failed, or why the run is unknown", nullable=True),
    Column("events", "long", "events the simulation processed"),
    Column("simulated_ms", "long", "simulated milliseconds at the end of the run"),
    Column("wall_ms", "long", "wall-clock milliseconds the run took (not deterministic)"),
    Column("fingerprint", "string", "SHA-256 of the run's trace (first 16 hex digits)"),
    Column("replay", "string", "a command that reruns this row without Spark and writes "
                               "its trace"),
)
"""The verdict and the cost of a run."""

ACK_INVARIANT = "AcknowledgedDurable"
"""Name used when an acknowledged operation is missing from the final state."""


def params_json(params: dict[str, ParamValue]) -> str:
    """The parameters as canonical JSON (sorted keys, no spaces)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def replay_command(spec: RunSpec) -> str:
    """A one-line shell command that reruns ``spec`` without Spark, writing its trace."""
    words = ["kraftsim", "experiment", spec.experiment, "--seed", str(spec.master_seed),
             "--replay", str(spec.index)]
    for name, value in spec.params.items():
        words += ["--param", f"{name}={value}"]
    words += ["--trace", f"{spec.experiment}-{spec.scenario}-{spec.seed}.jsonl"]
    return shlex.join(words)


def cluster_config(spec: RunSpec, brokers: int) -> ClusterConfig:
    """The cluster of a run: its cluster parameters, ``brokers`` and its seed, read by the
    one settings parser (sim/settings.py)."""
    words = [f"{name}={spec.params[name]}" for name in CLUSTER_SETTING_PARAMS
             if name != "brokers" and name in spec.params]
    try:
        return parse_settings([*words, f"brokers={brokers}", f"seed={spec.seed}"])
    except SettingError as exc:
        raise ExperimentError(f"parameter {exc.key}: {exc.problem}") from None


def own_cluster_config(spec: RunSpec) -> ClusterConfig:
    """:func:`cluster_config` with the run's own ``brokers`` parameter."""
    return cluster_config(spec, int(spec.params["brokers"]))


def check_operation_size(batches: int, batch_records: int) -> None:
    """Refuse, before any run, an operation of more than MAX_OPERATION_RECORDS records."""
    if batches * batch_records > MAX_OPERATION_RECORDS:
        raise ExperimentError(f"parameters batches x batch-records: an operation may write "
                              f"at most {MAX_OPERATION_RECORDS} records, got {batches} x "
                              f"{batch_records}")


def partitions_for(batches: int, batch_records: int) -> int:
    """Partitions of a topic whose records fill ``batches`` batches in every write mode.

    A topic of P partitions is P + 1 records (TopicRecord, PartitionRecords);
    in transactional mode Begin and End add two more.
    """
    return max(1, batches * batch_records - 3)


def verdict(cluster: KRaftCluster, settled: bool, acked_lost: int,
            unsettled_reason: str) -> tuple[str, str | None, str | None]:
    """(valid, invariant, message) of a finished run."""
    violation = cluster.sim.violation
    if violation is not None:
        return "false", violation.invariant, violation.message
    if cluster.controller_faults:
        node, at, fault = cluster.controller_faults[0]
        return "false", "ControllerFault", f"controller {node} stopped at {at} ms: {fault}"
    if acked_lost:
        return "false", ACK_INVARIANT, (f"{acked_lost} acknowledged operation(s) missing from "
                                        f"the final committed state")
    if not settled:
        return "unknown", None, unsettled_reason
    return "true", None, None


def tail_values(cluster: KRaftCluster, spec: RunSpec, valid: tuple[str, str | None, str | None],
                wall_ms: int) -> dict[str, Any]:
    """The tail columns of a finished run."""
    return {
        "partial_visibility": cluster.txn_invariants.partial_observations,
        "valid": valid[0], "invariant": valid[1], "message": valid[2],
        "events": cluster.sim.events, "simulated_ms": cluster.sim.now, "wall_ms": wall_ms,
        "fingerprint": cluster.sim.trace.fingerprint, "replay": replay_command(spec),
    }


def head_values(spec: RunSpec) -> dict[str, Any]:
    """The head columns of a run."""
    return {
        "experiment": spec.experiment, "scenario": spec.scenario,
        "mode": str(spec.params["mode"]), "master_seed": spec.master_seed,
        "run_index": spec.index, "seed": spec.seed, "params": params_json(spec.params),
    }
