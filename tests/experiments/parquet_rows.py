"""Reading a sweep's Parquet rows back as plain Python values (pandas, no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple) or (hasattr(value, "tolist") and not isinstance(value, str)):
        listed = value.tolist() if hasattr(value, "tolist") else list(value)
        return [int(v) for v in listed] if isinstance(listed, list) else listed
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    return value.item() if hasattr(value, "item") else value


def parquet_rows(folder: Path, drop: tuple[str, ...] = ("wall_ms",)) -> list[dict[str, Any]]:
    """Every row under ``folder/runs``, sorted, without the ``drop`` columns."""
    frame = pd.read_parquet(folder / "runs", dtype_backend="pyarrow")
    rows = []
    for record in frame.to_dict("records"):
        rows.append({str(k): _plain(v) if k not in ("experiment", "scenario") else str(v)
                     for k, v in record.items() if k not in drop})
    return sorted(rows, key=lambda r: (r["scenario"], r["mode"], r.get("window", ""),
                                       r["run_index"]))
