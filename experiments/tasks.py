"""What a Spark task runs: many simulations per task, rows out as Arrow batches.

A task gets Arrow batches of its task number (its slice of runs comes with
the runner); the grid's records (experiment,
params, master_seed, run_index, seed) reach every Python worker once, as a
broadcast variable; each run becomes one row of the experiment's columns. The
task runner needs pyarrow but not pyspark, and
:func:`run_specs` none of them, so the same code serves Spark, a process pool
and a replay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from experiments.model import Row, RunSpec
from experiments.registry import get_experiment
from sim.gc_policy import freeze_worker, simulation_gc

ROWS_PER_FRAME = 50
"""A task hands its rows to Spark in Arrow batches of this many."""


def grid_record(spec: RunSpec) -> tuple[str, str, int, int, int]:
    """A RunSpec as one grid row (params keep the experiment's parameter order)."""
    return (spec.experiment, json.dumps(spec.params), spec.master_seed, spec.index, spec.seed)


def spec_of(experiment: str, params: str, master_seed: int, index: int, seed: int) -> RunSpec:
    """The RunSpec of a grid row."""
    return RunSpec(experiment, json.loads(params), int(master_seed), int(index), int(seed))


def run_spec(spec: RunSpec) -> Row:
    """Run one spec without a trace file, under the simulations' gc policy."""
    with simulation_gc():
        return get_experiment(spec.experiment).run(spec, None)


def run_specs(specs: Iterable[RunSpec]) -> list[Row]:
    """Run specs one after the other."""
    return [run_spec(spec) for spec in specs]


class GridShare:
    """The grid of a sweep as a Spark task reads it: every run's grid record in a Spark
    broadcast variable, loaded once per Python worker (PySpark would unpickle it again
    for every task), and told apart from other sweeps' grids by ``token``."""

    def __init__(self, broadcast: Any, token: str) -> None:
        self.broadcast = broadcast
        self.token = token

    def records(self) -> list[tuple[str, str, int, int, int]]:
        """Every run's grid record, this worker's copy."""
        if _LOADED.get("token") != self.token:
            _LOADED.clear()
            _LOADED["records"] = self.broadcast.value
            _LOADED["token"] = self.token
        records: list[tuple[str, str, int, int, int]] = _LOADED["records"]
        return records


_LOADED: dict[str, Any] = {}
"""The grid records a reused Python worker has loaded (one sweep's, by token)."""


def partition_runner(grid: GridShare, slices: Sequence[tuple[int, int]], schema: Any,
                     progress: Any = None, freeze: bool = False
                     ) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function a ``mapInArrow`` task runs over Arrow batches of task numbers (column
    ``id``), task ``t`` running the runs ``range(*slices[t])`` (indexes into ``grid``).
    It yields Arrow batches of rows with the pyarrow ``schema``; ``progress`` is an
    accumulator of runs done. With ``freeze``
    (a PySpark worker, whose daemon makes a full collection after every task) a
    worker's first task of the sweep freezes what the worker holds then
    (:func:`sim.gc_policy.freeze_worker`)."""

    def run_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        first_task = _LOADED.get("token") != grid.token
        records = grid.records()
        if freeze and first_task:
            freeze_worker()
        rows: list[Row] = []
        for batch in batches:
            for number in batch.column("id").to_pylist():
                for index in range(*slices[number]):
                    rows.append(run_spec(spec_of(*records[index])))
                    if progress is not None:
                        progress.add(1)
                    if len(rows) >= ROWS_PER_FRAME:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                        rows = []
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run_partition
