"""The sweep's grid: parameters from ``--param NAME=V1,V2`` and one RunSpec per run.

Every parameter with several values is an axis; the cells are the cartesian
product of the axes, in parameter order (``scenario`` first). Runs are dealt
to the cells in turn, so run ``i`` goes to cell ``i mod cells`` as that
cell's ``i div cells``-th run; its seed comes from (experiment, master seed,
scenario, that index), so cells of one scenario share seeds: the same world,
a different window or mode.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from experiments.common import check_operation_size
from experiments.model import Experiment, ExperimentError, ParamValue, RunSpec
from experiments.seeds import run_seed
from metadata.versions import TRANSACTIONS, release_name, supports_transactions
from sim.bounds import INT64_MAX, INT64_MIN
from sim.settings import SettingError, metadata_level, setting

MAX_RUNS = 1_000_000
"""The most runs one sweep may have."""

Axes = dict[str, tuple[ParamValue, ...]]
"""Each parameter's values."""


def parse_params(experiment: Experiment, items: Iterable[str]) -> Axes:
    """Each parameter's values: the defaults, overridden by ``NAME=V1[,V2...]`` items."""
    axes = experiment.defaults()
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ExperimentError(f"--param {item!r}: expected NAME=VALUE[,VALUE...]")
        param = experiment.param(name.strip())
        values = [param.parse(v.strip()) for v in text.split(",") if v.strip()]
        if not values:
            raise ExperimentError(f"parameter {param.name}: no value given")
        if param.name in CHECKED_SETTINGS:
            values = [_checked_setting(param.name, str(value)) for value in values]
        axes[param.name] = tuple(dict.fromkeys(values))
    _check_sizes(axes)
    check_levels(axes)
    return axes


CHECKED_SETTINGS = ("mutations", "metadata-version")
"""Text parameters that are cluster settings with their own check (known mutation names;
a metadata.version a cluster can be bootstrapped at, kept as its release name)."""


def _checked_setting(name: str, text: str) -> str:
    try:
        return str(setting(name).parse(text))
    except SettingError as exc:
        raise ExperimentError(f"parameter {name}: {exc.problem}") from None


def check_levels(axes: Axes) -> None:
    """Refuse, before any run, a grid whose cells would write metadata transactions at a
    metadata.version without them (mode transactional below 3.6-IV1)."""
    if "transactional" not in axes.get("mode", ()):
        return
    for value in axes.get("metadata-version", ()):
        level = metadata_level("metadata-version", str(value))
        if not supports_transactions(level):
            raise ExperimentError(
                f"parameters mode and metadata-version: mode transactional needs "
                f"metadata-version {release_name(TRANSACTIONS)} or later (metadata "
                f"transactions, KIP-868), got {value}; give --param mode=non-atomic,atomic "
                f"for that level")


def _check_sizes(axes: Axes) -> None:
    """Refuse, before any run, an operation larger than the experiments allow."""
    batches = axes.get("batches") or axes.get("max-batches")
    records = axes.get("batch-records")
    if batches and records:
        check_operation_size(max(int(b) for b in batches), max(int(r) for r in records))


def _check_seed(master_seed: int) -> None:
    """The master seed is a row's ``master_seed`` column: a signed 64-bit integer."""
    if not INT64_MIN <= master_seed <= INT64_MAX:
        raise ExperimentError(f"--seed must be within {INT64_MIN} and {INT64_MAX}, got a "
                              f"number of {len(str(abs(master_seed)))} digits")


def cells(experiment: Experiment, axes: Axes) -> list[dict[str, ParamValue]]:
    """Every combination of the axes' values, in parameter order."""
    names = [p.name for p in experiment.params]
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n] for n in names))]


def build_grid(experiment: Experiment, axes: Axes, runs: int, master_seed: int) -> list[RunSpec]:
    """``runs`` RunSpecs dealt over the cells; see the module docs."""
    _check_seed(master_seed)
    if runs < 1:
        raise ExperimentError(f"--runs must be at least 1, got {runs}")
    if runs > MAX_RUNS:
        raise ExperimentError(f"--runs must be at most {MAX_RUNS}, got {runs}")
    grid_cells = cells(experiment, axes)
    specs = []
    for i in range(runs):
        params = grid_cells[i % len(grid_cells)]
        index = i // len(grid_cells)
        specs.append(RunSpec(experiment.name, params, master_seed, index,
                             run_seed(experiment.name, master_seed, str(params["scenario"]),
                                      index)))
    return specs


def single_run(experiment: Experiment, axes: Axes, master_seed: int, index: int) -> RunSpec:
    """The RunSpec of one run (``--replay``); every parameter must have one value."""
    several = [name for name, values in axes.items() if len(values) != 1]
    if several:
        raise ExperimentError(f"--replay needs one value for each parameter; give "
                              f"--param for: {', '.join(several)}")
    _check_seed(master_seed)
    if index < 0:
        raise ExperimentError(f"--replay must be a run index >= 0, got {index}")
    if index > INT64_MAX:
        raise ExperimentError(f"--replay must be at most {INT64_MAX}, got {index}")
    check_levels(axes)
    params = {name: values[0] for name, values in axes.items()}
    return RunSpec(experiment.name, params, master_seed, index,
                   run_seed(experiment.name, master_seed, str(params["scenario"]), index))
