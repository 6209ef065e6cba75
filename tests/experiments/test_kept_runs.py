"""Kept runs without Spark: run folders, latest, manifests, compare, replay by reference,
failures grouped by invariant and cell."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from experiments import failures, runs
from experiments.failover import FAILOVER
from experiments.grid import build_grid, cells, parse_params
from experiments.model import ExperimentError
from experiments.pipeline import arrow_schema, spark_schema
from kraftsim.cli import main
from tests.experiments.helpers import run, without_wall

SMALL = ["scenario=crash,partition", "window=inside", "mode=transactional,non-atomic"]
"""A 4-cell failover grid."""


def _manifest(folder: Path, params: list[str], runs_: int, seed: int = 3,
              experiment: Any = FAILOVER) -> dict[str, Any]:
    axes = parse_params(experiment, params)
    specs = build_grid(experiment, axes, runs_, seed)
    now = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    manifest = runs.build_manifest(experiment, axes, specs, "local[2]", now,
                                   now + timedelta(seconds=12.5), 12.5, "4.0.0")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / runs.MANIFEST).write_text(json.dumps(manifest))
    return manifest


def test_run_ids_sort_by_time_and_do_not_collide(tmp_path: Path) -> None:
    early = datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    ids = [runs.new_run_id(early + timedelta(milliseconds=n)) for n in (0, 1, 1000, 60_000)]
    assert ids == sorted(ids) and ids[0].startswith("20260102T030405.006Z-")
    same = {runs.new_run_id(early) for _ in range(50)}
    assert len(same) > 40  # four random hex digits tell runs of one millisecond apart
    folder = runs.new_run_folder(tmp_path / "out" / "failover")
    assert folder.parent == tmp_path / "out" / "failover" and not folder.exists()


def test_latest_is_a_link_or_else_a_text_file(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "failover"
    first, second = base / "20260101T000000.000Z-aaaa", base / "20260101T000001.000Z-bbbb"
    _manifest(first, SMALL, 4)
    _manifest(second, SMALL, 4)
    runs.point_latest(base, first)
    runs.point_latest(base, second)
    assert (base / "latest").is_symlink() and (base / "latest").resolve() == second.resolve()
    assert runs.resolve_run(str(base / "latest")) == second
    assert runs.resolve_run(str(base)) == second  # the folder of the runs means its latest

    def refuse(*_: Any, **__: Any) -> None:
        raise OSError("symlinks not supported here")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    runs.point_latest(base, first)
    assert not (base / "latest").is_symlink()
    assert (base / "latest").read_text().strip() == first.name
    assert runs.resolve_run(str(base / "latest")) == first
    assert sorted(p.name for p in base.iterdir()) == [first.name, second.name, "latest"]


def test_a_folder_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="not a run folder"):
        runs.resolve_run(str(tmp_path))
    with pytest.raises(ExperimentError, match="no such run folder"):
        runs.resolve_run(str(tmp_path / "missing"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ExperimentError, match="exists and is not a folder"):
        runs.new_run_folder(blocker)


def test_manifest_has_every_parameter_and_the_versions(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path / "run", ["scenario=crash", "batches=3"], 8)
    assert manifest["params"]["scenario"] == ["crash"]
    assert manifest["params"]["batches"] == [3]
    assert manifest["params"]["rejoin-ms"] == [500]  # a default, recorded too
    assert list(manifest["params"]) == [p.name for p in FAILOVER.params]
    assert (manifest["runs"], manifest["seed"], manifest["master"]) == (8, 3, "local[2]")
    assert manifest["started"] == "2026-11-23T10:00:00.000Z"
    assert manifest["ended"] == "2026-11-23T10:00:12.500Z" and manifest["wall_s"] == 12.5
    assert manifest["spark_version"] == "4.0.0" and manifest["python_version"].count(".") == 2
    assert manifest["kraftsim_version"] != "" and manifest["commit"] != ""
    commit = manifest["commit"]
    assert commit == "unknown" or len(commit.split("+")[0]) == 40


def test_the_manifest_commit_says_when_the_tree_was_dirty(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit kraftsim runs from, with +dirty when a tracked file was changed (an
    untracked one does not count), and unknown outside a checkout."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    (tmp_path / "pyproject.toml").write_text("[project]\n")
    git("init", "-q")
    git("add", "pyproject.toml")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    head = git("rev-parse", "HEAD")
    monkeypatch.setattr(runs, "__file__", str(tmp_path / "experiments" / "runs.py"))
    (tmp_path / "notes.txt").write_text("untracked")
    assert runs.git_commit() == head
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'changed'\n")
    assert runs.git_commit() == f"{head}+dirty"
    (tmp_path / "pyproject.toml").unlink()
    assert runs.git_commit() == "unknown"


def _cells(folder: Path, records: list[dict[str, Any]]) -> None:
    runs.write_cells(folder, pd.DataFrame(records))


def test_compare_prints_the_cells_whose_figures_changed(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _manifest(a, SMALL, 4, seed=1)
    _manifest(b, SMALL, 4, seed=2)
    same = {"fault": "crash", "window": "inside", "mode": "non-atomic", "runs": 1,
            "committed": 0.5, "recovery_p50": 4010.0}
    _cells(a, [{**same}, {**same, "mode": "transactional", "recovery_p50": 4000.0}])
    _cells(b, [{**same}, {**same, "mode": "transactional", "recovery_p50": 4025.5}])
    assert main(["experiment", "compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "differ in: seed" in text
    changed = [line.split() for line in text.splitlines() if line.startswith("crash/")]
    assert changed == [["crash/inside/transactional", "recovery_p50", "4000", "4025.5",
                        "+25.5"]]
    assert main(["experiment", "compare", str(a), str(b), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"cell": "crash/inside/transactional", "metric": "recovery_p50", "a": 4000.0,
         "b": 4025.5, "delta": 25.5}]
    _cells(a, [{**same}, {**same, "mode": "transactional", "recovery_p50": 4000.0}])
    _cells(b, [{**same, "committed": 0.75},
               {**same, "mode": "transactional", "recovery_p50": 4025.5}])
    assert main(["experiment", "compare", str(a), str(b)]) == 0
    assert capsys.readouterr().out.splitlines()[3:] == [  # figures aligned on the right
        "cell                        metric           A       B  delta",
        "--------------------------  ------------  ----  ------  -----",
        "crash/inside/non-atomic     committed      0.5    0.75  +0.25",
        "crash/inside/transactional  recovery_p50  4000  4025.5  +25.5",
        "2 figure(s) changed in 2 cell(s)"]
    only_a = {**same, "fault": "partition", "runs": 3}
    _cells(a, [{**same}, only_a])
    _cells(b, [{**same}, {**same, "fault": "resign", "runs": 2}])
    assert main(["experiment", "compare", str(a), str(b), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"cell": "partition/inside/non-atomic", "metric": "runs", "a": 3, "b": None,
         "delta": None},
        {"cell": "resign/inside/non-atomic", "metric": "runs", "a": None, "b": 2,
         "delta": None}]


def test_compare_refuses_runs_of_different_experiments(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from experiments.visibility import VISIBILITY

    a, b = tmp_path / "a", tmp_path / "b"
    _manifest(a, SMALL, 4)
    _manifest(b, [], 9, experiment=VISIBILITY)
    assert main(["experiment", "compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kraftsim: error: cannot compare a failover run with a visibility run"]
    assert main(["experiment", "compare", str(a), str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert main(["experiment", "compare", str(a)]) == 2
    assert "compare RUN_A RUN_B" in capsys.readouterr().err


def _kept_run(folder: Path, params: list[str], runs_: int, seed: int) -> list[dict[str, Any]]:
    """A run folder as a sweep leaves it: manifest and Parquet rows (computed here)."""
    _manifest(folder, params, runs_, seed)
    axes = parse_params(FAILOVER, params)
    rows = [run(spec) for spec in build_grid(FAILOVER, axes, runs_, seed)]
    (folder / "runs").mkdir()
    _write_rows(rows, folder / "runs" / "part-0.parquet")
    return rows


def test_replay_by_reference_reruns_the_row_into_the_run_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out" / "failover" / "20260101T000000.000Z-abcd"
    rows = _kept_run(folder, SMALL, 6, 4)
    runs.point_latest(folder.parent, folder)
    assert main(["experiment", "replay", str(folder.parent / "latest"), "5"]) == 0
    captured = capsys.readouterr()
    assert without_wall(json.loads(captured.out)) == without_wall(rows[5])
    assert "the same as the sweep's row" in captured.err
    assert (folder / "replay-5" / "trace.jsonl").stat().st_size > 10_000
    assert (folder / "replay-5" / "timeline.html").read_text().startswith("<!DOCTYPE html>")
    # run 5 of a 4-cell grid: the second run of cell 1 (crash, non-atomic)
    assert json.loads(captured.out)["run_index"] == 1
    assert (rows[5]["scenario"], rows[5]["mode"]) == ("crash", "non-atomic")
    assert main(["experiment", "replay", str(folder), "6"]) == 2
    assert "INDEX must be a run of this sweep, 0 to 5" in capsys.readouterr().err


def test_replay_reports_a_fingerprint_that_differs_from_the_sweep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "run"
    rows = _kept_run(folder, SMALL, 4, 4)
    rows[2]["fingerprint"] = "0" * 16
    _write_rows(rows, folder / "runs" / "part-0.parquet")
    assert main(["experiment", "replay", str(folder), "2"]) == 1
    assert "differs from the sweep's 0000000000000000" in capsys.readouterr().err


def test_replay_of_a_row_missing_from_the_sweeps_parquet_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The rerun is still made and printed; there is only nothing to check it against."""
    folder = tmp_path / "run"
    rows = _kept_run(folder, SMALL, 4, 4)
    _write_rows(rows[:2] + rows[3:], folder / "runs" / "part-0.parquet")
    assert main(["experiment", "replay", str(folder), "2"]) == 0
    captured = capsys.readouterr()
    assert without_wall(json.loads(captured.out)) == without_wall(rows[2])
    assert "note: the sweep's row was not found in runs/ (Parquet); nothing to check the " \
           "replay against" in captured.err


def test_failures_are_grouped_by_invariant_and_cell_with_one_short_replay(
        tmp_path: Path) -> None:
    params = [*SMALL, "mutations=none,forget-failover-abort"]
    axes = parse_params(FAILOVER, params)
    folder = tmp_path / "run"
    _manifest(folder, params, 16, 5)
    rows = [run(spec) for spec in build_grid(FAILOVER, axes, 16, 5)]
    bad = [r for r in rows if r["valid"] != "true"]
    assert bad, "the mutation must make some runs invalid"
    frame = pd.DataFrame(rows)
    frame = frame[frame["valid"] != "true"]
    grouped = (frame.groupby(["valid", "invariant", "params"], as_index=False)
               .agg(runs=("run_index", "size"), first_index=("run_index", "min"),
                    message=("message", "first")))
    groups = failures.failure_groups(grouped, FAILOVER, axes, folder)
    assert sum(g["runs"] for g in groups) == len(bad)
    assert {g["invariant"] for g in groups} == {"FailoverAbortsInflight"}
    manifest = runs.read_manifest(folder)
    for group in groups:
        assert group["replay"] == f"kraftsim experiment replay {folder} {group['index']}"
        assert len(group["replay"]) < 60 + len(str(folder))
        again = runs.spec_of_index(FAILOVER, manifest, group["index"])
        assert runs.run_label(FAILOVER, axes, again.params) == group["cell"]
        assert run(again)["invariant"] == "FailoverAbortsInflight"
    text = failures.text(groups)
    assert text[0].startswith(f"not valid: {len(bad)} run(s) in {len(groups)} group(s)")
    report = "\n".join(failures.markdown(groups))
    assert "| invariant | cell | runs | first message | replay |" in report
    assert all(g["replay"] in report for g in groups)
    assert "--param" not in report


def test_failure_lists_shorten_long_messages_and_name_the_groups_left_out() -> None:
    """report.md cuts a first message to 120 characters (its | escaped); the command's
    output lists 20 groups, aligned, and says how many more report.md has."""
    groups = [{"invariant": f"Invariant{i:02d}", "valid": "false", "cell": "crash/inside",
               "runs": 1000 + i, "message": "a|b " + "x" * 200, "index": i,
               "replay": f"kraftsim experiment replay out/r {i}"} for i in range(23)]
    report = failures.markdown(groups)
    assert report[2].startswith(f"{sum(1000 + i for i in range(23)):,} run(s) in 23 group(s)")
    row = report[6]
    message = row.split(" | ")[3]
    assert message == ("a\\|b " + "x" * 200)[:117] + "..."
    assert len(message) == 120
    whole = {**groups[0], "message": "y" * 120}  # 120 characters fit as they are
    assert failures.markdown([whole])[6].split(" | ")[3] == "y" * 120
    groups[1]["cell"] = "crash-unflushed/inside"
    text = failures.text(groups)
    assert len(text) == 1 + 20 + 1
    assert text[1] == ("  Invariant00 crash/inside" + " " * 10 + "  1,000 run(s)  "
                       "kraftsim experiment replay out/r 0")
    assert text[2] == ("  Invariant01 crash-unflushed/inside  1,001 run(s)  "
                       "kraftsim experiment replay out/r 1")
    assert text[-1] == "  ... 3 more group(s) in report.md"
    exactly = failures.text(groups[:20])
    assert len(exactly) == 21 and "more group(s)" not in exactly[-1]


def test_sweep_index_inverts_the_grid() -> None:
    axes = parse_params(FAILOVER, SMALL)
    grid = cells(FAILOVER, axes)
    manifest = {"runs": 10, "seed": 1, "params": {k: list(v) for k, v in axes.items()}}
    for index in range(10):
        spec = runs.spec_of_index(FAILOVER, manifest, index)
        assert runs.sweep_index(grid, spec.params, spec.index) == index
    assert [s.seed for s in build_grid(FAILOVER, axes, 10, 1)] == \
        [runs.spec_of_index(FAILOVER, manifest, i).seed for i in range(10)]


def test_a_failed_sweep_leaves_no_folders_it_made(tmp_path: Path) -> None:
    base = tmp_path / "out" / "failover"
    made = runs.missing_folders(base)
    assert made == [base, tmp_path / "out"]
    base.mkdir(parents=True)
    runs.remove_empty(made)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("keep")
    base.mkdir()
    runs.remove_empty(made)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # not empty: kept


def test_a_manifest_that_is_not_kraftsims_is_named(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_text('{"experiment": "failover"}')
    assert main(["experiment", "replay", str(tmp_path), "0"]) == 2
    err = capsys.readouterr().err
    assert "is not a kraftsim run manifest" in err and "Traceback" not in err


def test_replay_finds_rows_written_outside_the_run_folder(tmp_path: Path) -> None:
    from experiments.replay import recorded_row

    folder = tmp_path / "run"
    rows = _kept_run(folder, SMALL, 4, 4)
    elsewhere = tmp_path / "shared" / "rows"
    elsewhere.parent.mkdir()
    (folder / "runs").rename(elsewhere)
    (folder / "summary.json").write_text(json.dumps({"rows": elsewhere.as_uri()}))
    spec = runs.spec_of_index(FAILOVER, runs.read_manifest(folder), 3)
    found = recorded_row(folder, spec)
    assert found is not None and found["fingerprint"] == rows[3]["fingerprint"]


def test_compare_tells_apart_cells_of_every_swept_parameter(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _manifest(a, [*SMALL, "batches=3,6"], 8)
    _manifest(b, [*SMALL, "batches=3,6"], 8)

    def cell(batches: int, recovery: float) -> dict[str, Any]:
        params = json.dumps({"batches": batches, "mode": "transactional",
                             "scenario": "crash", "window": "inside"}, sort_keys=True)
        return {"params": params, "runs": 2, "invalid": 0, "recovery_ms_p50": recovery}

    _cells(a, [cell(3, 4000.0), cell(6, 4100.0)])
    _cells(b, [cell(3, 4000.0), cell(6, 4150.0)])
    assert main(["experiment", "compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    changed = [line.split() for line in text.splitlines() if line.startswith("batches=")]
    assert changed == [["batches=6", "recovery_ms_p50", "4100", "4150", "+50"]]
    assert main(["experiment", "compare", str(a), str(a)]) == 0
    assert "no cell's figures changed" in capsys.readouterr().out


def test_the_manifest_keeps_no_secret_spark_setting() -> None:
    shown = runs.shown_conf((("spark.executor.memory", "2g"),
                             ("spark.hadoop.fs.s3a.secret.key", "hunter2"),
                             ("spark.hadoop.fs.s3a.access.key", "AKIA")))
    assert shown == {"spark.executor.memory": "2g",
                     "spark.hadoop.fs.s3a.secret.key": "(redacted)",
                     "spark.hadoop.fs.s3a.access.key": "(redacted)"}


def _write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """Rows as a sweep's Parquet file (the experiment's schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(spark_schema(FAILOVER.columns))
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def test_compare_counts_a_parameter_a_run_did_not_have_at_its_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A broker-failover run made before metadata-version existed meets the cells of a run
    at the default 4.0-IV0; a cell at another level is a cell of its own."""
    from experiments.broker_failover import BROKER_FAILOVER

    a, b = tmp_path / "a", tmp_path / "b"
    _manifest(a, ["scenario=zone", "mode=atomic"], 2, experiment=BROKER_FAILOVER)
    _manifest(b, ["scenario=zone", "mode=atomic", "metadata-version=4.0-IV0,4.1-IV0"], 2,
              experiment=BROKER_FAILOVER)
    old = {"mode": "atomic", "scenario": "zone", "zone-size": 2}
    new = {**old, "metadata-version": "4.0-IV0"}

    def cell(params: dict[str, Any], unavailable: float) -> dict[str, Any]:
        return {"params": json.dumps(params, sort_keys=True), "runs": 1,
                "unavailable_max_ms_p50": unavailable}

    _cells(a, [cell(old, 900.0)])
    _cells(b, [cell(new, 950.0), cell({**new, "metadata-version": "4.1-IV0"}, 800.0)])
    assert main(["experiment", "compare", str(a), str(b), "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [
        {"cell": "metadata-version=4.0-IV0", "metric": "unavailable_max_ms_p50", "a": 900.0,
         "b": 950.0, "delta": 50.0},
        {"cell": "metadata-version=4.1-IV0", "metric": "runs", "a": None, "b": 1,
         "delta": None}]
