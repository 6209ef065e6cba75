"""Snapshot files (``.checkpoint``): batches framed by a header and a footer record.

A KRaft snapshot is a run of record batches whose offsets start at 0: a control
batch opening with a SnapshotHeaderRecord (possibly followed by KRaftVersion
and Voters records), data batches with the metadata records, and a control
batch holding the SnapshotFooterRecord, last. Every batch carries the
snapshot's epoch as its partition leader epoch. ``bootstrap.checkpoint`` has
the same layout (epoch 0).

:func:`decode_snapshot` returns the :class:`raft.snapshot.Snapshot` plus the
decoded batches (which re-encode to identical bytes with
:func:`kafka_format.log_codec.encode_log`); a snapshot without its header or
footer is reported, like any damage, as a :class:`DecodeFailure` with the
batches read so far.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kafka_format import wire
from kafka_format.batch_format import DecodedBatch, encode_batch
from kafka_format.errors import DecodeFailure, EncodeError
from kafka_format.log_codec import decode_log
from kafka_format.record_versions import metadata_version_after
from raft.batch import (
    Batch,
    KRaftVersionRecord,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    VotersRecord,
)
from raft.snapshot import Snapshot, SnapshotId

DEFAULT_RECORDS_PER_BATCH = 10_000
"""Data records per batch when writing a snapshot (Kafka's max records per batch)."""

BOOTSTRAP_SNAPSHOT_ID = SnapshotId(end_offset=0, epoch=0)
"""The id given to ``bootstrap.checkpoint``, which Kafka writes at epoch 0 with no id."""


class SnapshotDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """A decoded snapshot file.

    ``snapshot`` is ``None`` when the file is damaged or lacks its header or
    footer; ``batches`` then still holds every good batch before the damage.
    ``control_records`` are the control records besides header and footer
    (KRaftVersion, Voters), which a :class:`Snapshot` does not hold.
    """

    snapshot: Snapshot | None
    batches: tuple[DecodedBatch, ...]
    header: SnapshotHeaderRecord | None
    footer: SnapshotFooterRecord | None
    control_records: tuple[Any, ...]
    error: DecodeFailure | None

    @property
    def ok(self) -> bool:
        """True for a whole, well-formed snapshot."""
        return self.error is None


def _failure(
    source: str, kind: Any, message: str, position: int, batches: tuple[DecodedBatch, ...],
    index: int,
) -> DecodeFailure:
    batch = batches[index] if 0 <= index < len(batches) else None
    return DecodeFailure(
        source, kind, message, position, index,
        batch.batch.base_offset if batch is not None else None,
        batch.position if batch is not None else None,
    )  # fmt: skip


def decode_snapshot(
    data: bytes, *, snapshot_id: SnapshotId, source: str = "<bytes>", epoch_known: bool = True
) -> SnapshotDecodeResult:
    """Decode a snapshot file's bytes; never raises on bad bytes.

    ``snapshot_id`` comes from the file name (see
    :func:`kafka_format.files.parse_snapshot_name`). As Kafka writes a
    snapshot, its first batch starts at offset 0 and every batch carries the
    snapshot's epoch (``partitionLeaderEpoch``, which the CRC does not cover):
    the epoch of the id, or with ``epoch_known=False`` (a file whose name
    gives none) the first batch's.
    """
    epoch = snapshot_id.epoch
    if not epoch_known:
        epoch = wire.INT32.unpack_from(data, 12)[0] if len(data) >= 16 else 0
    decoded = decode_log(data, source=source, snapshot_epoch=epoch)
    batches = decoded.batches
    header: SnapshotHeaderRecord | None = None
    footer: SnapshotFooterRecord | None = None
    first = batches[0] if batches else None
    if first is not None and first.is_control and first.records:
        candidate = first.records[0]
        if isinstance(candidate, SnapshotHeaderRecord):
            header = candidate
    last = batches[-1] if batches else None
    if last is not None and last.is_control and last.records:
        candidate = last.records[-1]
        if isinstance(candidate, SnapshotFooterRecord):
            footer = candidate
    records: list[Any] = []
    controls: list[Any] = []
    for batch in batches:
        if batch.is_control:
            controls.extend(
                record for record in batch.records
                if not isinstance(record, SnapshotHeaderRecord | SnapshotFooterRecord)
            )  # fmt: skip
        else:
            records.extend(batch.batch.records)
    error = decoded.error
    if error is None and header is None:
        error = _failure(
            source, "missing-header", "the first batch does not start with a SnapshotHeaderRecord",
            0, batches, 0,
        )  # fmt: skip
    if error is None and footer is None:
        error = _failure(
            source, "missing-footer", "the last batch does not end with a SnapshotFooterRecord",
            decoded.total_bytes, batches, len(batches) - 1,
        )  # fmt: skip
    if error is None and batches and batches[0].batch.base_offset != 0:
        first_offset = batches[0].batch.base_offset
        return SnapshotDecodeResult(None, (), header, footer, (), DecodeFailure(
            source, "corrupt", f"the first batch starts at offset {first_offset}, but a "
            f"snapshot's batches start at offset 0", 0, 0, first_offset, 0))
    snapshot = None
    if error is None and header is not None:
        snapshot = Snapshot(snapshot_id, tuple(records), header.last_contained_log_timestamp)
    return SnapshotDecodeResult(snapshot, batches, header, footer, tuple(controls), error)


def _check_snapshot_controls(control_records: tuple[Any, ...]) -> None:
    """The control records a snapshot may carry after its header, as Kafka's
    ``RecordsSnapshotWriter`` writes them: none (kraft.version 0), or a KRaftVersionRecord
    of kraft.version 1 or more, then perhaps a VotersRecord. Raises :class:`EncodeError`."""
    if not control_records:
        return
    kraft, *rest = control_records
    if not isinstance(kraft, KRaftVersionRecord):
        raise EncodeError(f"a snapshot's control records start with a KRaftVersionRecord, "
                          f"not {type(kraft).__name__}")
    if len(rest) > 1 or (rest and not isinstance(rest[0], VotersRecord)):
        raise EncodeError("after its KRaftVersionRecord a snapshot carries at most a "
                          "VotersRecord")
    if kraft.kraft_version < 1:
        raise EncodeError(f"kraft.version {kraft.kraft_version}: the voters are static and a "
                          f"snapshot carries no KRaftVersionRecord or VotersRecord")


def snapshot_batches(
    snapshot: Snapshot,
    *,
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
    append_time_ms: int | None = None,
    control_records: tuple[Any, ...] = (),
) -> list[Batch]:
    """The batches of a snapshot file: header (+ ``control_records``), data, footer.

    ``control_records`` follow the header in its batch: none, or a
    KRaftVersionRecord of kraft.version 1 or more then perhaps a VotersRecord
    (else :class:`EncodeError`). Offsets start at 0, every batch carries the
    snapshot's epoch, and the batch timestamps are ``append_time_ms`` (default: the snapshot's
    last-contained log time, so that a run's files depend only on its seed).
    """
    if records_per_batch < 1:
        raise EncodeError("records_per_batch must be at least 1")
    _check_snapshot_controls(control_records)
    epoch = snapshot.snapshot_id.epoch
    when = snapshot.last_contained_log_time_ms if append_time_ms is None else append_time_ms
    header = SnapshotHeaderRecord(last_contained_log_timestamp=snapshot.last_contained_log_time_ms)
    batches = [Batch(0, epoch, (), (header, *control_records), when)]
    offset = batches[0].end_offset
    records = snapshot.records
    for start in range(0, len(records), records_per_batch):
        chunk = tuple(records[start : start + records_per_batch])
        batches.append(Batch(offset, epoch, chunk, (), when))
        offset += len(chunk)
    batches.append(Batch(offset, epoch, (), (SnapshotFooterRecord(),), when))
    return batches


def encode_snapshot(
    snapshot: Snapshot,
    metadata_version: int,
    *,
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
    append_time_ms: int | None = None,
    control_records: tuple[Any, ...] = (),
) -> bytes:
    """The bytes of a snapshot file for ``snapshot`` (see :func:`snapshot_batches`).

    Record versions are chosen for the snapshot's own metadata.version
    FeatureLevelRecord when it has one (the level of the state it holds),
    else for ``metadata_version``.
    """
    batches = snapshot_batches(
        snapshot,
        records_per_batch=records_per_batch,
        append_time_ms=append_time_ms,
        control_records=control_records,
    )
    level = metadata_version_after(snapshot.records, metadata_version)
    return b"".join(encode_batch(batch, level) for batch in batches)
