"""The Spark pipeline: sweeps, reports, reproducibility across masters, replays, Ctrl-C.

One local[2] session serves the in-process sweeps; the reproducibility test
runs the command under local[1] and on a standalone cluster it starts on
loopback. Deselect with ``-m 'not spark'``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from experiments.aggregate import INTERPRETED_ROWS, aggregate, interpreted
from experiments.grid import build_grid, parse_params
from experiments.pipeline import SweepResult, run_sweep
from experiments.registry import get_experiment
from experiments.spark_env import SparkHandle, start_spark
from tests.experiments.helpers import (
    KRAFTSIM,
    kraftsim,
    replay_args,
    run,
    spec,
    without_wall,
)
from tests.experiments.parquet_rows import parquet_rows
from tests.experiments.standalone import standalone_cluster

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

REPRO_SWEEP = ["--runs", "32", "--seed", "7"]
"""One run per cell of the default failover grid."""


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkHandle]:
    handle = start_spark("local[2]")
    yield handle
    handle.stop()


def _sweep(spark: SparkHandle, name: str, out: Path, runs: int, seed: int,
           params: list[str] | None = None) -> SweepResult:
    experiment = get_experiment(name)
    axes = parse_params(experiment, params or [])
    return run_sweep(experiment, build_grid(experiment, axes, runs, seed), "local[2]", out,
                     axes=axes, spark=spark)


@pytest.fixture(scope="module")
def failover(spark: SparkHandle, tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    return _sweep(spark, "failover", tmp_path_factory.mktemp("sweep") / "failover", 32, 7)


def _worker_pyspark(_: Any) -> list[str]:
    import pyspark

    return [pyspark.__file__ or ""]


def test_local_workers_run_the_installed_pyspark(spark: SparkHandle) -> None:
    """A local session's Python workers import the installed, compiled pyspark, not the
    source zip Spark puts first on their path (experiments.spark_daemon)."""
    files = spark.session.sparkContext.parallelize([0, 1], 2).flatMap(_worker_pyspark).collect()
    assert files and all("pyspark.zip" not in f and f.endswith("__init__.py") for f in files)


def test_failover_sweep_writes_parquet_report_and_plots(failover: SweepResult) -> None:
    out = failover.out
    scenarios = sorted(p.name for p in (out / "runs" / "experiment=failover").iterdir())
    assert scenarios == [f"scenario={s}" for s in ("crash", "crash-unflushed", "partition",
                                                   "resign")]
    for folder in (out / "runs" / "experiment=failover").iterdir():
        assert len(list(folder.glob("*.parquet"))) >= 1
    assert [p.name for p in out.parent.iterdir()] == ["failover"]  # no staging folder left
    pngs = ("recovery_cdf.png", "outcomes.png", "partial_visibility.png", "unavailable.png",
            "timeseries.png")
    report = (out / "report.md").read_text()
    for png in pngs:
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in report
    for heading in ("## By write mode", "## Outcome by fault window",
                    "## Recovery time per fault and mode", "## Unavailable window",
                    "## One run per cell over time", "## Every cell"):
        assert heading in report
    assert "| committed (share) |" in report and "| committed (runs) |" in report
    times = report[report.index("## Every cell: times and counts"):]
    assert "\n| fault | window | mode | runs (count) | leader_p50 | hw_p50 |" in times
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["experiment"], manifest["runs"], manifest["seed"]) == ("failover", 32, 7)
    assert manifest["params"]["batches"] == [6] and manifest["cells"] == 32
    assert manifest["spark_version"].startswith("4.") and manifest["wall_s"] > 0
    # the session was given: no "spark start" phase; the phases make up the wall time
    assert list(failover.phases) == ["runs", "aggregates", "report"]
    assert all(t > 0 for t in failover.phases.values())
    assert sum(failover.phases.values()) == pytest.approx(failover.wall_s)
    cells = json.loads((out / "cells.json").read_text())
    assert len(cells) == 32 and sum(c["runs"] for c in cells) == 32
    summary = json.loads((out / "summary.json").read_text())
    assert summary == {**failover.summary}
    assert (summary["runs"], summary["valid"], summary["invalid"], summary["unknown"]) == \
        (32, 32, 0, 0)
    txn, split = summary["modes"]["transactional"], summary["modes"]["non-atomic"]
    assert txn["runs"] == split["runs"] == 16
    assert txn["partial_visibility_runs"] == 0 and txn["aborted"] >= 4
    assert split["partial_visibility_runs"] > 0 and split["aborted"] == 0
    assert 0 < txn["recovery_p50_ms"] <= txn["recovery_p99_ms"]


def test_spark_rows_are_the_pure_function_rows(failover: SweepResult) -> None:
    rows = parquet_rows(failover.out)
    assert len(rows) == 32
    for row in rows[::7]:
        params = json.loads(row["params"])
        again = run(spec("failover", row["run_index"], 7,
                         **{k.replace("-", "_"): v for k, v in params.items()}))
        assert without_wall(again) == row


def test_summary_figures_are_the_rows_figures(failover: SweepResult) -> None:
    """summary.json's per-mode counts and recovery percentiles are those of the Parquet
    rows (percentiles exact, with linear interpolation)."""
    rows = parquet_rows(failover.out)
    summary = json.loads((failover.out / "summary.json").read_text())
    assert set(summary["modes"]) == {r["mode"] for r in rows}
    for mode, entry in summary["modes"].items():
        mine = [r for r in rows if r["mode"] == mode]
        recovery = sorted(r["recovery_ms"] for r in mine if r["recovery_ms"] is not None)
        assert entry == {
            "runs": len(mine),
            "partial_visibility_runs": sum(r["partial_visibility"] > 0 for r in mine),
            "aborted": sum(r["outcome"] == "aborted" for r in mine),
            "committed": sum(r["outcome"] == "committed" for r in mine),
            "recovery_p50_ms": _figure(_percentile(recovery, 0.5)),
            "recovery_p99_ms": _figure(_percentile(recovery, 0.99)),
        }
        assert entry["committed"] > 0


def _percentile(values: list[int], level: float) -> float:
    """Spark's exact percentile: linear interpolation between the closest ranks."""
    position = level * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _figure(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 1)


def test_aggregates_are_the_same_interpreted_and_compiled(spark: SparkHandle,
                                                           failover: SweepResult) -> None:
    """A small sweep's queries run without code generation (faster on a few thousand rows):
    the tables are the ones code generation gives, and the session's settings are back as
    they were after."""
    session = spark.session
    session.read.parquet(str(failover.out / "runs")).createOrReplaceTempView("runs")
    experiment = get_experiment("failover")
    before = session.conf.get("spark.sql.codegen.factoryMode", None)
    compiled = aggregate(session, experiment, rows=None)
    seen: list[str] = []
    with interpreted(session, True):
        seen.append(session.conf.get("spark.sql.codegen.factoryMode"))
    small = aggregate(session, experiment, rows=INTERPRETED_ROWS)
    assert seen == ["NO_CODEGEN"]
    assert session.conf.get("spark.sql.codegen.factoryMode", None) == before
    assert compiled.tables.keys() == small.tables.keys()
    for name, table in compiled.tables.items():
        assert table.equals(small.tables[name]), name
    assert compiled.summary == small.summary


class _Conf:
    """A session's settings: those given at start (``given``) and the runtime ones."""

    def __init__(self, given: dict[str, str]) -> None:
        self.given, self.runtime = given, dict(given)

    def contains(self, key: str) -> bool:
        return key in self.given

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.runtime.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.runtime[key] = value

    def unset(self, key: str) -> None:
        self.runtime.pop(key, None)


def test_interpreted_queries_leave_the_users_own_codegen_settings() -> None:
    """``--conf spark.sql.codegen.wholeStage=true`` stays true for a small sweep; the other
    setting is changed for the block and unset after."""
    conf = _Conf({"spark.sql.codegen.wholeStage": "true"})
    session = type("Session", (), {"conf": conf, "sparkContext": type(
        "Context", (), {"getConf": staticmethod(lambda: conf)})()})()
    with interpreted(session, True):
        assert conf.runtime == {"spark.sql.codegen.wholeStage": "true",
                                "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    assert conf.runtime == {"spark.sql.codegen.wholeStage": "true"}
    with interpreted(session, False):
        assert conf.runtime == {"spark.sql.codegen.wholeStage": "true"}


def test_visibility_sweep_by_mode(spark: SparkHandle, tmp_path: Path) -> None:
    result = _sweep(spark, "visibility", tmp_path / "visibility", 27, 3)
    summary = result.summary
    assert summary["invalid"] == 0 and summary["runs"] == 27
    modes = summary["modes"]
    assert modes["transactional"]["partial_visibility_runs"] == 0
    assert modes["non-atomic"]["partial_visibility_runs"] > 0
    assert modes["atomic"]["refusals"] > 0
    assert modes["transactional"]["latency_p50_ms"] > 0
    assert (result.out / "latency_cdf.png").exists()
    report = (result.out / "report.md").read_text()
    assert "## Visibility latency" in report and "](timeseries.png)" in report
    assert "| refused (operations) |" in report


def test_failing_rows_replay_without_spark(spark: SparkHandle, tmp_path: Path) -> None:
    """A broken controller (no failover abort): every row is invalid, and its replay command
    reruns it without Spark with the trace whose fingerprint the row recorded."""
    result = _sweep(spark, "failover", tmp_path / "broken", 3, 11,
                    ["scenario=crash", "window=inside", "mode=transactional",
                     "mutations=forget-failover-abort"])
    assert result.summary["invalid"] == 3
    report = (result.out / "report.md").read_text()
    short = f"kraftsim experiment replay {result.out} 0"
    assert result.summary["failure_groups"] == [
        {"invariant": "FailoverAbortsInflight", "valid": "false", "cell": "crash", "runs": 3,
         "index": 0, "replay": short, "message": parquet_rows(result.out)[0]["message"]}]
    assert "| FailoverAbortsInflight | crash | 3 |" in report and f"`{short}`" in report
    fake = tmp_path / "no-spark"
    (fake / "pyspark").mkdir(parents=True)
    (fake / "pyspark" / "__init__.py").write_text("raise ImportError('no Spark here')\n")
    by_reference = kraftsim(replay_args(short), tmp_path, {"PYTHONPATH": str(fake)})
    assert by_reference.returncode == 1, by_reference.stderr  # invalid, as the sweep found
    assert "the same as the sweep's row" in by_reference.stderr
    assert (result.out / "replay-0" / "timeline.html").exists()
    for row in parquet_rows(result.out):
        assert row["valid"] == "false" and row["invariant"] == "FailoverAbortsInflight"
        done = kraftsim(replay_args(row["replay"]), tmp_path, {"PYTHONPATH": str(fake)})
        assert done.returncode == 1, done.stderr
        assert without_wall(json.loads(done.stdout)) == row
        trace = tmp_path / replay_args(row["replay"])[-1]
        counted = b"".join(line for line in trace.read_bytes().splitlines(keepends=True)
                           if b'"note":' not in line)  # timeline notes are not fingerprinted
        assert hashlib.sha256(counted).hexdigest()[:16] == row["fingerprint"]


def _cli_sweep(tmp: Path, master: str, hash_seed: str) -> tuple[list[dict[str, Any]],
                                                                  dict[str, Any]]:
    out = tmp / f"out-{hash_seed}"
    done = kraftsim(["experiment", "failover", *REPRO_SWEEP, "--master", master, "--out",
                     str(out), "--json"], tmp, {"PYTHONHASHSEED": hash_seed}, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = [p for p in out.iterdir() if p.name != "latest"]  # a run folder, and latest
    assert (out / "latest").resolve() == run.resolve() and (run / "manifest.json").exists()
    return parquet_rows(out / "latest"), json.loads(done.stdout)


def test_same_rows_on_local1_local2_and_a_standalone_cluster(failover: SweepResult,
                                                             tmp_path: Path) -> None:
    """The same sweep gives the same rows (sorted, wall time aside) in-process on
    local[2], under local[1] with PYTHONHASHSEED=0 and on a standalone cluster with
    PYTHONHASHSEED=1."""
    expected = parquet_rows(failover.out)
    local1, summary = _cli_sweep(tmp_path, "local[1]", "0")
    assert local1 == expected
    assert {k: summary[k] for k in ("runs", "valid", "invalid", "unknown")} == \
        {"runs": 32, "valid": 32, "invalid": 0, "unknown": 0}
    for mode in ("transactional", "non-atomic"):
        assert set(summary["modes"][mode]) >= {"runs", "partial_visibility_runs", "aborted",
                                              "committed", "recovery_p50_ms",
                                              "recovery_p99_ms"}
    assert summary["master"] == "local[1]"
    same = kraftsim(["experiment", "compare", str(failover.out), str(tmp_path / "out-0")],
                    tmp_path)
    assert same.returncode == 0 and "no cell's figures changed" in same.stdout, same.stderr
    # The worker runs this environment's python3 (its executors run their own Python, the
    # first python3 on their PATH): as if started with this virtual environment activated.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    with standalone_cluster(tmp_path / "cluster", env={"PATH": path}) as url:
        standalone, _ = _cli_sweep(tmp_path, url, "1")
    assert standalone == expected


def test_ctrl_c_stops_the_job_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "big"
    process = subprocess.Popen(
        [KRAFTSIM, "experiment", "failover", "--runs", "20000", "--master", "local[1]",
         "--out", str(out)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True)
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "runs (" in line:
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(180), "".join(lines)
    time.sleep(1.0)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    assert process.wait(timeout=90) == 130
    reader.join(timeout=10)
    assert "kraftsim: interrupted" in "".join(lines)
    assert "Traceback" not in "".join(lines)
    assert list(tmp_path.iterdir()) == []  # neither the output nor its staging folder
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the JVM and the Python workers are gone too
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.5)
    else:
        pytest.fail("processes of the interrupted sweep are still running")
