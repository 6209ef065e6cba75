"""``report.md`` and its plots, from a sweep's aggregates (pandas only, no Spark)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments import failures
from experiments.aggregate import Aggregates
from experiments.failover import WINDOWS
from experiments.grid import Axes
from experiments.model import Experiment, RunSpec
from experiments.plots import (
    MAX_PANELS,
    cdf_grid,
    distribution_boxes,
    grouped_bars,
    outcome_bars,
    time_series,
)
from experiments.series import representative_runs
from experiments.swarm_report import report_section


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return str(int(value)) if value.is_integer() else f"{value:.3g}" \
            if abs(value) < 1 else f"{value:.1f}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: Any, columns: list[str] | None = None,
                   headers: dict[str, str] | None = None) -> str:
    """A pandas frame as a Markdown table; ``headers`` renames columns in the header line."""
    names = columns or [str(c) for c in frame.columns]
    if not len(frame):
        return "(none)\n"
    shown = [(headers or {}).get(n, n) for n in names]
    lines = ["| " + " | ".join(shown) + " |", "|" + "---|" * len(names)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_cell(_plain(row[n])) for n in names) + " |")
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    """numpy/pandas scalars as Python values; pandas' missing values as None."""
    if value is None:
        return None
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if hasattr(value, "item"):
        return value.item()
    return value


def write_report(folder: Path, experiment: Experiment, aggregates: Aggregates,
                 context: dict[str, Any], groups: list[dict[str, Any]] | None = None,
                 specs: list[RunSpec] | None = None, axes: Axes | None = None,
                 series: TimeSeries | None = None) -> Path:
    """Write ``report.md`` and the plots into ``folder``; returns the report's path.

    ``groups`` are the failed runs by invariant and cell
    (:func:`experiments.failures.failure_groups`); the time-series plot is
    ``series``, or made here from ``specs`` (:func:`time_series_of`).
    """
    tables = aggregates.tables
    if series is None:
        series = time_series_of(experiment, specs or [], axes or experiment.defaults())
    if series.png is not None:
        (folder / "timeseries.png").write_bytes(series.png)
    if experiment.name == "swarm":
        body = [*report_section(tables, markdown_table), *failures.markdown(groups or [])]
    else:
        body = {"failover": _failover, "broker-failover": _broker_failover,
                "visibility": _visibility, "eos": _eos}[experiment.name](folder, tables)
        body += series.section
        body += failures.markdown(groups or [])
    summary = aggregates.summary
    head = [
        f"# kraftsim {experiment.name} sweep", "",
        f"{summary['runs']:,} runs: **{summary['valid']:,} valid, {summary['invalid']:,} "
        f"invalid, {summary['unknown']:,} unknown** (every raft and transaction invariant "
        f"checked after every event).", "",
        "| setting | value |", "|---|---|",
    ]
    if experiment.name == "swarm":
        head[2] = (f"{summary['runs']:,} runs: **{summary['violations']:,} violations, "
                   f"{summary['outside_model']:,} outside the model, "
                   f"{summary['non_terminating']:,} non-terminating**, {summary['ok']:,} ok "
                   f"(every raft and transaction invariant checked after every event).")
    head += [f"| {key} | {_cell(value)} |" for key, value in context.items()]
    columns = ["", "## Columns of the rows (`runs/`, Parquet)", "",
               "| column | type | meaning |", "|---|---|---|"]
    columns += [f"| {c.name} | {c.kind}{'?' if c.nullable else ''} | {c.doc} |"
                for c in experiment.columns]
    path = folder / "report.md"
    path.write_text("\n".join([*head, "", *body, *columns]) + "\n")
    return path


def _broker_failover(folder: Path, tables: dict[str, Any]) -> list[str]:
    distribution_boxes(tables["unavailable"].assign(panel="every scenario"), "panel",
                       "scenario", "mode", "unavailable_max_ms",
                       "Unavailable window: longest wait for an ack", "simulated ms",
                       folder / "unavailable.png")
    return ["## By write mode", "",
            "Times are from the fault, in simulated ms; unavailability is the longest wait "
            "of a partition's producer for an acknowledgement (the worst partition of a run). "
            "runs, invalid, unknown and never_fenced count runs; records_lost and duplicates "
            "count records.", "", markdown_table(tables["by_mode"]), "",
            "## Unavailable window", "",
            "Every run is a dot; the box spans the middle half of the runs, the line is the "
            "median.", "",
            "![unavailable window](unavailable.png)", "",
            "## By scenario, write mode and metadata.version", "",
            "elr: eligible leader replicas on (KIP-966; from metadata.version 4.1-IV0). "
            "leaderless_partitions_mean: partitions per run that had no leader after the "
            "fault; leaderless_p50_ms and leaderless_max_ms: the longest such wait in a run "
            "(median over runs, worst run); elr_elections: leaders elected from the ELR.", "",
            markdown_table(tables["by_cell"]), ""]


SHARE_HEADERS = {name: f"{name} (share)" for name in
                 ("hit", "committed", "aborted", "dropped", "partial", "partial_visibility",
                  "partial_visibility_rate")}
"""Columns that are shares of a cell's runs, labelled so."""

COUNT_HEADERS = {name: f"{name} (runs)" for name in
                 ("committed", "aborted", "dropped", "partial", "refused", "invalid",
                  "unknown", "partial_visibility_runs")}
"""Columns that count runs, labelled so."""


VISIBILITY_HEADERS = {
    "runs": "runs (count)", "partial_visibility_runs": "partial_visibility_runs (runs)",
    "partial_visibility_rate": "partial_visibility_rate (share)",
    "observations": "observations (count)", "operations": "operations (count)",
    "committed": "committed (operations)", "aborted": "aborted (transactions)",
    "refusals": "refused (operations)", "partial_brokers_mean": "partial_brokers (mean)",
    "invalid": "invalid (runs)", "unknown": "unknown (runs)"}
"""The visibility tables' headers: what each figure counts, or that it is a share."""


def _eos(folder: Path, tables: dict[str, Any]) -> list[str]:
    lines = ["## Classic vs pre-registration (exactly-once runs)", "",
             "Round trips = every request of the loops' producers (FindCoordinator, retries, "
             "InitProducerId) per committed transaction; bounces = CONCURRENT_TRANSACTIONS "
             "answers; latency = begin -> commit acknowledged (simulated ms); throughput = "
             "input records per simulated second of processing.", "",
             markdown_table(tables["by_protocol"]), "",
             "## By scenario, delivery and protocol", "",
             "With idempotence only, duplicates are the outputs of inputs processed again "
             "after a restart from the committed offset.", "",
             markdown_table(tables["by_cell"]), ""]
    return lines


def _failover(folder: Path, tables: dict[str, Any]) -> list[str]:
    cdf_grid(tables["recovery"], "scenario", "mode", "recovery_ms",
             "Recovery: fault -> every reachable node caught up", "simulated ms",
             folder / "recovery_cdf.png")
    outcome_bars(tables["outcomes"], list(WINDOWS), folder / "outcomes.png")
    distribution_boxes(tables["unavailable"], "scenario", "window", "mode", "unavailable_ms",
                       "Unavailable window: fault -> a new controller acknowledges operations",
                       "simulated ms", folder / "unavailable.png", order=list(WINDOWS))
    cells = tables["by_cell"].copy()
    cells["order"] = cells["window"].map(list(WINDOWS).index)
    cells = cells.sort_values(["fault", "order", "mode"], kind="stable").drop(columns="order")
    visibility = cells.groupby(["window", "mode"], as_index=False).agg(
        rate=("partial_visibility", "mean"))
    visibility = visibility.sort_values(
        "window", key=lambda column: column.map(list(WINDOWS).index), kind="stable")
    grouped_bars(visibility, "window", "mode", "rate",
                 "Runs with partial visibility, by fault window and mode",
                 "share of runs", folder / "partial_visibility.png")
    shares = ["fault", "window", "mode", "runs", "hit", "committed", "aborted", "dropped",
              "partial", "partial_visibility"]
    figures = [c for c in cells.columns if c not in shares[4:]]
    return [
        "## By write mode", "",
        "Counts of runs by outcome; recovery = fault -> every reachable node has caught up "
        "and no transaction is open (simulated ms).", "",
        markdown_table(tables["by_mode"], headers=COUNT_HEADERS),
        "## Outcome by fault window", "",
        "![outcome by fault window](outcomes.png)", "",
        "## Recovery time per fault and mode", "",
        "![CDF of recovery time](recovery_cdf.png)", "",
        "## Unavailable window", "",
        "Fault -> the first operation a new controller acknowledges. Every run is a dot; the "
        "box spans the middle half of the runs, the line is the median.", "",
        "![unavailable window](unavailable.png)", "",
        "## Partial visibility by mode", "",
        "A broker published an image inside a multi-batch operation: never in transactional "
        "mode (it would be a TxnAtomicVisibility violation), Kafka's as-built behaviour in "
        "non-atomic mode.", "",
        "![partial visibility](partial_visibility.png)", "",
        "## Every cell (fault x window x mode): shares of runs", "",
        "Each figure is the share of the cell's runs (0 to 1); hit: the fault landed inside "
        "its window.", "",
        markdown_table(cells, shares, {"runs": "runs (count)", **SHARE_HEADERS}),
        "## Every cell: times and counts", "",
        "*_p50, *_p99 and *_max are simulated ms from the fault; rolled_back_mean = records "
        "aborted + offsets truncated from logs, per run; acked_lost, invalid and unknown "
        "count runs.", "",
        markdown_table(cells, figures, {"runs": "runs (count)"}),
    ]


def _visibility(folder: Path, tables: dict[str, Any]) -> list[str]:
    notes = {(str(row["scenario"]), str(row["mode"])):
             f"refused {int(row['refusals']):,} of {int(row['operations']):,} operations"
             for _, row in tables["by_cell"].iterrows() if (row["refusals"] or 0) > 0}
    cdf_grid(tables["latency"], "scenario", "mode", "latency",
             "Visibility latency: submit -> published whole on a broker", "simulated ms",
             folder / "latency_cdf.png", ylabel="fraction of operations x brokers",
             notes=notes)
    grouped_bars(tables["by_cell"], "scenario", "mode", "partial_visibility_rate",
                 "Runs with partial visibility, by scenario and mode", "share of runs",
                 folder / "partial_visibility.png")
    return [
        "## By write mode", "",
        "Latency = submit -> the first image on a broker that holds the whole operation "
        "(simulated ms, over every operation on every broker). Each header says what its "
        "figure counts, or that it is a share of runs.", "",
        markdown_table(tables["by_mode"], headers=VISIBILITY_HEADERS),
        "## Partial visibility by mode", "",
        "![partial visibility](partial_visibility.png)", "",
        "## Visibility latency", "",
        "Only operations that were published have a latency: a mode that refuses operations "
        "(atomic mode refuses multi-batch ones) says in its legend how many it refused.", "",
        "![CDF of visibility latency](latency_cdf.png)", "",
        "## Every cell (scenario x mode)", "",
        markdown_table(tables["by_cell"], headers=VISIBILITY_HEADERS),
    ]


@dataclass(frozen=True)
class TimeSeries:
    """The report's time-series plot and its section, made from the sweep's grid alone
    (:func:`time_series_of`), so a sweep makes it while Spark runs."""

    png: bytes | None
    """``timeseries.png`` (None: no plot)."""
    section: list[str]
    """The report's Markdown lines about it."""


def time_series_of(experiment: Experiment, specs: list[RunSpec], axes: Axes,
                   stop: Callable[[], bool] | None = None) -> TimeSeries:
    """Rerun the first run of each cell (at most MAX_PANELS) and plot it over simulated
    time (no plot for swarm, or without runs); ``stop()`` true ends the work early (its
    result then is no plot)."""
    series = [] if experiment.name == "swarm" else \
        representative_runs(experiment, specs, axes, MAX_PANELS, stop)
    if not series or (stop is not None and stop()):
        return TimeSeries(None, [])
    png = io.BytesIO()
    time_series(series, f"{experiment.name}: the first run of each cell over simulated time",
                png)
    more = len({json.dumps(s.params, sort_keys=True) for s in specs}) - len(series)
    section = [
        "## One run per cell over time", "",
        "The first run (run index 0) of each cell, rerun on the driver: each broker's "
        "published metadata offset, each new controller leader (dotted, labelled with its "
        "epoch), the spans with no controller leader (shaded) and the faults (dashed)."
        + (f" The first {len(series)} cells are shown ({more} more)." if more > 0 else ""),
        "", "![one run per cell over time](timeseries.png)", ""]
    return TimeSeries(png.getvalue(), section)
