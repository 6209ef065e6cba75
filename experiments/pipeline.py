"""The sweep on Spark: grid DataFrame -> tasks of many runs -> Parquet -> SQL -> report.

1. The task numbers become a DataFrame of one partition per task
   (``spark.range``); each task runs a contiguous slice of at most
   ``runs_per_task`` runs, slices that shrink as the sweep nears its end
   (:func:`task_slices`): a Python worker runs many simulations per task, so
   Spark's per-task cost is paid rarely, and no core waits long for the last
   task. The grid's records reach each Python worker once, as a
   broadcast variable.
2. ``mapInArrow`` runs them; rows come back as Arrow batches with the
   experiment's explicit schema (built straight from the rows, no pandas).
3. The rows are written as Parquet under ``runs/``, partitioned by experiment
   and scenario, one sorted file per scenario; or, with ``--rows``, to any
   path or URI Spark can write (a shared filesystem, ``s3a://...``), which
   a cluster of several machines needs.
4. Spark SQL computes the aggregates over the Parquet rows and the driver
   collects them; ``report.md``, the plots and ``summary.json`` are written
   by the driver, on its own disk.

All of it goes to a staging folder renamed to ``--out`` only at the end.
Each step is announced on the status stream (stderr) as it starts: Spark
starting, the runs' progress, aggregating, writing the report, the JVM's
class-data archive being saved.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from experiments import failures, output, runs
from experiments.aggregate import Aggregates, aggregate
from experiments.grid import Axes
from experiments.model import Column, Experiment, ExperimentError, RunSpec
from experiments.progress import Progress, heartbeat
from experiments.spark_env import (
    SparkHandle,
    SparkSettings,
    delete_path,
    path_exists,
    say,
    start_spark,
)
from experiments.tasks import GridShare, grid_record, partition_runner

if TYPE_CHECKING:
    from experiments.report import TimeSeries

T = TypeVar("T")

RUNS_PER_TASK = 600
"""The most runs of a Spark task, about 2 s of failover runs: few tasks (each costs a
slot 40-60 ms on 2 busy cores, the JVM's scheduling, its shuffle file and the
Python worker's hand-over: 100 runs per task made 10,000 failover runs ~2 s slower
than 300), yet a progress display that moves (runs done are counted as tasks end)."""

MIN_RUNS_PER_TASK = 100
"""The fewest runs of a task but the very last ones (:func:`task_slices`)."""


@dataclass
class SweepResult:
    """A finished sweep: where it is and what it found."""

    out: Path
    summary: dict[str, Any]
    wall_s: float
    phases: dict[str, float] = field(default_factory=dict)
    """Wall seconds by phase, in order: ``spark start`` (when the sweep started the
    session), ``runs`` (the runs and their rows written), ``aggregates``, ``report``
    (the report, plots and manifest: what the driver did after Spark SQL)."""


def spark_type(kind: str) -> Any:
    """The Spark SQL type of a column kind."""
    from pyspark.sql import types as T

    return {"string": T.StringType(), "long": T.LongType(), "bool": T.BooleanType(),
            "long[]": T.ArrayType(T.LongType(), containsNull=False)}[kind]


def spark_schema(columns: tuple[Column, ...]) -> Any:
    """The StructType of rows with ``columns``."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(c.name, spark_type(c.kind), c.nullable)
                         for c in columns])


def arrow_schema(schema: Any) -> Any:
    """The pyarrow schema of Spark's StructType ``schema`` (what ``mapInArrow`` expects)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


def task_slices(runs: int, parallelism: int, runs_per_task: int = RUNS_PER_TASK
                ) -> list[tuple[int, int]]:
    """The run numbers of each task, ``(first, end)``, in the order Spark launches them.

    Guided self-scheduling: a task takes a ``1/(2 x parallelism)`` share of the
    runs still unassigned, at most ``runs_per_task``, at least
    :data:`MIN_RUNS_PER_TASK` (or the share that gives every core work in a
    small sweep). Early tasks are long, so Spark's per-task cost is paid rarely;
    the last ones are short, so a core that finishes first does not wait a
    whole long task for the other.
    """
    if runs_per_task < 1:
        raise ValueError(f"runs_per_task must be at least 1, not {runs_per_task}")
    if runs <= 0:
        return []
    cores = max(1, parallelism)
    least = max(1, min(MIN_RUNS_PER_TASK, runs_per_task, math.ceil(runs / (2 * cores))))
    slices: list[tuple[int, int]] = []
    first = 0
    while first < runs:
        size = min(runs_per_task, max(least, math.ceil((runs - first) / (2 * cores))))
        slices.append((first, min(runs, first + size)))
        first += size
    return slices


def run_sweep(experiment: Experiment, specs: list[RunSpec], master: str | SparkSettings,
              out: Path, *, axes: Axes | None = None, stream: TextIO | None = None,
              runs_per_task: int = RUNS_PER_TASK, spark: SparkHandle | None = None,
              rows: str | None = None) -> SweepResult:
    """Run ``specs`` on Spark at ``master`` and write everything to ``out``.

    With ``spark`` the sweep uses that running session (and leaves it running)
    instead of starting one; ``master`` then only labels the report. ``rows``:
    where the executors write the Parquet rows (default ``out/runs``).
    """
    started = time.monotonic()
    started_at = datetime.now(UTC)
    full_axes = axes or experiment.defaults()
    phases: dict[str, float] = {}

    def lap(phase: str) -> None:
        phases[phase] = time.monotonic() - started - sum(phases.values())

    settings = master if isinstance(master, SparkSettings) else SparkSettings(master)
    rows = rows_location(rows)
    out = out.absolute()
    staging = output.prepare(out)
    prework = ReportPrework(experiment, specs, full_axes)
    handle: SparkHandle | None = spark
    failed = True
    location = rows or (staging / "runs").as_uri()
    ours: str | None = None
    try:
        if handle is None:
            _say(stream, f"starting Spark ({settings.master}) ...")
            with heartbeat(stream, "still starting Spark"):
                handle = start_spark(settings, stream)
            lap("spark start")
            _say(stream, f"Spark {handle.session.version} started in "
                         f"{time.monotonic() - started:.1f} s")
        session = handle.session
        if rows is not None and path_exists(session, rows):
            raise ExperimentError(f"--rows {rows}: already exists; choose a new location")
        ours = rows  # from here on a failed sweep removes what it wrote there

        def work() -> Aggregates:
            _compute(session, experiment, specs, location, stream, runs_per_task)
            lap("runs")
            _say(stream, f"aggregating {len(specs):,} rows with Spark SQL ...")
            return aggregate(session, experiment, len(specs))

        aggregates = run_cancellable(session, work)
        lap("aggregates")
        _check_rows_complete(aggregates.summary, len(specs), location)
        _say(stream, f"writing report.md and plots to {out} ...")
        series = prework.result()
        from experiments.report import write_report  # imported by the prework

        context = _context(specs, axes, settings.master, out, time.monotonic() - started,
                           rows)
        groups = failures.failure_groups(aggregates.tables["failure_groups"], experiment,
                                         full_axes, out) \
            if "failure_groups" in aggregates.tables else []
        write_report(staging, experiment, aggregates, context, groups, specs, full_axes,
                     series)
        summary = {**aggregates.summary, "out": str(out), "rows": rows or str(out / "runs")}
        if "failure_groups" in aggregates.tables:
            summary["failure_groups"] = groups
        runs.write_cells(staging, aggregates.tables["cells"])
        manifest = runs.build_manifest(experiment, full_axes, specs, settings.master,
                                       started_at, datetime.now(UTC),
                                       time.monotonic() - started, str(session.version))
        manifest.update({"driver_host": settings.driver_host,
                         "spark_conf": runs.shown_conf(settings.conf),
                         "rows": rows or "runs/"})
        (staging / runs.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        (staging / output.MARKER).write_text(json.dumps(summary, indent=2, sort_keys=True)
                                             + "\n")
        output.publish(staging, out)
        failed = False
        lap("report")
        return SweepResult(out, summary, sum(phases.values()), phases)
    except Exception as exc:
        if isinstance(exc, ExperimentError):
            raise
        log = f"; JVM log: {handle.jvm_log}" if handle is not None else ""
        raise ExperimentError(f"the Spark job failed: {_first_line(exc)}{log}") from exc
    finally:
        if failed:
            prework.cancel()
            output.discard(staging)
            if ours is not None and handle is not None:
                delete_path(handle.session, ours)
        if handle is not None and spark is None:
            handle.stop(keep_scratch=failed and not isinstance(sys.exc_info()[1],
                                                               KeyboardInterrupt))


class ReportPrework:
    """What the report needs from the grid alone, made in a thread while the driver waits
    for Spark: its modules imported (matplotlib: about a second), then its time-series
    plot (the first run of each cell rerun on the driver, then drawn: 2-3 s of CPU at 32
    cells). Begun with the sweep, it shares the cores with Spark's start and the first
    tasks: at 10,000 failover runs the sweep took 33.6-34.3 s so, 36.3-38.5 s with the
    plot made after the aggregates.

    No other thread of the driver runs a simulation until :meth:`result` or
    :meth:`cancel` returns.
    """

    def __init__(self, experiment: Experiment, specs: list[RunSpec], axes: Axes) -> None:
        self._series: TimeSeries | None = None
        self._error: BaseException | None = None
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._make, args=(experiment, specs, axes),
                                        name="kraftsim-report-prework", daemon=True)
        self._thread.start()

    def _make(self, experiment: Experiment, specs: list[RunSpec], axes: Axes) -> None:
        try:
            from experiments.report import time_series_of

            self._series = time_series_of(experiment, specs, axes, self._cancelled.is_set)
        except BaseException as exc:  # raised again by result()
            self._error = exc

    def cancel(self) -> None:
        """The sweep failed: stop after the rerun in progress, and wait for that (the
        driver's other threads may then run simulations again)."""
        self._cancelled.set()
        self._thread.join()

    def result(self) -> TimeSeries:
        """The time-series plot, once made; an error made it is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._series is not None
        return self._series


def rows_location(rows: str | None) -> str | None:
    """``--rows`` as Spark gets it: a URI as given, a plain path as an absolute file URI."""
    if rows is None or re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", rows):
        return rows
    return Path(rows).absolute().as_uri()


def _say(stream: TextIO | None, text: str) -> None:
    if stream is not None:
        say(stream, text)


def _check_rows_complete(summary: dict[str, Any], expected: int, location: str) -> None:
    """Raise ExperimentError when Spark read back fewer rows than the sweep ran: the
    executors wrote to disks the driver does not see."""
    found = summary.get("runs")
    if isinstance(found, int) and found != expected:
        raise ExperimentError(
            f"the rows at {location} hold {found:,} of {expected:,} runs: the executors "
            f"wrote them to their own disks; on a cluster of several machines give --rows "
            f"on a shared filesystem or an object store (e.g. --rows s3a://bucket/path)")


def run_cancellable(spark: Any, work: Callable[[], T]) -> T:
    """Run ``work`` (Spark jobs) in a thread; on Ctrl-C cancel its jobs, then re-raise.

    PySpark's own SIGINT handler cancels the jobs over the very Py4J connection
    the blocked call waits on, which fails noisily; from the main thread, on a
    connection of its own, the cancel is clean.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the main thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="kraftsim-spark-jobs", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt:
        spark.sparkContext.cancelAllJobs()
        thread.join(60)
        raise
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def _compute(spark: Any, experiment: Experiment, specs: list[RunSpec],
             path: str, stream: TextIO | None, runs_per_task: int) -> None:
    context = spark.sparkContext
    slices = task_slices(len(specs), context.defaultParallelism, runs_per_task)
    # Task numbers from the JVM, task t alone in partition t, its slice of runs in the
    # runner's closure; the records by broadcast (Python RDD rows would go through a
    # second Python worker per task).
    numbers = spark.range(0, len(slices), 1, len(slices))
    grid = GridShare(context.broadcast([grid_record(s) for s in specs]), uuid.uuid4().hex)
    done = context.accumulator(0)
    schema = spark_schema(experiment.columns)
    runner = partition_runner(grid, slices, arrow_schema(schema), done, freeze=True)
    rows = numbers.mapInArrow(runner, schema)
    scenarios = len({s.scenario for s in specs})
    order = [c.name for c in experiment.columns if c.name in
             ("scenario", "mode", "window", "run_index")]
    writer = (rows.repartition(scenarios, "experiment", "scenario")
              .sortWithinPartitions(*order).write.partitionBy("experiment", "scenario"))
    try:
        _write(writer, path, context, experiment, len(specs), done, stream)
    finally:
        with contextlib.suppress(Exception):  # after a failure the JVM may be gone
            grid.broadcast.unpersist()
    # The schema as written: no footer to read back (and no job on many files).
    spark.read.schema(schema).parquet(path).createOrReplaceTempView("runs")


def _write(writer: Any, path: str, context: Any, experiment: Experiment, runs: int,
           done: Any, stream: TextIO | None) -> None:
    if stream is None:
        writer.parquet(path)
    else:
        stall = None if context.master.startswith("local") else (
            "is a worker registered with the master, with free cores and memory for this "
            "job? (the workers' logs and the JVM log say more)")
        with Progress(experiment.name, runs, lambda: int(done.value), stream,
                      after="every run done; Spark writes the rows (Parquet) ...",
                      stall=stall):
            writer.parquet(path)


def _context(specs: list[RunSpec], axes: Axes | None, master: str, out: Path,
             wall_s: float, rows: str | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {"runs": len(specs),
                               "master seed": specs[0].master_seed if specs else None}
    for name, values in (axes or {}).items():
        context[f"param {name}"] = ", ".join(str(v) for v in values)
    context["spark master"] = master
    context["run"] = f"{out.name} (manifest.json: versions, every parameter, times)"
    context["rows"] = (f"{rows or out.name + '/runs/'} (Parquet, partitioned by experiment "
                       f"and scenario)")
    context["wall time (s)"] = round(wall_s, 1)
    return context


def _first_line(exc: BaseException) -> str:
    """The most telling line of a (Py4J/Spark) exception."""
    text = str(exc)
    missing = re.search(r"ModuleNotFoundError: No module named '([^']+)'", text)
    if missing:
        return (f"an executor's Python cannot import {missing.group(1)}: install kraftsim's "
                f"dependencies on every worker (README, real clusters)")
    mismatch = re.search(r"Python in worker has different version:? ?(\S+) than that in "
                         r"driver:? ?(\S+?),", text)
    if mismatch:
        return (f"the workers run Python {mismatch.group(1)}, the driver Python "
                f"{mismatch.group(2)}: PySpark needs the same minor version on both (set "
                f"PYSPARK_PYTHON to the workers' matching interpreter)")
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("ExperimentError", "ValueError", "RuntimeError",
                                "AssertionError", "KeyError", "TypeError")):
            return stripped
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0][:300] if lines else type(exc).__name__
