"""report.md without Spark: the verdict line, the settings and figures as the tables hold
them, and the columns of the rows (pandas tables standing in for the Spark SQL ones)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.aggregate import Aggregates, summarize
from experiments.registry import get_experiment
from experiments.report import TimeSeries, write_report


def _eos_report(folder: Path, context: dict[str, object]) -> list[str]:
    eos = get_experiment("eos")
    by_protocol = pd.DataFrame({"protocol": ["classic", "pre-registration"],
                                "runs": [1200, 3], "round_trips_per_txn": [7.26, 0.123456]})
    tables = {"by_protocol": by_protocol, "by_cell": by_protocol.iloc[0:0]}
    summary = {"runs": 12345, "valid": 12000, "invalid": 300, "unknown": 45}
    series = TimeSeries(b"\x89PNG the plot", ["## One run per cell over time", "", "(plot)", ""])
    path = write_report(folder, eos, Aggregates("eos", tables, summary), context,
                        series=series)
    return path.read_text().splitlines()


def test_the_report_says_verdicts_settings_figures_and_columns(tmp_path: Path) -> None:
    lines = _eos_report(tmp_path, {"runs": 12345, "wall time (s)": 12.0, "share": 0.123456,
                                   "rate": 1234.56, "master seed": None,
                                   "param protocol": "a|b"})
    assert lines[0] == "# kraftsim eos sweep"
    assert lines[2] == ("12,345 runs: **12,000 valid, 300 invalid, 45 unknown** (every raft "
                        "and transaction invariant checked after every event).")
    settings = lines[lines.index("| setting | value |") + 2:]
    assert settings[:6] == ["| runs | 12345 |", "| wall time (s) | 12 |", "| share | 0.123 |",
                            "| rate | 1234.6 |", "| master seed | - |",
                            "| param protocol | a\\|b |"]
    assert "| protocol | runs | round_trips_per_txn |" in lines
    assert "| classic | 1200 | 7.3 |" in lines
    assert "| pre-registration | 3 | 0.123 |" in lines
    cells = lines.index("## By scenario, delivery and protocol")
    assert "(none)" in lines[cells:cells + 6]
    over_time = lines.index("## One run per cell over time")  # the plot made while Spark ran
    assert lines[over_time + 2] == "(plot)"
    assert (tmp_path / "timeseries.png").read_bytes() == b"\x89PNG the plot"
    columns = lines[lines.index("## Columns of the rows (`runs/`, Parquet)"):]
    assert "| failed_broker | long? | the broker that crashed (null: none) |" in columns
    assert "| fault_at_ms | long | simulated time of the fault |" in columns
    assert len(columns) == 4 + len(get_experiment("eos").columns)


def test_the_eos_summary_is_the_tables_figures() -> None:
    """summary.json of an eos sweep: zero counts stay 0, sums over no rows (null) are 0, a
    protocol that did not run is null, whole figures are ints and others one decimal."""
    overall = pd.DataFrame([{"runs": 8, "valid": 7, "invalid": 1, "unknown": 0,
                             "duplicates": 0, "aborted_reads": 2, "missing": 0,
                             "idempotent_runs": 4, "idempotent_duplicates": None,
                             "idempotent_duplicate_runs": 3}])
    by_protocol = pd.DataFrame([{"protocol": "classic", "runs": 8, "transactions": 40,
                                 "round_trips_per_txn": 7.26, "concurrent_transactions_bounces": 0,
                                 "bounces_per_txn": float("nan"), "latency_p50_ms": 12.0,
                                 "latency_p99_ms": 40.04, "throughput_per_s": 100.55}])
    summary = summarize(Aggregates("eos", {"overall": overall, "by_protocol": by_protocol}))
    assert summary == {
        "experiment": "eos", "runs": 8, "valid": 7, "invalid": 1, "violations": 1,
        "unknown": 0, "duplicates": 0, "aborted_reads": 2, "missing": 0,
        "idempotence_only": {"runs": 4, "duplicates": 0, "runs_with_duplicates": 3},
        "protocols": {"classic": {
            "runs": 8, "transactions": 40, "round_trips_per_txn": 7.3,
            "concurrent_transactions_bounces": 0,
            "concurrent_transactions_bounces_per_txn": None, "commit_latency_p50_ms": 12,
            "commit_latency_p99_ms": 40.0, "throughput_per_s": 100.5},
            "pre-registration": None},
    }


def test_the_broker_failover_summary_is_the_tables_figures() -> None:
    """summary.json of a broker-failover sweep: verdicts, records lost and duplicates, and per
    mode the fence, new-leader and unavailable times; a count of 0 or null is 0."""
    overall = pd.DataFrame([{"runs": 6, "valid": 6, "invalid": 0, "unknown": None,
                             "records_lost": 0, "duplicates": 2}])
    by_mode = pd.DataFrame([{"mode": "transactional", "runs": 6, "invalid": 0, "unknown": None,
                             "never_fenced": 0, "fence_p50_ms": 1500.0,
                             "leaders_p50_ms": 1520.26, "unavailable_p50_ms": float("nan"),
                             "unavailable_p99_ms": 3000.0, "partition_changes_mean": 2.5,
                             "records_lost": None, "duplicates": 2}])
    tables = {"overall": overall, "by_mode": by_mode}
    assert summarize(Aggregates("broker-failover", tables)) == {
        "experiment": "broker-failover", "runs": 6, "valid": 6, "invalid": 0,
        "violations": 0, "unknown": 0, "records_lost": 0, "duplicates": 2,
        "modes": {"transactional": {
            "runs": 6, "invalid": 0, "unknown": 0, "never_fenced": 0, "fence_p50_ms": 1500,
            "leaders_p50_ms": 1520.3, "unavailable_p50_ms": None, "unavailable_p99_ms": 3000,
            "partition_changes_mean": 2.5, "records_lost": 0, "duplicates": 2}},
    }


def test_a_swarm_report_lists_its_failed_runs_by_invariant_and_cell(tmp_path: Path) -> None:
    swarm = get_experiment("swarm")
    empty = pd.DataFrame()
    tables = {name: empty for name in ("by_mode", "by_invariant", "by_kind", "by_size",
                                       "failures")}
    summary = {"runs": 3, "valid": 2, "invalid": 1, "unknown": 0, "ok": 2, "violations": 1,
               "outside_model": 0, "non_terminating": 0}
    group = {"invariant": "SingleLeader", "valid": "false", "cell": "transactional",
             "runs": 1, "message": "two leaders in epoch 3", "index": 2,
             "replay": "kraftsim experiment replay out/swarm/r 2"}
    path = write_report(tmp_path, swarm, Aggregates("swarm", tables, summary), {}, [group])
    lines = path.read_text().splitlines()
    assert lines[2].startswith("3 runs: **1 violations, 0 outside the model, 0 "
                               "non-terminating**, 2 ok")
    failed = lines[lines.index("## Runs that are not valid"):]
    assert "| SingleLeader | transactional | 1 | two leaders in epoch 3 | " \
           "`kraftsim experiment replay out/swarm/r 2` |" in failed
    assert not (tmp_path / "timeseries.png").exists()


def test_the_visibility_summary_is_the_tables_figures() -> None:
    """summary.json of a visibility sweep: verdicts (unknown counted), and per mode the
    runs, partial-visibility runs, aborts, commits, refusals and latency; no recovery."""
    overall = pd.DataFrame([{"runs": 9, "valid": 6, "invalid": 1, "unknown": 2}])
    by_mode = pd.DataFrame([{"mode": "atomic", "runs": 9, "partial_visibility_runs": None,
                             "aborted": 0, "committed": 5, "latency_p50_ms": 20.0,
                             "latency_p99_ms": 95.04, "refusals": 4}])
    tables = {"overall": overall, "by_mode": by_mode}
    assert summarize(Aggregates("visibility", tables)) == {
        "experiment": "visibility", "runs": 9, "valid": 6, "invalid": 1, "unknown": 2,
        "modes": {"atomic": {
            "runs": 9, "partial_visibility_runs": 0, "aborted": 0, "committed": 5,
            "recovery_p50_ms": None, "recovery_p99_ms": None, "latency_p50_ms": 20,
            "latency_p99_ms": 95.0, "refusals": 4}},
    }
