"""``kraftsim dump-log``: print Kafka KRaft metadata files, like ``kafka-dump-log``.

Reads ``.log`` segments, ``.checkpoint`` snapshots (and ``bootstrap.checkpoint``),
``quorum-state`` and ``meta.properties``, as written by Kafka or by kraftsim,
and prints each batch (base and last offset, epoch, CRC verdict, control or
data, position, size) and each record (offset, type, version, fields with
Kafka's camelCase names). A damaged or missing file prints what could be read,
then one line on stderr naming the file, the batch, its base offset and the
byte position; the exit status is then 1. Run as ``python -m kraftsim.dump_log``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import msgspec

from kafka_format import files
from kafka_format.batch_format import DecodedBatch
from kafka_format.control_records import UnknownControlRecord, control_record_name
from kafka_format.errors import DecodeFailure
from metadata.schema import MetadataRecord, record_to_json

PROG = "kraftsim dump-log"


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``dump-log``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Print the batches and records of Kafka KRaft metadata files: log segments "
            "(NNNN.log), snapshots (NNNN-NNNN.checkpoint, bootstrap.checkpoint), "
            "quorum-state and meta.properties. Exits 1 if any file is missing or damaged."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="the files to print")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: one line per batch and per record (default); json: one JSON "
        "document per file",
    )
    parser.add_argument(
        "--batches-only",
        action="store_true",
        help="print the batches without their records",
    )
    return parser


def record_json(record: Any, version: int) -> dict[str, Any]:
    """A record as ``{"type", "version", "data"}`` with Kafka's field names."""
    if isinstance(record, MetadataRecord):
        out = record_to_json(record)
        return {"type": out["type"], "version": version, "data": out["data"]}
    if isinstance(record, UnknownControlRecord):
        return {"type": control_record_name(record), "version": version,
                "data": {"value": record.value.hex()}}  # fmt: skip
    return {"type": control_record_name(record), "version": version,
            "data": msgspec.to_builtins(record)}  # fmt: skip


def batch_json(decoded: DecodedBatch, with_records: bool) -> dict[str, Any]:
    """A batch's facts, and its records unless ``with_records`` is false."""
    batch = decoded.batch
    out: dict[str, Any] = {
        "baseOffset": batch.base_offset,
        "lastOffset": decoded.last_offset,
        "count": len(decoded.facts),
        "epoch": batch.epoch,
        "isControl": decoded.is_control,
        "position": decoded.position,
        "size": decoded.size,
        "appendTime": batch.append_time_ms,
        "crc": decoded.crc,
        "crcValid": True,
        "compression": decoded.header.compression,
        "producerId": decoded.producer_id,
    }
    if with_records:
        pairs = zip(decoded.records, decoded.facts, strict=True)
        out["records"] = [
            {"offset": batch.base_offset + index, **record_json(record, facts.version)}
            for index, (record, facts) in enumerate(pairs)
        ]
    return out


def _batch_lines(decoded: DecodedBatch, with_records: bool) -> Iterator[str]:
    batch = decoded.batch
    yield (
        f"baseOffset: {batch.base_offset} lastOffset: {decoded.last_offset} "
        f"count: {len(decoded.facts)} epoch: {batch.epoch} "
        f"isControl: {str(decoded.is_control).lower()} position: {decoded.position} "
        f"size: {decoded.size} appendTime: {batch.append_time_ms} crc: {decoded.crc} "
        f"crcValid: true compression: {decoded.header.compression}"
    )
    if not with_records:
        return
    for index, (record, facts) in enumerate(zip(decoded.records, decoded.facts, strict=True)):
        shown = record_json(record, facts.version)
        data = json.dumps(shown["data"], separators=(",", ":"), ensure_ascii=False)
        yield (
            f"| offset: {batch.base_offset + index} {shown['type']} "
            f"version: {shown['version']} {data}"
        )


def _dump_batches(
    path: str, kind: str, batches: tuple[DecodedBatch, ...], extra: dict[str, Any],
    error: DecodeFailure | None, fmt: str, with_records: bool, out: TextIO,
) -> None:
    if fmt == "json":
        document = {"file": path, "kind": kind, **extra,
                    "batches": [batch_json(batch, with_records) for batch in batches],
                    "error": None if error is None else msgspec.to_builtins(error)}  # fmt: skip
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        return
    if error is not None and error.kind == "unreadable":
        return
    out.write(f"Dumping {path} ({kind})\n")
    for key, value in extra.items():
        out.write(f"{key}: {value}\n")
    for batch in batches:
        for line in _batch_lines(batch, with_records):
            out.write(line + "\n")


def dump_file(path: str, fmt: str, with_records: bool, out: TextIO) -> DecodeFailure | None:
    """Print one file; returns what stopped it, if anything did."""
    name = Path(path).name
    if name == files.QUORUM_STATE_FILE or name == files.META_PROPERTIES_FILE:
        state = (files.read_quorum_state(path) if name == files.QUORUM_STATE_FILE
                 else files.read_meta_properties(path))  # fmt: skip
        if isinstance(state, DecodeFailure):
            return state
        content = msgspec.to_builtins(state)
        if fmt == "json":
            out.write(json.dumps({"file": path, "kind": name, "content": content}) + "\n")
        else:
            out.write(f"Dumping {path} ({name})\n{json.dumps(content)}\n")
        return None
    if files.parse_segment_name(name) is not None or name.endswith(".log"):
        segment = files.read_segment_file(path)
        result = segment.result
        _dump_batches(path, "log segment", result.batches, {}, result.error, fmt, with_records,
                      out)  # fmt: skip
        return result.error
    snapshot = files.read_snapshot_file(path)
    snapshot_id = snapshot.snapshot_id
    extra = {"snapshotEndOffset": snapshot_id.end_offset, "snapshotEpoch": snapshot_id.epoch}
    decoded = snapshot.result
    _dump_batches(path, "snapshot", decoded.batches, extra, decoded.error, fmt, with_records, out)
    return decoded.error


def main(argv: list[str] | None = None) -> int:
    """Run ``dump-log``; returns the exit status (0 when every file decoded whole)."""
    args = build_parser().parse_args(argv)
    status = 0
    try:
        for path in args.files:
            failure = dump_file(path, args.format, not args.batches_only, sys.stdout)
            if failure is not None:
                sys.stdout.flush()
                print(f"{PROG}: error: {failure.describe()}", file=sys.stderr)
                status = 1
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do, and
        # point stdout at /dev/null so that the interpreter's final flush stays silent.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
