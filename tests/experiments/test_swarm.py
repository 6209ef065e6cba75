"""The swarm experiment without Spark: drawing, replay, shrinking, outside-model, summary."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd
import pytest

from experiments import shrink as shrinking
from experiments import swarm, swarm_run
from experiments.model import ExperimentError
from experiments.swarm_report import summarize_rows, summarize_tables
from experiments.swarm_run import Outcome
from experiments.swarm_setup import (
    FAULT_KINDS,
    REASSIGN_KINDS,
    SwarmFault,
    SwarmSetup,
    WorkOp,
    decode_faults,
    draw_setup,
    encode_faults,
    setup_params,
)
from experiments.sweep import run_command
from tests.experiments.helpers import replay_swarm, run, spec, without_wall

QUIET: dict[str, Any] = {"shrink": "off"}
"""Rows without shrinking (the shrink tests switch it on)."""

MUTATED: dict[str, Any] = dict(mode="transactional", controllers=3, brokers=2, batch_records=4,
                               fetch_records=1, pre_vote="on", linger_ms=25,
                               mutations="publish-every-commit")
"""Index 5 of seed 1 (12 drawn faults, 6 operations) with a broker that publishes inside
transactions: fetching one record at a time, it shows part of a multi-batch create."""


def test_faults_round_trip_through_the_parameter() -> None:
    faults = (SwarmFault("partition", 10, "3000,0|3001"), SwarmFault("pause", 20, "leader", 5),
              SwarmFault("crash", 30, "3001"), SwarmFault("heal", 40))
    text = encode_faults(faults)
    assert "," not in text
    assert decode_faults(text) == faults
    assert decode_faults("none") == ()
    with pytest.raises(ExperimentError):
        decode_faults("explode:3000@1")


@pytest.mark.parametrize("seed", [1, 2, 3, 99])
def test_explicit_parameters_give_the_drawn_setup(seed: int) -> None:
    drawn = draw_setup(seed, {})
    assert 1 <= drawn.controllers <= 7 and 0 <= drawn.brokers <= 5
    assert set(drawn.kinds) <= set(FAULT_KINDS)
    given = draw_setup(seed, setup_params(drawn))
    assert msgspec.structs.replace(given, kinds=drawn.kinds) == drawn


def test_swarm_draws_varied_worlds() -> None:
    setups = [draw_setup(seed, {}) for seed in range(60)]
    assert {s.controllers for s in setups} == set(range(1, 8))
    assert {s.brokers for s in setups} == set(range(6))
    assert any(s.snapshot_every == 1 for s in setups) and any(s.linger_ms == 0 for s in setups)
    assert {s.pre_vote for s in setups} == {True, False}
    assert any(not s.kinds for s in setups) and any(len(s.kinds) >= 5 for s in setups)


@pytest.mark.parametrize("index", [0, 2])
def test_replay_reruns_the_row(index: int, tmp_path: Path) -> None:
    first = run(spec("swarm", index, mode="transactional", **QUIET))
    again = run(spec("swarm", index, mode="transactional", **QUIET))
    assert without_wall(first) == without_wall(again)
    trace = tmp_path / "trace.jsonl"
    replayed = replay_swarm(first["replay"], trace)
    assert without_wall(replayed) == without_wall(first)
    assert trace.stat().st_size > 0
    assert first["verdict"] in ("ok", "violation", "outside_model", "non_terminating")


def test_a_deliberate_bug_is_found_and_shrunk(tmp_path: Path) -> None:
    clean = run(spec("swarm", 5, **{**MUTATED, "mutations": "none"}, **QUIET))
    assert clean["verdict"] == "ok"
    row = run(spec("swarm", 5, **MUTATED, shrink_budget=40))
    assert row["verdict"] == "violation"
    assert row["invariant"] == "TxnAtomicVisibility"
    original = row["fault_count"] + row["operations"] + row["controllers"] + row["brokers"]
    assert 0 < row["shrink_runs"] <= 40
    assert row["shrunk_size"] < original
    assert decode_faults(row["shrunk_faults"]) == ()  # no fault is needed
    reproduced = replay_swarm(row["shrunk_replay"], tmp_path / "shrunk.jsonl")
    assert reproduced["invariant"] == "TxnAtomicVisibility"
    assert reproduced["shrink_runs"] == 0
    assert reproduced["replay"] == row["shrunk_replay"]
    assert reproduced["fault_count"] + reproduced["operations"] + reproduced["controllers"] \
        + reproduced["brokers"] == row["shrunk_size"]


def _fails_when(needs: Any) -> Any:
    """A stand-in for the simulation: an AcknowledgedDurable failure whenever
    ``needs(setup)`` holds, a valid run otherwise (the shrinker sees nothing else)."""
    def simulate(seed: int, mode: str, mutations: frozenset[str], setup: SwarmSetup,
                 settle_ms: int) -> Outcome:
        failing = needs(setup)
        return Outcome("violation" if failing else "ok", "false" if failing else "true",
                       "AcknowledgedDurable" if failing else None, None, "in", 1, 1, "f", 0,
                       0, 0, 0, 0, len(setup.faults))
    return simulate


BIG = SwarmSetup(controllers=3, brokers=2, batch_records=4, fetch_records=1, linger_ms=0,
                 pre_vote=False, noop_ms=100, snapshot_every=1, horizon_ms=2_000,
                 kinds=("crash", "partition", "pause"),
                 faults=(SwarmFault("pause", 50, "0", 5), SwarmFault("crash", 310, "3001"),
                         SwarmFault("partition", 400, "3000,0|3002,1")),
                 ops=(WorkOp("create", 100, "t0", 2), WorkOp("create", 900, "t1", 1),
                      WorkOp("delete", 1500, "t0")))
"""A failing setup of three faults, three operations, three controllers and two brokers,
every setting away from Kafka's defaults."""


def test_the_shrinker_keeps_only_what_the_failure_needs(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A failure that needs controller 3001's crash, a partition, an operation and
    snapshots shrinks to exactly those: the other fault and the later operations go, the
    schedule ends right after the last fault, the cluster loses the controller the
    partition named (its group keeps its broker) and every other setting is Kafka's."""
    def needs(setup: SwarmSetup) -> bool:
        return any(f.text() == "crash:3001@310" for f in setup.faults) and any(
            f.kind == "partition" for f in setup.faults) and bool(setup.ops) and \
            setup.snapshot_every == 1
    monkeypatch.setattr(shrinking, "simulate", _fails_when(needs))
    outcome = shrinking.simulate(1, "transactional", frozenset(), BIG, 0)
    result = shrinking.shrink(1, "transactional", frozenset(), BIG, outcome, 0, budget=200)
    assert result.outcome.invariant == "AcknowledgedDurable"
    assert result.setup == msgspec.structs.replace(
        BIG, controllers=2, brokers=2, horizon_ms=401, faults=(
            SwarmFault("crash", 310, "3001"), SwarmFault("partition", 400, "3000,0|1")),
        ops=BIG.ops[:1], noop_ms=500, linger_ms=25, pre_vote=True, fetch_records=1000)
    assert shrinking.size(result.setup) == 2 + 1 + 2 + 2
    assert 0 < result.steps < result.runs < 200
    few = shrinking.shrink(1, "transactional", frozenset(), BIG, outcome, 0, budget=3)
    assert few.runs == 3  # the budget of reruns is kept


def test_a_failure_that_needs_nothing_shrinks_to_an_empty_one_ms_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No fault, no operation, one controller, no broker, a 1 ms schedule (horizon-ms is at
    least 1: a shrunk reproduction must be a legal replay command)."""
    monkeypatch.setattr(shrinking, "simulate", _fails_when(lambda setup: True))
    outcome = shrinking.simulate(1, "transactional", frozenset(), BIG, 0)
    result = shrinking.shrink(1, "transactional", frozenset(), BIG, outcome, 0, budget=200)
    assert (result.setup.faults, result.setup.ops) == ((), ())
    assert (result.setup.controllers, result.setup.brokers, result.setup.horizon_ms) == (1, 0, 1)
    assert shrinking.size(result.setup) == 1


@pytest.mark.parametrize(("controllers", "faults"), [
    (3, "wipe:3000@100;wipe:3001@200"),
    (1, "wipe:3000@100;restart:3000@300"),
    (2, "wipe:3001@100;restart:3001@150"),
])
def test_wiping_more_controllers_than_tolerated_is_outside_the_model(
        controllers: int, faults: str) -> None:
    row = run(spec("swarm", 0, mode="transactional", controllers=controllers, brokers=1,
                   faults=faults, horizon_ms=1000, **QUIET))
    assert row["verdict"] == "outside_model"
    assert row["model"].startswith("wiped")
    assert row["wiped_controllers"] >= 1


def test_wiping_one_controller_of_three_stays_inside_the_model() -> None:
    row = run(spec("swarm", 0, mode="transactional", controllers=3, brokers=2, snapshot_every=0,
                   faults="wipe:3001@100;restart:3001@600", horizon_ms=2000, **QUIET))
    assert (row["verdict"], row["model"], row["wiped_controllers"]) == ("ok", "in", 1)


def test_wiping_a_broker_stays_inside_the_model() -> None:
    row = run(spec("swarm", 0, mode="transactional", controllers=3, brokers=2, snapshot_every=0,
                   faults="wipe:1@100;restart:1@600", horizon_ms=2000, **QUIET))
    assert row["model"] == "in"
    assert row["wiped_controllers"] == 0


def test_the_summary_counts_every_verdict_per_mode() -> None:
    rows = [run(spec("swarm", i, mode=mode, **QUIET)) for i in range(3)
            for mode in ("transactional", "non-atomic", "atomic")]
    rows.append({**rows[0], "verdict": "violation", "invariant": "SingleLeader"})
    summary = summarize_rows(rows)
    keys = ("runs", "violations", "outside_model", "non_terminating")
    assert all(key in summary for key in keys)
    assert summary["runs"] == len(rows)
    assert summary["runs"] == sum(summary[k] for k in ("ok", "violations", "outside_model",
                                                       "non_terminating"))
    assert set(summary["modes"]) == {"transactional", "non-atomic", "atomic"}
    for key in keys:
        assert sum(m[key] for m in summary["modes"].values()) == summary[key]
    assert summary["invariants"].get("SingleLeader", 0) >= 1
    assert summary["invalid"] == summary["violations"]


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ExperimentError):
        run(spec("swarm", 0, mode="transactional", faults="crash:4000@10", controllers=1,
                 **QUIET))
    with pytest.raises(ExperimentError):
        run(spec("swarm", 0, mode="transactional", pre_vote="maybe", **QUIET))
    with pytest.raises(ExperimentError, match="shrink-budget"):
        spec("swarm", 0, shrink_budget=-1)


def test_the_final_state_check_finds_a_lost_acknowledged_create() -> None:
    from controller.handle import OperationHandle
    from experiments.swarm_run import _op_problem
    from experiments.swarm_setup import WorkOp
    from metadata.image import MetadataImage

    setup = draw_setup(1, {"ops": "0", "faults": "none"})
    acked = OperationHandle(1, "CreateTopics(t0)", 3000, 0, "transactional")
    acked.commit(10)
    acked.first_offset = 5
    submitted = [(WorkOp("create", 0, "t0", batches=2), acked)]
    found = _op_problem(MetadataImage.EMPTY, setup, "transactional", submitted, 0, set())
    assert found is not None and found[0] == "AcknowledgedDurable"
    assert _op_problem(MetadataImage.EMPTY, setup, "transactional", submitted, 0,
                       {"t0"}) is None  # a delete of it may have applied
    alter = OperationHandle(2, "IncrementalAlterConfigs(BROKER:)", 3000, 0, "transactional")
    alter.commit(12)
    submitted.append((WorkOp("alter-broker", 1, value=1001), alter))
    found = _op_problem(MetadataImage.EMPTY, setup, "transactional", submitted, 1, set())
    assert found is not None and "log.retention.ms" in found[1]


def test_a_sweep_refuses_bad_values_before_spark_starts() -> None:
    with pytest.raises(ExperimentError, match="faults"):
        run_command("swarm", runs=1, params=["faults=explode:3000@1"], master="local[1]",
                    stdout=io.StringIO(), stderr=io.StringIO())


def test_the_sweeps_summary_counts_every_verdict_per_mode() -> None:
    """The summary from the Spark SQL tables: verdicts overall and per mode (with their
    valid/invalid/unknown aliases), partial-visibility runs per mode, and the violated
    invariants."""
    counts = {"ok": 3, "violations": 1, "outside_model": 1, "non_terminating": None}
    tables = {
        "overall": pd.DataFrame([{"runs": 5, **counts}]),
        "by_invariant": pd.DataFrame([
            {"verdict": "violation", "invariant": "SingleLeader", "runs": 1},
            {"verdict": "non_terminating", "invariant": None, "runs": 0}]),
        "by_mode": pd.DataFrame([{"mode": "non-atomic", "runs": 5, **counts,
                                  "partial_visibility_runs": 2}]),
    }
    mode = {"runs": 5, "ok": 3, "violations": 1, "outside_model": 1, "non_terminating": 0,
            "valid": 3, "invalid": 1, "unknown": 0}
    assert summarize_tables(tables) == {
        "experiment": "swarm", **mode, "invariants": {"SingleLeader": 1},
        "modes": {"non-atomic": {**mode, "partial_visibility_runs": 2}}}


def test_an_outside_model_failure_that_reproduces_inside_it_is_a_violation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fails after a wipe is outside the model; when its shrunk reproduction
    fails without the wipe, the row is a violation labelled with why it first was outside."""
    why = "controller(s) 3000 wiped: a wiped voter forgets its vote and its log"

    def simulate(seed: int, mode: str, mutations: frozenset[str], setup: SwarmSetup,
                 settle_ms: int, trace_out: Any = None) -> Outcome:
        wiped = any(f.kind == "wipe" for f in setup.faults)
        return Outcome("outside_model" if wiped else "violation", "false",
                       "AcknowledgedDurable", None, why if wiped else "in", 1, 1, "f", 0, 0, 0,
                       0, int(wiped), len(setup.faults))
    monkeypatch.setattr(swarm, "simulate", simulate)
    monkeypatch.setattr(shrinking, "simulate", simulate)
    row = run(spec("swarm", 0, mode="transactional", controllers=3, brokers=1,
                   faults="wipe:3000@100;crash:3001@200", horizon_ms=1000, shrink_budget=50))
    assert (row["verdict"], row["model"]) == ("violation", f"in (shrunk: {why})")
    assert decode_faults(row["shrunk_faults"]) == ()


def test_given_faults_are_checked_against_the_largest_cluster_before_spark_starts() -> None:
    """``--param faults=...`` without controllers or brokers: nodes of the largest drawable
    cluster (seven controllers, five brokers) are accepted, others refused by name."""
    swarm.check_axes({"faults": ("crash:3006@100;pause:4@50+10",)})
    with pytest.raises(ExperimentError,
                       match=r"crash:3007@100 names node\(s\) \[3007\] outside the cluster"):
        swarm.check_axes({"faults": ("crash:3007@100",)})
    with pytest.raises(ExperimentError, match=r"names node\(s\) \[5\] outside the cluster"):
        swarm.check_axes({"faults": ("pause:5@50+10",)})


@pytest.mark.parametrize("horizon_ms", [300, 1000])
def test_an_operation_no_controller_answers_before_the_horizon_counts_as_failed(
        horizon_ms: int) -> None:
    """The only controller crashes before the create: it is retried every 250 ms while that
    fits in the schedule, then counted as a failed operation (not dropped)."""
    setup = msgspec.structs.replace(
        BIG, controllers=1, brokers=1, snapshot_every=0, horizon_ms=horizon_ms,
        kinds=("crash",), faults=(SwarmFault("crash", 50, "3000"),),
        ops=(WorkOp("create", 100, "t0", 1),))
    outcome = swarm_run.simulate(1, "transactional", frozenset(), setup, 0)
    assert (outcome.verdict, outcome.acknowledged, outcome.failed_ops) == ("ok", 0, 1)


@pytest.mark.parametrize(("name", "value", "field", "expected"), [
    ("controllers", "1", "controllers", 1), ("controllers", "7", "controllers", 7),
    ("brokers", "0", "brokers", 0), ("brokers", "5", "brokers", 5),
    ("batch-records", "6", "batch_records", 6), ("fetch-records", "7", "fetch_records", 7),
    ("linger-ms", "7", "linger_ms", 7), ("linger-ms", "0", "linger_ms", 0),
    ("pre-vote", "on", "pre_vote", True), ("pre-vote", "off", "pre_vote", False),
    ("noop-ms", "7", "noop_ms", 7), ("noop-ms", "0", "noop_ms", 0),
    ("snapshot-every", "3", "snapshot_every", 3), ("snapshot-every", "0", "snapshot_every", 0),
    ("horizon-ms", "1500", "horizon_ms", 1500),
])
def test_a_given_setting_replaces_the_drawn_one(name: str, value: str, field: str,
                                                expected: Any) -> None:
    for seed in range(8):
        assert getattr(draw_setup(seed, {name: value}), field) == expected, seed


@pytest.mark.parametrize(("restart_ms", "acknowledged"), [(1900, 1), (3000, 0)])
def test_an_operation_is_resubmitted_for_two_seconds(restart_ms: int, acknowledged: int) -> None:
    """A create submitted at 100 ms while the only controller is down is resubmitted every
    250 ms eight times: the controller back at 1900 ms takes it, one back at 3000 ms does
    not (the create has failed by then)."""
    setup = msgspec.structs.replace(
        BIG, controllers=1, brokers=1, snapshot_every=0, horizon_ms=15_000,
        kinds=("crash", "restart"), faults=(SwarmFault("crash", 50, "3000"),
                                            SwarmFault("restart", restart_ms, "3000")),
        ops=(WorkOp("create", 100, "t0", 1),))
    outcome = swarm_run.simulate(1, "transactional", frozenset(), setup, 0)
    assert (outcome.verdict, outcome.acknowledged, outcome.failed_ops) == (
        "ok", acknowledged, 1 - acknowledged)


def test_a_seeds_drawn_world_does_not_change() -> None:
    """``--seed 1 --replay N`` of a kept sweep redraws its world: the drawing is pinned."""
    setup = draw_setup(1, {})
    assert (setup.controllers, setup.brokers, setup.batch_records, setup.fetch_records,
            setup.linger_ms, setup.pre_vote, setup.noop_ms, setup.snapshot_every,
            setup.horizon_ms) == (2, 5, 25, 1, 100, False, 0, 1, 2766)
    assert encode_faults(setup.faults) == (
        "isolate:leader@152;crash:leader@310;restart:3000@321;restart:3001@321;heal@414;"
        "shutdown:4@829;shutdown:3@1264;restart:4@1714")
    # the creates, deletes and config changes are those drawn before the swarm reassigned
    assert [op for op in setup.ops if op.kind not in REASSIGN_KINDS] == [
        WorkOp("create", 409, "t0", 1), WorkOp("create", 468, "t1", 2)]
    assert [op for op in setup.ops if op.kind in REASSIGN_KINDS] == [
        WorkOp("reassign", 1528, "t1", partition=24, order=(0, 3, 2, 4, 1), replicas=2),
        WorkOp("reassign", 1578, "t1", partition=1, order=(3, 4, 1, 0, 2), replicas=3),
        WorkOp("reassign", 1883, "t1", partition=15, order=(4, 2, 1, 3, 0), replicas=2),
        WorkOp("cancel", 1901, "t1", partition=15)]
    drawn = [draw_setup(seed, {}) for seed in range(60)]
    assert {s.noop_ms for s in drawn} == {0, 100, 500}
    assert {s.linger_ms for s in drawn} == {0, 1, 5, 25, 100}
    assert {s.batch_records for s in drawn} == {4, 5, 8, 10, 16, 25, 50}
    assert {s.fetch_records for s in drawn} == {1, 3, 10, 20, 50, 200, 1000}
    assert {s.snapshot_every for s in drawn} == {0, 1, 2, 7, 30, 200}
    sides = [[[int(n) for n in side.split(",")] for side in f.target.split("|")]
             for s in drawn for f in s.faults if f.kind == "partition"]
    assert any(min(left) < 3000 <= max(right) for left, right in sides)  # not in node order
    assert all(0 <= f.at_ms < s.horizon_ms for s in drawn for f in s.faults)  # heals too
    pauses = [(f, s.horizon_ms) for s in drawn for f in s.faults if f.kind == "pause"]
    assert pauses and all(0 < f.duration_ms <= horizon // 3 for f, horizon in pauses)


def test_a_shrink_budget_of_0_shrinks_nothing() -> None:
    row = run(spec("swarm", 5, **MUTATED, shrink_budget=0))
    assert row["verdict"] == "violation"
    assert (row["shrink_runs"], row["shrunk_size"], row["shrunk_faults"],
            row["shrunk_replay"]) == (0, None, None, None)


def test_two_nodes_are_partitioned_and_blocked_one_is_not() -> None:
    """A network fault needs two nodes: drawn for one controller and one broker, never for
    a lone controller."""
    def network(controllers: str, brokers: str) -> set[str]:
        return {f.kind for seed in range(30)
                for f in draw_setup(seed, {"controllers": controllers, "brokers": brokers}).faults
                if f.kind in ("partition", "block")}
    assert network("1", "1") == {"partition", "block"}
    assert network("1", "0") == set()


def test_each_kind_of_operation_is_acknowledged_and_checked() -> None:
    """A create, a topic config change and a broker config change, no fault: all three
    acknowledged and found in the final state."""
    setup = msgspec.structs.replace(
        BIG, controllers=1, brokers=1, snapshot_every=0, horizon_ms=1000, kinds=(), faults=(),
        ops=(WorkOp("create", 100, "t0", 1), WorkOp("alter-topic", 200, "t0", value=1001),
             WorkOp("alter-broker", 300, value=1002)))
    outcome = swarm_run.simulate(1, "transactional", frozenset(), setup, 0)
    assert (outcome.verdict, outcome.acknowledged, outcome.failed_ops) == ("ok", 3, 0)


def test_a_cluster_that_does_not_start_does_not_terminate(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(swarm_run, "start_cluster", lambda cluster, **_: False)
    outcome = swarm_run.simulate(1, "transactional", frozenset(), BIG, 0)
    assert (outcome.verdict, outcome.valid, outcome.message) == (
        "non_terminating", "unknown", "the cluster did not start")
