"""The experiments as pure functions: outcomes users rely on, determinism, seeds, grid."""

from __future__ import annotations

import pytest

from experiments.failover import FAILOVER, FAULTS, WINDOWS
from experiments.grid import build_grid, cells, parse_params
from experiments.model import ExperimentError, RunSpec
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
])
def test_bad_params_are_named(item: str, named: str) -> None:
    with pytest.raises(ExperimentError, match=None) as error:
        parse_params(FAILOVER, [item])
    assert named in str(error.value)


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


def test_crash_losing_unflushed_writes_drops_the_operation_and_acknowledges_nothing() -> None:
    row = run(spec("failover", scenario="crash-unflushed", window="before-begin",
                   mode="transactional"))
    assert row["outcome"] == "dropped" and row["client_outcome"] == "NOT_CONTROLLER"
    assert row["records_truncated"] >= 60  # the operation's six batches were lost
    later = run(spec("failover", scenario="crash-unflushed", window="committed",
                     mode="transactional"))
    assert later["outcome"] == "committed" and later["records_truncated"] > 0  # the follow-up
    assert later["acked_lost"] == 0 and later["valid"] == "true"


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
        assert txn["committed"] == txn["operations"] == 4
        if split["batches"] > split["operations"]:
            assert split["partial_visibility"] > 0 and split["partial_brokers"] > 0
        assert atomic["refusals"] == atomic["operations"] - atomic["committed"]
        assert atomic["partial_visibility"] == 0


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


def test_rows_have_exactly_the_declared_columns() -> None:
    FAILOVER.check_row(run(spec("failover", scenario="resign", window="committed")))
    VISIBILITY.check_row(run(spec("visibility", scenario="steady", mode="atomic")))
