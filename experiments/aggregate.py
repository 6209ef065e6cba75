"""Spark SQL over a sweep's rows: counts, rates and percentiles, as pandas tables.

Every query reads the temporary view ``runs`` (the Parquet rows). Percentiles
are exact (Spark's ``percentile``, linear interpolation), so the tables are
a function of the rows. The JSON summary is built from the same tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from experiments.failures import QUERY as FAILURE_GROUPS
from experiments.failures import SWARM_QUERY as SWARM_FAILURE_GROUPS
from experiments.model import Experiment
from experiments.swarm_report import SWARM_QUERIES, summarize_tables


def _flag(condition: str) -> str:
    return f"sum(CAST({condition} AS INT))"


def _percentiles(column: str, name: str, levels: tuple[int, ...] = (50, 90, 99)) -> str:
    parts = [f"percentile({column}, {level / 100}) AS {name}_p{level}_ms" for level in levels]
    parts.append(f"max({column}) AS {name}_max_ms")
    return ", ".join(parts)


_VERDICTS = ("count(*) AS runs, " + _flag("valid = 'true'") + " AS valid, "
             + _flag("valid = 'false'") + " AS invalid, "
             + _flag("valid = 'unknown'") + " AS unknown")

FAILOVER_QUERIES: dict[str, str] = {
    "overall": f"SELECT {_VERDICTS} FROM runs",
    "by_mode": f"""
        SELECT mode, count(*) AS runs,
               {_flag("partial_visibility > 0")} AS partial_visibility_runs,
               {_flag("outcome = 'committed'")} AS committed,
               {_flag("outcome = 'aborted'")} AS aborted,
               {_flag("outcome = 'dropped'")} AS dropped,
               {_flag("outcome = 'partial'")} AS partial,
               {_flag("outcome = 'refused'")} AS refused,
               {_flag("valid = 'false'")} AS invalid, {_flag("valid = 'unknown'")} AS unknown,
               {_percentiles("recovery_ms", "recovery")}
        FROM runs GROUP BY mode ORDER BY mode""",
    "by_cell": f"""
        SELECT scenario AS fault, window, mode, count(*) AS runs,
               round(avg(CAST(window_hit AS INT)), 3) AS hit,
               round(avg(CAST(outcome = 'committed' AS INT)), 3) AS committed,
               round(avg(CAST(outcome = 'aborted' AS INT)), 3) AS aborted,
               round(avg(CAST(outcome = 'dropped' AS INT)), 3) AS dropped,
               round(avg(CAST(outcome = 'partial' AS INT)), 3) AS partial,
               round(avg(CAST(partial_visibility > 0 AS INT)), 3) AS partial_visibility,
               percentile(leader_ms, 0.5) AS leader_p50,
               percentile(hw_ms, 0.5) AS hw_p50,
               percentile(abort_ms, 0.5) AS abort_p50,
               percentile(unavailable_ms, 0.5) AS unavailable_p50,
               percentile(recovery_ms, 0.5) AS recovery_p50,
               percentile(recovery_ms, 0.99) AS recovery_p99,
               max(recovery_ms) AS recovery_max,
               round(avg(records_rolled_back), 1) AS rolled_back_mean,
               sum(acked_lost) AS acked_lost,
               {_flag("valid = 'false'")} AS invalid, {_flag("valid = 'unknown'")} AS unknown
        FROM runs GROUP BY scenario, window, mode ORDER BY scenario, window, mode""",
    "outcomes": """
        SELECT mode, window, outcome, count(*) AS runs
        FROM runs GROUP BY mode, window, outcome ORDER BY mode, window, outcome""",
    "failure_groups": FAILURE_GROUPS,
    "recovery": """
        SELECT scenario, mode, recovery_ms FROM runs WHERE recovery_ms IS NOT NULL""",
    "unavailable": """
        SELECT scenario, window, mode, unavailable_ms FROM runs
        WHERE unavailable_ms IS NOT NULL""",
}
"""The failover tables."""

VISIBILITY_QUERIES: dict[str, str] = {
    "overall": f"SELECT {_VERDICTS} FROM runs",
    "by_mode": f"""
        SELECT r.mode, r.runs, r.partial_visibility_runs, r.partial_visibility_rate,
               r.observations, r.operations, r.committed, r.aborted, r.refusals,
               r.largest_delta_max, r.invalid, r.unknown,
               l.latency_p50_ms, l.latency_p90_ms, l.latency_p99_ms, l.latency_max_ms
        FROM (SELECT mode, count(*) AS runs,
                     {_flag("partial_visibility > 0")} AS partial_visibility_runs,
                     round(avg(CAST(partial_visibility > 0 AS INT)), 3)
                         AS partial_visibility_rate,
                     sum(partial_visibility) AS observations, sum(operations) AS operations,
                     sum(committed) AS committed, sum(aborted) AS aborted,
                     sum(refusals) AS refusals, max(largest_delta) AS largest_delta_max,
                     {_flag("valid = 'false'")} AS invalid,
                     {_flag("valid = 'unknown'")} AS unknown
              FROM runs GROUP BY mode) r
        LEFT JOIN (SELECT mode, {_percentiles("latency", "latency")}
                   FROM runs LATERAL VIEW explode(latency_ms) t AS latency GROUP BY mode) l
        ON r.mode = l.mode ORDER BY r.mode""",
    "by_cell": f"""
        SELECT r.scenario, r.mode, r.runs, r.partial_visibility_rate, r.partial_brokers_mean,
               r.operations, r.refusals, r.largest_delta_max,
               l.latency_p50_ms, l.latency_p90_ms, l.latency_p99_ms, l.latency_max_ms,
               r.invalid, r.unknown
        FROM (SELECT scenario, mode, count(*) AS runs,
                     round(avg(CAST(partial_visibility > 0 AS INT)), 3)
                         AS partial_visibility_rate,
                     round(avg(partial_brokers), 2) AS partial_brokers_mean,
                     sum(operations) AS operations, sum(refusals) AS refusals,
                     max(largest_delta) AS largest_delta_max,
                     {_flag("valid = 'false'")} AS invalid,
                     {_flag("valid = 'unknown'")} AS unknown
              FROM runs GROUP BY scenario, mode) r
        LEFT JOIN (SELECT scenario, mode, {_percentiles("latency", "latency")}
                   FROM runs LATERAL VIEW explode(latency_ms) t AS latency
                   GROUP BY scenario, mode) l
        ON r.scenario = l.scenario AND r.mode = l.mode ORDER BY r.scenario, r.mode""",
    "failure_groups": FAILURE_GROUPS,
    "latency": """
        SELECT scenario, mode, latency FROM runs LATERAL VIEW explode(latency_ms) t AS latency""",
}
"""The visibility tables."""

BROKER_FAILOVER_QUERIES: dict[str, str] = {
    "overall": f"SELECT {_VERDICTS}, sum(records_lost) AS records_lost, "
               f"sum(duplicates) AS duplicates FROM runs",
    "by_mode": f"""
        SELECT mode, count(*) AS runs, {_flag("valid = 'false'")} AS invalid,
               {_flag("valid = 'unknown'")} AS unknown,
               {_flag("fence_ms IS NULL")} AS never_fenced,
               percentile(fence_ms, 0.5) AS fence_p50_ms, max(fence_ms) AS fence_max_ms,
               percentile(leaders_ms, 0.5) AS leaders_p50_ms, max(leaders_ms) AS leaders_max_ms,
               percentile(unavailable_max_ms, 0.5) AS unavailable_p50_ms,
               percentile(unavailable_max_ms, 0.99) AS unavailable_p99_ms,
               round(avg(partition_changes), 1) AS partition_changes_mean,
               sum(records_lost) AS records_lost, sum(duplicates) AS duplicates
        FROM runs GROUP BY mode ORDER BY mode""",
    "by_cell": f"""
        SELECT scenario, mode, metadata_version, elr, count(*) AS runs,
               percentile(fence_ms, 0.5) AS fence_p50_ms,
               percentile(leaders_ms, 0.5) AS leaders_p50_ms,
               percentile(unavailable_max_ms, 0.5) AS unavailable_p50_ms,
               max(unavailable_max_ms) AS unavailable_max_ms,
               round(avg(partition_changes), 1) AS partition_changes_mean,
               round(avg(leaderless_partitions), 2) AS leaderless_partitions_mean,
               percentile(leaderless_max_ms, 0.5) AS leaderless_p50_ms,
               max(leaderless_max_ms) AS leaderless_max_ms,
               sum(elr_elections) AS elr_elections,
               sum(records_lost) AS records_lost, sum(duplicates) AS duplicates,
               {_flag("valid = 'false'")} AS invalid, {_flag("valid = 'unknown'")} AS unknown
        FROM runs GROUP BY scenario, mode, metadata_version, elr
        ORDER BY scenario, mode, metadata_version, elr""",
    "failure_groups": FAILURE_GROUPS,
    "unavailable": """
        SELECT scenario, mode, unavailable_max_ms FROM runs
        WHERE unavailable_max_ms IS NOT NULL""",
}
"""The broker-failover tables."""

_EO = "delivery = 'exactly-once'"
EOS_QUERIES: dict[str, str] = {
    "overall": f"""
        SELECT {_VERDICTS},
               sum(CASE WHEN {_EO} THEN duplicates ELSE 0 END) AS duplicates,
               sum(CASE WHEN {_EO} THEN aborted_reads ELSE 0 END) AS aborted_reads,
               sum(CASE WHEN {_EO} THEN missing ELSE 0 END) AS missing,
               sum(CASE WHEN {_EO} THEN 0 ELSE duplicates END) AS idempotent_duplicates,
               {_flag(f"NOT {_EO} AND duplicates > 0")} AS idempotent_duplicate_runs,
               sum(CASE WHEN {_EO} THEN 0 ELSE 1 END) AS idempotent_runs
        FROM runs""",
    "by_protocol": f"""
        SELECT r.protocol, r.runs, r.transactions, r.round_trips_per_txn,
               r.concurrent_transactions_bounces, r.bounces_per_txn, r.throughput_per_s,
               l.latency_p50_ms, l.latency_p90_ms, l.latency_p99_ms, l.latency_max_ms,
               r.duplicates, r.aborted_reads, r.invalid, r.unknown
        FROM (SELECT protocol, count(*) AS runs, sum(transactions) AS transactions,
                     round(sum(round_trips) / sum(transactions), 2) AS round_trips_per_txn,
                     sum(concurrent_transactions_bounces) AS concurrent_transactions_bounces,
                     round(sum(concurrent_transactions_bounces) / sum(transactions), 2)
                         AS bounces_per_txn,
                     round(sum(input_records) * 1000 / sum(processing_ms), 1)
                         AS throughput_per_s,
                     sum(duplicates) AS duplicates, sum(aborted_reads) AS aborted_reads,
                     {_flag("valid = 'false'")} AS invalid,
                     {_flag("valid = 'unknown'")} AS unknown
              FROM runs WHERE {_EO} GROUP BY protocol) r
        LEFT JOIN (SELECT protocol, {_percentiles("latency", "latency")}
                   FROM runs LATERAL VIEW explode(commit_latency_ms) t AS latency
                   WHERE {_EO} GROUP BY protocol) l
        ON r.protocol = l.protocol ORDER BY r.protocol""",
    "by_cell": f"""
        SELECT scenario, delivery, protocol, count(*) AS runs,
               round(avg(transactions), 1) AS transactions_mean,
               round(sum(round_trips) / sum(transactions), 2) AS round_trips_per_txn,
               round(sum(concurrent_transactions_bounces) / sum(transactions), 2)
                   AS bounces_per_txn,
               sum(unstable_offset_bounces) AS unstable_offset_bounces,
               round(avg(restarts), 2) AS restarts_mean,
               round(sum(input_records) * 1000 / sum(processing_ms), 1) AS throughput_per_s,
               percentile(processing_ms, 0.5) AS processing_p50_ms,
               sum(duplicates) AS duplicates, {_flag("duplicates > 0")} AS duplicate_runs,
               sum(missing) AS missing, sum(aborted_reads) AS aborted_reads,
               {_flag("valid = 'false'")} AS invalid, {_flag("valid = 'unknown'")} AS unknown
        FROM runs GROUP BY scenario, delivery, protocol
        ORDER BY scenario, delivery, protocol""",
    "failure_groups": FAILURE_GROUPS,
}
"""The eos tables."""

QUERIES: dict[str, dict[str, str]] = {"failover": FAILOVER_QUERIES,
                                      "visibility": VISIBILITY_QUERIES,
                                      "swarm": {**SWARM_QUERIES,
                                                "failure_groups": SWARM_FAILURE_GROUPS},
                                      "broker-failover": BROKER_FAILOVER_QUERIES,
                                      "eos": EOS_QUERIES}


@dataclass
class Aggregates:
    """The tables of one sweep (pandas DataFrames by name) and its JSON summary."""

    experiment: str
    tables: dict[str, Any]
    summary: dict[str, Any] = field(default_factory=dict)


_NOT_FIGURES = frozenset({"master_seed", "run_index", "seed", "wall_ms"})
"""Columns that are no cell figure: a run's identity, and wall time (not a function of
the seed)."""


def cells_query(experiment: Experiment) -> str:
    """One row per grid cell, keyed by its full parameters (the rows' ``params``): its
    runs, verdicts, and the mean and median of every numeric column (the share of every
    boolean one). ``kraftsim experiment compare`` reads it from ``cells.json``."""
    names = {c.name for c in experiment.columns}
    parts = ["params", "count(*) AS runs"]
    if "valid" in names:
        parts += [_flag("valid = 'false'") + " AS invalid",
                  _flag("valid = 'unknown'") + " AS unknown"]
    for column in experiment.columns:
        if column.name in _NOT_FIGURES:
            continue
        name = f"`{column.name}`"
        if column.kind == "bool":
            parts.append(f"round(avg(CAST({name} AS INT)), 3) AS `{column.name}_share`")
        elif column.kind == "long":
            parts.append(f"round(avg({name}), 3) AS `{column.name}_mean`")
            parts.append(f"percentile({name}, 0.5) AS `{column.name}_p50`")
    return f"SELECT {', '.join(parts)} FROM runs GROUP BY params ORDER BY params"


QUERY_THREADS = 8
"""Queries run at once: each is a few small Spark jobs whose time goes mostly to planning
(and, above :data:`INTERPRETED_ROWS`, the JVM's compiler), one thread each, so several at
once keep every core busy. The failover tables are 8 queries: over 10,000 rows, run
interpreted in a session's first aggregates, 8 at once took 3.0-3.8 s (median 3.1), 4 at
once 2.9-4.0 s (median 3.6), 2 at once 4.3-4.7 s."""


INTERPRETED_ROWS = 20_000
"""Up to this many rows the queries run interpreted, without Spark's code generation.

Compiling the generated Java of a few small queries costs more than it saves on a few
thousand rows. Measured on 2 cores (a session's first aggregates, the same tables):
10,000 failover rows 3.1-3.5 s instead of 4.1-4.5 s; at 40,000 rows code generation
wins again (4.0-4.3 s against 4.3-4.7 s)."""

_CODEGEN_SETTINGS = (("spark.sql.codegen.wholeStage", "false"),
                     ("spark.sql.codegen.factoryMode", "NO_CODEGEN"))


@contextmanager
def interpreted(spark: Any, on: bool) -> Iterator[None]:
    """With ``on``, the session's queries run interpreted (:data:`INTERPRETED_ROWS`) until
    the block ends; settings the user gave the session (``--conf``) are left as given."""
    given = spark.sparkContext.getConf()
    ours = [(key, value) for key, value in _CODEGEN_SETTINGS if on and not given.contains(key)]
    before = [(key, spark.conf.get(key, None)) for key, _ in ours]
    for key, value in ours:
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before:
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def aggregate(spark: Any, experiment: Experiment, rows: int | None = None) -> Aggregates:
    """Run the experiment's queries over the view ``runs``, and the cells query (several
    at once; the tables are the same as one after the other). ``rows``, the number of
    rows when known, decides whether they run interpreted (:data:`INTERPRETED_ROWS`)."""
    queries = {**QUERIES[experiment.name], "cells": cells_query(experiment)}
    small = rows is not None and rows <= INTERPRETED_ROWS
    with interpreted(spark, small), \
            ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="kraftsim-sql") as pool:
        frames = list(pool.map(lambda query: spark.sql(query).toPandas(), queries.values()))
    tables = dict(zip(queries, frames, strict=True))
    result = Aggregates(experiment.name, tables)
    result.summary = summarize(result)
    return result


def _number(value: Any) -> float | int | None:
    """A JSON-friendly number: None for null/NaN, int when whole."""
    if value is None:
        return None
    number = float(value)
    if number != number:  # NaN
        return None
    return int(number) if number.is_integer() else round(number, 1)


def summarize(aggregates: Aggregates) -> dict[str, Any]:
    """The JSON summary: verdict counts, then per mode runs, partial-visibility runs,
    aborted, committed and the p50/p99 of recovery time (visibility: of latency)."""
    if aggregates.experiment == "swarm":
        return summarize_tables(aggregates.tables)
    overall = aggregates.tables["overall"].iloc[0]
    if aggregates.experiment == "broker-failover":
        return _broker_summary(aggregates, overall)
    if aggregates.experiment == "eos":
        return _eos_summary(aggregates, overall)
    summary: dict[str, Any] = {
        "experiment": aggregates.experiment,
        "runs": int(overall["runs"]),
        "valid": int(overall["valid"] or 0),
        "invalid": int(overall["invalid"] or 0),
        "unknown": int(overall["unknown"] or 0),
        "modes": {},
    }
    for _, row in aggregates.tables["by_mode"].iterrows():
        entry: dict[str, Any] = {
            "runs": int(row["runs"]),
            "partial_visibility_runs": int(row["partial_visibility_runs"] or 0),
            "aborted": int(row["aborted"] or 0),
            "committed": int(row["committed"] or 0),
        }
        if aggregates.experiment == "failover":
            entry["recovery_p50_ms"] = _number(row["recovery_p50_ms"])
            entry["recovery_p99_ms"] = _number(row["recovery_p99_ms"])
        else:
            entry["recovery_p50_ms"] = entry["recovery_p99_ms"] = None
            entry["latency_p50_ms"] = _number(row["latency_p50_ms"])
            entry["latency_p99_ms"] = _number(row["latency_p99_ms"])
            entry["refusals"] = int(row["refusals"] or 0)
        summary["modes"][str(row["mode"])] = entry
    return summary


def _verdicts(aggregates: Aggregates, overall: Any) -> dict[str, Any]:
    """The summary's verdict counts; ``violations`` = invalid runs."""
    return {"experiment": aggregates.experiment, "runs": int(overall["runs"]),
            "valid": int(overall["valid"] or 0), "invalid": int(overall["invalid"] or 0),
            "violations": int(overall["invalid"] or 0),
            "unknown": int(overall["unknown"] or 0)}


def _broker_summary(aggregates: Aggregates, overall: Any) -> dict[str, Any]:
    """broker-failover: verdicts (``violations`` = invalid runs), records lost and
    duplicates, and per mode the fence, new-leader and unavailability times."""
    summary: dict[str, Any] = {
        **_verdicts(aggregates, overall),
        "records_lost": int(overall["records_lost"] or 0),
        "duplicates": int(overall["duplicates"] or 0),
        "modes": {},
    }
    for _, row in aggregates.tables["by_mode"].iterrows():
        summary["modes"][str(row["mode"])] = {
            "runs": int(row["runs"]), "invalid": int(row["invalid"] or 0),
            "unknown": int(row["unknown"] or 0),
            "never_fenced": int(row["never_fenced"] or 0),
            "fence_p50_ms": _number(row["fence_p50_ms"]),
            "leaders_p50_ms": _number(row["leaders_p50_ms"]),
            "unavailable_p50_ms": _number(row["unavailable_p50_ms"]),
            "unavailable_p99_ms": _number(row["unavailable_p99_ms"]),
            "partition_changes_mean": _number(row["partition_changes_mean"]),
            "records_lost": int(row["records_lost"] or 0),
            "duplicates": int(row["duplicates"] or 0),
        }
    return summary


def _eos_summary(aggregates: Aggregates, overall: Any) -> dict[str, Any]:
    """eos: verdicts (``violations`` = invalid runs); duplicates, aborted reads and missing
    outputs of the exactly-once runs; what idempotence alone gave; and per protocol
    (``classic``, ``pre-registration``; null when not run) round trips and
    CONCURRENT_TRANSACTIONS bounces per transaction and the commit latency."""
    summary: dict[str, Any] = {
        **_verdicts(aggregates, overall),
        "duplicates": int(overall["duplicates"] or 0),
        "aborted_reads": int(overall["aborted_reads"] or 0),
        "missing": int(overall["missing"] or 0),
        "idempotence_only": {
            "runs": int(overall["idempotent_runs"] or 0),
            "duplicates": int(overall["idempotent_duplicates"] or 0),
            "runs_with_duplicates": int(overall["idempotent_duplicate_runs"] or 0),
        },
        "protocols": {name: None for name in ("classic", "pre-registration")},
    }
    for _, row in aggregates.tables["by_protocol"].iterrows():
        summary["protocols"][str(row["protocol"])] = {
            "runs": int(row["runs"]),
            "transactions": int(row["transactions"] or 0),
            "round_trips_per_txn": _number(row["round_trips_per_txn"]),
            "concurrent_transactions_bounces": int(row["concurrent_transactions_bounces"] or 0),
            "concurrent_transactions_bounces_per_txn": _number(row["bounces_per_txn"]),
            "commit_latency_p50_ms": _number(row["latency_p50_ms"]),
            "commit_latency_p99_ms": _number(row["latency_p99_ms"]),
            "throughput_per_s": _number(row["throughput_per_s"]),
        }
    return summary
