"""Real Kafka metadata files, replayed through the simulation's own MetadataLoader.

As Kafka's metadata shell reads a file (``SnapshotFileReader``), every data
batch goes to the loader as a commit of its own and the high watermark is
known only once the whole file has been read (it is the offset after the last
batch). Control batches only move the offset. The loader publishes nothing
while it catches up, so what the shell shows is the loader's last complete
image: whole transactions only. Kafka's shell waits forever when the file
ends inside a transaction; here the file is all there is, so the image
before that transaction is shown and the open transaction is reported.

``--log-dir`` reads ``__cluster_metadata-0`` as a Kafka node starts from it:
from the newest snapshot alone when that snapshot is ahead of the log (of a
newer epoch than the log's last batch, or ending past the log's end: the node
truncates its whole log), with a warning; else from its first segment when
the log starts at offset 0; else from the newest snapshot that the segments
continue (loaded as a snapshot, then the segments after it). A folder with no
log, or a log whose beginning no snapshot covers, is an error. ``--snapshot``
reads one ``.checkpoint`` file (loaded as a snapshot, so that the image has
the snapshot's provenance; a damaged one is replayed batch by batch) or one
``.log`` segment (at the base offset its name gives; one that does not start
at offset 0 shows only what it adds, with a warning); given together, the
snapshot comes first and the log continues after its end. Records the loader
could not apply are counted in a warning.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from broker.loader import MetadataLoader
from kafka_format import files
from kafka_format.batch_format import DecodedBatch
from kafka_format.data_log import parse_partition_dir_name
from kafka_format.errors import DecodeFailure
from metadata.delta import clear_sharing_caches
from metadata.image import MetadataImage
from metadata.schema import BeginTransactionRecord, is_marker
from raft.batch import Batch


class FileSource:
    """The image of real Kafka files; see the module docs."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.loader = MetadataLoader(-1)
        self.warnings: list[str] = []
        self.errors: list[str] = []
        """Problems that make the image wrong, not just short: nothing is shown."""
        self.batches: list[Batch] = []
        self.open_transaction: int | None = None
        self.read_to = -1
        self._times: dict[int, int] = {}

    @property
    def image(self) -> MetadataImage:
        """The last complete image: published, or the loader's own once the file ended."""
        loader = self.loader
        if loader.published is not None and not loader.catching_up:
            return loader.published
        return loader.image

    def time_of(self, offset: int) -> str | None:
        """The batch timestamp of the record at ``offset`` (ISO-8601, UTC)."""
        stamp = self._times.get(offset)
        if stamp is None or stamp <= 0:
            return None
        return datetime.fromtimestamp(stamp / 1000, UTC).isoformat(timespec="milliseconds")

    def describe(self) -> str:
        """``/local/node``: which files, which offsets."""
        image = self.image
        text = (f"Kafka files {self.path}: read to offset {self.read_to}, image at offset "
                f"{image.offset}")
        if self.open_transaction is not None:
            text += (f"; the transaction begun at offset {self.open_transaction} never ends "
                     f"in the files, so it is not shown")
        return text

    # ------------------------------------------------------------------ loading
    def load_snapshot(self, snapshot: files.SnapshotFile, as_snapshot: bool) -> None:
        """Feed a snapshot: whole (``as_snapshot``) or batch by batch.

        Kafka's shell replays a snapshot file's batches as commits, so its image
        carries the offsets inside the file; loaded whole, the image carries the
        snapshot's own provenance (its last contained offset and epoch). A
        damaged snapshot is replayed batch by batch: its good part is shown.
        """
        result = snapshot.result
        if result.error is not None:
            self.warn(result.error)
        if as_snapshot and result.snapshot is not None:
            self.loader.handle_load_snapshot(result.snapshot)
            self.batches.extend(d.batch for d in result.batches)
            last = result.snapshot.snapshot_id.last_contained_offset
            self.read_to = last
            if result.header is not None:
                self._times[last] = result.header.last_contained_log_timestamp
            return
        self.replay([d for d in result.batches if not d.batch.is_control])

    def replay(self, decoded: Sequence[DecodedBatch]) -> None:
        """Each batch as its own commit; the high watermark is the end of the last one."""
        if not decoded:
            return
        high_watermark = decoded[-1].batch.end_offset
        for d in decoded:
            batch = d.batch
            for offset in range(batch.base_offset, batch.end_offset):
                self._times[offset] = batch.append_time_ms
            self.batches.append(batch)
            self.read_to = batch.last_offset
            if batch.is_control:
                continue
            self._note_markers(batch)
            self.loader.handle_commit((batch,), high_watermark)

    def _note_markers(self, batch: Batch) -> None:
        for index, record in enumerate(batch.records):
            if isinstance(record, BeginTransactionRecord):
                self.open_transaction = batch.base_offset + index
            elif is_marker(record):
                self.open_transaction = None

    def note_loader_faults(self) -> None:
        """Warn about records the loader could not apply (the image lacks their effect)."""
        faults = self.loader.faults
        if faults:
            first = faults[0]
            self.warnings.append(f"the loader could not apply {len(faults)} record"
                                 f"{'' if len(faults) == 1 else 's'} (the first at offset "
                                 f"{first.offset}: {first.message})")

    def warn(self, failure: DecodeFailure) -> None:
        """Note damage in a file (the good part before it is still shown)."""
        suffix = "" if failure.kind == "unreadable" else " (showing what comes before it)"
        self.warnings.append(failure.describe() + suffix)


def _no_log(log_dir: str) -> str:
    """Why ``--log-dir`` shows nothing: no log here, perhaps one level up or down."""
    path = Path(log_dir)
    nodes = sorted(child.name for child in path.iterdir()
                   if (child / files.METADATA_PARTITION_DIR).is_dir()) if path.is_dir() else []
    text = (f"{log_dir}: no KRaft metadata log here (neither a {files.METADATA_PARTITION_DIR} "
            f"directory nor .log segments or .checkpoint snapshots)")
    if nodes:
        example = path / nodes[0]
        text += (f"; it holds node directories ({', '.join(nodes)}): give one of them, "
                 f"e.g. --log-dir {example}")
    return text


def _not_metadata(path: Path) -> str | None:
    """What ``path`` is when it is one of a partition's other files, or a data partition's
    segment or directory, rather than the metadata log; None otherwise."""
    kind = files.side_file_kind(path.name)
    if kind is not None and not path.is_dir():
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{path} is {article} {kind} file, not metadata: `kraftsim dump-log` prints it"
    directory = files.metadata_partition_dir(path) if path.is_dir() else path.parent
    partition = parse_partition_dir_name(directory.name)
    if partition is None or directory.name.startswith("__cluster_metadata"):
        return None
    return (f"{directory} looks like the directory of partition {partition[1]} of topic "
            f"{partition[0]}: a data partition, not the metadata log "
            f"({files.METADATA_PARTITION_DIR}); `kraftsim dump-log` prints its files")


def open_files(log_dir: str | None, snapshot: str | None) -> FileSource:
    """Read ``--log-dir`` and/or ``--snapshot`` into a :class:`FileSource`.

    Problems that leave the image wrong rather than short (no log at all, a
    log whose beginning is missing with no snapshot to stand for it) go to
    :attr:`FileSource.errors` and nothing is loaded; damage after a good
    prefix goes to :attr:`FileSource.warnings`.
    """
    source = FileSource(" + ".join(p for p in (snapshot, log_dir) if p))
    nodes = [Path(snapshot).parent.parent] if snapshot is not None else []
    if log_dir is not None:
        partition = files.metadata_partition_dir(log_dir)
        nodes.append(partition.parent if partition.name == files.METADATA_PARTITION_DIR
                     else partition)
    with ExitStack() as locks:
        for node in dict.fromkeys(nodes):
            if not locks.enter_context(node_directory_lock(node)):
                source.errors.append(f"Unable to lock {node.absolute()}. Please ensure that no "
                                     f"broker or controller process is using this directory "
                                     f"before proceeding.")
                return source
        _read_files(source, log_dir, snapshot)
    return source


@contextmanager
def node_directory_lock(directory: Path) -> Iterator[bool]:
    """A shared lock on ``directory/.lock`` for the time of the ``with``: False when another
    process holds it (a running broker or controller), True when taken or when there is no
    ``.lock`` to take. The lock is a POSIX record lock, the kind Java's ``FileChannel``
    takes, so a Kafka process's lock excludes it."""
    try:
        handle = (directory / ".lock").open("rb")
    except OSError:  # no .lock (or one that cannot be read): nothing to wait for
        yield True
        return
    with handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.lockf(handle, fcntl.LOCK_UN)


def _read_files(source: FileSource, log_dir: str | None, snapshot: str | None) -> None:
    """:func:`open_files` once the node directories are locked."""
    start = 0
    if snapshot is not None and Path(snapshot).suffix == ".log":
        # The base offset comes from the file's name (as dump-log takes it), else from
        # its first batch.
        segment = files.read_segment_file(Path(snapshot))
        if segment.result.error is not None:
            source.warn(segment.result.error)
        decoded = segment.result.batches
        first = decoded[0].batch.base_offset if decoded else 0
        if first > 0:
            source.warnings.append(f"{snapshot}: the segment starts at offset {first}; what "
                                   f"came before it is not in this file, so the image holds "
                                   f"only what the segment itself adds")
        source.replay(decoded)
        start = decoded[-1].batch.end_offset if decoded else 0
    elif snapshot is not None:
        snap = files.read_snapshot_file(Path(snapshot))
        source.load_snapshot(snap, as_snapshot=True)
        start = snap.snapshot_id.end_offset
    if log_dir is not None:
        _open_log_dir(source, log_dir, snapshot is not None, start)
    if not source.batches:
        source.warnings += [hint for path in (snapshot, log_dir)
                            if path is not None and (hint := _not_metadata(Path(path)))]
    source.note_loader_faults()
    clear_sharing_caches()  # the files' records are replayed once: the caches would only hold them


def _snapshot_ahead_of_log(snapshots: Sequence[files.SnapshotFile],
                           batches: Sequence[DecodedBatch]) -> files.SnapshotFile | None:
    """The newest whole snapshot if it is ahead of the log: of a newer epoch than the
    log's last batch, or of the same epoch and ending past the log's end. A Kafka node
    then truncates its whole log and starts from that snapshot (KafkaMetadataLog's
    truncateToLatestSnapshot); None when the log reaches it."""
    whole = [s for s in snapshots if s.result.snapshot is not None]
    if not whole:
        return None
    newest = max(whole, key=lambda s: (s.snapshot_id.end_offset, s.snapshot_id.epoch))
    if not batches:
        return newest
    end, epoch = batches[-1].last_offset + 1, batches[-1].batch.epoch
    snapshot_id = newest.snapshot_id
    if snapshot_id.epoch > epoch or (snapshot_id.epoch == epoch and snapshot_id.end_offset > end):
        return newest
    return None


def _open_log_dir(source: FileSource, log_dir: str, after_snapshot: bool, start: int) -> None:
    log = files.read_log_dir(log_dir)
    for failure in log.errors:
        source.warn(failure)
    if not log.errors and not log.segments and not log.snapshots:
        source.errors.append(_no_log(log_dir))
        return
    for segment in log.segments:
        if segment.result.error is not None:
            source.warn(segment.result.error)
    batches = log.batches
    first = batches[0].batch.base_offset if batches else 0
    if not after_snapshot and log.snapshots:
        ahead = _snapshot_ahead_of_log(log.snapshots, batches)
        if ahead is not None:  # a Kafka node starts from it and truncates the whole log
            source.load_snapshot(ahead, as_snapshot=True)
            if batches:
                source.warnings.append(
                    f"{ahead.path}: this snapshot (end offset {ahead.snapshot_id.end_offset}, "
                    f"epoch {ahead.snapshot_id.epoch}) is ahead of the log (end offset "
                    f"{batches[-1].last_offset + 1}, epoch {batches[-1].batch.epoch}): shown "
                    f"from the snapshot, the log not replayed, as a Kafka node starts from "
                    f"such a snapshot")
            return
        if first > 0:  # (an empty log took the newest whole snapshot above)
            usable = [s for s in log.snapshots if s.snapshot_id.end_offset >= first
                      and s.result.snapshot is not None]
            if usable:
                newest = max(usable, key=lambda s: s.snapshot_id.end_offset)
                source.load_snapshot(newest, as_snapshot=True)
                start = newest.snapshot_id.end_offset
    if batches and first > start:
        before = "the snapshot's end" if start else "offset 0"
        older = [s for s in log.snapshots if s.result.snapshot is not None]
        if not after_snapshot and older:  # Kafka refuses to start: a snapshot below the start
            newest = max(older, key=lambda s: (s.snapshot_id.end_offset, s.snapshot_id.epoch))
            end = newest.snapshot_id.end_offset
            source.errors.append(f"{log.path}: the log starts at offset {first} and no "
                                 f"snapshot covers what comes before it (the newest, "
                                 f"{Path(newest.path).name}, ends at offset {end}, "
                                 f"{first - end} offsets short): the records that built the "
                                 f"state are missing, so no image can be shown")
            return
        source.errors.append(f"{log.path}: the log starts at offset {first} and no snapshot "
                             f"covers what comes before it (from {before}, {start}): the "
                             f"records that built the state are missing, so no image can be "
                             f"shown")
        return
    source.replay([d for d in batches if d.batch.base_offset >= start])
