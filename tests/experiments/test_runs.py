"""The experiments as pure functions: outcomes users rely on, determinism, seeds, grid."""

from __future__ import annotations

import io
import json
import time

import pytest

from experiments import failover, grid
from experiments.common import MODES
from experiments.failover import FAILOVER, FAULTS, WINDOWS
from experiments.grid import build_grid, cells, parse_params
from experiments.model import ExperimentError, RunSpec
from experiments.registry import get_experiment
from experiments.seeds import run_seed
from experiments.visibility import VISIBILITY
from tests.experiments.helpers import run, spec, without_wall


def test_run_seeds_are_stable_and_distinct() -> None:
    # A fixed value: the seed of a run must never change with the process or the platform.
    assert run_seed("failover", 1, "crash", 0) == run_seed("failover", 1, "crash", 0)
    seeds = {run_seed("failover", m, s, i) for m in (1, 2) for s in FAULTS for i in range(50)}
    assert len(seeds) == 2 * len(FAULTS) * 50
    assert all(0 <= s < 2**63 for s in seeds)
    assert run_seed("failover", 1, "crash", 0) == 7564640859006447709


def test_default_grid_crosses_fault_window_and_mode() -> None:
    axes = parse_params(FAILOVER, [])
    grid = cells(FAILOVER, axes)
    assert len(grid) == len(FAULTS) * len(WINDOWS) * 2
    specs = build_grid(FAILOVER, axes, 70, 9)
    assert len(specs) == 70
    # runs are dealt in turn: cells get 3 or 2 runs, indices count up within a cell
    assert [s.index for s in specs[:33]] == [0] * 32 + [1]
    # cells of one scenario share the seed of an index: the same world, another window/mode
    crash = [s for s in specs if s.scenario == "crash" and s.index == 0]
    assert len({s.seed for s in crash}) == 1 and len(crash) == 8


def test_runs_are_at_most_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """--runs may be the limit itself, not one more (a lower limit stands in for the
    1,000,000 runs, whose grid takes seconds to build)."""
    monkeypatch.setattr(grid, "MAX_RUNS", 40)
    axes = parse_params(FAILOVER, [])
    assert len(build_grid(FAILOVER, axes, 40, 9)) == 40
    with pytest.raises(ExperimentError) as error:
        build_grid(FAILOVER, axes, 41, 9)
    assert str(error.value) == "--runs must be at most 40, got 41"


def test_the_master_seed_is_any_signed_64_bit_integer() -> None:
    """A row's master_seed column is a long: both ends are legal seeds, one more is not."""
    axes = parse_params(FAILOVER, [])
    for seed in (-2**63, 2**63 - 1):
        assert build_grid(FAILOVER, axes, 1, seed)[0].master_seed == seed
    with pytest.raises(ExperimentError) as error:
        build_grid(FAILOVER, axes, 1, 2**63)
    assert str(error.value) == (f"--seed must be within {-2**63} and {2**63 - 1}, got a "
                                f"number of 19 digits")


def test_param_lists_make_axes() -> None:
    axes = parse_params(FAILOVER, ["scenario=crash,resign", "window=inside", "batches=3"])
    assert axes["scenario"] == ("crash", "resign") and axes["batches"] == (3,)
    assert len(cells(FAILOVER, axes)) == 2 * 1 * 2


@pytest.mark.parametrize(("item", "named"), [
    ("scenario=meteor", "unknown scenario 'meteor'"),
    ("window=later", "unknown value for window 'later'"),
    ("colour=red", "unknown parameter 'colour'"),
    ("batches=many", "parameter batches: 'many' is not an integer"),
    ("batches=0", "parameter batches: must be at least 1"),
    ("mutations=forget-everything", "unknown mutation(s) forget-everything"),
    ("batches", "expected NAME=VALUE"),
    ("batches= , ", "parameter batches: no value given"),
])
def test_bad_params_are_named(item: str, named: str) -> None:
    with pytest.raises(ExperimentError, match=None) as error:
        parse_params(FAILOVER, [item])
    assert named in str(error.value)


def test_the_largest_operation_of_a_grid_is_checked_before_any_run() -> None:
    """Every cell's operation: the most batches with the most records per batch."""
    parse_params(FAILOVER, ["batches=1000,100000", "batch-records=5,10"])  # at most 1,000,000
    with pytest.raises(ExperimentError) as error:
        parse_params(FAILOVER, ["batches=1000,100001", "batch-records=5,10"])
    assert str(error.value) == ("parameters batches x batch-records: an operation may write "
                                "at most 1000000 records, got 100001 x 10")


@pytest.mark.parametrize(("experiment", "brokers"), [
    ("failover", 2), ("visibility", 3), ("broker-failover", 5), ("eos", 3)])
def test_every_experiment_runs_one_cluster_by_default(experiment: str, brokers: int) -> None:
    """3 controllers, the experiment's brokers, batches of 10 records, fetches of 20 records,
    a 25 ms linger and no deliberate bug, unless --param says otherwise."""
    axes = parse_params(get_experiment(experiment), [])
    assert {k: axes[k] for k in ("controllers", "brokers", "batch-records", "fetch-records",
                                 "linger-ms", "mutations")} == {
        "controllers": (3,), "brokers": (brokers,), "batch-records": (10,),
        "fetch-records": (20,), "linger-ms": (25,), "mutations": ("none",)}


@pytest.mark.parametrize(("experiment", "name", "bound", "step", "side"), [
    ("failover", "batch-records", 4, -1, "least"),  # narrower than the cluster setting's 3
    ("visibility", "ops", 1, -1, "least"),
    ("visibility", "gap-max-ms", 0, -1, "least"),
    ("broker-failover", "timeout-ms", 1000, -1, "least"),
    ("broker-failover", "response-loss-pct", 90, 1, "most"),
])
def test_the_bound_of_a_bounded_parameter_is_taken(experiment: str, name: str, bound: int,
                                                   step: int, side: str) -> None:
    """The documented lowest or highest value is a legal run; one past it is refused,
    naming the bound."""
    exp = get_experiment(experiment)
    assert parse_params(exp, [f"{name}={bound}"])[name] == (bound,)
    with pytest.raises(ExperimentError) as error:
        parse_params(exp, [f"{name}={bound + step}"])
    assert str(error.value) == f"parameter {name}: must be at {side} {bound}, got {bound + step}"


def test_failover_windows_give_the_expected_outcomes() -> None:
    """Transactional: a fault inside the transaction aborts it; once End is on a follower,
    or committed, the operation commits; nothing is ever half visible or lost."""
    for fault in FAULTS:
        for index in range(2):
            rows = {w: run(spec("failover", index, scenario=fault, window=w,
                                mode="transactional")) for w in WINDOWS}
            for window, row in rows.items():
                assert row["valid"] == "true", (fault, window, row["message"])
                assert row["window_hit"], (fault, window)
                assert row["partial_visibility"] == 0
                assert row["acked_lost"] == 0
                assert row["recovery_ms"] is not None and row["leader_ms"] is not None
            assert rows["inside"]["outcome"] == "aborted"
            assert rows["inside"]["abort_ms"] is not None
            assert rows["inside"]["records_aborted"] > 0
            assert rows["end-appended"]["outcome"] == "committed"
            assert rows["committed"]["outcome"] == "committed"
            assert rows["committed"]["client_outcome"] == "committed"
            assert rows["before-begin"]["outcome"] in ("dropped", "aborted")


def test_the_fault_hits_the_kth_event_of_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """k is drawn from the run's seed (6 for run 0 here, 0 for run 2): a later event of the
    window than its first one, which a spread of 1 gives, unless k is 0."""
    runs = [spec("failover", index, scenario="partition", window="inside",
                 mode="transactional") for index in (0, 2)]
    drawn = [run(one)["fault_at_ms"] for one in runs]
    monkeypatch.setattr(failover, "FIRE_SPREAD", 1)
    first = [run(one)["fault_at_ms"] for one in runs]
    assert drawn[0] > first[0] and drawn[1] == first[1]


def test_crash_losing_unflushed_writes_drops_the_operation_and_acknowledges_nothing() -> None:
    row = run(spec("failover", scenario="crash-unflushed", window="before-begin",
                   mode="transactional"))
    assert row["outcome"] == "dropped" and row["client_outcome"] == "NOT_CONTROLLER"
    assert row["records_truncated"] >= 60  # the operation's six batches were lost
    later = run(spec("failover", scenario="crash-unflushed", window="committed",
                     mode="transactional"))
    assert later["outcome"] == "committed" and later["records_truncated"] > 0  # the follow-up
    assert later["acked_lost"] == 0 and later["valid"] == "true"


@pytest.mark.parametrize(("timeout_ms", "message"), [
    (2000, "no new controller within 2000 ms of the fault"),  # elected after about 3 s
    # elected after about 2 s, the reachable nodes caught up after about 4 s, rejoins after 60 s
    (3500, "the cluster did not settle within 3500 ms of the fault"),
])
def test_a_failover_that_does_not_settle_in_time_says_why(timeout_ms: int,
                                                          message: str) -> None:
    """An unknown row says why; without a new controller nothing recovers, while the
    reachable nodes may have caught up (recovery_ms) before a deadline the crashed leader
    rejoins at."""
    row = run(spec("failover", scenario="crash", window="inside", mode="transactional",
                   timeout_ms=timeout_ms, rejoin_ms=60_000))
    assert (row["valid"], row["invariant"], row["message"]) == ("unknown", None, message)
    assert row["acked_lost"] == 0
    if message.startswith("no new controller"):
        assert row["recovery_ms"] is None
    else:
        assert row["recovery_ms"] is None or row["recovery_ms"] < timeout_ms


def test_non_atomic_failover_commits_a_prefix_that_brokers_show() -> None:
    row = run(spec("failover", scenario="crash", window="inside", mode="non-atomic"))
    assert row["outcome"] == "partial"
    assert row["partial_visibility"] > 0
    assert row["valid"] == "true"  # Kafka's as-built behaviour: reported, not a violation


def test_atomic_mode_refuses_a_multi_batch_operation() -> None:
    row = run(spec("failover", scenario="crash", window="inside", mode="atomic"))
    assert row["outcome"] == "refused" and row["client_outcome"] == "POLICY_VIOLATION"
    assert not row["window_hit"] and row["valid"] == "true"


def test_a_broken_controller_is_caught() -> None:
    row = run(spec("failover", scenario="crash", window="inside", mode="transactional",
                   mutations="forget-failover-abort"))
    assert row["valid"] == "false"
    assert row["invariant"] == "FailoverAbortsInflight"


def test_a_run_stopped_before_its_fault_has_null_fault_columns() -> None:
    """A deliberate bug caught before the fault: the row says which invariant failed, no
    fault happened, and every null is in a column declared nullable (Spark's schema refuses
    a null anywhere else)."""
    row = run(spec("failover", scenario="crash", window="committed", mode="transactional",
                   mutations="publish-every-commit"))
    assert (row["valid"], row["invariant"]) == ("false", "TxnAtomicVisibility")
    assert row["fault_at_ms"] is None and row["leader_ms"] is None
    assert [c.name for c in FAILOVER.columns if row[c.name] is None and not c.nullable] == []


def test_the_parquet_schema_allows_nulls_only_in_the_columns_that_may_be_null() -> None:
    """The failover rows' Spark schema (no JVM needed): the verdict's detail and the times
    measured from a fault may be null; every other column always has a value."""
    from experiments.pipeline import spark_schema

    fields = spark_schema(FAILOVER.columns).fields
    assert [f.name for f in fields] == [c.name for c in FAILOVER.columns]
    assert sorted(f.name for f in fields if f.nullable) == [
        "abort_ms", "fault_at_ms", "hw_ms", "invariant", "leader_ms", "message", "recovery_ms",
        "unavailable_ms"]


def test_same_spec_same_row() -> None:
    one = spec("failover", 3, scenario="partition", window="inside", mode="transactional")
    assert without_wall(run(one)) == without_wall(run(one))
    two = spec("visibility", 2, scenario="pause", mode="non-atomic")
    assert without_wall(run(two)) == without_wall(run(two))


def test_visibility_by_mode() -> None:
    for index in range(3):
        txn = run(spec("visibility", index, scenario="lag", mode="transactional"))
        split = run(spec("visibility", index, scenario="lag", mode="non-atomic"))
        atomic = run(spec("visibility", index, scenario="lag", mode="atomic"))
        for row in (txn, split, atomic):
            assert row["valid"] == "true" and row["acked_lost"] == 0
            assert len(row["broker_lag_ms"]) == 3
            assert all(0 <= lag <= 200 for lag in row["broker_lag_ms"])
            assert len(row["latency_ms"]) == row["committed"] * 3
        assert txn["partial_visibility"] == 0 and txn["refusals"] == 0
        assert txn["aborted"] == 0  # its multi-batch transactions all commit
        assert txn["committed"] == txn["operations"] == 4
        if split["batches"] > split["operations"]:
            assert split["partial_visibility"] > 0 and split["partial_brokers"] > 0
        assert atomic["refusals"] == atomic["operations"] - atomic["committed"]
        assert atomic["partial_visibility"] == 0


def test_steady_one_batch_operations_are_never_refused_lagged_or_aborted() -> None:
    """max-batches=1 with batch-records=4: every operation is a topic of one partition,
    one batch in every write mode, so atomic mode refuses none; nothing aborts and, without
    a lag scenario, every broker's extra lag is 0."""
    for mode in MODES:
        row = run(spec("visibility", scenario="steady", mode=mode, max_batches=1,
                       batch_records=4))
        assert row["valid"] == "true", (mode, row["message"])
        assert row["batches"] == row["operations"] == row["committed"] == 4, mode
        assert (row["refusals"], row["aborted"], row["partial_visibility"]) == (0, 0, 0)
        assert row["broker_lag_ms"] == [0, 0, 0]  # steady: no broker lags


def test_paused_brokers_see_operations_late_but_whole() -> None:
    rows = [run(spec("visibility", i, scenario="pause", mode="transactional"))
            for i in range(4)]
    assert all(r["valid"] == "true" and r["partial_visibility"] == 0 for r in rows)
    steady = [run(spec("visibility", i, scenario="steady", mode="transactional"))
              for i in range(4)]
    assert max(r["latency_max_ms"] for r in rows) > max(r["latency_max_ms"] for r in steady)


def test_a_run_settles_only_once_its_last_pause_is_over() -> None:
    # Found by an untuned seed: a broker's last pause ended at 2,093 ms, the same
    # millisecond as other events; the run settled before the resume event ran, so
    # the paused broker (not counted as lagging) kept an image without three topics.
    # Since runs start from one boot per configuration, this seed does it: the last
    # pause ends at 1,775 ms, where the old check settled with 4 operations missing.
    params = spec("visibility", scenario="pause", mode="non-atomic").params  # the defaults
    row = run(RunSpec("visibility", params, 1016, 45, 6898213004949881629))
    assert (row["valid"], row["acked_lost"]) == ("true", 0)
    assert row["simulated_ms"] > 1775


@pytest.mark.parametrize(("experiment", "params"), [
    ("failover", {"scenario": "crash", "window": "inside"}),
    ("visibility", {"scenario": "steady"}),
    ("broker-failover", {"partitions": 3, "records": 5, "brokers": 3, "down_ms": 0}),
    ("eos", {"records": 5, "batch": 5, "down_ms": 0}),
])
def test_wall_ms_is_the_time_the_run_took(experiment: str, params: dict[str, object]) -> None:
    """The one non-deterministic column: at most the wall time around the call."""
    one = spec(experiment, **params)
    started = time.perf_counter()
    row = run(one)
    took = (time.perf_counter() - started) * 1000
    assert 0 <= row["wall_ms"] <= took + 1


def test_a_run_whose_cluster_is_idle_when_its_last_pause_ends_ends_then() -> None:
    """Run 4: broker 1's last pause ends at 2,952 ms with nothing left to do, and the run
    ends in that millisecond (its trace's last resume), not at some later event."""
    out = io.BytesIO()
    row = VISIBILITY.run(spec("visibility", 4, scenario="pause", mode="transactional"), out)
    resumes = [json.loads(line)["t"] for line in out.getvalue().splitlines()
               if b'"what":"resume ' in line]
    assert row["valid"] == "true" and row["simulated_ms"] == resumes[-1] == 2952


def test_rows_have_exactly_the_declared_columns() -> None:
    FAILOVER.check_row(run(spec("failover", scenario="resign", window="committed")))
    VISIBILITY.check_row(run(spec("visibility", scenario="steady", mode="atomic")))
