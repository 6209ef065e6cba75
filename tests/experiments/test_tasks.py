"""A Spark task's runner outside Spark: Arrow batches of run numbers in, the rows of
those runs out as Arrow batches."""

from __future__ import annotations

import gc
import itertools
from typing import Any

import pyarrow as pa
import pytest

from bench.experiments import failover_specs
from experiments import tasks
from experiments.pipeline import RUNS_PER_TASK, arrow_schema, spark_schema, task_slices
from experiments.registry import get_experiment
from experiments.tasks import GridShare, grid_record, partition_runner, run_specs


class _Broadcast:
    """A stand-in for a Spark broadcast variable that counts its loads."""

    def __init__(self, value: Any) -> None:
        self._value = value
        self.loads = 0

    @property
    def value(self) -> Any:
        self.loads += 1
        return self._value


def _numbers(ids: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": pa.array(ids, pa.int64())})


def _one_run_per_task(runs: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(runs)]


def test_runner_gives_the_rows_of_the_numbered_runs() -> None:
    """Frames of task numbers (any split; here a task per run) give the rows of exactly
    those runs, in order, as running the specs directly does; the grid is loaded once
    per worker and sweep."""
    specs = failover_specs(6, seed=7)
    shared = _Broadcast([grid_record(s) for s in specs])
    grid = GridShare(shared, "sweep-a")
    schema = arrow_schema(spark_schema(get_experiment("failover").columns))
    runner = partition_runner(grid, _one_run_per_task(6), schema)
    batches = [_numbers([1, 2]), _numbers([4])]
    out = pa.Table.from_batches(list(runner(iter(batches))))
    expected = pa.Table.from_pylist(run_specs([specs[1], specs[2], specs[4]]), schema=schema)
    assert out.column("seed").to_pylist() == [specs[1].seed, specs[2].seed, specs[4].seed]
    assert out.schema == schema
    assert out.drop_columns(["wall_ms"]).equals(expected.drop_columns(["wall_ms"]))
    list(runner(iter([_numbers([0])])))  # a second task of the same sweep
    assert shared.loads == 1
    other = _Broadcast([grid_record(s) for s in failover_specs(2, seed=8)])
    list(partition_runner(GridShare(other, "sweep-b"), _one_run_per_task(2), schema)(
        iter([_numbers([1])])))
    assert other.loads == 1 and tasks._LOADED["token"] == "sweep-b"


def test_with_slices_a_task_number_runs_its_slice() -> None:
    """Spark hands a task its task number; the runner runs that task's slice of runs."""
    specs = failover_specs(5, seed=11)
    grid = GridShare(_Broadcast([grid_record(s) for s in specs]), "sliced")
    schema = arrow_schema(spark_schema(get_experiment("failover").columns))
    runner = partition_runner(grid, [(0, 3), (3, 4), (4, 5)], schema)
    out = pa.Table.from_batches(list(runner(iter([_numbers([0]), _numbers([2])]))))
    assert out.column("seed").to_pylist() == [specs[i].seed for i in (0, 1, 2, 4)]


def test_a_task_of_more_rows_than_a_frame_gives_each_row_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A task whose runs fill several Arrow frames hands over every row once, in order."""
    monkeypatch.setattr(tasks, "ROWS_PER_FRAME", 2)
    specs = failover_specs(5, seed=13)
    grid = GridShare(_Broadcast([grid_record(s) for s in specs]), "framed")
    schema = arrow_schema(spark_schema(get_experiment("failover").columns))
    frames = list(partition_runner(grid, [(0, 5)], schema)(iter([_numbers([0])])))
    assert [frame.num_rows for frame in frames] == [2, 2, 1]
    out = pa.Table.from_batches(frames)
    assert out.column("seed").to_pylist() == [s.seed for s in specs]


def test_a_spark_worker_freezes_once_per_sweep() -> None:
    """With ``freeze`` (Spark's workers) the first task of a sweep freezes the worker's
    state; later tasks of the sweep, and runners without it, freeze nothing."""
    specs = failover_specs(2, seed=3)
    schema = arrow_schema(spark_schema(get_experiment("failover").columns))
    gc.unfreeze()
    gc.collect()
    try:
        list(partition_runner(GridShare(_Broadcast([grid_record(s) for s in specs]), "p"),
                              _one_run_per_task(2), schema)(iter([_numbers([0])])))
        assert gc.get_freeze_count() == 0
        grid = GridShare(_Broadcast([grid_record(s) for s in specs]), "q")
        runner = partition_runner(grid, _one_run_per_task(2), schema, freeze=True)
        list(runner(iter([_numbers([0])])))
        frozen = gc.get_freeze_count()
        assert frozen > 1_000
        gc.unfreeze()
        list(runner(iter([_numbers([1])])))
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_task_slices_cover_every_run_once_and_shrink_towards_the_end() -> None:
    """Tasks take contiguous slices of the run numbers in launch order, none longer than
    runs_per_task; their sizes never grow, so the last tasks are short and every core
    gets work in a sweep of as many runs as cores."""
    for runs in (1, 2, 3, 7, 99, 1_000, 4_321, 10_000, 100_000):
        for cores in (1, 2, 8):
            slices = task_slices(runs, cores)
            assert slices[0][0] == 0 and slices[-1][1] == runs
            assert all(a[1] == b[0] for a, b in itertools.pairwise(slices))
            sizes = [end - first for first, end in slices]
            assert min(sizes) >= 1 and max(sizes) <= RUNS_PER_TASK
            assert sizes == sorted(sizes, reverse=True)
            assert len(slices) >= min(runs, cores)
            if runs >= 10 * RUNS_PER_TASK * cores:
                assert sizes[-1] <= sizes[0] // 4  # the tail is short
    assert task_slices(0, 2) == [] and task_slices(5, 0) == [(0, 3), (3, 5)]
    assert task_slices(3, 2, runs_per_task=1) == [(0, 1), (1, 2), (2, 3)]  # a task per run
    with pytest.raises(ValueError, match="runs_per_task"):
        task_slices(10, 2, runs_per_task=0)
    assert [e - f for f, e in task_slices(1_000, 2, runs_per_task=100)] == [100] * 10
