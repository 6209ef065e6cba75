"""The logic of ``kraftsim experiment``: a sweep on Spark, a replay, or a comparison.

``kraftsim/experiment.py`` only declares the options and calls
:func:`run_command`. A sweep with ``--out BASE`` writes a new run folder
``BASE/RUN_ID`` and points ``BASE/latest`` at it (:mod:`experiments.runs`).
Errors in the input (experiment, scenario, parameter, master URL, output
folder) raise ExperimentError before Spark starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from experiments import failures
from experiments.grid import build_grid, parse_params, single_run
from experiments.model import ExperimentError
from experiments.registry import get_experiment
from experiments.replay import replay_params, replay_reference
from experiments.runs import (
    compare_runs,
    format_changes,
    missing_folders,
    new_run_folder,
    point_latest,
    remove_empty,
    resolve_run,
)

DEFAULT_RUNS = {"failover": 640, "visibility": 360, "swarm": 300, "broker-failover": 120,
                "eos": 160}
"""Runs of a sweep without ``--runs``: a small sweep of about half a minute each."""
DEFAULT_MASTER = "local[*]"
FORMS = {"compare": "compare RUN_A RUN_B", "replay": "replay RUN_DIR INDEX"}
"""The forms of ``kraftsim experiment`` that work on kept runs, with their operands."""


def run_command(name: str, *, runs: int | None = None, seed: int = 1,
                params: list[str] | None = None, master: str = DEFAULT_MASTER,
                out: str | None = None, as_json: bool = False, replay: int | None = None,
                trace: str | None = None, timeline: str | None = None,
                operands: list[str] | None = None,
                stdout: TextIO | None = None, stderr: TextIO | None = None,
                driver_host: str | None = None, conf: list[str] | None = None,
                rows: str | None = None) -> int:
    """Run ``kraftsim experiment NAME``; returns the exit code (0: every run valid).

    NAME ``compare`` and ``replay`` take their ``operands`` (two run folders; a
    run folder and an index); an experiment's name takes none. ``driver_host``,
    ``conf`` (``KEY=VALUE`` items) and ``rows`` (where the Parquet rows go) serve
    real clusters (``spark_env.py``).
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    operands = operands or []
    if name in FORMS:
        if len(operands) != 2:
            raise ExperimentError(f"{name} takes two operands: {FORMS[name]}")
        if name == "compare":
            return compare_command(operands[0], operands[1], as_json, stdout)
        return replay_reference(operands[0], operands[1], trace, timeline, stdout, stderr)
    experiment = get_experiment(name)
    if operands:
        raise ExperimentError(f"unexpected operand(s) after {name}: {' '.join(operands)} "
                              f"(options start with --)")
    axes = parse_params(experiment, params or [])
    if replay is not None:
        spec = single_run(experiment, axes, seed, replay)
        return replay_params(experiment, spec, trace, timeline, stdout, stderr)
    from experiments import preflight

    preflight.check()
    from experiments.pipeline import run_sweep
    from experiments.spark_env import spark_settings

    if name == "swarm":
        from experiments.swarm import check_axes

        check_axes(axes)

    settings = spark_settings(master, driver_host, conf or [])
    specs = build_grid(experiment, axes, DEFAULT_RUNS[name] if runs is None else runs, seed)
    base = Path(out or f"out/{name}")
    folder = new_run_folder(base)
    created = missing_folders(base)
    try:
        result = run_sweep(experiment, specs, settings, folder, axes=axes, stream=stderr,
                           rows=rows)
    except BaseException:
        remove_empty(created)
        raise
    point_latest(base, folder)
    summary = {**result.summary, "wall_s": round(result.wall_s, 1), "master": master}
    if as_json:
        stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    elif name == "swarm":
        stdout.write(format_swarm_summary(summary) + "\n")
    else:
        stdout.write(format_summary(summary) + "\n")
    return 0 if summary["invalid"] == 0 else 1


def compare_command(run_a: str, run_b: str, as_json: bool, stdout: TextIO) -> int:
    """``compare RUN_A RUN_B``: the cells whose figures changed; exit 0 either way."""
    folder_a, folder_b = resolve_run(run_a), resolve_run(run_b)
    manifest_a, manifest_b, changes = compare_runs(folder_a, folder_b)
    if as_json:
        for change in changes:
            stdout.write(json.dumps(change.as_json()) + "\n")
    else:
        stdout.write(format_changes(changes, manifest_a, manifest_b, (run_a, run_b)) + "\n")
    return 0


def format_summary(summary: dict[str, Any]) -> str:
    """The sweep's summary as a few lines of text."""
    if summary["experiment"] == "broker-failover":
        return _broker_summary_text(summary)
    if summary["experiment"] == "eos":
        return _eos_summary_text(summary)
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
    return "\n".join([*lines, *_tail(summary)])


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
    return "\n".join([*lines, *_tail(summary)])


def _eos_summary_text(summary: dict[str, Any]) -> str:
    idem = summary["idempotence_only"]
    lines = [f"eos: {summary['runs']:,} runs on {summary['master']} in {summary['wall_s']} s: "
             f"{summary['valid']:,} valid, {summary['invalid']:,} invalid, "
             f"{summary['unknown']:,} unknown; exactly-once: duplicates "
             f"{summary['duplicates']:,}, aborted reads {summary['aborted_reads']:,}; "
             f"idempotence only: {idem['duplicates']:,} duplicates in "
             f"{idem['runs_with_duplicates']:,} of {idem['runs']:,} runs",
             f"  {'protocol':<18}{'runs':>7}{'round trips/txn':>17}{'bounces':>9}"
             f"{'bounces/txn':>13}{'commit p50':>12}{'p99':>8}"]
    for name, e in summary["protocols"].items():
        if e is None:
            lines.append(f"  {name:<18}{'(not run)':>7}")
            continue
        lines.append(f"  {name:<18}{e['runs']:>7}{_ms(e['round_trips_per_txn']):>17}"
                     f"{e['concurrent_transactions_bounces']:>9}"
                     f"{_ms(e['concurrent_transactions_bounces_per_txn']):>13}"
                     f"{_ms(e['commit_latency_p50_ms']):>12}{_ms(e['commit_latency_p99_ms']):>8}")
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
    return "\n".join([*lines, *_tail(summary)])


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def _tail(summary: dict[str, Any]) -> list[str]:
    """Where the run is, then its failed runs grouped by invariant and cell."""
    out = Path(summary["out"])
    return [f"report: {out / 'report.md'}; rows: {summary.get('rows', out / 'runs')}/",
            *failures.text(summary.get("failure_groups", []))]
