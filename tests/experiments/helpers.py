"""Helpers of the experiment tests: specs, the kraftsim command, rows without wall time."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from experiments.grid import parse_params, single_run
from experiments.model import Row, RunSpec
from experiments.registry import get_experiment
from experiments.sweep import run_command

KRAFTSIM = str(Path(sys.executable).parent / "kraftsim")
ROOT = Path(__file__).resolve().parents[2]
"""The tree under test: a kraftsim subprocess imports its packages from here, not from the
checkout the environment's editable install points at (another worktree's, perhaps)."""


def tree_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` with ``env`` over it, and :data:`ROOT` last on PYTHONPATH (after any
    directory ``env`` puts there, e.g. a fake pyspark)."""
    merged = {**os.environ, **(env or {})}
    merged["PYTHONPATH"] = os.pathsep.join(
        p for p in (merged.get("PYTHONPATH"), str(ROOT)) if p)
    return merged


def spec(experiment: str, index: int = 0, seed: int = 1, **params: Any) -> RunSpec:
    """One run of ``experiment`` with ``params`` (names with _ for -), the rest defaults."""
    exp = get_experiment(experiment)
    axes = parse_params(exp, [f"{k.replace('_', '-')}={v}" for k, v in params.items()])
    axes = {k: v[:1] for k, v in axes.items()}
    return single_run(exp, axes, seed, index)


def run(spec_: RunSpec) -> Row:
    """Run a spec without a trace."""
    return get_experiment(spec_.experiment).run(spec_, None)


def without_wall(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its only non-deterministic column."""
    return {k: v for k, v in row.items() if k != "wall_ms"}


def kraftsim(args: list[str], cwd: Path, env: dict[str, str] | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the kraftsim command in a subprocess (importing the tree under test)."""
    return subprocess.run([KRAFTSIM, *args], cwd=cwd, env=tree_env(env),
                          capture_output=True, text=True, timeout=timeout, check=False)


def replay_args(command: str) -> list[str]:
    """The arguments of a row's replay command (after ``kraftsim``)."""
    words = shlex.split(command)
    assert words[0] == "kraftsim"
    return words[1:]


def replay_swarm(command: str, trace: Path) -> dict[str, Any]:
    """Run a swarm row's replay command in-process; returns the printed row."""
    words = shlex.split(command)
    assert words[:3] == ["kraftsim", "experiment", "swarm"]
    args: dict[str, Any] = {"params": []}
    i = 3
    while i < len(words):
        flag, value = words[i], words[i + 1]
        if flag == "--seed":
            args["seed"] = int(value)
        elif flag == "--replay":
            args["replay"] = int(value)
        elif flag == "--param":
            args["params"].append(value)
        i += 2
    out = io.StringIO()
    run_command("swarm", trace=str(trace), stdout=out, **args)
    row: dict[str, Any] = json.loads(out.getvalue())
    return row
