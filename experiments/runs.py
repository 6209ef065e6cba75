"""Kept runs: one folder per sweep, its manifest, ``latest``, and comparing two runs.

A sweep with ``--out BASE`` writes into ``BASE/RUN_ID/`` (the run id is the
UTC start time to the millisecond and four random hex digits, so ids sort by
time and never collide) and points ``BASE/latest`` at it: a symbolic link, or
a text file holding the id where links cannot be made. Each run folder holds
``manifest.json`` (what ran, with which kraftsim, where and when) and
``cells.json`` (the figures of every grid cell), which ``kraftsim experiment
compare`` reads; ``kraftsim experiment replay`` reads the manifest to rerun
one row.
"""

from __future__ import annotations

import json
import math
import os
import platform
import secrets
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from experiments.grid import Axes, cells
from experiments.model import Experiment, ExperimentError, RunSpec
from experiments.registry import get_experiment
from experiments.seeds import run_seed

MANIFEST = "manifest.json"
"""The file that makes a folder a run."""
CELLS = "cells.json"
"""Every grid cell's figures, for ``compare``."""
LATEST = "latest"
"""The link (or text file) in the base folder naming the newest run."""


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id: ``20261123T142731.123Z-a3f9``."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%dT%H%M%S}.{moment.microsecond // 1000:03d}Z-{secrets.token_hex(2)}"


def new_run_folder(base: Path) -> Path:
    """A path ``base/RUN_ID`` that does not exist yet (the sweep creates it)."""
    if base.exists() and not base.is_dir():
        raise ExperimentError(f"--out {base}: exists and is not a folder; choose another path")
    if (base / MANIFEST).exists():
        raise ExperimentError(f"--out {base}: is a run folder; give the folder that holds "
                              f"the runs (e.g. {base.parent})")
    existing = next(p for p in (base, *base.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        raise ExperimentError(f"--out {base}: cannot write there (Not a directory)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ExperimentError(f"--out {base}: cannot write there (Permission denied)")
    while True:
        folder = base / new_run_id()
        if not folder.exists():
            return folder


def missing_folders(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist yet, deepest first (what a failed
    sweep removes again, when empty, to leave nothing behind)."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists() or folder == folder.parent:
            break
        missing.append(folder)
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove the folders, deepest first, while they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def point_latest(base: Path, run: Path) -> None:
    """Make ``base/latest`` name ``run``: a relative symlink, else a text file."""
    link = base / LATEST
    temporary = base / f".{LATEST}.{os.getpid()}"
    try:
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(run.name, target_is_directory=True)
        os.replace(temporary, link)
        return
    except OSError:
        temporary.unlink(missing_ok=True)
    try:
        if link.is_symlink():
            link.unlink()
        temporary.write_text(run.name + "\n")
        os.replace(temporary, link)
    except OSError:  # latest is a convenience: the run itself is complete
        temporary.unlink(missing_ok=True)


def resolve_run(text: str) -> Path:
    """The run folder a user named: a run folder, a ``latest`` link or file, or a base folder
    (its latest run). Raises ExperimentError when it is none of these."""
    path = Path(text)
    if path.is_symlink() and path.name == LATEST:
        path = path.parent / os.readlink(path)
    elif path.is_file() and path.name == LATEST:
        path = path.parent / path.read_text().strip()
    elif path.is_dir() and not (path / MANIFEST).exists() and (path / LATEST).exists():
        return resolve_run(str(path / LATEST))
    if not path.exists():
        raise ExperimentError(f"{text}: no such run folder")
    if not (path / MANIFEST).is_file():
        raise ExperimentError(f"{text}: not a run folder (no {MANIFEST}); give a folder "
                              f"out/EXPERIMENT/RUN_ID written by kraftsim experiment")
    return path


def read_manifest(run: Path) -> dict[str, Any]:
    """The run's manifest; raises ExperimentError when it is unreadable."""
    try:
        manifest: dict[str, Any] = json.loads((run / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise ExperimentError(f"{run}: cannot read {MANIFEST} ({exc})") from None
    needed = ("experiment", "params", "runs", "seed")
    if not isinstance(manifest, dict) or any(key not in manifest for key in needed):
        raise ExperimentError(f"{run}: {MANIFEST} is not a kraftsim run manifest (it needs "
                              f"{', '.join(needed)})")
    return manifest


def kraftsim_version() -> str:
    """The installed kraftsim's version."""
    try:
        return metadata.version("kraftsim")
    except metadata.PackageNotFoundError:
        return "unknown"


def git_commit() -> str:
    """The commit of the checkout kraftsim runs from, or ``unknown`` (an installed wheel, no
    git). A dirty work tree gets ``+dirty``."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists() or not (root / "pyproject.toml").exists():
        return "unknown"
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head or "unknown"


def utc_iso(moment: datetime) -> str:
    """A UTC time as ISO 8601 with milliseconds and a ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def build_manifest(experiment: Experiment, axes: Axes, specs: list[RunSpec], master: str,
                   started: datetime, ended: datetime, wall_s: float,
                   spark_version: str) -> dict[str, Any]:
    """What a run folder records about its sweep (every parameter, defaults included)."""
    return {
        "kraftsim_version": kraftsim_version(),
        "commit": git_commit(),
        "experiment": experiment.name,
        "params": {p.name: list(axes.get(p.name, p.default)) for p in experiment.params},
        "runs": len(specs),
        "cells": len(cells(experiment, {p.name: tuple(axes.get(p.name, p.default))
                                        for p in experiment.params})),
        "seed": specs[0].master_seed if specs else None,
        "master": master,
        "started": utc_iso(started),
        "ended": utc_iso(ended),
        "wall_s": round(wall_s, 3),
        "spark_version": spark_version,
        "python_version": platform.python_version(),
    }


SECRET_WORDS = ("secret", "password", "token", "credential", "access.key", "accesskey")
"""A Spark setting whose name has one of these is recorded without its value."""


def shown_conf(conf: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The user's ``--conf`` settings as the manifest records them (secrets redacted)."""
    return {key: "(redacted)" if any(w in key.lower() for w in SECRET_WORDS) else value
            for key, value in conf}


def manifest_axes(experiment: Experiment, manifest: dict[str, Any]) -> Axes:
    """The parameters of a manifest as axes, each value checked as on the command line."""
    given = manifest.get("params")
    if not isinstance(given, dict):
        raise ExperimentError(f"{MANIFEST}: no params")
    axes: Axes = {}
    for param in experiment.params:
        values = given.get(param.name, list(param.default))
        axes[param.name] = tuple(param.parse(str(v)) for v in values)
    return axes


def spec_of_index(experiment: Experiment, manifest: dict[str, Any], index: int) -> RunSpec:
    """Run ``index`` of a kept sweep (0 to runs - 1, the order the grid dealt them in)."""
    runs = int(manifest["runs"])
    if not 0 <= index < runs:
        raise ExperimentError(f"INDEX must be a run of this sweep, 0 to {runs - 1}; got {index}")
    grid = cells(experiment, manifest_axes(experiment, manifest))
    params = grid[index % len(grid)]
    within = index // len(grid)
    seed = int(manifest["seed"])
    return RunSpec(experiment.name, params, seed, within,
                   run_seed(experiment.name, seed, str(params["scenario"]), within))


def sweep_index(grid: list[dict[str, Any]], params: dict[str, Any], run_index: int) -> int:
    """The sweep-wide run number of a row (the inverse of :func:`spec_of_index`)."""
    return run_index * len(grid) + grid.index(params)


def run_label(experiment: Experiment, axes: Axes, params: dict[str, Any]) -> str:
    """A cell by the values of its axes (the parameters with several values)."""
    names = [p.name for p in experiment.params if len(axes.get(p.name, ())) > 1]
    return "/".join(str(params[n]) for n in names) or str(params.get("scenario", "-"))


def display_path(path: Path) -> str:
    """A path as short as it can be said from here (relative below the working folder)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def write_cells(folder: Path, frame: Any) -> None:
    """``cells.json``: the by-cell table, one object per cell (None for missing values)."""
    records = []
    for record in frame.to_dict("records"):
        records.append({str(k): _plain(v) for k, v in record.items()})
    (folder / CELLS).write_text(json.dumps(records, indent=1, sort_keys=False) + "\n")


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


@dataclass(frozen=True)
class Change:
    """One figure of one cell that differs between two runs."""

    cell: str
    metric: str
    a: Any
    b: Any

    @property
    def delta(self) -> float | None:
        """B - A, when both are numbers."""
        if isinstance(self.a, int | float) and isinstance(self.b, int | float) \
                and not isinstance(self.a, bool) and not isinstance(self.b, bool):
            return round(self.b - self.a, 6)
        return None

    def as_json(self) -> dict[str, Any]:
        """The change as one JSON object."""
        return {"cell": self.cell, "metric": self.metric, "a": self.a, "b": self.b,
                "delta": self.delta}


def read_cells(run: Path) -> list[dict[str, Any]]:
    """A run's ``cells.json``."""
    try:
        data = json.loads((run / CELLS).read_text())
    except (OSError, ValueError) as exc:
        raise ExperimentError(f"{run}: cannot read {CELLS} "
                              f"({getattr(exc, 'strerror', None) or exc})") from None
    if not isinstance(data, list):
        raise ExperimentError(f"{run}: {CELLS} is not a list of cells")
    return data


def compare_runs(run_a: Path, run_b: Path) -> tuple[dict[str, Any], dict[str, Any],
                                                    list[Change]]:
    """The two manifests and every figure that changed, cell by cell.

    A cell is a point of the grid: its full parameters (the rows' ``params``), named
    by the parameters that vary between cells. A cell in only one run shows as its
    ``runs`` figure against ``None``. A parameter that a cell does not name (a run made
    before the experiment had it) counts at its default, so that a run of an older
    kraftsim still meets the same cells. Raises ExperimentError when the runs are of
    different experiments.
    """
    a, b = read_manifest(run_a), read_manifest(run_b)
    if a["experiment"] != b["experiment"]:
        raise ExperimentError(f"cannot compare a {a['experiment']} run with a "
                              f"{b['experiment']} run")
    experiment = get_experiment(str(a["experiment"]))
    records_a = _with_defaults(read_cells(run_a), experiment)
    records_b = _with_defaults(read_cells(run_b), experiment)
    names = _cell_names([*records_a, *records_b])
    cells_a, cells_b = _keyed(records_a, names), _keyed(records_b, names)
    changes: list[Change] = []
    for key in [*cells_a, *(k for k in cells_b if k not in cells_a)]:
        one, two = cells_a.get(key), cells_b.get(key)
        if one is None or two is None:
            changes.append(Change(key, "runs", (one or {}).get("runs"), (two or {}).get("runs")))
            continue
        for metric in [*one, *(m for m in two if m not in one)]:
            if isinstance(one.get(metric, two.get(metric)), str):
                continue
            if one.get(metric) != two.get(metric):
                changes.append(Change(key, metric, one.get(metric), two.get(metric)))
    return a, b, changes


def _with_defaults(records: list[dict[str, Any]], experiment: Experiment
                   ) -> list[dict[str, Any]]:
    """The cells with every parameter they do not name set to its default (parameters
    with one default value; a cell's own values are kept)."""
    defaults = {p.name: p.default[0] for p in experiment.params if len(p.default) == 1}
    completed = []
    for record in records:
        params = record.get("params")
        if isinstance(params, str):
            given = json.loads(params)
            if isinstance(given, dict) and defaults.keys() - given.keys():
                full = {**{k: v for k, v in defaults.items() if k not in given}, **given}
                record = {**record, "params": json.dumps(full, sort_keys=True,
                                                         separators=(",", ":"))}
        completed.append(record)
    return completed


def _cell_names(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each cell's ``params`` JSON -> its name: the values of the parameters that vary
    between the cells (``all`` when there is one cell)."""
    params = {str(r["params"]): json.loads(str(r["params"])) for r in records
              if isinstance(r.get("params"), str)}
    varying = sorted({key for one in params.values() for key, value in one.items()
                      if any(other.get(key) != value for other in params.values())})
    return {text: "/".join(f"{key}={one.get(key)}" for key in varying) or "all"
            for text, one in params.items()}


def _keyed(records: list[dict[str, Any]], names: dict[str, str]
           ) -> dict[str, dict[str, Any]]:
    keyed: dict[str, dict[str, Any]] = {}
    for record in records:
        params = record.get("params")
        key = names[params] if isinstance(params, str) and params in names else \
            "/".join(str(v) for v in record.values() if isinstance(v, str))
        keyed[key] = record
    return keyed


def format_changes(changes: list[Change], a: dict[str, Any], b: dict[str, Any],
                   names: tuple[str, str]) -> str:
    """The changes as a text table, with a line on what else differs between the runs."""
    lines = [f"A: {names[0]} ({a.get('runs')} runs, seed {a.get('seed')}, commit "
             f"{str(a.get('commit'))[:12]})",
             f"B: {names[1]} ({b.get('runs')} runs, seed {b.get('seed')}, commit "
             f"{str(b.get('commit'))[:12]})"]
    differing = [k for k in ("params", "runs", "seed", "kraftsim_version", "commit")
                 if a.get(k) != b.get(k)]
    if differing:
        lines.append(f"differ in: {', '.join(differing)}")
    if not changes:
        lines.append("no cell's figures changed")
        return "\n".join(lines)
    table = [("cell", "metric", "A", "B", "delta")]
    table += [(c.cell, c.metric, _text(c.a), _text(c.b), _text(c.delta, signed=True))
              for c in changes]
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    for number, row in enumerate(table):
        lines.append("  ".join(value.ljust(widths[i]) if i < 2 else value.rjust(widths[i])
                               for i, value in enumerate(row)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(f"{len(changes)} figure(s) changed in "
                 f"{len({c.cell for c in changes})} cell(s)")
    return "\n".join(lines)


def _text(value: Any, signed: bool = False) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:+d}" if signed else str(value)
    if isinstance(value, float):
        return f"{value:+.6g}" if signed else f"{value:.6g}"
    return str(value)
