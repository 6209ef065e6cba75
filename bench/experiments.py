"""Benchmarks of the experiment pipeline; each prints figures and asserts nothing.

``python -m bench.experiments`` (or ``make bench-experiments``) measures:

- the cost of one failover run, serially, in CPU time and in instructions
  (:mod:`bench.instructions`, when valgrind is installed);
- the cost of one visibility and one eos run, booting every run against forking;
- the JVM flags: Spark session start with kraftsim's flags and without;
- Spark local[2] against a plain 2-process pool on the same sweep and the
  same work, at 1,000 and 10,000 failover runs (goal at 10,000: Spark <= 1.2x
  the pool);
- local[2] against local[1] at 10,000 runs (goal: >= 1.7x);
- 10,000 failover runs on Spark local[2], report included (goal: <= 30 s on
  a quiet 2-core machine).

The pool runs the same grid with the same batching (the slices of Spark's
tasks, :func:`experiments.pipeline.task_slices`) and writes its rows as
Parquet, while its parent makes the report's time series as the Spark
driver does during its runs; Spark's figure for the same work is session start, runs and rows as
Parquet, and its SQL aggregates, report and plots are timed apart (the whole
sweep, as ``kraftsim experiment`` runs it, is both). The pool's rows are
checked equal to Spark's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import experiments.eos as eos_module
import experiments.failover as failover_module
import experiments.visibility as visibility_module
from bench.floors import floors_line
from bench.instructions import bench_run_instructions
from experiments.boots import Boots
from experiments.grid import build_grid, parse_params
from experiments.model import Row, RunSpec
from experiments.pipeline import ReportPrework, run_sweep, task_slices
from experiments.registry import get_experiment
from experiments.tasks import run_specs
from sim.gc_policy import simulation_gc
from sim.world import Simulation

Report = Callable[[str], None]
FAILOVER = get_experiment("failover")
BOOTS_OF: dict[str, Boots[Any]] = {"visibility": visibility_module.BOOTS,
                                   "eos": eos_module.BOOTS}


def failover_specs(runs: int, seed: int = 1) -> list[RunSpec]:
    """The default failover grid, ``runs`` runs."""
    return build_grid(FAILOVER, parse_params(FAILOVER, []), runs, seed)


class _Counting:
    """Counts every event processed (every attempt of every run, boots included) and every
    attempt's cluster, while installed."""

    def __init__(self) -> None:
        self.events = 0
        self.attempts = 0

    def __enter__(self) -> _Counting:
        after, booted = Simulation._after_event, failover_module.booted_cluster

        def counted_after(sim: Simulation, *args: Any) -> None:
            self.events += 1
            after(sim, *args)

        def counted_boot(*args: Any) -> Any:
            self.attempts += 1
            return booted(*args)

        self._saved = (after, booted)
        Simulation._after_event = counted_after  # type: ignore[method-assign,assignment]
        failover_module.booted_cluster = counted_boot  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        Simulation._after_event, failover_module.booted_cluster = self._saved  # type: ignore


IDLE_SECONDS = 15
"""Simulated seconds of one idle sample (see :func:`bench_run_cost`)."""


def idle_sample(spec: RunSpec, seconds: int = IDLE_SECONDS) -> tuple[float, int]:
    """CPU seconds and events of ``spec``'s own cluster (the failover cluster, its recovery
    probe included, booted or forked as the runs are) left idle for ``seconds``, under
    the simulations' gc policy."""
    with simulation_gc():
        cluster = failover_module.booted_cluster(spec)[0]
        events = cluster.sim.events
        started = time.process_time()
        cluster.sim.run_for(seconds * 1000)
        return time.process_time() - started, cluster.sim.events - events


def bench_run_cost(report: Report, runs: int = 320, rounds: int = 16) -> float:
    """Serial cost of one failover run (ms), booting every run afresh and forking one boot
    per configuration (the default); per event of every attempt vs an idle event.

    The runs go in ``rounds`` chunks, each after an idle sample of the same cluster, and
    both figures are totals over all rounds: a machine whose speed drifts moves the
    runs and the idle events alike, and neither side keeps only its best moment.
    """
    specs = failover_specs(runs, seed=99)
    chunks = [specs[k * runs // rounds:(k + 1) * runs // rounds] for k in range(rounds)]
    per_run: dict[bool, float] = {}
    for reuse in (False, True):
        failover_module.set_boot_reuse(reuse)
        wall = cpu = idle_cpu = 0.0
        events = attempts = idle_events = 0
        rows: list[Row] = []
        for chunk in chunks:
            sample_cpu, sample_events = idle_sample(specs[0])
            idle_cpu += sample_cpu
            idle_events += sample_events
            with _Counting() as counted:
                started = time.perf_counter()
                cpu_started = time.process_time()
                rows += run_specs(chunk)
                wall += time.perf_counter() - started
                cpu += time.process_time() - cpu_started
            events += counted.events
            attempts += counted.attempts
        per_run[reuse] = cpu / runs * 1000
        per_event = cpu / events * 1e6
        idle = idle_cpu / idle_events * 1e6
        label = "forking one boot per configuration" if reuse else "booting every run"
        report(f"one failover run, serially, {label}: {wall / runs * 1000:.1f} ms wall, "
               f"{per_run[reuse]:.1f} ms CPU = {runs / cpu:.0f} runs/s CPU "
               f"({events / runs:.0f} events processed over {attempts / runs:.2f} attempts "
               f"per run, boots included) over {runs} runs = {per_event:.0f} us CPU per event "
               f"vs {idle:.0f} us per event of the same cluster idle ({idle_events} idle "
               f"events in {rounds} samples between the runs): {per_event / idle:.2f}x "
               f"(goal <= 1.5x; {rows[0]['experiment']} rows)")
    failover_module.set_boot_reuse(True)
    report(f"  forking boots: {per_run[False] / per_run[True]:.2f}x the runs per CPU second "
           f"(the same rows)")
    return per_run[True]


FORKED_RUNS = (("visibility", 240), ("eos", 48))
"""The other experiments whose sweeps fork booted worlds, and the runs each is timed on."""


def bench_forked_runs(report: Report, rounds: int = 3,
                      sizes: tuple[tuple[str, int], ...] = FORKED_RUNS) -> dict[str, float]:
    """CPU per run of the visibility and eos default grids (``sizes``: runs of each),
    booting (eos: and setting up) every run against forking one boot per configuration,
    alternately, ``rounds`` times; returns the forking ratio per experiment."""
    ratios: dict[str, float] = {}
    for name, runs in sizes:
        experiment = get_experiment(name)
        boots = BOOTS_OF[name]
        specs = build_grid(experiment, parse_params(experiment, []), runs, 3)
        run_specs(specs[:2])  # warm: imports, first allocations
        cpu = {False: 0.0, True: 0.0}
        rows: dict[bool, list[Row]] = {}
        for _ in range(rounds):
            for reuse in (False, True):
                boots.set_reuse(reuse)
                started = time.process_time()
                rows[reuse] = [{k: v for k, v in row.items() if k != "wall_ms"}
                               for row in run_specs(specs)]
                cpu[reuse] += time.process_time() - started
        boots.set_reuse(True)
        fresh, forked = (cpu[reuse] / (rounds * runs) * 1000 for reuse in (False, True))
        ratios[name] = fresh / forked
        report(f"one {name} run, serially, default grid ({runs} runs x {rounds}, alternately):"
               f" booting every run {fresh:.1f} ms CPU, forking one boot per configuration "
               f"{forked:.1f} ms CPU: {fresh / forked:.2f}x the runs per CPU second (rows "
               f"{'the same' if rows[False] == rows[True] else 'DIFFERENT'})")
    return ratios


def bench_session_start(report: Report, repeats: int = 2) -> None:
    """Spark session start to the first finished job: kraftsim's JVM flags with and without
    the class-data-sharing archive, and the JVM's default flags."""
    code = ("import time; t=time.perf_counter(); from experiments.spark_env import start_spark;"
            "h=start_spark('local[2]'); h.session.range(10).count();"
            "print(time.perf_counter()-t); h.stop()")
    configs = (("kraftsim's JVM flags + class-data archive", None, "1"),
               ("kraftsim's JVM flags, no archive", None, "0"),
               ("default JVM flags, no archive", "", "0"))
    for label, flags, cds in configs:
        env = dict(os.environ, KRAFTSIM_SPARK_CDS=cds)
        if flags is not None:
            env["KRAFTSIM_SPARK_JVM_FLAGS"] = flags
        times = []
        for _ in range(repeats + (cds == "1")):  # with the archive: a first run may make it
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, check=True)
            times.append(float(done.stdout.strip().splitlines()[-1]))
        report(f"Spark session start + first job, {label}: "
               + ", ".join(f"{t:.1f} s" for t in times[-repeats:]))


def pool_sweep(specs: list[RunSpec], out: Path, processes: int = 2) -> tuple[float, list[Row]]:
    """The sweep on a plain process pool, rows written as one Parquet file, while the
    parent makes the report's time series as a Spark driver does (:class:`ReportPrework`);
    (wall s, rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(processes) as pool:  # forked: no thread yet
        prework = ReportPrework(FAILOVER, specs, FAILOVER.defaults())
        chunks = [specs[first:end] for first, end in task_slices(len(specs), processes)]
        rows = [row for chunk in pool.imap(run_specs, chunks) for row in chunk]
        prework.result()
    columns = FAILOVER.columns
    table = pa.Table.from_pylist(rows)
    pq.write_table(table.select([c.name for c in columns]), out / "rows.parquet")
    return time.perf_counter() - started, rows


def spark_sweep(specs: list[RunSpec], master: str, out: Path) -> tuple[float, float, float]:
    """A Spark sweep as ``kraftsim experiment`` runs it (:func:`run_sweep`), timed in two
    parts: (session start + the runs + the rows as Parquet, then the SQL aggregates and
    everything the driver writes: report, plots, the time-series reruns, manifest), wall
    seconds each, and the session start alone (part of the first).

    The first part is the pool's work (:func:`pool_sweep`: the runs and one Parquet
    file of rows), so the two compare the same work; both parts together are the
    whole sweep (less the session's stop).
    """
    result = run_sweep(FAILOVER, specs, master, out / "sweep")
    phases = result.phases
    rows_s = phases["spark start"] + phases["runs"]
    return rows_s, result.wall_s - rows_s, phases["spark start"]


def _same_rows(pool_rows: list[Row], out: Path) -> bool:
    import pandas as pd

    frame = pd.read_parquet(out / "sweep" / "runs",
                            columns=["seed", "mode", "window", "fingerprint"])
    spark = sorted(zip(frame["seed"], frame["mode"], frame["window"], frame["fingerprint"],
                       strict=True))
    pool = sorted((r["seed"], r["mode"], r["window"], r["fingerprint"]) for r in pool_rows)
    return [tuple(map(str, s)) for s in spark] == [tuple(map(str, p)) for p in pool]


def bench_spark_vs_pool(report: Report, sizes: tuple[int, ...]) -> dict[tuple[str, int], float]:
    """Spark local[2], local[1] and a 2-process pool on the same sweeps, the same work:
    the runs and their rows as Parquet (Spark's aggregates, report and plots apart)."""
    times: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="kraftsim-bench-") as tmp:
        for runs in sizes:
            specs = failover_specs(runs)
            folder = Path(tmp) / str(runs)
            folder.mkdir()
            pool_s, rows = pool_sweep(specs, folder)
            times[("pool", runs)] = pool_s
            report(f"{runs:,} failover runs, 2-process pool, runs + rows as Parquet: "
                   f"{pool_s:.1f} s")
            for master in ("local[2]", "local[1]"):
                if master == "local[1]" and runs != max(sizes):
                    continue
                out = folder / master.replace("[", "-").replace("]", "")
                out.mkdir()
                rows_s, report_s, start_s = spark_sweep(specs, master, out)
                times[(master, runs)] = rows_s
                times[(f"{master} sweep", runs)] = rows_s + report_s
                same = _same_rows(rows, out) if master == "local[2]" else None
                report(f"{runs:,} failover runs, Spark {master}: session start + runs + rows "
                       f"as Parquet {rows_s:.1f} s (the session start {start_s:.1f} s of it"
                       + (f"; without it {(rows_s - start_s) / pool_s:.2f}x the pool"
                          if master == "local[2]" else "")
                       + "), then aggregates, report and plots "
                       f"{report_s:.1f} s: whole sweep {rows_s + report_s:.1f} s"
                       + ("" if same is None else
                          f" (rows {'equal to' if same else 'DIFFERENT from'} the pool's)"))
            ratio = times[("local[2]", runs)] / pool_s
            report(f"  Spark local[2] / pool at {runs:,} runs, the same work: {ratio:.2f}x"
                   + (" (goal <= 1.2x)" if runs >= 10_000 else ""))
    big = max(sizes)
    if ("local[1]", big) in times:
        speedup = times[("local[1]", big)] / times[("local[2]", big)]
        report(f"local[2] vs local[1] at {big:,} runs: {speedup:.2f}x faster (goal >= 1.7x)")
    report(f"{big:,} failover runs on Spark local[2], report included: "
           f"{times[('local[2] sweep', big)]:.0f} s (goal <= 30 s on a quiet 2-core machine)")
    return times


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark (``--sizes`` to change the sweep sizes)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000",
                        help="sweep sizes, comma-separated (default 1000,10000)")
    parser.add_argument("--skip-start", action="store_true",
                        help="skip the session start comparison")
    args = parser.parse_args(argv)
    report: Report = lambda line: print(line, flush=True)  # noqa: E731
    report(f"machine: {os.cpu_count()} cores, load average "
           f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(floors_line())
    bench_run_cost(report)
    bench_run_instructions(report)
    bench_forked_runs(report)
    if not args.skip_start:
        bench_session_start(report)
    bench_spark_vs_pool(report, tuple(int(s) for s in args.sizes.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
