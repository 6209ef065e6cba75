"""``kraftsim experiment`` without Spark: bad input fails fast and clearly; replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftsim.cli import main
from tests.experiments.helpers import kraftsim, run, spec, without_wall


def _error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kraftsim: error: ")
    assert captured.out == ""
    return lines[0]


@pytest.mark.parametrize(("argv", "named"), [
    (["meteor"], "unknown experiment 'meteor'; choose from failover, visibility"),
    (["failover", "--param", "scenario=meteor"], "unknown scenario 'meteor'"),
    (["visibility", "--param", "window=inside"], "unknown parameter 'window'"),
    (["failover", "--param", "colour=red"], "unknown parameter 'colour'"),
    (["failover", "--runs", "0"], "--runs must be at least 1"),
    (["failover", "--master", "yarn"], "--master 'yarn': not a master URL"),
    (["failover", "--master", "local[0]"], "not a master URL"),
    (["failover", "--master", "spark://127.0.0.1:1"], "cannot reach 127.0.0.1:1"),
    (["failover", "--replay", "3"], "--replay needs one value for each parameter"),
])
def test_bad_input_is_one_clear_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     argv: list[str], named: str) -> None:
    out = tmp_path / "out"
    line = _error_line(capsys, ["experiment", *argv, "--out", str(out)])
    assert named in line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_unwritable_output_folder_is_named(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "results"
    line = _error_line(capsys, ["experiment", "failover", "--runs", "2", "--out", str(out)])
    assert f"--out {out}: cannot write there" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_output_folder_that_is_a_file_or_a_run_is_named(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    line = _error_line(capsys, ["experiment", "failover", "--runs", "2", "--out",
                                str(tmp_path / "notes.txt")])
    assert "exists and is not a folder" in line
    run = tmp_path / "out" / "failover" / "20260101T000000.000Z-abcd"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text("{}")
    line = _error_line(capsys, ["experiment", "failover", "--runs", "2", "--out", str(run)])
    assert "is a run folder; give the folder that holds the runs" in line
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_replay_reproduces_a_row_without_spark(tmp_path: Path) -> None:
    """A replay prints the row and writes a byte-identical trace in any process, whatever
    its PYTHONHASHSEED, with pyspark unimportable."""
    fake = tmp_path / "no-spark"
    (fake / "pyspark").mkdir(parents=True)
    (fake / "pyspark" / "__init__.py").write_text("raise ImportError('no Spark here')\n")
    one = spec("failover", 2, scenario="partition", window="inside", mode="transactional")
    expected = run(one)
    args = ["experiment", "failover", "--seed", "1", "--replay", "2"]
    args += [f"--param={k}={v}" for k, v in one.params.items()]
    traces = []
    for hash_seed in ("0", "1"):
        trace = tmp_path / f"trace-{hash_seed}.jsonl"
        done = kraftsim([*args, "--trace", str(trace)], tmp_path,
                        {"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(fake)})
        assert done.returncode == 0, done.stderr
        row = json.loads(done.stdout)
        assert without_wall(row) == without_wall(expected)
        traces.append(trace.read_bytes())
    assert traces[0] == traces[1] and len(traces[0]) > 10_000
    assert expected["replay"].startswith("kraftsim experiment failover --seed 1 --replay 2 ")


def test_a_replay_without_seed_replays_the_sweep_of_seed_1(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--seed defaults to 1 (as its help says): a row replayed without --seed is the row of
    the default sweep, and its replay command names seed 1."""
    one = spec("failover", 1, scenario="crash", window="inside", mode="transactional")
    args = ["experiment", "failover", "--replay", "1", "--trace", str(tmp_path / "t.jsonl")]
    args += [f"--param={k}={v}" for k, v in one.params.items()]
    assert main(args) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["master_seed"] == 1
    assert without_wall(row) == without_wall(run(one))
    assert row["replay"].startswith("kraftsim experiment failover --seed 1 --replay 1 ")
