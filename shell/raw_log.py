"""``log NODE``: a node's raw replicated log, markers and uncommitted records included.

This is deliberately not the metadata tree: it shows every record a node holds,
including a transaction's records before its End, records an Abort threw away
and records that are not committed yet. Each batch says whether it is below
the node's high watermark (committed).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from kafka_format.control_records import control_record_name
from metadata.schema import MetadataRecord, record_to_json
from raft.log import RaftLog

MAX_RECORDS = 500
"""At most this many records per ``log`` command (ask for a range to see more)."""


def record_text(record: Any) -> str:
    """``TYPE {fields}`` with Kafka's names."""
    if isinstance(record, MetadataRecord):
        data = record_to_json(record)
        return f"{data['type']} {json.dumps(data['data'], separators=(',', ':'))}"
    if isinstance(record, int | str):
        return repr(record)
    return (f"{control_record_name(record)} "
            f"{json.dumps(msgspec.to_builtins(record), separators=(',', ':'))}")


def log_lines(label: str, log: RaftLog, high_watermark: int | None, first: int | None,
              last: int | None) -> list[str]:
    """The raw log between offsets ``first`` and ``last`` (inclusive; None: open end)."""
    hw_text = "unknown (the node is down)" if high_watermark is None else str(high_watermark)
    lines = [f"RAW LOG of {label} (markers and uncommitted records included; not what any "
             f"node shows): offsets {log.start_offset}-{log.end_offset - 1}, high watermark "
             f"{hw_text}"]
    if log.snapshot is not None:
        lines.append(f"offsets before {log.start_offset} are in snapshot "
                     f"{log.snapshot.snapshot_id.end_offset}-{log.snapshot.snapshot_id.epoch}")
    low = first if first is not None else log.start_offset
    high = last if last is not None else log.end_offset - 1
    shown = 0
    for batch in log.batches:
        if batch.last_offset < low or batch.base_offset > high:
            continue
        if shown >= MAX_RECORDS:
            lines.append(f"... stopped after {MAX_RECORDS} records: give a range, e.g. log "
                         f"NODE {batch.base_offset} {batch.base_offset + MAX_RECORDS - 1}")
            break
        if high_watermark is None:
            state = ""
        else:
            state = ", committed" if batch.end_offset <= high_watermark else ", NOT committed"
        kind = "control batch" if batch.is_control else "batch"
        lines.append(f"{kind} {batch.base_offset}-{batch.last_offset} epoch {batch.epoch}"
                     f"{state}")
        records = batch.control_records if batch.is_control else batch.records
        for index, record in enumerate(records):
            offset = batch.base_offset + index
            if low <= offset <= high:
                lines.append(f"  {offset}  {record_text(record)}")
                shown += 1
    if shown == 0:
        lines.append(f"(no records between offsets {low} and {high})")
    return lines
