"""Kafka's on-disk layout of a KRaft node: the only module here that touches files.

A node's metadata log directory (``metadata.log.dir``) holds::

    meta.properties                    identity (node.id, cluster.id, ...)
    bootstrap.checkpoint               bootstrap records (formatted storage)
    __cluster_metadata-0/
        00000000000000000000.log       log segments, named by base offset (20 digits)
        00000000000000007205-0000000001.checkpoint
                                       snapshots: end offset (20) - epoch (10)
        quorum-state                   election state (JSON)

A broker's data partition replicas sit beside it, one directory each::

    orders-0/
        00000000000000000000.log       record batches: transactional, control (markers)
        00000000000000000000.txnindex  the abort index (only if a transaction aborted)

Readers never raise on a damaged or missing file: each returns the good part
and a :class:`DecodeFailure` naming the file. Kafka's index files
(``.index``, ``.timeindex``), ``leader-epoch-checkpoint`` and
``partition.metadata`` are not read or written: Kafka rebuilds the indexes on
recovery and kraftsim does not need them (a ``.txnindex`` is not rebuilt, so
it is written).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import msgspec

from kafka_format.batch_format import DecodedBatch, encode_batch, encode_decoded_batch
from kafka_format.checkpoints import (
    CHECKPOINT_VERSION,
    CLEAN_SHUTDOWN_FILE,
    CLEAN_SHUTDOWN_VERSION,
    LEADER_EPOCH_CHECKPOINT,
    OFFSET_CHECKPOINTS,
    PARTITION_METADATA,
    CheckpointDecodeResult,
    EpochEntry,
    OffsetEntry,
    PartitionMetadata,
    decode_checkpoint,
    decode_clean_shutdown,
    decode_partition_metadata,
    encode_checkpoint,
    encode_clean_shutdown,
    encode_partition_metadata,
)
from kafka_format.data_log import (
    AbortedTxnEntry,
    DataBatch,
    DataLogDecodeResult,
    TxnIndexDecodeResult,
    decode_data_log,
    decode_txn_index,
    encode_data_log,
    encode_txn_index,
    txn_index_file_name,
)
from kafka_format.errors import DecodeError, DecodeFailure
from kafka_format.log_codec import LogDecodeResult, decode_log, encode_log
from kafka_format.log_indexes import (
    OFFSET_INDEX_SUFFIX,
    PRODUCER_SNAPSHOT_SUFFIX,
    TIME_INDEX_SUFFIX,
    IndexDecodeResult,
    ProducerSnapshotDecodeResult,
    base_offset_of,
    decode_offset_index,
    decode_producer_snapshot,
    decode_time_index,
)
from kafka_format.node_state import (
    MetaProperties,
    QuorumState,
    format_meta_properties,
    format_quorum_state,
    parse_meta_properties,
    parse_quorum_state,
)
from kafka_format.record_versions import metadata_version_after
from kafka_format.snapshot_codec import (
    BOOTSTRAP_SNAPSHOT_ID,
    DEFAULT_RECORDS_PER_BATCH,
    SnapshotDecodeResult,
    decode_snapshot,
    encode_snapshot,
)
from kafka_format.wire import uuid_bytes
from metadata.bootstrap import BootstrapMetadata
from metadata.versions import (
    LATEST_PRODUCTION,
    MINIMUM_BOOTSTRAP,
    parse_release_version,
    release_name,
)
from raft.batch import Batch
from raft.snapshot import Snapshot, SnapshotId

METADATA_PARTITION_DIR = "__cluster_metadata-0"
"""The directory of the metadata topic's single partition."""
QUORUM_STATE_FILE = "quorum-state"
META_PROPERTIES_FILE = "meta.properties"
BOOTSTRAP_FILE = "bootstrap.checkpoint"
DEFAULT_SEGMENT_BYTES = 1 << 30
"""Kafka's default ``metadata.log.segment.bytes`` (1 GiB)."""

_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SNAPSHOT_LEFTOVER_NAME = re.compile(r"^(\d{20})-(\d{10})(?:-[^/]*)?\.checkpoint\.(part|deleted)$")
PARTIAL_SNAPSHOT_SUFFIX = ".checkpoint.part"
"""A snapshot still being written (Kafka renames it to ``.checkpoint`` when frozen)."""
DELETED_SNAPSHOT_SUFFIX = ".checkpoint.deleted"
"""A snapshot renamed before its deletion."""


def segment_file_name(base_offset: int) -> str:
    """``<base offset, 20 digits>.log``."""
    return f"{base_offset:020d}.log"


def snapshot_file_name(snapshot_id: SnapshotId) -> str:
    """``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``."""
    return f"{snapshot_id.end_offset:020d}-{snapshot_id.epoch:010d}.checkpoint"


def parse_segment_name(name: str) -> int | None:
    """The base offset in a segment file name, or ``None`` if it is not one."""
    match = _SEGMENT_NAME.match(name)
    return int(match.group(1)) if match else None


def parse_snapshot_name(name: str) -> SnapshotId | None:
    """The snapshot id in a ``.checkpoint`` file name, or ``None`` if it is not one."""
    match = _SNAPSHOT_NAME.match(name)
    return SnapshotId(int(match.group(1)), int(match.group(2))) if match else None


def parse_snapshot_leftover_name(name: str) -> tuple[SnapshotId, str] | None:
    """The id and state (``partial`` or ``deleted``) of a snapshot file Kafka did not finish
    writing (``<id>[-<suffix>].checkpoint.part``) or is deleting
    (``<id>.checkpoint.deleted``); ``None`` for any other name. Kafka's log removes
    both kinds when it opens; they are never read as snapshots.
    """
    match = _SNAPSHOT_LEFTOVER_NAME.match(name)
    if match is None:
        return None
    state = "partial" if match.group(3) == "part" else "deleted"
    return SnapshotId(int(match.group(1)), int(match.group(2))), state


class SegmentFile(msgspec.Struct, frozen=True, gc=False):
    """A log segment read from disk: its base offset (from the name) and decoded batches."""

    path: str
    base_offset: int
    result: LogDecodeResult


class SnapshotFile(msgspec.Struct, frozen=True, gc=False):
    """A snapshot file read from disk."""

    path: str
    snapshot_id: SnapshotId
    result: SnapshotDecodeResult


class MetadataLogDir(msgspec.Struct, frozen=True, gc=False):
    """The ``__cluster_metadata-0`` directory: segments and snapshots in offset order."""

    path: str
    segments: tuple[SegmentFile, ...]
    snapshots: tuple[SnapshotFile, ...]
    quorum_state: QuorumState | None
    errors: tuple[DecodeFailure, ...]

    @property
    def batches(self) -> tuple[DecodedBatch, ...]:
        """The good batches of every segment, in offset order, up to the first damage."""
        out: list[DecodedBatch] = []
        for segment in self.segments:
            out.extend(segment.result.batches)
            if segment.result.error is not None:
                break
        return tuple(out)


class NodeDir(msgspec.Struct, frozen=True, gc=False):
    """A node's metadata log directory: identity, bootstrap records and the log."""

    path: str
    meta: MetaProperties | None
    bootstrap: SnapshotDecodeResult | None
    log: MetadataLogDir
    errors: tuple[DecodeFailure, ...]


def _unreadable(path: Path, exc: OSError | UnicodeDecodeError) -> DecodeFailure:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return DecodeFailure(str(path), "unreadable", reason, 0)


def _read_bytes(path: Path) -> bytes | DecodeFailure:
    try:
        return path.read_bytes()
    except OSError as exc:
        return _unreadable(path, exc)


def _read_head(path: Path, max_bytes: int | None) -> tuple[bytes | DecodeFailure, bool]:
    """The file's bytes, or its first ``max_bytes``; and whether they were cut."""
    data = _read_bytes(path)
    if max_bytes is None or isinstance(data, DecodeFailure) or len(data) <= max_bytes:
        return data, False
    return data[:max_bytes], True


def read_segment_file(path: str | Path, *, base_offset: int | None = None,
                      previous_epoch: int | None = None,
                      max_bytes: int | None = None) -> SegmentFile:
    """Decode a ``.log`` segment; the base offset defaults to the one in its name.

    The batches' epochs must never decrease and change only at a leader's
    LeaderChange control batch; ``previous_epoch`` is the epoch of the batch
    before the segment (the previous segment's last), if any. ``max_bytes``
    reads only the whole batches within the file's first bytes (Kafka's
    ``kafka-dump-log --max-bytes``).
    """
    path = Path(path)
    if base_offset is None:
        base_offset = parse_segment_name(path.name)
    data, cut = _read_head(path, max_bytes)
    if isinstance(data, DecodeFailure):
        result = LogDecodeResult((), data, 0, 0)
    else:
        result = decode_log(data, source=str(path), first_offset=base_offset,
                            leader_epochs=True, previous_epoch=previous_epoch)
        if cut and result.error is not None and result.error.kind == "truncated":
            result = msgspec.structs.replace(result, error=None)  # the cut, not damage
    return SegmentFile(str(path), base_offset if base_offset is not None else -1, result)


def read_snapshot_file(path: str | Path, *, snapshot_id: SnapshotId | None = None) -> SnapshotFile:
    """Decode a snapshot file; the id defaults to the one in its name.

    ``bootstrap.checkpoint`` (or any other name) gets :data:`BOOTSTRAP_SNAPSHOT_ID`;
    then the batches must agree on an epoch but no particular one.
    """
    path = Path(path)
    epoch_known = True
    if snapshot_id is None:
        snapshot_id = parse_snapshot_name(path.name)
        epoch_known = snapshot_id is not None
        snapshot_id = snapshot_id or BOOTSTRAP_SNAPSHOT_ID
    data = _read_bytes(path)
    if isinstance(data, DecodeFailure):
        result = SnapshotDecodeResult(None, (), None, None, (), data)
    else:
        result = decode_snapshot(data, snapshot_id=snapshot_id, source=str(path),
                                 epoch_known=epoch_known)
    return SnapshotFile(str(path), snapshot_id, result)


def read_bootstrap_checkpoint(path: str | Path) -> SnapshotDecodeResult:
    """Decode ``bootstrap.checkpoint`` (a file, or the directory that holds it)."""
    path = Path(path)
    if path.is_dir():
        path = path / BOOTSTRAP_FILE
    return read_snapshot_file(path, snapshot_id=BOOTSTRAP_SNAPSHOT_ID).result


def read_bootstrap_directory(directory: str | Path, ibp: str | None = None) -> BootstrapMetadata:
    """The bootstrap metadata of a formatted node (Kafka's ``BootstrapDirectory.read``).

    ``bootstrap.checkpoint`` in ``directory`` when it exists (its data records;
    raises BootstrapError when they set no metadata.version, or one below
    3.3-IV0, and ValueError when the file is damaged); else the configured
    ``ibp`` (``inter.broker.protocol.version``: a release before 3.3-IV0 gives
    3.3-IV0), else the latest production version. Raises ValueError when
    ``directory`` is not a directory.
    """
    path = Path(directory)
    if not path.is_dir():
        if path.exists():
            raise ValueError(f"Path {directory} exists, but is not a directory.")
        raise ValueError(f"No such directory as {directory}")
    file = path / BOOTSTRAP_FILE
    if file.exists():
        result = read_bootstrap_checkpoint(file)
        if result.snapshot is None:
            reason = result.error.message if result.error is not None else "no snapshot"
            raise ValueError(f"Unable to read {file}: {reason}")
        return BootstrapMetadata.from_records(
            result.snapshot.records, f"the binary bootstrap metadata file: {file}")
    if ibp is None:
        return BootstrapMetadata.from_version(LATEST_PRODUCTION, "the default bootstrap")
    level = parse_release_version(ibp)
    if level < MINIMUM_BOOTSTRAP:
        name = release_name(MINIMUM_BOOTSTRAP)
        return BootstrapMetadata.from_version(
            MINIMUM_BOOTSTRAP, f"the minimum version bootstrap with metadata.version {name}")
    return BootstrapMetadata.from_version(
        level, f"the configured bootstrap with metadata.version {release_name(level)}")


def write_bootstrap_file(directory: str | Path, bootstrap: BootstrapMetadata) -> Path:
    """Write ``bootstrap``'s records as ``directory``/bootstrap.checkpoint (through a
    temporary file, then a rename, as Kafka's ``writeBinaryFile``); returns its path.
    Raises ValueError when ``directory`` is not a directory, OSError on a write error."""
    path = Path(directory)
    if not path.is_dir():
        raise ValueError(f"No such directory as {directory}")
    snapshot = Snapshot(BOOTSTRAP_SNAPSHOT_ID, bootstrap.records)
    temp = write_snapshot_file(path, snapshot, metadata_version=bootstrap.metadata_version,
                               name=f"{BOOTSTRAP_FILE}.tmp")
    return temp.replace(path / BOOTSTRAP_FILE)


def _read_text(path: Path) -> str | DecodeFailure:
    """The file's UTF-8 text, line ends as they are (Kafka's readers see ``\\r\\n``)."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _unreadable(path, exc)


def read_quorum_state(path: str | Path) -> QuorumState | DecodeFailure:
    """The ``quorum-state`` file's content, or why it could not be read."""
    path = Path(path)
    text = _read_text(path)
    if isinstance(text, DecodeFailure):
        return text
    try:
        return parse_quorum_state(text)
    except DecodeError as exc:
        return DecodeFailure(str(path), exc.kind, exc.message, exc.position)


def read_meta_properties(path: str | Path) -> MetaProperties | DecodeFailure:
    """The ``meta.properties`` file's content, or why it could not be read. As Kafka's
    ``PropertiesUtils.readPropertiesFile`` (``Properties.load`` of the file's bytes), each
    byte is one ISO-8859-1 character: any bytes are text, and Kafka's own UTF-8 writing of
    a non-ASCII value does not read back as written."""
    path = Path(path)
    data = _read_bytes(path)
    if isinstance(data, DecodeFailure):
        return data
    try:
        return parse_meta_properties(data.decode("latin-1"))
    except DecodeError as exc:
        return DecodeFailure(str(path), exc.kind, exc.message, exc.position)


def write_quorum_state(path: str | Path, state: QuorumState) -> Path:
    """Write a ``quorum-state`` file (Kafka's compact JSON); returns its path."""
    path = Path(path)
    path.write_text(format_quorum_state(state), encoding="utf-8")
    return path


def write_meta_properties(path: str | Path, meta: MetaProperties) -> Path:
    """Write a ``meta.properties`` file; returns its path."""
    path = Path(path)
    path.write_text(format_meta_properties(meta), encoding="utf-8")
    return path


def metadata_partition_dir(path: str | Path) -> Path:
    """``path`` itself if it is the partition directory, else its ``__cluster_metadata-0``."""
    path = Path(path)
    nested = path / METADATA_PARTITION_DIR
    return nested if nested.is_dir() else path


def read_log_dir(path: str | Path) -> MetadataLogDir:
    """Read ``__cluster_metadata-0`` (or the node directory holding it).

    Segments are ordered by base offset, snapshots by end offset; files of
    other kinds are ignored. Damage in one file is reported in that file's
    result; a missing directory or quorum-state goes to ``errors``.
    """
    directory = metadata_partition_dir(path)
    errors: list[DecodeFailure] = []
    try:
        names = sorted(entry.name for entry in directory.iterdir() if entry.is_file())
    except OSError as exc:
        errors.append(_unreadable(directory, exc))
        names = []
    segments: list[SegmentFile] = []
    previous_epoch: int | None = None
    for name in sorted(n for n in names if parse_segment_name(n) is not None):  # 20 digits
        segment = read_segment_file(directory / name, previous_epoch=previous_epoch)
        segments.append(segment)
        if segment.result.batches:
            previous_epoch = segment.result.batches[-1].batch.epoch
    snapshots = sorted(
        (read_snapshot_file(directory / name) for name in names
         if parse_snapshot_name(name) is not None),
        key=lambda snapshot: (snapshot.snapshot_id.end_offset, snapshot.snapshot_id.epoch),
    )  # fmt: skip
    quorum_state: QuorumState | None = None
    if QUORUM_STATE_FILE in names:
        state = read_quorum_state(directory / QUORUM_STATE_FILE)
        if isinstance(state, DecodeFailure):
            errors.append(state)
        else:
            quorum_state = state
    return MetadataLogDir(
        str(directory), tuple(segments), tuple(snapshots), quorum_state, tuple(errors)
    )


def read_node_dir(path: str | Path) -> NodeDir:
    """Read a node's metadata log directory: meta.properties, bootstrap.checkpoint, the log."""
    path = Path(path)
    errors: list[DecodeFailure] = []
    meta: MetaProperties | None = None
    if (path / META_PROPERTIES_FILE).is_file():
        read = read_meta_properties(path / META_PROPERTIES_FILE)
        if isinstance(read, DecodeFailure):
            errors.append(read)
        else:
            meta = read
    bootstrap = None
    if (path / BOOTSTRAP_FILE).is_file():
        bootstrap = read_bootstrap_checkpoint(path / BOOTSTRAP_FILE)
    return NodeDir(str(path), meta, bootstrap, read_log_dir(path), tuple(errors))


def _segments(
    batches: Iterable[Batch | DecodedBatch], metadata_version: int, segment_bytes: int
) -> list[tuple[int, list[bytes]]]:
    segments: list[tuple[int, list[bytes]]] = []
    size = 0
    for batch in batches:
        if isinstance(batch, DecodedBatch):
            data = encode_decoded_batch(batch)
            base_offset = batch.batch.base_offset
        else:
            data = encode_batch(batch, metadata_version)
            base_offset = batch.base_offset
            metadata_version = metadata_version_after(batch.records, metadata_version)
        if not segments or size + len(data) > segment_bytes:
            segments.append((base_offset, []))
            size = 0
        segments[-1][1].append(data)
        size += len(data)
    return segments


def write_node_log(
    directory: str | Path,
    batches: Iterable[Batch | DecodedBatch],
    snapshots: Iterable[Snapshot | SnapshotDecodeResult] = (),
    *,
    metadata_version: int,
    quorum_state: QuorumState | None = None,
    meta: MetaProperties | None = None,
    bootstrap: Snapshot | SnapshotDecodeResult | None = None,
    segment_bytes: int = DEFAULT_SEGMENT_BYTES,
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
) -> list[Path]:
    """Write a node's log and snapshots in Kafka's layout under ``directory``.

    ``batches`` (simulated :class:`Batch` es, or :class:`DecodedBatch` es
    which are written back byte for byte) go to ``__cluster_metadata-0/``
    segments of at most ``segment_bytes`` (a batch is never split); record
    versions are chosen for ``metadata_version``, the level before the first
    batch, which follows any metadata.version FeatureLevelRecord in the
    batches (as Kafka's controller does). Each snapshot becomes a
    ``.checkpoint`` file; ``quorum_state``, ``meta`` and ``bootstrap`` are
    written when given. Files of the same names are replaced, other files are
    left alone. Returns the paths written; raises ``OSError`` and
    :class:`~kafka_format.errors.EncodeError`.
    """
    root = Path(directory)
    partition = root / METADATA_PARTITION_DIR
    partition.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for base_offset, chunks in _segments(batches, metadata_version, segment_bytes):
        path = partition / segment_file_name(base_offset)
        path.write_bytes(b"".join(chunks))
        written.append(path)
    for snapshot in snapshots:
        written.append(write_snapshot_file(
            partition, snapshot, metadata_version=metadata_version,
            records_per_batch=records_per_batch,
        ))  # fmt: skip
    if quorum_state is not None:
        written.append(write_quorum_state(partition / QUORUM_STATE_FILE, quorum_state))
    if meta is not None:
        written.append(write_meta_properties(root / META_PROPERTIES_FILE, meta))
    if bootstrap is not None:
        written.append(write_snapshot_file(
            root, bootstrap, metadata_version=metadata_version, name=BOOTSTRAP_FILE,
            records_per_batch=records_per_batch,
        ))  # fmt: skip
    return written


def write_snapshot_file(
    directory: str | Path,
    snapshot: Snapshot | SnapshotDecodeResult,
    *,
    metadata_version: int,
    name: str | None = None,
    records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
) -> Path:
    """Write one snapshot into ``directory`` as ``<end offset>-<epoch>.checkpoint`` (or ``name``).

    A decoded snapshot is written back byte for byte; a :class:`Snapshot` is
    encoded with record versions for ``metadata_version``. Returns the path.
    """
    if isinstance(snapshot, SnapshotDecodeResult):
        if snapshot.snapshot is None:
            raise ValueError("cannot write a damaged snapshot")
        snapshot_id = snapshot.snapshot.snapshot_id
        data = encode_log(snapshot.batches)
    else:
        snapshot_id = snapshot.snapshot_id
        data = encode_snapshot(snapshot, metadata_version, records_per_batch=records_per_batch)
    path = Path(directory) / (name or snapshot_file_name(snapshot_id))
    # As Kafka's FileRawSnapshotWriter: written whole as ``.part``, then renamed, so that
    # a write cut short never leaves a ``.checkpoint`` that looks like a snapshot.
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    os.replace(partial, path)
    return path


# --- data partitions ---------------------------------------------------------------------------


def _write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` as Kafka writes its checkpoints: whole into
    ``<name>.tmp``, then renamed over the file."""
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text, encoding="utf-8", newline="")
    os.replace(temp, path)
    return path


def write_checkpoint(path: str | Path, entries: list[EpochEntry] | list[OffsetEntry]) -> Path:
    """Write a text checkpoint (``leader-epoch-checkpoint`` or an offset checkpoint such as
    ``replication-offset-checkpoint``) as Kafka's ``CheckpointFile`` does; returns its path.
    Raises ``OSError``."""
    return _write_text_atomically(Path(path), encode_checkpoint(entries))


def write_partition_metadata(path: str | Path, metadata: PartitionMetadata) -> Path:
    """Write ``partition.metadata`` as Kafka's ``PartitionMetadataFile`` does; returns its
    path. Raises ``OSError``."""
    return _write_text_atomically(Path(path), encode_partition_metadata(metadata))


def write_partition_dir(directory: str | Path, batches: Iterable[DataBatch],
                        aborted: Iterable[AbortedTxnEntry] = (), base_offset: int = 0,
                        *, epochs: list[EpochEntry] | None = None,
                        topic_id: str | None = None) -> list[Path]:
    """Write one data segment (and its ``.txnindex`` when a transaction aborted, as Kafka
    creates it lazily) into ``directory``, created if needed; with ``epochs`` its
    ``leader-epoch-checkpoint``, with ``topic_id`` its ``partition.metadata``. Returns
    the paths.

    Raises ``OSError`` and :class:`~kafka_format.errors.EncodeError`.
    """
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    segment = path / segment_file_name(base_offset)
    index = path / txn_index_file_name(base_offset)
    entries = list(aborted)
    index_bytes = encode_txn_index(entries, str(index)) if entries else None
    metadata = None
    if topic_id is not None:
        uuid_bytes(topic_id)  # a topic id Kafka cannot read: EncodeError before any write
        metadata = PartitionMetadata(CHECKPOINT_VERSION, topic_id)
    segment.write_bytes(encode_data_log(batches))
    written = [segment]
    if index_bytes is not None:
        index.write_bytes(index_bytes)
        written.append(index)
    if epochs is not None:
        written.append(write_checkpoint(path / LEADER_EPOCH_CHECKPOINT, epochs))
    if metadata is not None:
        written.append(write_partition_metadata(path / PARTITION_METADATA, metadata))
    return written


def read_data_segment(path: str | Path, max_bytes: int | None = None) -> DataLogDecodeResult:
    """Decode a data partition's ``.log`` segment (only the whole batches within its first
    ``max_bytes``, if given)."""
    data, cut = _read_head(Path(path), max_bytes)
    if isinstance(data, DecodeFailure):
        return DataLogDecodeResult((), data)
    result = decode_data_log(data, str(path))
    if cut and result.error is not None and result.error.kind == "truncated":
        return DataLogDecodeResult(result.batches, None)  # the cut, not damage
    return result


def read_txn_index(path: str | Path) -> TxnIndexDecodeResult:
    """Decode a ``.txnindex`` file."""
    data = _read_bytes(Path(path))
    if isinstance(data, DecodeFailure):
        return TxnIndexDecodeResult((), data)
    return decode_txn_index(data, str(path))


def side_file_kind(name: str) -> str | None:
    """What a file beside a partition's segments is, by its name (``offset index``, ``time
    index``, ``producer snapshot``, or the checkpoint's own name), or None."""
    if name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA) or name in OFFSET_CHECKPOINTS:
        return name
    for suffix, kind in ((OFFSET_INDEX_SUFFIX, "offset index"),
                         (TIME_INDEX_SUFFIX, "time index"),
                         (PRODUCER_SNAPSHOT_SUFFIX, "producer snapshot")):
        if name.endswith(suffix):
            return kind
    return None


def read_index(path: str | Path, *, time_index: bool = False) -> IndexDecodeResult:
    """Decode a ``.index`` (or, with ``time_index``, a ``.timeindex``) file; its base offset
    is the one in its name (0 if the name holds none)."""
    path = Path(path)
    data = _read_bytes(path)
    if isinstance(data, DecodeFailure):
        return IndexDecodeResult((), data)
    decode = decode_time_index if time_index else decode_offset_index
    return decode(data, base_offset_of(path.name) or 0, str(path))


def read_producer_snapshot(path: str | Path) -> ProducerSnapshotDecodeResult:
    """Decode a producer state snapshot (``<offset>.snapshot``)."""
    data = _read_bytes(Path(path))
    if isinstance(data, DecodeFailure):
        return ProducerSnapshotDecodeResult((), data)
    return decode_producer_snapshot(data, str(path))


def read_checkpoint(path: str | Path, kind: str) -> CheckpointDecodeResult:
    """Decode a text checkpoint (``leader-epoch-checkpoint`` or an offset checkpoint);
    ``kind`` is its file name as Kafka writes it."""
    path = Path(path)
    text = _read_text(path)
    if isinstance(text, DecodeFailure):
        return CheckpointDecodeResult(None, (), text)
    return decode_checkpoint(text, kind, str(path))


def read_clean_shutdown(directory: str | Path) -> int | None:
    """The broker epoch in ``directory``'s clean shutdown file (``.kafka_cleanshutdown``);
    None when there is none or Kafka could not read it (see
    :func:`~kafka_format.checkpoints.decode_clean_shutdown`)."""
    try:  # Kafka decodes the bytes with replacement characters for bad UTF-8
        text = (Path(directory) / CLEAN_SHUTDOWN_FILE).read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    return decode_clean_shutdown(text)


def write_clean_shutdown(directory: str | Path, broker_epoch: int,
                         version: int = CLEAN_SHUTDOWN_VERSION) -> Path:
    """Write ``directory``'s clean shutdown file with ``broker_epoch``, as a broker does when
    it stops cleanly; returns its path. Raises ``OSError``."""
    path = Path(directory) / CLEAN_SHUTDOWN_FILE
    path.write_text(encode_clean_shutdown(broker_epoch, version), encoding="utf-8")
    return path


def read_partition_metadata(path: str | Path) -> PartitionMetadata | DecodeFailure:
    """Decode a partition directory's ``partition.metadata``."""
    path = Path(path)
    text = _read_text(path)
    if isinstance(text, DecodeFailure):
        return text
    return decode_partition_metadata(text, str(path))
