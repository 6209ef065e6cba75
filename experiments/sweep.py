"""The logic of ``kraftsim experiment``: a sweep on Spark, or the replay of one run.

``shell/experiment_command.py`` only declares the options and calls
:func:`run_command`. Errors in the input (experiment, scenario, parameter,
master URL, output folder) raise ExperimentError before Spark starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from experiments.grid import build_grid, parse_params, single_run
from experiments.model import Experiment, Row
from experiments.registry import get_experiment
from sim.gc_policy import simulation_gc
from sim.timeline_html import write_timeline

DEFAULT_RUNS = {"failover": 640, "visibility": 360, "swarm": 300, "broker-failover": 120}
"""Runs of a sweep without ``--runs``: a small sweep of about half a minute each."""
DEFAULT_MASTER = "local[*]"


def run_command(name: str, *, runs: int | None = None, seed: int = 1,
                params: list[str] | None = None, master: str = DEFAULT_MASTER,
                out: str | None = None, as_json: bool = False, replay: int | None = None,
                trace: str | None = None, timeline: str | None = None,
                stdout: TextIO | None = None, stderr: TextIO | None = None,
                driver_host: str | None = None, conf: list[str] | None = None,
                rows: str | None = None) -> int:
    """Run ``kraftsim experiment NAME``; returns the exit code (0: every run valid).

    ``driver_host``, ``conf`` (``KEY=VALUE`` items) and ``rows`` (where the Parquet
    rows go) serve real clusters (``spark_env.py``)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    experiment = get_experiment(name)
    axes = parse_params(experiment, params or [])
    if replay is not None:
        spec = single_run(experiment, axes, seed, replay)
        return _replay(experiment, spec, trace, timeline, stdout, stderr)
    from experiments import preflight

    preflight.check()
    from experiments.pipeline import run_sweep
    from experiments.spark_env import spark_settings

    if name == "swarm":
        from experiments.swarm import check_axes

        check_axes(axes)

    settings = spark_settings(master, driver_host, conf or [])
    specs = build_grid(experiment, axes, DEFAULT_RUNS[name] if runs is None else runs, seed)
    result = run_sweep(experiment, specs, settings, Path(out or f"out/{name}"), axes=axes,
                       stream=stderr, rows=rows)
    summary = {**result.summary, "wall_s": round(result.wall_s, 1), "master": master}
    if as_json:
        stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    elif name == "swarm":
        stdout.write(format_swarm_summary(summary) + "\n")
    else:
        stdout.write(format_summary(summary) + "\n")
    return 0 if summary["invalid"] == 0 else 1


def _replay(experiment: Experiment, spec: Any, trace: str | None, timeline: str | None,
            stdout: TextIO, stderr: TextIO) -> int:
    """Rerun one row: its trace, its ``timeline.html`` (beside the trace unless given), the
    row as JSON on stdout; what was written goes to stderr."""
    path = Path(trace or f"{spec.experiment}-{spec.scenario}-{spec.seed}.jsonl")
    try:
        stream = path.open("wb")
    except OSError as exc:
        stderr.write(f"kraftsim: error: cannot write trace {path}: {exc.strerror or exc}\n")
        return 1
    with stream, simulation_gc():
        row: Row = experiment.run(spec, stream)
    page = Path(timeline) if timeline else path.with_name("timeline.html")
    title = f"kraftsim {spec.experiment} {spec.scenario}: seed {spec.seed} (run {spec.index})"
    try:
        write_timeline(path, page, title)
    except OSError as exc:
        stderr.write(f"kraftsim: error: cannot write timeline {page}: "
                     f"{exc.strerror or exc}\n")
        return 1
    stderr.write(f"trace: {path}\ntimeline: {page}\n")
    stdout.write(json.dumps(row) + "\n")
    return 0 if row["valid"] == "true" else 1


def format_summary(summary: dict[str, Any]) -> str:
    """The sweep's summary as a few lines of text."""
    if summary["experiment"] == "broker-failover":
        return _broker_summary_text(summary)
    lines = [f"{summary['experiment']}: {summary['runs']:,} runs on {summary['master']} in "
             f"{summary['wall_s']} s: {summary['valid']:,} valid, {summary['invalid']:,} "
             f"invalid, {summary['unknown']:,} unknown"]
    header = (f"  {'mode':<14}{'runs':>7}{'partial-vis':>13}{'committed':>11}{'aborted':>9}"
              f"{'recovery p50':>14}{'p99':>8}")
    lines.append(header)
    for mode, entry in summary["modes"].items():
        p50 = entry.get("recovery_p50_ms") if summary["experiment"] == "failover" \
            else entry.get("latency_p50_ms")
        p99 = entry.get("recovery_p99_ms") if summary["experiment"] == "failover" \
            else entry.get("latency_p99_ms")
        lines.append(f"  {mode:<14}{entry['runs']:>7}{entry['partial_visibility_runs']:>13}"
                     f"{entry['committed']:>11}{entry['aborted']:>9}"
                     f"{_ms(p50):>14}{_ms(p99):>8}")
    if summary["experiment"] == "visibility":
        lines[1] = lines[1].replace("recovery p50", " latency p50")
        lines.append("  (visibility: committed/aborted count operations and transactions; "
                     "latency = submit -> published on a broker)")
    out = Path(summary["out"])
    lines.append(f"report: {out / 'report.md'}; rows: {summary.get('rows', out / 'runs')}/")
    return "\n".join(lines)


def _broker_summary_text(summary: dict[str, Any]) -> str:
    lines = [f"broker-failover: {summary['runs']:,} runs on {summary['master']} in "
             f"{summary['wall_s']} s: {summary['valid']:,} valid, {summary['invalid']:,} "
             f"invalid, {summary['unknown']:,} unknown; records lost {summary['records_lost']:,}"
             f", duplicates {summary['duplicates']:,}",
             f"  {'mode':<14}{'runs':>7}{'fence p50':>11}{'leaders p50':>13}"
             f"{'unavail p50':>13}{'p99':>8}{'PartChange':>12}{'lost':>6}{'dup':>5}"]
    for mode, e in summary["modes"].items():
        lines.append(f"  {mode:<14}{e['runs']:>7}{_ms(e['fence_p50_ms']):>11}"
                     f"{_ms(e['leaders_p50_ms']):>13}{_ms(e['unavailable_p50_ms']):>13}"
                     f"{_ms(e['unavailable_p99_ms']):>8}{_ms(e['partition_changes_mean']):>12}"
                     f"{e['records_lost']:>6}{e['duplicates']:>5}")
    out = Path(summary["out"])
    lines.append(f"report: {out / 'report.md'}; rows: {summary.get('rows', out / 'runs')}/")
    return "\n".join(lines)


def format_swarm_summary(summary: dict[str, Any]) -> str:
    """The swarm sweep's summary as a few lines of text."""
    lines = [f"swarm: {summary['runs']:,} runs on {summary['master']} in {summary['wall_s']} s: "
             f"{summary['violations']:,} violations, {summary['outside_model']:,} outside the "
             f"model, {summary['non_terminating']:,} non-terminating"]
    lines.append(f"  {'mode':<14}{'runs':>7}{'ok':>7}{'violations':>12}{'outside':>9}"
                 f"{'non-term':>10}")
    for mode, entry in summary["modes"].items():
        lines.append(f"  {mode:<14}{entry['runs']:>7}{entry['ok']:>7}{entry['violations']:>12}"
                     f"{entry['outside_model']:>9}{entry['non_terminating']:>10}")
    for invariant, count in summary.get("invariants", {}).items():
        lines.append(f"  violated {invariant}: {count} run(s)")
    out = Path(summary["out"])
    lines.append(f"report: {out / 'report.md'}; rows: {summary.get('rows', out / 'runs')}/")
    return "\n".join(lines)


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:g}"
