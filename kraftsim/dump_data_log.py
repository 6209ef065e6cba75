"""``kraftsim dump-log`` for data partitions: segments, transaction markers, ``.txnindex``.

A ``.log`` segment in a ``<topic>-<partition>`` directory (anything but
``__cluster_metadata-0``) is a data partition's. Each batch is printed with
``kafka-dump-log``'s key names (``baseOffset … producerId … producerEpoch …
isTransactional … isControl …``) and each record with ``| offset: …
keySize: … valueSize: … sequence: … headerKeys: […]`` then, for a
transaction marker, ``endTxnMarker: COMMIT coordinatorEpoch: N``; for a
``__transaction_state`` record (or with ``--transaction-log-decoder``) its
key and value as Kafka's transaction log decoder prints them (``key:
{"type":"0","data":{"transactionalId":…}} payload: {"version":"1","data":{…}}``,
``<DELETE>`` for a tombstone); for a ``__consumer_offsets`` record (or with
``--offsets-decoder``) likewise as Kafka's offsets decoder prints it (``key:
{"type":"1","data":{"group":…,"topic":…,"partition":…}} payload:
{"version":"3","data":{"offset":…}}``, group metadata and the KIP-848 records,
:mod:`kafka_format.offsets_log`); a record that does not decode says why in
its own line (``key: Unknown record type N at offset M, skipping.``, ``key:
Error at offset M, skipping. …``, or after its decoded key ``payload: Error at
offset M, skipping. …``) and the dump goes on; otherwise ``payload:`` and the
value as UTF-8.
A ``.txnindex`` prints one ``version: … producerId: … firstOffset: …
lastOffset: … lastStableOffset: …`` line per aborted transaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

import msgspec

from kafka_format import offsets_log
from kafka_format.batch_format import DELETE_HORIZON_FLAG, TIMESTAMP_TYPE_FLAG
from kafka_format.control_records import KRAFT_CONTROL_TYPE_NAMES
from kafka_format.data_log import (
    CONTROL_TYPE_NAMES,
    DataBatch,
    DataRecord,
    decode_marker,
    is_txn_index_name,
    parse_partition_dir_name,
)
from kafka_format.errors import DecodeError, DecodeFailure
from kafka_format.files import (
    BOOTSTRAP_FILE,
    METADATA_PARTITION_DIR,
    parse_segment_name,
    parse_snapshot_name,
    read_data_segment,
    read_txn_index,
)
from kafka_format.transaction_log import KEY_VERSION, decode_key, decode_value, value_json

TRANSACTION_STATE_TOPIC = "__transaction_state"
TRANSACTION_DECODER = "transaction"
OFFSETS_DECODER = "offsets"


def is_data_segment(path: str) -> bool:
    """Whether a ``.log`` file lies in a data partition's directory."""
    parent = Path(path).parent.name
    return parent != METADATA_PARTITION_DIR and not parent.startswith("__cluster_metadata") \
        and parse_partition_dir_name(parent) is not None


def is_transaction_log(path: str) -> bool:
    """Whether a segment belongs to ``__transaction_state``."""
    found = parse_partition_dir_name(Path(path).parent.name)
    return found is not None and found[0] == TRANSACTION_STATE_TOPIC


def is_offsets_log(path: str) -> bool:
    """Whether a segment belongs to ``__consumer_offsets``."""
    found = parse_partition_dir_name(Path(path).parent.name)
    return found is not None and found[0] == offsets_log.OFFSETS_TOPIC


def record_decoder(path: str, txn_log: bool = False, offsets: bool = False) -> str | None:
    """Which records a segment holds: a flag wins (the offsets one first, as in Kafka's
    tool), else the topic of the segment's directory; None for plain records."""
    if offsets:
        return OFFSETS_DECODER
    if txn_log:
        return TRANSACTION_DECODER
    if is_offsets_log(path):
        return OFFSETS_DECODER
    if is_transaction_log(path):
        return TRANSACTION_DECODER
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def batch_facts(batch: DataBatch) -> dict[str, Any]:
    """A batch's facts under kafka-dump-log's key names, in its order."""
    last_delta = batch.last_offset - batch.base_offset
    horizon = batch.attributes & DELETE_HORIZON_FLAG
    return {
        "baseOffset": batch.base_offset, "lastOffset": batch.last_offset,
        "count": len(batch.records), "baseSequence": batch.base_sequence,
        "lastSequence": _sequence(batch, last_delta),
        "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
        "partitionLeaderEpoch": batch.partition_leader_epoch,
        "isTransactional": batch.is_transactional, "isControl": batch.is_control,
        "deleteHorizonMs": f"OptionalLong[{batch.base_timestamp}]" if horizon
        else "OptionalLong.empty", "position": batch.position,
        _timestamp_type(batch): batch.max_timestamp, "size": batch.size, "magic": 2,
        "compresscodec": batch.compression, "crc": batch.crc, "isvalid": True,
    }


def _timestamp_type(batch: DataBatch) -> str:
    """``CreateTime``, or ``LogAppendTime`` when the broker stamped the batch (attribute bit 3)."""
    return "LogAppendTime" if batch.attributes & TIMESTAMP_TYPE_FLAG else "CreateTime"


def _sequence(batch: DataBatch, offset_delta: int) -> int:
    """The sequence at ``offset_delta`` in the batch (-1 without one), wrapping as Kafka's."""
    if batch.base_sequence < 0:
        return -1
    return (batch.base_sequence + offset_delta) % (1 << 31)


def record_facts(batch: DataBatch, index: int, record: DataRecord) -> dict[str, Any]:
    """One record's facts under kafka-dump-log's key names."""
    offset = batch.record_offset(index)
    if batch.attributes & TIMESTAMP_TYPE_FLAG:
        timestamp = batch.max_timestamp
    elif batch.base_timestamp >= 0:
        timestamp = batch.base_timestamp + record.timestamp_delta
    else:
        timestamp = batch.base_timestamp
    return {
        "offset": offset,
        _timestamp_type(batch): timestamp,
        "keySize": -1 if record.key is None else len(record.key),
        "valueSize": -1 if record.value is None else len(record.value),
        "sequence": _sequence(batch, offset - batch.base_offset),
        "headerKeys": [k.decode("utf-8", "replace") for k, _ in record.headers],
    }


KAFKA_CONTROL_TYPES = {**CONTROL_TYPE_NAMES, **KRAFT_CONTROL_TYPE_NAMES}
"""Kafka's ControlRecordType names by id; any other id is Kafka's UNKNOWN."""


def control_type_text(type_id: int) -> str:
    """A control record type as kafka-dump-log names one it does not print the content of:
    Kafka's enum name and the id, e.g. ``LEADER_CHANGE(2)``, ``UNKNOWN(9)``."""
    return f"{KAFKA_CONTROL_TYPES.get(type_id, 'UNKNOWN')}({type_id})"


def control_content(record: DataRecord) -> dict[str, Any]:
    """A control record's words: a transaction marker's type and coordinator epoch, else
    ``controlType`` as :func:`control_type_text` names it (``unknown`` when the key is too
    short to hold a type)."""
    marker = decode_marker(record)
    if marker is not None:
        return {"endTxnMarker": marker.name, "coordinatorEpoch": marker.coordinator_epoch}
    key = record.key
    if key is None or len(key) < 4:
        return {"controlType": "unknown"}
    return {"controlType": control_type_text(int.from_bytes(key[2:4], "big", signed=True))}


def _content(batch: DataBatch, index: int, record: DataRecord,
             decoder: str | None) -> dict[str, Any]:
    """What a record holds: a marker, a transaction log or offsets record, or a payload."""
    if batch.is_control:
        return control_content(record)
    if decoder == OFFSETS_DECODER:
        return _offsets_content(batch.record_offset(index), record)
    if decoder == TRANSACTION_DECODER and record.key is not None:
        offset = batch.record_offset(index)
        version = int.from_bytes(record.key[:2], "big", signed=True)
        if len(record.key) >= 2 and version != KEY_VERSION:
            # trunk's coordinator record parser: the key's version is its record type
            return {"key": f"Unknown record type {version} at offset {offset}, skipping."}
        try:
            key = {"type": "0", "data": {"transactionalId": decode_key(record.key)}}
            payload: Any = "<DELETE>" if record.value is None else {
                "version": str(int.from_bytes(record.value[:2], "big", signed=True)),
                "data": value_json(decode_value(record.value))}
        except DecodeError as exc:
            return {"key": f"Error at offset {offset}, skipping. {exc.message}"}
        return {"key": key, "payload": payload}
    out: dict[str, Any] = {}
    if record.key is not None:
        out["key"] = record.key.decode("utf-8", "replace")
    out["payload"] = None if record.value is None else record.value.decode("utf-8", "replace")
    return out


def _offsets_content(offset: int, record: DataRecord) -> dict[str, Any]:
    """A ``__consumer_offsets`` record as Kafka's offsets decoder prints it; what does not
    decode is named on the record (a key that decodes is printed before its value's error)."""
    skipping = f"Error at offset {offset}, skipping."
    if record.key is None:
        return {"key": f"{skipping} The record has no key."}
    try:
        record_type, key_data = offsets_log.decode_key(record.key)
    except offsets_log.UnknownRecordType as exc:
        return {"key": f"Unknown record type {exc.record_type} at offset {offset}, skipping."}
    except DecodeError as exc:
        return {"key": f"{skipping} Key: {exc.message}"}
    key = {"type": str(record_type), "data": key_data}
    if record.value is None:
        return {"key": key, "payload": "<DELETE>"}
    try:
        version, value_data = offsets_log.decode_value(record_type, record.value)
    except DecodeError as exc:
        return {"key": key, "payload": f"{skipping} Value: {exc.message}"}
    return {"key": key, "payload": {"version": str(version), "data": value_data}}


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def facts_words(facts: dict[str, Any]) -> list[str]:
    """``key: value`` words of a batch's or a record's facts, as kafka-dump-log prints them."""
    return [f"{k}: {'[' + ','.join(v) + ']' if isinstance(v, list) else _text(v)}"
            for k, v in facts.items()]


def record_line(metadata: list[str], control: list[str] | None, key: str | None,
                payload: str | None, skip_metadata: bool) -> str:
    """One record's line as kafka-dump-log prints it.

    ``| `` and the record's ``metadata`` words (with a control record's
    ``control`` words after them), unless ``skip_metadata``; then, for a record
    that is not a control record (``control`` None), ``key: …`` and ``payload:
    …`` when it has them. Kafka's own spacing is kept: with ``skip_metadata`` a
    record without a key prints `` payload: …`` alone and a control record an
    empty line.
    """
    line, prefix = "", "| "
    if not skip_metadata:
        line, prefix = prefix + " ".join(metadata + (control or [])), " "
    if control is None:
        if key is not None:
            line += f"{prefix}key: {key}"
        if payload is not None:
            line += f" payload: {payload}"
    return line


def _lines(batch: DataBatch, with_records: bool, skip_metadata: bool,
           decoder: str | None) -> list[str]:
    lines = [" ".join(facts_words(batch_facts(batch)))]
    if not with_records:
        return lines
    for index, record in enumerate(batch.records):
        content = _content(batch, index, record, decoder)
        control = [f"{k}: {_compact(v)}" for k, v in content.items()] if batch.is_control \
            else None
        key, payload = content.get("key"), content.get("payload")
        lines.append(record_line(facts_words(record_facts(batch, index, record)), control,
                                 None if key is None else _compact(key),
                                 None if payload is None else _compact(payload), skip_metadata))
    return lines


def dump_data_segment(path: str, fmt: str, with_records: bool, out: TextIO,
                      skip_record_metadata: bool = False, txn_log: bool = False,
                      offsets: bool = False, max_bytes: int | None = None
                      ) -> DecodeFailure | None:
    """Print a data partition segment; returns what stopped it, if anything did.

    ``txn_log`` and ``offsets`` decode its records as ``__transaction_state`` or
    ``__consumer_offsets`` records, which its directory's name also selects;
    ``max_bytes`` limits it to the whole batches within its first bytes.
    """
    result = read_data_segment(path, max_bytes)
    decoder = record_decoder(path, txn_log, offsets)
    if fmt == "json":
        batches = []
        for batch in result.batches:
            item: dict[str, Any] = batch_facts(batch)
            if with_records:
                item["records"] = [{**record_facts(batch, i, r), **_content(batch, i, r, decoder)}
                                   for i, r in enumerate(batch.records)]
            batches.append(item)
        error = None if result.error is None else msgspec.to_builtins(result.error)
        out.write(json.dumps({"file": path, "kind": "data log segment", "batches": batches,
                              "error": error}, ensure_ascii=False) + "\n")
        return result.error
    if result.error is not None and result.error.kind == "unreadable":
        return result.error
    out.write(f"Dumping {path} (data log segment)\n")
    out.writelines(line + "\n" for line in start_lines(path))
    for batch in result.batches:
        for line in _lines(batch, with_records, skip_record_metadata, decoder):
            out.write(line + "\n")
    out.writelines(line + "\n" for line in invalid_bytes_lines(path, result.error))
    return result.error


def start_lines(path: str) -> list[str]:
    """What kafka-dump-log prints before a file's batches: a segment's base offset
    (``Log starting offset: N``), a snapshot's id (``Snapshot end offset: N, epoch:
    E``), or that it is the bootstrap snapshot; nothing for a name it does not parse."""
    name = Path(path).name
    if name == BOOTSTRAP_FILE:
        return ["KRaft bootstrap snapshot"]
    snapshot_id = parse_snapshot_name(name)
    if snapshot_id is not None:
        return [f"Snapshot end offset: {snapshot_id.end_offset}, epoch: {snapshot_id.epoch}"]
    base_offset = parse_segment_name(name)
    return [] if base_offset is None else [f"Log starting offset: {base_offset}"]


def invalid_bytes_lines(path: str, error: DecodeFailure | None) -> list[str]:
    """kafka-dump-log's line after a file whose last batch is cut: ``Found N invalid bytes
    at the end of NAME`` (the error itself goes to stderr)."""
    if error is None or error.kind != "truncated" or error.batch_position is None:
        return []
    try:
        size = Path(path).stat().st_size
    except OSError:
        return []
    trailing = size - error.batch_position
    return [f"Found {trailing} invalid bytes at the end of {Path(path).name}"] \
        if trailing > 0 else []


def dump_txn_index(path: str, fmt: str, out: TextIO) -> DecodeFailure | None:
    """Print a ``.txnindex``: one line per aborted transaction."""
    result = read_txn_index(path)
    if fmt == "json":
        entries = [{"version": e.version, "producerId": e.producer_id,
                    "firstOffset": e.first_offset, "lastOffset": e.last_offset,
                    "lastStableOffset": e.last_stable_offset} for e in result.entries]
        error = None if result.error is None else msgspec.to_builtins(result.error)
        out.write(json.dumps({"file": path, "kind": "transaction index",
                              "abortedTransactions": entries, "error": error}) + "\n")
        return result.error
    if result.error is not None and result.error.kind == "unreadable":
        return result.error
    out.write(f"Dumping {path} (transaction index)\n")
    for e in result.entries:
        out.write(f"version: {e.version} producerId: {e.producer_id} firstOffset: "
                  f"{e.first_offset} lastOffset: {e.last_offset} lastStableOffset: "
                  f"{e.last_stable_offset}\n")
    return result.error


__all__ = ["dump_data_segment", "dump_txn_index", "is_data_segment", "is_txn_index_name"]
