"""A tiny swarm sweep on Spark: Parquet rows, report.md and the JSON summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.helpers import kraftsim

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_a_tiny_swarm_sweep(tmp_path: Path) -> None:
    out = tmp_path / "swarm"
    # its own process: the session's SparkContext of test_spark.py may live in this worker
    done = kraftsim(["experiment", "swarm", "--runs", "6", "--seed", "3", "--param",
                     "shrink-budget=5", "--master", "local[1]", "--out", str(out), "--json"],
                    tmp_path, timeout=600)
    code = done.returncode
    summary = json.loads(done.stdout.splitlines()[-1])
    for key in ("runs", "ok", "violations", "outside_model", "non_terminating"):
        assert isinstance(summary[key], int)
        assert sum(m[key] for m in summary["modes"].values()) == summary[key]
    assert summary["runs"] == 6 and summary["ok"] > 0
    assert set(summary["modes"]) == {"transactional", "non-atomic", "atomic"}
    assert code == (1 if summary["violations"] else 0)
    run = out / "latest"  # the run folder under --out
    report = (run / "report.md").read_text()
    assert "## Shortest reproductions" in report and "## By fault kind" in report
    assert report.splitlines()[:3] == [
        "# kraftsim swarm sweep", "",
        f"6 runs: **{summary['violations']} violations, {summary['outside_model']} outside the "
        f"model, {summary['non_terminating']} non-terminating**, {summary['ok']} ok (every raft "
        f"and transaction invariant checked after every event)."]
    assert list((run / "runs").glob("experiment=swarm/scenario=swarm/*.parquet"))
    assert json.loads((run / "manifest.json").read_text())["experiment"] == "swarm"
