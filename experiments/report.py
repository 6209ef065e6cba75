"""``report.md`` and its plots, from a sweep's aggregates (pandas only, no Spark)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from experiments.aggregate import Aggregates
from experiments.failover import WINDOWS
from experiments.model import Experiment
from experiments.plots import cdf_grid, grouped_bars, outcome_bars
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


def markdown_table(frame: Any, columns: list[str] | None = None) -> str:
    """A pandas frame as a Markdown table."""
    names = columns or [str(c) for c in frame.columns]
    if not len(frame):
        return "(none)\n"
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
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
                 context: dict[str, Any]) -> Path:
    """Write ``report.md`` and the plots into ``folder``; returns the report's path."""
    tables = aggregates.tables
    if experiment.name == "failover":
        body = _failover(folder, tables)
    elif experiment.name == "swarm":
        body = report_section(tables, markdown_table)
    elif experiment.name == "broker-failover":
        body = _broker_failover(tables)
    elif experiment.name == "eos":
        body = _eos(tables)
    else:
        body = _visibility(folder, tables)
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


def _broker_failover(tables: dict[str, Any]) -> list[str]:
    lines = ["## By write mode", "",
             "Times are from the fault, in simulated ms; unavailability is the longest wait "
             "of a partition's producer for an acknowledgement (the worst partition of a run).",
             "", markdown_table(tables["by_mode"]), "",
             "## By scenario and write mode", "", markdown_table(tables["by_cell"]), ""]
    return [*lines, *_failures(tables["failures"])]


def _eos(tables: dict[str, Any]) -> list[str]:
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
    return [*lines, *_failures(tables["failures"])]


def _failures(frame: Any) -> list[str]:
    lines = ["## Runs that are not valid", ""]
    if not len(frame):
        return [*lines, "None.", ""]
    lines.append("Each replay command reruns its row without Spark and writes the trace.")
    lines.append("")
    for _, row in frame.iterrows():
        what = row["invariant"] if row["valid"] == "false" else "unknown"
        lines.append(f"- {what}: {row['message']}  ")
        lines.append(f"  `{row['replay']}`")
    return [*lines, ""]


def _failover(folder: Path, tables: dict[str, Any]) -> list[str]:
    cdf_grid(tables["recovery"], "scenario", "mode", "recovery_ms",
             "Recovery: fault -> every reachable node caught up", "simulated ms",
             folder / "recovery_cdf.png")
    outcome_bars(tables["outcomes"], list(WINDOWS), folder / "outcomes.png")
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
    return [
        "## By write mode", "",
        "Outcome counts; recovery = fault -> every reachable node has caught up and no "
        "transaction is open (simulated ms).", "",
        markdown_table(tables["by_mode"]),
        "## Outcome by fault window", "",
        "![outcome by fault window](outcomes.png)", "",
        "## Recovery time per fault and mode", "",
        "![CDF of recovery time](recovery_cdf.png)", "",
        "## Partial visibility by mode", "",
        "A broker published an image inside a multi-batch operation: never in transactional "
        "mode (it would be a TxnAtomicVisibility violation), Kafka's as-built behaviour in "
        "non-atomic mode.", "",
        "![partial visibility](partial_visibility.png)", "",
        "## Every cell (fault x window x mode)", "",
        "hit, committed, aborted, dropped, partial and partial_visibility are shares of the "
        "cell's runs (hit: the fault landed inside its window); the *_p50, *_p99 and *_max "
        "columns are simulated ms from the fault; rolled_back_mean = records aborted + "
        "offsets truncated from logs, per run.", "",
        markdown_table(cells),
        *_failures(tables["failures"]),
    ]


def _visibility(folder: Path, tables: dict[str, Any]) -> list[str]:
    cdf_grid(tables["latency"], "scenario", "mode", "latency",
             "Visibility latency: submit -> published whole on a broker", "simulated ms",
             folder / "latency_cdf.png", ylabel="fraction of operations x brokers")
    grouped_bars(tables["by_cell"], "scenario", "mode", "partial_visibility_rate",
                 "Runs with partial visibility, by scenario and mode", "share of runs",
                 folder / "partial_visibility.png")
    return [
        "## By write mode", "",
        "Latency = submit -> the first image on a broker that holds the whole operation "
        "(simulated ms, over every operation on every broker).", "",
        markdown_table(tables["by_mode"]),
        "## Partial visibility by mode", "",
        "![partial visibility](partial_visibility.png)", "",
        "## Visibility latency", "",
        "![CDF of visibility latency](latency_cdf.png)", "",
        "## Every cell (scenario x mode)", "",
        markdown_table(tables["by_cell"]),
        *_failures(tables["failures"]),
    ]
