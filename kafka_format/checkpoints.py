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
  ``CheckpointFile``): ``version: 0`` then ``topic_id: <id>``;
- ``.kafka_cleanshutdown`` in the log directory after a clean shutdown: JSON
  with the broker epoch (KIP-966).

Each is read by the rules of Kafka's reader, so that a file Kafka refuses is
refused here and one it reads is read: lines end as Java's ``readLine`` ends
them, numbers are read as ``Integer.parseInt`` / ``Long.parseLong`` read
them, fields split as Java's ``String.split`` splits them.

Pure: text in, entries out. Damage yields the good entries and a
:class:`~kafka_format.errors.DecodeFailure` whose position is the byte where
the bad line starts, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

import msgspec

from kafka_format.errors import DecodeError, DecodeFailure, EncodeError, FailureKind
from kafka_format.wire import uuid_bytes, uuid_text
from metadata.java_int import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    parse_java_int,
    parse_java_long,
)

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


_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
"""Java's regex ``\\s+`` (ASCII whitespace only), which splits a checkpoint's entry line."""
_PARTITION_METADATA_SEPARATOR = re.compile(r":[ \t\n\x0b\f\r]+")
"""Java's regex ``:\\s+``, which splits each line of ``partition.metadata``."""


def java_lines(text: str) -> list[tuple[int, str]]:
    """(byte position, line) of each line of ``text`` as Java's ``BufferedReader.readLine``
    reads them: a line ends at ``\\n``, ``\\r`` or ``\\r\\n`` (no other character ends
    one), and a last line without an end is still a line."""
    found: list[tuple[int, str]] = []
    position = 0
    for match in re.finditer(r"([^\r\n]*)(\r\n|\r|\n|\Z)", text):
        line, end = match.group(1), match.group(2)
        if not line and not end:  # the empty match at the very end
            break
        found.append((position, line))
        position += len((line + end).encode("utf-8"))
    return found


def java_split(pattern: re.Pattern[str], line: str) -> list[str]:
    """``line.split(regex)`` as Java's ``String.split`` does it: a match at the start leaves
    an empty first field, empty fields at the end are dropped, and a line with no match
    is one field (itself, even when empty)."""
    if pattern.search(line) is None:
        return [line]
    fields = pattern.split(line)
    while fields and not fields[-1]:
        fields.pop()
    return fields


def _malformed(source: str, line: str) -> str:
    """Kafka's words for a line its checkpoint readers cannot read."""
    return f"Malformed line in checkpoint file [{source}]: {line}"


def _entry(kind: str, line: str) -> EpochEntry | OffsetEntry | None:
    """One entry line as Kafka's formatters read it: split on whitespace (a line that starts
    with whitespace has an empty first field), then exactly two fields (epoch: a Java
    int; start offset: a Java long) or three (topic: any text; partition: a Java int;
    offset: a Java long). Negative numbers are read as they are."""
    fields = java_split(_JAVA_WHITESPACE, line)
    if kind == LEADER_EPOCH_CHECKPOINT:
        if len(fields) != 2:
            return None
        epoch, start_offset = parse_java_int(fields[0]), parse_java_long(fields[1])
        if epoch is None or start_offset is None:
            return None
        return EpochEntry(epoch, start_offset)
    if len(fields) != 3:
        return None
    partition, offset = parse_java_int(fields[1]), parse_java_long(fields[2])
    if partition is None or offset is None:
        return None
    return OffsetEntry(fields[0], partition, offset)


def decode_checkpoint(text: str, kind: str, source: str = "<text>") -> CheckpointDecodeResult:
    """A ``CheckpointFile``: ``kind`` is :data:`LEADER_EPOCH_CHECKPOINT` or an offset checkpoint.

    As Kafka's reader (``CheckpointFile.CheckpointReadBuffer``): an empty file, or one
    with a version line only, holds no entries. Otherwise the version line must be a
    Java int (no spaces around it) equal to 0, the count line a Java int that is not
    negative, every line after it an entry (see :func:`_entry`; an empty line is not
    one), and the count must match the number of entries. Lines end as Java's
    ``readLine`` ends them.

    The reader itself takes negative numbers, and so does every user of an offset
    checkpoint; but a ``leader-epoch-checkpoint`` is read only to fill a broker's
    leader-epoch cache, which refuses an entry with a negative epoch or start offset
    (:func:`load_leader_epoch_cache`), so such a file fails at that entry.
    """
    lines = java_lines(text)
    size = len(text.encode("utf-8"))

    def stop(message: str, position: int, entries: Sequence[EpochEntry | OffsetEntry] = (),
             version: int | None = None) -> CheckpointDecodeResult:
        kind_: FailureKind = "truncated" if position >= size else "corrupt"
        return CheckpointDecodeResult(version, tuple(entries),  # type: ignore[arg-type]
                                      DecodeFailure(source, kind_, message, position))

    if not lines:  # Kafka creates some of them empty: no entries
        return CheckpointDecodeResult(None, (), None)
    version = parse_java_int(lines[0][1])
    if version is None:
        return stop(_malformed(source, lines[0][1]), 0)
    if version != CHECKPOINT_VERSION:
        return CheckpointDecodeResult(version, (), DecodeFailure(
            source, "unsupported", f"Unrecognised version:{version}, expected version: "
            f"{CHECKPOINT_VERSION} in checkpoint file at: {source}", 0))
    if len(lines) == 1:  # a version and nothing else: no entries, as Kafka reads it
        return CheckpointDecodeResult(version, (), None)
    expected = parse_java_int(lines[1][1])
    if expected is None:
        return stop(_malformed(source, lines[1][1]), lines[1][0], version=version)
    if expected < 0:  # Kafka sizes its list by the count: a negative one throws
        return stop(f"Illegal Capacity: {expected} (a negative entry count)", lines[1][0],
                    version=version)
    entries: list[EpochEntry | OffsetEntry] = []
    for position, line in lines[2:]:
        entry = _entry(kind, line)
        if entry is None:
            return stop(_malformed(source, line), position, entries, version)
        entries.append(entry)
    if len(entries) != expected:
        return stop(f"Expected [{expected}] entries in checkpoint file [{source}], but found "
                    f"only [{len(entries)}]",
                    size if len(entries) < expected else lines[2 + expected][0], entries,
                    version)
    if kind == LEADER_EPOCH_CHECKPOINT:  # what the broker's epoch cache then refuses
        try:
            load_leader_epoch_cache(entries)  # type: ignore[arg-type]
        except DecodeError as exc:
            return stop(exc.message, lines[2 + exc.position][0], entries[:exc.position],
                        version)
    return CheckpointDecodeResult(version, tuple(entries), None)  # type: ignore[arg-type]


def load_leader_epoch_cache(entries: Sequence[EpochEntry]) -> tuple[EpochEntry, ...]:
    """The leader-epoch cache a broker builds from a ``leader-epoch-checkpoint``'s entries,
    as Kafka's ``LeaderEpochFileCache`` assigns them one by one when it loads a log.

    An entry with a negative epoch or start offset is refused (Kafka throws, and the log
    does not load): :class:`DecodeError` with Kafka's message, its position the entry's
    index. An entry of the latest epoch that starts at or after it changes nothing; any
    other entry first drops, from the latest down, the entries of an epoch at or above
    its own or starting at or after it (a file out of order loads truncated, as Kafka's).
    """
    cache: list[EpochEntry] = []
    for index, entry in enumerate(entries):
        if entry.epoch < 0 or entry.start_offset < 0:
            raise DecodeError("Received invalid partition leader epoch entry EpochEntry("
                              f"epoch={entry.epoch}, startOffset={entry.start_offset})", index)
        latest = cache[-1] if cache else None
        if latest is not None and entry.epoch == latest.epoch and \
                entry.start_offset >= latest.start_offset:
            continue
        while cache and (cache[-1].epoch >= entry.epoch
                         or cache[-1].start_offset >= entry.start_offset):
            cache.pop()
        cache.append(entry)
    return tuple(cache)


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
    """``partition.metadata`` as Kafka's ``PartitionMetadataReadBuffer`` reads it.

    Each of the first two lines splits at a colon followed by whitespace into exactly two
    fields; the names before the colons are not checked, and lines after the second are
    not read. The version is a Java int that is at least 0 (Kafka reads a newer version
    too, for downgrades); the topic id a Uuid as ``Uuid.fromString`` reads it, and not
    the zero Uuid.
    """
    lines = java_lines(text)
    size = len(text.encode("utf-8"))
    if not lines:
        return DecodeFailure(source, "truncated", "no version line", size)
    version_fields = java_split(_PARTITION_METADATA_SEPARATOR, lines[0][1])
    if len(version_fields) != 2:
        return DecodeFailure(source, "corrupt", _malformed(source, lines[0][1]), 0)
    version = parse_java_int(version_fields[1])
    if version is None:
        return DecodeFailure(source, "corrupt", _malformed(source, lines[0][1]), 0)
    if version < CHECKPOINT_VERSION:
        # Kafka's text as it is, with the stray " + " inside its quotes
        return DecodeFailure(source, "unsupported", "Unrecognized version of partition "
                             f"metadata file + ({source}): {version}", 0)
    if len(lines) < 2:
        return DecodeFailure(source, "truncated", "no topic_id line", size)
    position, line = lines[1]
    id_fields = java_split(_PARTITION_METADATA_SEPARATOR, line)
    if len(id_fields) != 2:
        return DecodeFailure(source, "corrupt", _malformed(source, line), position)
    try:
        raw = uuid_bytes(id_fields[1])
    except EncodeError as exc:
        return DecodeFailure(source, "corrupt", f"topic_id {id_fields[1]!r}: {exc}", position)
    if raw == bytes(16):
        return DecodeFailure(source, "corrupt",
                             f"Invalid topic ID in partition metadata file ({source})", position)
    return PartitionMetadata(version, uuid_text(raw))  # as Kafka prints it: no padding


def encode_partition_metadata(metadata: PartitionMetadata) -> str:
    """``partition.metadata``'s text, as Kafka writes it."""
    return f"version: {metadata.version}\ntopic_id: {metadata.topic_id}"


CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
"""The file a broker leaves in each log directory when it shuts down cleanly (KIP-966: it
keeps the broker epoch)."""
CLEAN_SHUTDOWN_VERSION = 0
"""The version Kafka writes in the clean shutdown file."""
_INT_RANGE = (INT_MIN, INT_MAX)
_LONG_RANGE = (LONG_MIN, LONG_MAX)


def encode_clean_shutdown(broker_epoch: int, version: int = CLEAN_SHUTDOWN_VERSION) -> str:
    """The clean shutdown file's text as Kafka's ``CleanShutdownFileHandler`` writes it:
    compact JSON, ``version`` then ``brokerEpoch``."""
    return json.dumps({"version": version, "brokerEpoch": broker_epoch},
                      separators=(",", ":"))


def _json_number(value: object, low_high: tuple[int, int], *, null: int | None
                 ) -> int | None:
    """A JSON value as Jackson's default mapper binds it to a Java int or long: a number
    (a fraction is cut off), a numeric string, or null (``null``: what a null binds to;
    None: it does not bind)."""
    if value is None:
        return null
    number: int | None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(value) if math.isfinite(value) else None
    elif isinstance(value, str):
        number = parse_java_long(value.strip())
    else:
        return None
    if number is None or not low_high[0] <= number <= low_high[1]:
        return None
    return number


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


class _JsonObject(list[tuple[str, object]]):
    """A JSON object's fields in file order, repeats kept (Jackson binds them one by one)."""


def decode_clean_shutdown(text: str) -> int | None:
    """The broker epoch in a clean shutdown file, or None where Kafka's ``read`` finds none
    (it logs the problem and carries on as after an unclean shutdown).

    As Kafka reads it with Jackson's default mapper: the first JSON value of the text must
    be an object (anything after it is not read); fields bind in file order, unknown ones
    are skipped, a repeated one binds again; ``version`` (absent or null: 0) must bind to a
    Java int but its value is not checked; ``brokerEpoch`` must bind to a Java long (or
    null) each time, and be there and not null at the end.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_JsonObject, parse_constant=_refuse_constant)
    try:
        data, _ = decoder.raw_decode(text.lstrip(" \t\r\n"))
    except ValueError:
        return None
    if not isinstance(data, _JsonObject):
        return None
    epoch: int | None = None
    for key, value in data:
        if key == "version" and _json_number(value, _INT_RANGE, null=0) is None:
            return None
        if key == "brokerEpoch":
            epoch = _json_number(value, _LONG_RANGE, null=None)
            if epoch is None and value is not None:
                return None
    return epoch
