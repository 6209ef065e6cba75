"""A Spark task's runner outside Spark: run numbers in, the grid's runs' rows out."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.experiments import failover_specs
from experiments import tasks
from experiments.registry import get_experiment
from experiments.tasks import GridShare, grid_record, partition_runner, rows_to_frame, run_specs


class _Broadcast:
    """A stand-in for a Spark broadcast variable that counts its loads."""

    def __init__(self, value: Any) -> None:
        self._value = value
        self.loads = 0

    @property
    def value(self) -> Any:
        self.loads += 1
        return self._value


def test_runner_gives_the_rows_of_the_numbered_runs() -> None:
    """Frames of run numbers (any split) give the rows of exactly those runs, in order,
    as running the specs directly does; the grid is loaded once per worker and sweep."""
    specs = failover_specs(6, seed=7)
    shared = _Broadcast([grid_record(s) for s in specs])
    grid = GridShare(shared, "sweep-a", len(specs))
    runner = partition_runner("failover", grid)
    frames = [pd.DataFrame({"id": [1, 2]}), pd.DataFrame({"id": [4]})]
    out = pd.concat(list(runner(iter(frames))), ignore_index=True)
    columns = get_experiment("failover").columns
    expected = rows_to_frame(columns, run_specs([specs[1], specs[2], specs[4]]))
    assert list(out["seed"]) == [specs[1].seed, specs[2].seed, specs[4].seed]
    pd.testing.assert_frame_equal(out.drop(columns="wall_ms"),
                                  expected.drop(columns="wall_ms"))
    list(runner(iter([pd.DataFrame({"id": [0]})])))  # a second task of the same sweep
    assert shared.loads == 1
    other = _Broadcast([grid_record(s) for s in failover_specs(2, seed=8)])
    list(partition_runner("failover", GridShare(other, "sweep-b", 2))(
        iter([pd.DataFrame({"id": [1]})])))
    assert other.loads == 1 and tasks._LOADED["token"] == "sweep-b"
