"""The swarm sweep's Spark SQL tables, JSON summary and report section.

The summary counts every verdict over all modes and per mode::

    {"experiment": "swarm", "runs": 30, "violations": 2, "outside_model": 4,
     "non_terminating": 1, "ok": 23, "invariants": {"TxnAtomicVisibility": 2},
     "modes": {"transactional": {"runs": 10, "violations": 2, ...}, ...}}

``valid``, ``invalid`` and ``unknown`` repeat ok, violations and
non-terminating runs under the names the other experiments' summaries use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from experiments.model import Row

VERDICT_KEYS = {"ok": "ok", "violation": "violations", "outside_model": "outside_model",
                "non_terminating": "non_terminating"}
"""Each verdict and the summary key that counts it."""


def _count(condition: str) -> str:
    return f"sum(CAST({condition} AS INT))"


_COUNTS = ", ".join(_count(f"verdict = '{verdict}'") + f" AS {key}"
                    for verdict, key in VERDICT_KEYS.items())

SWARM_QUERIES: dict[str, str] = {
    "overall": f"SELECT count(*) AS runs, {_COUNTS} FROM runs",
    "by_mode": f"""
        SELECT mode, count(*) AS runs, {_COUNTS},
               {_count("partial_visibility > 0")} AS partial_visibility_runs,
               sum(acknowledged) AS acknowledged, sum(aborted) AS aborted
        FROM runs GROUP BY mode ORDER BY mode""",
    "by_invariant": """
        SELECT verdict, coalesce(invariant, '-') AS invariant, mode, count(*) AS runs,
               min(shrunk_size) AS shortest
        FROM runs WHERE verdict <> 'ok'
        GROUP BY verdict, invariant, mode ORDER BY verdict, invariant, mode""",
    "by_kind": f"""
        SELECT kind, count(*) AS runs, {_COUNTS}
        FROM runs LATERAL VIEW explode(split(fault_kinds, '[+]')) t AS kind
        GROUP BY kind ORDER BY kind""",
    "by_size": f"""
        SELECT controllers, count(*) AS runs, {_COUNTS}
        FROM runs GROUP BY controllers ORDER BY controllers""",
    "failures": """
        SELECT verdict, invariant, mode, message, shrunk_size, shrunk_faults, shrunk_replay,
               replay
        FROM (SELECT *, row_number() OVER (PARTITION BY verdict, invariant, mode
                                           ORDER BY shrunk_size NULLS LAST, run_index) AS n
              FROM runs WHERE verdict IN ('violation', 'non_terminating')) r
        WHERE n = 1 ORDER BY verdict, invariant, mode""",
}
"""The swarm tables (the view ``runs`` holds the Parquet rows)."""


def _empty_counts() -> dict[str, int]:
    return {"runs": 0, **{key: 0 for key in VERDICT_KEYS.values()}}


def _compat(entry: dict[str, Any]) -> dict[str, Any]:
    entry["valid"] = entry["ok"]
    entry["invalid"] = entry["violations"]
    entry["unknown"] = entry["non_terminating"]
    return entry


def summarize_rows(rows: Iterable[Row]) -> dict[str, Any]:
    """The JSON summary from rows in memory (a campaign without Spark)."""
    total = _empty_counts()
    modes: dict[str, dict[str, int]] = {}
    invariants: Counter[str] = Counter()
    for row in rows:
        key = VERDICT_KEYS[row["verdict"]]
        mode = modes.setdefault(row["mode"], _empty_counts())
        for entry in (total, mode):
            entry["runs"] += 1
            entry[key] += 1
        if row["verdict"] == "violation":
            invariants[row["invariant"]] += 1
    summary: dict[str, Any] = {"experiment": "swarm", **total}
    summary["invariants"] = dict(sorted(invariants.items()))
    summary["modes"] = {m: _compat(dict(modes[m])) for m in sorted(modes)}
    return _compat(summary)


def summarize_tables(tables: dict[str, Any]) -> dict[str, Any]:
    """The JSON summary from the Spark SQL tables."""
    overall = tables["overall"].iloc[0]
    summary: dict[str, Any] = {"experiment": "swarm", "runs": int(overall["runs"])}
    for key in VERDICT_KEYS.values():
        summary[key] = int(overall[key] or 0)
    invariants: Counter[str] = Counter()
    for _, row in tables["by_invariant"].iterrows():
        if row["verdict"] == "violation":
            invariants[str(row["invariant"])] += int(row["runs"])
    summary["invariants"] = dict(sorted(invariants.items()))
    summary["modes"] = {}
    for _, row in tables["by_mode"].iterrows():
        entry: dict[str, Any] = {"runs": int(row["runs"])}
        for key in VERDICT_KEYS.values():
            entry[key] = int(row[key] or 0)
        entry["partial_visibility_runs"] = int(row["partial_visibility_runs"] or 0)
        summary["modes"][str(row["mode"])] = _compat(entry)
    return _compat(summary)


def report_section(tables: dict[str, Any], markdown_table: Any) -> list[str]:
    """The swarm part of ``report.md``: verdicts, what failed, shortest reproductions."""
    lines = [
        "## By write mode", "",
        "Verdicts: ok, violation (an invariant failed or an acknowledged operation is "
        "missing after the cluster settled), outside_model (wiped controllers' disks: Raft "
        "assumes durable storage), non_terminating (did not settle after every fault was "
        "healed). Partial visibility in non-atomic mode is Kafka's as-built behaviour, "
        "counted but not a violation.", "",
        markdown_table(tables["by_mode"]),
        "## What failed", "",
        "shortest = faults + operations + nodes of the smallest shrunk reproduction.", "",
        markdown_table(tables["by_invariant"]),
        "## By fault kind (swarm: each run switches each kind on or off)", "",
        markdown_table(tables["by_kind"]),
        "## By cluster size", "",
        markdown_table(tables["by_size"]),
        "## Shortest reproductions", "",
    ]
    failures = tables["failures"]
    if not len(failures):
        return [*lines, "None.", ""]
    lines.append("One per (verdict, invariant, mode): the replay command of the shrunk "
                 "reproduction (when the run was shrunk) and of the original row.")
    lines.append("")
    for _, row in failures.iterrows():
        what = row["invariant"] if row["verdict"] == "violation" else "non_terminating"
        lines.append(f"- **{what}** ({row['mode']}): {row['message']}  ")
        shrunk = row["shrunk_replay"]
        if isinstance(shrunk, str) and shrunk:
            lines.append(f"  shortest ({row['shrunk_size']}; faults {row['shrunk_faults']}): "
                         f"`{shrunk}`  ")
        lines.append(f"  row: `{row['replay']}`")
    return [*lines, ""]
