"""The text checkpoints of a broker's log directory and its partition directories.

Kafka keeps small text files beside the logs (its ``CheckpointFile`` format:
a version line, a count line, then one entry per line, fields separated by
whitespace):

- ``leader-epoch-checkpoint`` in each partition directory: version 0, then
  ``<leader epoch> <start offset>`` per epoch;
- ``replication-offset-checkpoint`` (high watermarks),
  ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint`` and
  ``cleaner-offset-checkpoint`` in the log directory: version 0, then
  ``<topic> <partition> <offset>`` per partition;
- ``partition.metadata`` in each partition directory (not a
  ``CheckpointFile``): ``version: 0`` then ``topic_id: <id>``.

Pure: text in, entries out. Damage yields the good entries and a
:class:`~kafka_format.errors.DecodeFailure` whose position is the byte where
the bad line starts, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from kafka_format.errors import DecodeFailure, EncodeError, FailureKind
from kafka_format.wire import uuid_bytes

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
OFFSET_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
"""The log directory's offset checkpoints, by file name."""
PARTITION_METADATA = "partition.metadata"
CHECKPOINT_VERSION = 0
"""The only version of these files Kafka writes."""


class EpochEntry(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """A leader epoch and the offset where its records start."""

    epoch: int
    start_offset: int


class OffsetEntry(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """A partition and the offset a checkpoint keeps for it."""

    topic: str
    partition: int
    offset: int


class CheckpointDecodeResult(msgspec.Struct, frozen=True, gc=False):
    """A checkpoint's version and good entries, and what stopped the reader (None: all good)."""

    version: int | None
    entries: tuple[EpochEntry, ...] | tuple[OffsetEntry, ...]
    error: DecodeFailure | None


class PartitionMetadata(msgspec.Struct, frozen=True, gc=False):
    """``partition.metadata``: its version and the topic id (base64, as Kafka prints ids)."""

    version: int
    topic_id: str


def _lines(text: str) -> list[tuple[int, str]]:
    """(byte position, line) of each line of ``text``."""
    found, position = [], 0
    for line in text.splitlines(keepends=True):
        found.append((position, line.rstrip("\r\n")))
        position += len(line.encode("utf-8"))
    return found


def _entry(kind: str, fields: list[str]) -> EpochEntry | OffsetEntry | None:
    try:
        if kind == LEADER_EPOCH_CHECKPOINT and len(fields) == 2:
            return EpochEntry(int(fields[0]), int(fields[1]))
        if kind != LEADER_EPOCH_CHECKPOINT and len(fields) == 3:
            return OffsetEntry(fields[0], int(fields[1]), int(fields[2]))
    except ValueError:
        pass
    return None


def decode_checkpoint(text: str, kind: str, source: str = "<text>") -> CheckpointDecodeResult:
    """A ``CheckpointFile``: ``kind`` is :data:`LEADER_EPOCH_CHECKPOINT` or an offset checkpoint.

    As Kafka's reader: an empty file, or one with a version line only, holds no
    entries; otherwise the version must be 0, every line after the count an
    entry, and the count must match the number of entries.
    """
    lines = _lines(text)
    size = len(text.encode("utf-8"))

    def stop(message: str, position: int, entries: Sequence[EpochEntry | OffsetEntry] = (),
             version: int | None = None) -> CheckpointDecodeResult:
        kind_: FailureKind = "truncated" if position >= size else "corrupt"
        return CheckpointDecodeResult(version, tuple(entries),  # type: ignore[arg-type]
                                      DecodeFailure(source, kind_, message, position))

    if not lines:  # Kafka creates some of them empty: no entries
        return CheckpointDecodeResult(None, (), None)
    try:
        version = int(lines[0][1].strip())
    except ValueError:
        return stop(f"malformed version line {lines[0][1]!r}", 0)
    if version != CHECKPOINT_VERSION:
        return CheckpointDecodeResult(version, (), DecodeFailure(
            source, "unsupported", f"version {version} (only {CHECKPOINT_VERSION} is read)", 0))
    if len(lines) == 1:  # a version and nothing else: no entries, as Kafka reads it
        return CheckpointDecodeResult(version, (), None)
    try:
        expected = int(lines[1][1].strip())
    except ValueError:
        return stop(f"malformed count line {lines[1][1]!r}", lines[1][0], version=version)
    entries: list[EpochEntry | OffsetEntry] = []
    for position, line in lines[2:]:
        entry = _entry(kind, line.split())
        if entry is None:
            return stop(f"malformed line {line!r}", position, entries, version)
        entries.append(entry)
    if len(entries) != expected:
        return stop(f"the count line says {expected} entries, the file holds {len(entries)}",
                    size if len(entries) < expected else lines[2 + expected][0], entries,
                    version)
    return CheckpointDecodeResult(version, tuple(entries), None)  # type: ignore[arg-type]


def encode_checkpoint(entries: list[EpochEntry] | list[OffsetEntry]) -> str:
    """A ``CheckpointFile``'s text, as Kafka writes it."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    for entry in entries:
        if isinstance(entry, EpochEntry):
            lines.append(f"{entry.epoch} {entry.start_offset}")
        else:
            lines.append(f"{entry.topic} {entry.partition} {entry.offset}")
    return "\n".join(lines) + "\n"


def decode_partition_metadata(text: str, source: str = "<text>"
                              ) -> PartitionMetadata | DecodeFailure:
    """``partition.metadata``: ``version: 0`` then ``topic_id: <id>``."""
    lines = _lines(text)
    fields: list[str] = []
    for (position, line), key in zip(lines, ("version", "topic_id"), strict=False):
        name, sep, value = line.partition(": ")
        if name != key or not sep or not value.strip():
            return DecodeFailure(source, "corrupt", f"expected '{key}: …', found {line!r}",
                                 position)
        fields.append(value.strip())
    if len(fields) < 2:
        return DecodeFailure(source, "truncated", "expected a version line and a topic_id line",
                             len(text.encode("utf-8")))
    try:
        version = int(fields[0])
    except ValueError:
        return DecodeFailure(source, "corrupt", f"version {fields[0]!r} is not a number", 0)
    if version != CHECKPOINT_VERSION:
        return DecodeFailure(source, "unsupported",
                             f"version {version} (only {CHECKPOINT_VERSION} is read)", 0)
    try:
        uuid_bytes(fields[1])
    except EncodeError as exc:
        return DecodeFailure(source, "corrupt", f"topic_id {fields[1]!r}: {exc}", lines[1][0])
    return PartitionMetadata(version, fields[1])


def encode_partition_metadata(metadata: PartitionMetadata) -> str:
    """``partition.metadata``'s text, as Kafka writes it."""
    return f"version: {metadata.version}\ntopic_id: {metadata.topic_id}"
