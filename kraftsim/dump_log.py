"""``kraftsim dump-log``: print Kafka KRaft metadata files, like ``kafka-dump-log``.

Reads ``.log`` segments, ``.checkpoint`` snapshots (and ``bootstrap.checkpoint``),
``quorum-state`` and ``meta.properties``, as written by Kafka or by kraftsim,
data partitions' segments and ``.txnindex`` files (:mod:`kraftsim.dump_data_log`;
``__transaction_state`` and ``__consumer_offsets`` records decoded as Kafka's
``--transaction-log-decoder`` and ``--offsets-decoder`` print them, by their
directory's name or by those flags),
and the indexes, producer snapshots and checkpoints beside any segment
(:mod:`kraftsim.dump_side_files`); it ignores other files, as Kafka does. It
prints each batch and each record with ``kafka-dump-log``'s key names
(``baseOffset: … partitionLeaderEpoch: … isControl: … position: … CreateTime:
… size: … magic: 2 compresscodec: … crc: … isvalid: true``, then
``| offset: … CreateTime: … keySize: … valueSize: … sequence: … headerKeys: []
payload: {"type":…,"version":…,"data":{…}}``, or the control record's JSON).
Before the batches, as Kafka's tool: ``Log starting offset: N`` for a segment,
``Snapshot end offset: N, epoch: E`` for a snapshot, ``KRaft bootstrap
snapshot`` for ``bootstrap.checkpoint``.
Kafka's flags are accepted: ``--files F1,F2`` (besides positional files), and
``--cluster-metadata-decoder``, ``--print-data-log``, ``--deep-iteration``
and ``--skip-record-metadata``, which kraftsim needs not (it always decodes
the metadata records) and ignores, apart from the last. A damaged or missing
file prints what could be read, then one line on stderr naming the file, the
batch, its base offset and the byte position; the exit status is then 1. As in
Kafka's tool, a metadata record that does not decode in a batch whose frame and
CRC are whole prints ``payload: Error at N, skipping. …`` and the dump goes on
(so does a batch whose epoch breaks the log's rules), and a cut last batch adds
``Found N invalid bytes at the end of FILE``. Run as ``python -m kraftsim.dump_log``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import msgspec

from kafka_format import files
from kafka_format.batch_format import DecodedBatch, RecordFacts
from kafka_format.control_records import (
    UnknownControlRecord,
    control_record_json,
    control_record_name,
    decode_control_record,
    encode_control_key,
    encode_control_value,
)
from kafka_format.data_log import DataBatch, DataRecord, decode_data_log
from kafka_format.errors import DecodeError, DecodeFailure
from kafka_format.log_codec import decode_log
from kafka_format.metadata_serde import decode_metadata_record, write_metadata_value
from kafka_format.record_json import metadata_record_json
from kraftsim.dump_data_log import (
    batch_facts,
    control_content,
    dump_data_segment,
    dump_txn_index,
    facts_words,
    invalid_bytes_lines,
    is_data_segment,
    is_txn_index_name,
    record_facts,
    record_line,
    start_lines,
)
from kraftsim.dump_side_files import dump_side_file
from metadata.schema import ClientQuotaRecord, MetadataRecord, record_to_json
from shell.security_tree import java_double_text

PROG = "kraftsim dump-log"
STRING_DECODERS = ("org.apache.kafka.tools.api.StringDecoder", "kafka.serializer.StringDecoder")
"""The decoder classes kafka-dump-log takes that print UTF-8, as kraftsim always does."""
DELETE_HORIZON_FLAG = 0x40
"""The batch attribute bit saying that the base timestamp is a delete horizon."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return value


def _starts_with_text(path: str) -> bool:
    """Whether a file's first bytes are printable text (no record batch starts so: its base
    offset's high bytes are zeros)."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
    except OSError:
        return False
    return len(head) >= 8 and all(32 <= b < 127 or b in (9, 10, 13) for b in head)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``dump-log``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Print the batches and records of Kafka KRaft metadata files: log segments "
            "(NNNN.log), snapshots (NNNN-NNNN.checkpoint, bootstrap.checkpoint), "
            "quorum-state and meta.properties; and of data partitions (NNNN.log in a "
            "TOPIC-PARTITION directory: transactional batches, COMMIT/ABORT markers, "
            "__transaction_state and __consumer_offsets records) and their abort index "
            "(NNNN.txnindex); and "
            "the files beside any partition's segments: offset and time indexes "
            "(NNNN.index, NNNN.timeindex, checked against the segment), producer state "
            "snapshots (NNNN.snapshot), leader-epoch-checkpoint, the offset checkpoints "
            "and partition.metadata. Other files are ignored, with a line on stderr. "
            "Exits 1 if any file is missing or damaged."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="FILE", help="the files to print")
    parser.add_argument("--files", action="append", default=[], metavar="F1[,F2...]",
                        help="the files to print, comma-separated (kafka-dump-log's flag)")
    parser.add_argument("--cluster-metadata-decoder", action="store_true",
                        help="decode every .log as a metadata log segment (by default a "
                             "segment in a TOPIC-PARTITION directory other than "
                             "__cluster_metadata-0 is read as a data partition's)")
    parser.add_argument("--transaction-log-decoder", action="store_true",
                        help="decode records as __transaction_state records (the default "
                             "for a segment in a __transaction_state-N directory)")
    parser.add_argument("--offsets-decoder", action="store_true",
                        help="decode records as __consumer_offsets records: committed "
                             "offsets, group metadata and the consumer and share group "
                             "records of KIP-848 and KIP-932 (the default for a segment in "
                             "a __consumer_offsets-N directory; wins over "
                             "--transaction-log-decoder, as in kafka-dump-log)")
    for flag, what in (("--print-data-log", "prints the records"),
                       ("--deep-iteration", "reads every record")):
        parser.add_argument(flag, action="store_true",
                            help=f"accepted for kafka-dump-log's sake: kraftsim always {what}")
    index_modes = parser.add_mutually_exclusive_group()
    index_modes.add_argument("--verify-index-only", action="store_true",
                             help="check .index and .timeindex files against their segment "
                                  "without printing their entries")
    index_modes.add_argument("--index-sanity-check", action="store_true",
                             help="only run the check a broker runs on start-up on .index and "
                                  ".timeindex files (whole entries, offsets from the base on, "
                                  "a last timestamp not below the first): prints FILE passed "
                                  "sanity check.")
    parser.add_argument("--max-bytes", type=_positive, metavar="SIZE",
                        help="read only the whole batches within each segment's first SIZE "
                             "bytes (not the whole .log file)")
    parser.add_argument("--max-message-size", type=int, metavar="SIZE",
                        help="accepted for kafka-dump-log's sake: kraftsim reads whole batches")
    for flag in ("--key-decoder-class", "--value-decoder-class"):
        parser.add_argument(flag, nargs="?", const=STRING_DECODERS[0], metavar="CLASS",
                            help="only Kafka's StringDecoder (the default: UTF-8) is known")
    parser.add_argument("--skip-record-metadata", action="store_true",
                        help="print each record's key and payload without its offset, time, "
                             "sizes and headers, and control records as empty lines (as "
                             "kafka-dump-log)")
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
    """A record as ``{"type", "version", "data"}``, the data as Kafka's generated JSON
    converters write it at ``version`` (an unknown type's value as hex)."""
    if isinstance(record, MetadataRecord):
        out = record_to_json(record)
        return {"type": out["type"], "version": version,
                "data": metadata_record_json(record, version)}
    if isinstance(record, UnknownControlRecord):
        return {"type": control_record_name(record), "version": version,
                "data": {"value": record.value.hex()}}  # fmt: skip
    return {"type": control_record_name(record), "version": version,
            "data": control_record_json(record)}  # fmt: skip


def _sizes(record: Any, facts: RecordFacts, control: bool) -> tuple[int, int]:
    """keySize and valueSize of a record as stored (-1: no key)."""
    key = facts.key
    if key is None and control:
        key = encode_control_key(record, facts.version)
    value = facts.raw_value
    if value is None:
        if control:
            value = encode_control_value(record, facts.unknown_tagged_fields)
        else:
            out = bytearray()
            write_metadata_value(out, record, facts.version, facts.unknown_tagged_fields)
            value = bytes(out)
    return (-1 if key is None else len(key)), len(value)


def _batch_facts(decoded: DecodedBatch) -> dict[str, Any]:
    """A batch's facts under kafka-dump-log's key names, in its order."""
    batch = decoded.batch
    count = len(decoded.facts)
    base_sequence = decoded.base_sequence
    horizon = decoded.attributes & DELETE_HORIZON_FLAG
    return {
        "baseOffset": batch.base_offset,
        "lastOffset": decoded.last_offset,
        "count": count,
        "baseSequence": base_sequence,
        "lastSequence": -1 if base_sequence < 0 else (base_sequence + count - 1) % (1 << 31),
        "producerId": decoded.producer_id,
        "producerEpoch": decoded.producer_epoch,
        "partitionLeaderEpoch": batch.epoch,
        "isTransactional": decoded.header.is_transactional,
        "isControl": decoded.is_control,
        "deleteHorizonMs": f"OptionalLong[{decoded.base_timestamp}]" if horizon
        else "OptionalLong.empty",
        "position": decoded.position,
        "CreateTime": batch.append_time_ms,
        "size": decoded.size,
        "magic": 2,
        "compresscodec": decoded.header.compression,
        "crc": decoded.crc,
        "isvalid": True,
    }


def _record_facts(decoded: DecodedBatch, index: int, record: Any,
                  facts: RecordFacts) -> dict[str, Any]:
    """One record's facts under kafka-dump-log's key names."""
    key_size, value_size = _sizes(record, facts, decoded.is_control)
    sequence = decoded.base_sequence
    return {
        "offset": decoded.batch.base_offset + index,
        "CreateTime": decoded.base_timestamp + facts.timestamp_delta,
        "keySize": key_size,
        "valueSize": value_size,
        "sequence": -1 if sequence < 0 else sequence + index,
        "headerKeys": [key.decode("utf-8", "replace") for key, _ in facts.headers],
    }


def batch_json(decoded: DecodedBatch, with_records: bool) -> dict[str, Any]:
    """A batch's facts (kafka-dump-log's names), and its records unless ``with_records``
    is false."""
    out = _batch_facts(decoded)
    if with_records:
        pairs = zip(decoded.records, decoded.facts, strict=True)
        out["records"] = [
            {**_record_facts(decoded, index, record, facts), **record_json(record, facts.version)}
            for index, (record, facts) in enumerate(pairs)
        ]
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ",".join(value) + "]"
    return str(value)


_CONTROL_LABELS = {"LeaderChange": "LeaderChange:", "SnapshotHeader": "SnapshotHeader",
                   "SnapshotFooter": "SnapshotFooter", "KRaftVersion": "KRaftVersion",
                   "KRaftVoters": "KRaftVoters"}


def _batch_lines(decoded: DecodedBatch, with_records: bool,
                 skip_record_metadata: bool = False) -> Iterator[str]:
    yield " ".join(f"{key}: {_text(value)}" for key, value in _batch_facts(decoded).items())
    if not with_records:
        return
    for index, (record, facts) in enumerate(zip(decoded.records, decoded.facts, strict=True)):
        metadata = facts_words(_record_facts(decoded, index, record, facts))
        control, key, payload = _shown(record, facts.version, decoded.is_control)
        yield record_line(metadata, control, key, payload, skip_record_metadata)


def _shown(record: Any, version: int, control: bool
           ) -> tuple[list[str] | None, str | None, str | None]:
    """A decoded record's (control words, key, payload) for :func:`record_line`: a control
    record's JSON after its label, a metadata record's JSON as its payload."""
    if isinstance(record, UnknownControlRecord):  # markers, or a type kraftsim does not know
        key = encode_control_key(record, version)
        return facts_words(control_content(DataRecord(key, record.value))), None, None
    shown = record_json(record, version)
    if control:  # as kafka-dump-log: its label, then Kafka's JSON of the record
        data = json.dumps(shown["data"], separators=(",", ":"), ensure_ascii=False)
        return [f"{_CONTROL_LABELS[shown['type']]} {data}"], None, None
    payload = json.dumps(shown, separators=(",", ":"), ensure_ascii=False)
    if isinstance(record, ClientQuotaRecord):  # its value as Java prints a double
        payload = payload.replace(f'"value":{json.dumps(record.value)}',
                                  f'"value":{java_double_text(record.value)}', 1)
    return None, None, payload


class _Undecoded(NamedTuple):
    """A batch whose frame is whole but some of whose records are not what a metadata log
    holds; kafka-dump-log prints it, each such record with ``Error at N, skipping.``"""

    batch: DataBatch
    records: tuple[tuple[Any, int] | str, ...]  # (record, version), or the error's text


def _undecoded(batch: DataBatch) -> _Undecoded:
    """Decode ``batch``'s records one by one, as metadata or control records."""
    records: list[tuple[Any, int] | str] = []
    for index, raw in enumerate(batch.records):
        value = raw.value or b""
        try:
            if batch.is_control:
                key = raw.key or b""
                control = decode_control_record(key + value, 0, len(key), len(key),
                                                len(key) + len(value))
                records.append((control.record, int.from_bytes(value[:2], "big", signed=True)))
            else:
                decoded = decode_metadata_record(value)
                records.append((decoded.record, decoded.version))
        except DecodeError as exc:
            records.append(f"Error at {batch.record_offset(index)}, skipping. {exc.message}")
    return _Undecoded(batch, tuple(records))


def _undecoded_lines(item: _Undecoded, with_records: bool,
                     skip_record_metadata: bool) -> Iterator[str]:
    batch = item.batch
    yield " ".join(facts_words(batch_facts(batch)))
    if not with_records:
        return
    for index, (raw, shown) in enumerate(zip(batch.records, item.records, strict=True)):
        metadata = facts_words(record_facts(batch, index, raw))
        control, key, payload = _shown(*shown, batch.is_control) \
            if not isinstance(shown, str) else \
            ([shown], None, None) if batch.is_control else (None, None, shown)
        yield record_line(metadata, control, key, payload, skip_record_metadata)


def _undecoded_json(item: _Undecoded, with_records: bool) -> dict[str, Any]:
    batch = item.batch
    out = batch_facts(batch)
    if with_records:
        out["records"] = [
            {**record_facts(batch, index, raw),
             **({"error": shown} if isinstance(shown, str) else record_json(*shown))}
            for index, (raw, shown) in enumerate(zip(batch.records, item.records, strict=True))]
    return out


Printable = DecodedBatch | _Undecoded


def _past_record_errors(path: str, batches: tuple[DecodedBatch, ...],
                        error: DecodeFailure | None, *, log: bool, snapshot_epoch: int | None,
                        max_bytes: int | None) -> tuple[list[Printable], list[DecodeFailure]]:
    """The batches of a metadata file, read on past the problems kafka-dump-log reads
    past: a batch whose frame and CRC are whole but whose records do not all decode, or
    whose epoch breaks the log's rules (Kafka's tool checks no epoch). Such a batch is
    printed record by record and the reading goes on after it; every problem is
    returned, the first one first. Anything else (a cut or damaged frame) stops there."""
    items: list[Printable] = list(batches)
    failures: list[DecodeFailure] = []
    data: bytes | None = None
    while error is not None:
        failures.append(error)
        start = error.batch_position
        if error.kind != "corrupt" or start is None:
            break
        if data is None:
            try:
                with open(path, "rb") as file:
                    data = file.read(max_bytes if max_bytes is not None else -1)
            except OSError:
                break
        if len(data) < start + 12:
            break
        end = start + 12 + int.from_bytes(data[start + 8:start + 12], "big", signed=True)
        raw = decode_data_log(data[start:end])
        if raw.error is not None or len(raw.batches) != 1:
            break
        batch = msgspec.structs.replace(raw.batches[0], position=start)
        items.append(_undecoded(batch))
        result = decode_log(data, source=path, start=end, first_offset=batch.last_offset + 1,
                            leader_epochs=log,
                            previous_epoch=batch.partition_leader_epoch if log else None,
                            snapshot_epoch=snapshot_epoch)
        before = len(items)
        items.extend(result.batches)
        error = result.error
        if error is not None and error.batch_index is not None:  # counted from the restart
            error = msgspec.structs.replace(error, batch_index=before + error.batch_index)
        if error is not None and error.kind == "truncated" and max_bytes is not None:
            error = None  # the cut, not damage
    return items, failures


def _dump_batches(
    path: str, kind: str, batches: list[Printable], extra: dict[str, Any],
    failures: list[DecodeFailure], fmt: str, with_records: bool, out: TextIO,
    skip_record_metadata: bool = False,
) -> None:
    error = failures[0] if failures else None
    if fmt == "json":
        document = {"file": path, "kind": kind, **extra,
                    "batches": [_undecoded_json(batch, with_records)
                                if isinstance(batch, _Undecoded)
                                else batch_json(batch, with_records) for batch in batches],
                    "error": None if error is None else msgspec.to_builtins(error)}  # fmt: skip
        if len(failures) > 1:
            document["errors"] = [msgspec.to_builtins(f) for f in failures]
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        return
    if error is not None and error.kind == "unreadable":
        return
    out.write(f"Dumping {path} ({kind})\n")
    out.writelines(line + "\n" for line in start_lines(path))
    for batch in batches:
        lines = _undecoded_lines(batch, with_records, skip_record_metadata) \
            if isinstance(batch, _Undecoded) \
            else _batch_lines(batch, with_records, skip_record_metadata)
        for line in lines:
            out.write(line + "\n")
    out.writelines(line + "\n" for line in invalid_bytes_lines(path, failures[-1] if failures
                                                                 else None))


def dump_file(path: str, fmt: str, with_records: bool, out: TextIO,
              skip_record_metadata: bool = False, *, metadata_only: bool = False,
              txn_log: bool = False, offsets: bool = False,
              index_mode: str = "print", max_bytes: int | None = None) -> DecodeFailure | None:
    """Print one file; returns the first problem found in it, if any (see
    :func:`dump_file_failures`)."""
    failures = dump_file_failures(path, fmt, with_records, out, skip_record_metadata,
                                  metadata_only=metadata_only, txn_log=txn_log,
                                  offsets=offsets, index_mode=index_mode, max_bytes=max_bytes)
    return failures[0] if failures else None


def dump_file_failures(path: str, fmt: str, with_records: bool, out: TextIO,
                       skip_record_metadata: bool = False, *, metadata_only: bool = False,
                       txn_log: bool = False, offsets: bool = False, index_mode: str = "print",
                       max_bytes: int | None = None) -> list[DecodeFailure]:
    """Print one file; returns every problem found in it, in file order (most files stop
    at their first; a metadata file reads on past a record that does not decode).

    A ``.log`` in a ``<topic>-<partition>`` directory is a data partition's
    segment (unless ``metadata_only``); ``txn_log`` decodes every segment's
    records as ``__transaction_state`` records, ``offsets`` as
    ``__consumer_offsets`` records. ``index_mode`` is how an index prints
    (:func:`kraftsim.dump_side_files.dump_side_file`); ``max_bytes`` limits a segment to
    the whole batches within its first bytes.
    """
    name = Path(path).name
    if name == files.QUORUM_STATE_FILE or name == files.META_PROPERTIES_FILE:
        state = (files.read_quorum_state(path) if name == files.QUORUM_STATE_FILE
                 else files.read_meta_properties(path))  # fmt: skip
        if isinstance(state, DecodeFailure):
            return [state]
        content = msgspec.to_builtins(state)
        if fmt == "json":
            out.write(json.dumps({"file": path, "kind": name, "content": content}) + "\n")
        else:
            out.write(f"Dumping {path} ({name})\n{json.dumps(content)}\n")
        return []
    if is_txn_index_name(name):
        return _listed(dump_txn_index(path, fmt, out))
    if (files.parse_segment_name(name) is not None or name.endswith(".log")) and \
            not metadata_only and (txn_log or offsets or is_data_segment(path)):
        return _listed(dump_data_segment(path, fmt, with_records, out, skip_record_metadata,
                                         txn_log, offsets, max_bytes))
    side_kind = files.side_file_kind(name)
    if side_kind is not None:
        return _listed(dump_side_file(path, side_kind, fmt, out, sys.stderr, index_mode))
    if files.parse_segment_name(name) is not None or name.endswith(".log"):
        segment = files.read_segment_file(path, max_bytes=max_bytes)
        result = segment.result
        items, failures = _past_record_errors(path, result.batches, result.error, log=True,
                                              snapshot_epoch=None, max_bytes=max_bytes)
        _dump_batches(path, "log segment", items, {}, failures, fmt, with_records, out,
                      skip_record_metadata)
        return failures
    if not name.endswith(".checkpoint") and Path(path).is_file():
        print(f"{PROG}: ignoring {path}: not a file kafka-dump-log reads (a segment, a "
              f".checkpoint snapshot, an index, a producer snapshot, a checkpoint)",
              file=sys.stderr)
        return []
    snapshot = files.read_snapshot_file(path)
    snapshot_id = snapshot.snapshot_id
    extra = {"snapshotEndOffset": snapshot_id.end_offset, "snapshotEpoch": snapshot_id.epoch}
    decoded = snapshot.result
    epoch = decoded.batches[0].batch.epoch if decoded.batches else snapshot_id.epoch
    items, failures = _past_record_errors(path, decoded.batches, decoded.error, log=False,
                                          snapshot_epoch=epoch, max_bytes=None)
    _dump_batches(path, "snapshot", items, extra, failures, fmt, with_records, out,
                  skip_record_metadata)
    return failures


def _listed(failure: DecodeFailure | None) -> list[DecodeFailure]:
    return [] if failure is None else [failure]


def main(argv: list[str] | None = None) -> int:
    """Run ``dump-log``; returns the exit status (0 when every file decoded whole)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    paths = [*args.paths, *(p for item in args.files for p in item.split(",") if p.strip())]
    if not paths:
        parser.error("no file to print: give FILE... or --files F1[,F2...]")
    for decoder in (args.key_decoder_class, args.value_decoder_class):
        if decoder is not None and decoder not in STRING_DECODERS:
            parser.error(f"decoder class {decoder}: kraftsim runs no Java class; keys and "
                         f"values print as UTF-8 ({STRING_DECODERS[0]})")
    index_mode = "verify" if args.verify_index_only else \
        "sanity" if args.index_sanity_check else "print"
    status = 0
    try:
        for path in paths:
            failures = dump_file_failures(
                path.strip(), args.format, not args.batches_only, sys.stdout,
                args.skip_record_metadata, metadata_only=args.cluster_metadata_decoder,
                txn_log=args.transaction_log_decoder, offsets=args.offsets_decoder,
                index_mode=index_mode, max_bytes=args.max_bytes)
            if failures:
                sys.stdout.flush()
                for failure in failures:
                    print(f"{PROG}: error: {failure.describe()}", file=sys.stderr)
                if failures[0].batch_index == 0 and _starts_with_text(path.strip()):
                    print(f"{PROG}: {path.strip()} holds text, not record batches (a "
                          f"broker's own log, such as server.log?)", file=sys.stderr)
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
