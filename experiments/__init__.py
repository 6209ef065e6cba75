"""Failover and visibility experiments: pure run functions and the PySpark pipeline.

A run is a pure function of (scenario, parameters, seed) returning one row
(:mod:`experiments.failover`, :mod:`experiments.visibility`); the grid, the
seeds and the replay need no Spark. :mod:`experiments.pipeline` runs a sweep
on Spark and writes Parquet, ``report.md`` and plots; :mod:`experiments.sweep`
is the logic of ``kraftsim experiment``.
"""

from experiments.grid import build_grid, parse_params, single_run
from experiments.model import Column, Experiment, ExperimentError, Param, Row, RunSpec
from experiments.registry import EXPERIMENTS, get_experiment
from experiments.seeds import run_seed

__all__ = [
    "EXPERIMENTS",
    "Column",
    "Experiment",
    "ExperimentError",
    "Param",
    "Row",
    "RunSpec",
    "build_grid",
    "get_experiment",
    "parse_params",
    "run_seed",
    "single_run",
]
