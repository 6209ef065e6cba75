"""Rerunning one row without Spark: from ``--param`` values, or by reference to a kept run.

``kraftsim experiment replay RUN_DIR INDEX`` reads the run's manifest for the
parameters and seed, finds run INDEX's cell and seed as the sweep dealt them,
reruns it, writes ``replay-INDEX/trace.jsonl`` and ``timeline.html`` in the
run folder, and checks the trace's fingerprint against the row the sweep
wrote to Parquet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from experiments.common import params_json
from experiments.model import Experiment, ExperimentError, Row, RunSpec
from experiments.registry import get_experiment
from experiments.runs import display_path, read_manifest, resolve_run, spec_of_index
from sim.gc_policy import simulation_gc
from sim.timeline_html import write_timeline


def replay_spec(experiment: Experiment, spec: RunSpec, trace: Path, timeline: Path | None,
                stderr: TextIO) -> Row | None:
    """Rerun ``spec``, writing its trace and its timeline page (``timeline.html`` beside the
    trace unless given); None (after an error line) when a file cannot be written."""
    try:
        stream = trace.open("wb")
    except OSError as exc:
        stderr.write(f"kraftsim: error: cannot write trace {trace}: {exc.strerror or exc}\n")
        return None
    with stream, simulation_gc():
        row: Row = experiment.run(spec, stream)
    page = timeline or trace.with_name("timeline.html")
    title = f"kraftsim {spec.experiment} {spec.scenario}: seed {spec.seed} (run {spec.index})"
    try:
        write_timeline(trace, page, title)
    except OSError as exc:
        stderr.write(f"kraftsim: error: cannot write timeline {page}: "
                     f"{exc.strerror or exc}\n")
        return None
    stderr.write(f"trace: {trace}\ntimeline: {page}\n")
    return row


def replay_params(experiment: Experiment, spec: RunSpec, trace: str | None,
                  timeline: str | None, stdout: TextIO, stderr: TextIO) -> int:
    """The ``--replay INDEX --param ...`` form: the row as JSON on stdout."""
    path = Path(trace or f"{spec.experiment}-{spec.scenario}-{spec.seed}.jsonl")
    row = replay_spec(experiment, spec, path, Path(timeline) if timeline else None, stderr)
    if row is None:
        return 1
    stdout.write(json.dumps(row) + "\n")
    return 0 if row["valid"] == "true" else 1


def parse_index(text: str) -> int:
    """INDEX of ``replay RUN_DIR INDEX``."""
    try:
        return int(text)
    except ValueError:
        raise ExperimentError(f"INDEX must be a run number (an integer), got {text!r}") from None


def replay_reference(run_text: str, index_text: str, trace: str | None, timeline: str | None,
                     stdout: TextIO, stderr: TextIO) -> int:
    """``replay RUN_DIR INDEX``: rerun a kept run's row; the row as JSON on stdout.

    Exit 0 when the run is valid and its trace's fingerprint is the one the
    sweep recorded, 1 otherwise.
    """
    run = resolve_run(run_text)
    manifest = read_manifest(run)
    experiment = get_experiment(str(manifest["experiment"]))
    index = parse_index(index_text)
    spec = spec_of_index(experiment, manifest, index)
    folder = run / f"replay-{index}"
    if trace is None:
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            stderr.write(f"kraftsim: error: cannot write {folder}: {exc.strerror or exc} "
                         f"(give --trace FILE elsewhere)\n")
            return 1
    row = replay_spec(experiment, spec, Path(trace) if trace else folder / "trace.jsonl",
                      Path(timeline) if timeline else None, stderr)
    if row is None:
        return 1
    recorded = recorded_row(run, spec)
    cell = ", ".join(f"{k}={v}" for k, v in spec.params.items())
    stderr.write(f"run {index} of {display_path(run)}: {cell}; seed {spec.seed}\n")
    same = True
    if recorded is None:
        stderr.write("note: the sweep's row was not found in runs/ (Parquet); nothing to "
                     "check the replay against\n")
    elif recorded.get("fingerprint") != row["fingerprint"]:
        same = False
        stderr.write(f"kraftsim: error: the replay's fingerprint {row['fingerprint']} differs "
                     f"from the sweep's {recorded.get('fingerprint')} (a different kraftsim "
                     f"version, or a nondeterminism bug)\n")
    else:
        stderr.write(f"fingerprint {row['fingerprint']}: the same as the sweep's row\n")
    stdout.write(json.dumps(row) + "\n")
    return 0 if same and row["valid"] == "true" else 1


def rows_folder(run: Path) -> Path | None:
    """Where a run's Parquet rows are on this machine: ``runs/`` in the run folder, or the
    local folder its summary names (rows written elsewhere); None if neither is here."""
    if (run / "runs").is_dir():
        return run / "runs"
    try:
        rows = json.loads((run / "summary.json").read_text()).get("rows")
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(rows, str) and rows.startswith("file:"):
        from urllib.parse import unquote, urlparse

        local = Path(unquote(urlparse(rows).path))
        return local if local.is_dir() else None
    return None


def recorded_row(run: Path, spec: RunSpec) -> dict[str, Any] | None:
    """The sweep's Parquet row of ``spec``, or None (no rows, or pandas cannot read them)."""
    folder = rows_folder(run)
    if folder is None:
        return None
    try:
        import pandas as pd

        frame = pd.read_parquet(folder, columns=["params", "run_index", "fingerprint", "valid"],
                                filters=[("run_index", "==", spec.index),
                                         ("params", "==", params_json(spec.params))])
    except (ImportError, OSError, ValueError):
        return None
    if not len(frame):
        return None
    record: dict[str, Any] = frame.iloc[0].to_dict()
    return record
