"""``kraftsim dump-log`` for the files beside a partition's segments.

- ``.index``: ``offset: N position: P`` per entry, as ``kafka-dump-log``
  prints it (``<file> is empty.`` for none); every entry is checked against
  the segment beside it: the batch at that position must end at that offset
  (``Mismatches in :<file>`` then ``  Index offset: N, log offset: M`` on
  stderr, as Kafka reports them);
- ``.timeindex``: ``timestamp: T offset: O`` per entry, checked against the
  segment: the batch ending at that offset must hold that largest timestamp,
  and timestamps must grow (Kafka's three reports on stderr);
- ``.snapshot`` (producer state): ``producerId: … producerEpoch: …
  coordinatorEpoch: … currentTxnFirstOffset: … lastTimestamp: …`` then the
  last batch's ``firstSequence: … lastSequence: … lastOffset: … offsetDelta:
  … timestamp: …`` per producer, as Kafka prints them;
- ``leader-epoch-checkpoint``, the offset checkpoints and
  ``partition.metadata`` (which ``kafka-dump-log`` does not read): their
  version and one line per entry, each file read by the rules of Kafka's
  reader; a ``leader-epoch-checkpoint`` entry with a negative epoch or start
  offset fails too (a broker's leader-epoch cache refuses it).

A file that fails a check makes ``dump-log`` exit 1, as a damaged segment does.
"""

from __future__ import annotations

import bisect
import json
from pathlib import Path
from typing import Any, TextIO

import msgspec

from kafka_format.batch_format import HEADER, LENGTH_PREFIX
from kafka_format.checkpoints import PARTITION_METADATA, EpochEntry
from kafka_format.errors import DecodeFailure
from kafka_format.files import (
    read_checkpoint,
    read_index,
    read_partition_metadata,
    read_producer_snapshot,
)
from kafka_format.log_indexes import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    TimeIndexEntry,
)


def _segment_batches(index_path: Path) -> dict[int, tuple[int, int]] | None:
    """The batches of the segment beside an index: position -> (last offset, max timestamp);
    None when there is no segment to check against."""
    segment = index_path.with_name(index_path.name.rsplit(".", 1)[0] + ".log")
    try:
        data = segment.read_bytes()
    except OSError:
        return None
    batches: dict[int, tuple[int, int]] = {}
    position = 0
    while position + HEADER.size <= len(data):
        base, length, _, _, _, _, last_delta, _, max_timestamp, *_ = \
            HEADER.unpack_from(data, position)
        batches[position] = (base + last_delta, max_timestamp)
        if length < HEADER.size - LENGTH_PREFIX:
            break
        position += LENGTH_PREFIX + length
    return batches


def _offset_index_problems(path: Path, entries: tuple[OffsetIndexEntry, ...]) -> list[str]:
    batches = _segment_batches(path)
    if batches is None:
        return []
    mismatches = [(e.offset, batches.get(e.position, (-1, 0))[0]) for e in entries
                  if batches.get(e.position, (-1, 0))[0] != e.offset]
    if not mismatches:
        return []
    return [f"Mismatches in :{path.absolute()}",
            *(f"  Index offset: {index}, log offset: {log}" for index, log in mismatches)]


def _time_index_problems(path: Path, entries: tuple[TimeIndexEntry, ...]) -> list[str]:
    batches = _segment_batches(path)
    if batches is None:
        return []
    by_last = {last: timestamp for last, timestamp in batches.values()}
    lasts = sorted(by_last)
    mismatched, disordered, missing = [], [], []
    previous = -1
    for entry in entries:
        timestamp = by_last.get(entry.offset)
        if timestamp is None:  # the first batch that ends after it, as Kafka's tool finds
            following = bisect.bisect_left(lasts, entry.offset)
            missing.append((entry.offset, lasts[following] if following < len(lasts) else -1))
        elif timestamp != entry.timestamp:
            mismatched.append((entry.timestamp, timestamp))
        if timestamp is not None and previous >= entry.timestamp:
            disordered.append((entry.timestamp, previous))
        previous = entry.timestamp
    where = path.absolute()
    lines = []
    if mismatched:
        lines += [f"Found timestamp mismatch in :{where}",
                  *(f"  Index timestamp: {i}, log timestamp: {t}" for i, t in mismatched)]
    if disordered:
        lines += [f"Found out of order timestamp in :{where}",
                  *(f"  Index timestamp: {i}, Previously indexed timestamp: {p}"
                    for i, p in disordered)]
    if missing:
        lines += ["The following indexed offsets are not found in the log.",
                  *(f"Indexed offset: {i}, found log offset: {f}" for i, f in missing)]
    return lines


def _producer_line(entry: ProducerSnapshotEntry) -> str:
    txn = (f"OptionalLong[{entry.current_txn_first_offset}]"
           if entry.current_txn_first_offset >= 0 else "OptionalLong.empty")
    line = (f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
            f"coordinatorEpoch: {entry.coordinator_epoch} currentTxnFirstOffset: {txn} "
            f"lastTimestamp: {entry.timestamp} ")
    if entry.has_batch:
        line += (f"firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
                 f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} "
                 f"timestamp: {entry.timestamp}")
    return line


def _producer_json(entry: ProducerSnapshotEntry) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "producerId": entry.producer_id, "producerEpoch": entry.producer_epoch,
        "coordinatorEpoch": entry.coordinator_epoch,
        "currentTxnFirstOffset": (entry.current_txn_first_offset
                                  if entry.current_txn_first_offset >= 0 else None),
        "lastTimestamp": entry.timestamp}
    if entry.has_batch:
        facts |= {"firstSequence": entry.first_sequence, "lastSequence": entry.last_sequence,
                  "lastOffset": entry.last_offset, "offsetDelta": entry.offset_delta,
                  "timestamp": entry.timestamp}
    return facts


def _read(path: Path, kind: str) -> tuple[list[str], list[dict[str, Any]], dict[str, Any],
                                          DecodeFailure | None, list[str]]:
    """(text lines, JSON entries, JSON extras, failure, problems) of one side file."""
    if kind in ("offset index", "time index"):
        result = read_index(path, time_index=kind == "time index")
        entries = result.entries
        if not entries and result.error is None:
            return [f"{path} is empty."], [], {}, None, []
        if kind == "offset index":
            lines = [f"offset: {e.offset} position: {e.position}"
                     for e in entries if isinstance(e, OffsetIndexEntry)]
            problems = _offset_index_problems(path, entries)  # type: ignore[arg-type]
        else:
            lines = [f"timestamp: {e.timestamp} offset: {e.offset}"
                     for e in entries if isinstance(e, TimeIndexEntry)]
            problems = _time_index_problems(path, entries)  # type: ignore[arg-type]
        return lines, [msgspec.to_builtins(e) for e in entries], {}, result.error, problems
    if kind == "producer snapshot":
        snapshot = read_producer_snapshot(path)
        return ([_producer_line(e) for e in snapshot.entries],
                [_producer_json(e) for e in snapshot.entries], {}, snapshot.error, [])
    if kind == PARTITION_METADATA:
        metadata = read_partition_metadata(path)
        if isinstance(metadata, DecodeFailure):
            return [], [], {}, metadata, []
        return ([f"version: {metadata.version}", f"topic_id: {metadata.topic_id}"], [],
                {"version": metadata.version, "topicId": metadata.topic_id}, None, [])
    checkpoint = read_checkpoint(path, kind)
    lines = [] if checkpoint.version is None else [f"version: {checkpoint.version}"]
    lines += [f"epoch: {e.epoch} startOffset: {e.start_offset}" if isinstance(e, EpochEntry)
              else f"topic: {e.topic} partition: {e.partition} offset: {e.offset}"
              for e in checkpoint.entries]
    return (lines, [msgspec.to_builtins(e) for e in checkpoint.entries],
            {"version": checkpoint.version}, checkpoint.error, [])


def _sanity_failure(path: Path, kind: str) -> DecodeFailure | None:
    """The check a broker runs on an index at start-up (Kafka's ``sanityCheck``): whole
    entries, the last entry's offset not below the base offset and, for a time index, its
    timestamp not below the first; the entries are the file's, zeros included."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return DecodeFailure(str(path), "unreadable", str(exc), 0)
    entry = TIME_ENTRY if kind == "time index" else OFFSET_ENTRY
    if len(data) % entry.size:
        return DecodeFailure(str(path), "corrupt", f"{len(data)} bytes is not a whole number "
                             f"of {entry.size}-byte entries", len(data) - len(data) % entry.size)
    if not data:
        return None
    last = entry.unpack_from(data, len(data) - entry.size)
    relative = last[-1] if kind == "time index" else last[0]
    if relative < 0:
        return DecodeFailure(str(path), "corrupt", f"the last entry's offset is {relative} "
                             f"below the base offset", len(data) - entry.size)
    if kind == "time index" and last[0] < entry.unpack_from(data)[0]:
        return DecodeFailure(str(path), "corrupt", f"the last timestamp {last[0]} is below "
                             f"the first {entry.unpack_from(data)[0]}", len(data) - entry.size)
    return None


def dump_side_file(path: str, kind: str, fmt: str, out: TextIO, err: TextIO,
                   index_mode: str = "print") -> DecodeFailure | None:
    """Print one side file of ``kind`` (:func:`kafka_format.files.side_file_kind`); returns
    what stopped it.

    A check that fails (an index entry the segment does not match) is printed on
    ``err`` and returned as a ``corrupt`` failure. An index prints its entries
    (``index_mode`` "print"), only what its checks find ("verify", Kafka's
    ``--verify-index-only``) or only the start-up check ("sanity",
    ``--index-sanity-check``).
    """
    if index_mode == "sanity" and kind in ("offset index", "time index"):
        failure = _sanity_failure(Path(path), kind)
        if fmt == "json":
            out.write(json.dumps({"file": path, "kind": kind, "sanityCheck": failure is None,
                                  "error": None if failure is None
                                  else msgspec.to_builtins(failure)}) + "\n")
        elif failure is None or failure.kind != "unreadable":
            out.write(f"Dumping {path} ({kind})\n")
            if failure is None:
                out.write(f"{path} passed sanity check.\n")
        return failure
    lines, entries, extras, failure, problems = _read(Path(path), kind)
    if index_mode == "verify" and kind in ("offset index", "time index"):
        lines = [line for line in lines if line.endswith(" is empty.")]
    if problems and failure is None:
        failure = DecodeFailure(path, "corrupt", "its entries do not match the segment beside "
                                "it (listed above)", 0)
    if fmt == "json":
        document = {"file": path, "kind": kind, **extras, "entries": entries,
                    "problems": problems,
                    "error": None if failure is None else msgspec.to_builtins(failure)}
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        return failure
    if failure is not None and failure.kind == "unreadable":
        return failure
    out.write(f"Dumping {path} ({kind})\n")
    for line in lines:
        out.write(line + "\n")
    if problems:
        out.flush()
        err.write("".join(line + "\n" for line in problems))
    return failure
