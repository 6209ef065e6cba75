"""The cases of Kafka's ``PartitionMetadataFileTest``, and how Kafka's reader of
``partition.metadata`` (``PartitionMetadataReadBuffer``) refuses a damaged one.

Kafka's ``PartitionMetadataFile`` records a topic id and flushes it to the partition
directory's ``partition.metadata``: ``version: 0``, a line feed, ``topic_id: <id>`` (no
final line feed). kraftsim writes the file with
:func:`~kafka_format.files.write_partition_metadata` (whole into ``.tmp``, then renamed,
as Kafka), or through :func:`~kafka_format.files.write_partition_dir` given the topic id
(a saved run gives each replica's), and reads it with
:func:`~kafka_format.files.read_partition_metadata`.

Beyond Kafka's cases, the reader's rules: each of the first two lines splits at a colon
followed by whitespace (``:\\s+``) into exactly two fields, and the names before the
colons are not checked; the version is read by ``Integer.parseInt`` and must be at least
0 (a newer version is read, for downgrades); the topic id is read by
``Uuid.fromString`` (22 URL-safe base64 characters, optionally ``==``) and must not be
the zero Uuid; lines after the second are not read.

Not ported:
- testSetRecordWithDifferentTopicId, testSetRecordWithSameTopicId: kraftsim has no
  ``PartitionMetadataFile`` that records a topic id before flushing it; its logs are kept
  by topic id, so a log never meets a second topic id (a recreated topic's partition
  gets a new log), and saved runs are not read back into a simulation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.checkpoints import (
    PARTITION_METADATA,
    PartitionMetadata,
    decode_partition_metadata,
)
from kafka_format.errors import DecodeFailure
from kafka_format.files import (
    read_partition_metadata,
    write_partition_dir,
    write_partition_metadata,
)

TOPIC_ID = "NjQ4FrvzSYmOXRjin9mJvw"


def test_maybe_flush_with_topic_id_present(tmp_path: Path) -> None:
    """testMaybeFlushWithTopicIdPresent: two lines, Kafka's words."""
    path = write_partition_metadata(tmp_path / PARTITION_METADATA,
                                    PartitionMetadata(0, TOPIC_ID))
    assert path.read_text().splitlines() == ["version: 0", f"topic_id: {TOPIC_ID}"]
    assert path.read_bytes() == f"version: 0\ntopic_id: {TOPIC_ID}".encode()
    assert not path.with_name(PARTITION_METADATA + ".tmp").exists()


def test_maybe_flush_with_no_topic_id_present(tmp_path: Path) -> None:
    """testMaybeFlushWithNoTopicIdPresent: with no topic id, no file is written."""
    written = write_partition_dir(tmp_path / "t-0", [])
    assert not (tmp_path / "t-0" / PARTITION_METADATA).exists()
    assert all(p.name != PARTITION_METADATA for p in written)
    written = write_partition_dir(tmp_path / "t-1", [], topic_id=TOPIC_ID)
    assert tmp_path / "t-1" / PARTITION_METADATA in written


def test_read(tmp_path: Path) -> None:
    """testRead: the version and the topic id come back."""
    path = write_partition_metadata(tmp_path / PARTITION_METADATA,
                                    PartitionMetadata(0, TOPIC_ID))
    metadata = read_partition_metadata(path)
    assert isinstance(metadata, PartitionMetadata)
    assert (metadata.version, metadata.topic_id) == (0, TOPIC_ID)


@pytest.mark.parametrize(("text", "kind", "position"), [
    ("", "truncated", 0),
    ("version: 0", "truncated", 10),
    ("version: 0\n", "truncated", 11),
    ("version:0\ntopic_id: " + TOPIC_ID, "corrupt", 0),      # no whitespace after ':'
    ("version 0\ntopic_id: " + TOPIC_ID, "corrupt", 0),
    ("version: 0: 1\ntopic_id: " + TOPIC_ID, "corrupt", 0),  # three fields
    ("version: x\ntopic_id: " + TOPIC_ID, "corrupt", 0),
    ("version:  0 \ntopic_id: " + TOPIC_ID, "corrupt", 0),   # a space after the number
    ("version: 2147483648\ntopic_id: " + TOPIC_ID, "corrupt", 0),
    ("version: -1\ntopic_id: " + TOPIC_ID, "unsupported", 0),
    ("version: 0\ntopic_id:" + TOPIC_ID, "corrupt", 11),
    ("version: 0\ntopic_id: nope", "corrupt", 11),
    ("version: 0\ntopic_id: " + TOPIC_ID + " ", "corrupt", 11),  # Uuid.fromString: no space
    ("version: 0\ntopic_id: " + TOPIC_ID + "=", "corrupt", 11),  # half a padding
    ("version: 0\ntopic_id: " + TOPIC_ID + "===", "corrupt", 11),
    ("version: 0\ntopic_id: NjQ4FrvzSYmOXRjin9mJv+", "corrupt", 11),  # not URL-safe
    ("version: 0\ntopic_id: NjQ4FrvzSYmOXRjin9mJvwAA", "corrupt", 11),  # 18 bytes
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "corrupt", 11),  # the zero Uuid
], ids=["empty", "version-only", "version-line-only", "no-space", "no-colon",
        "three-fields", "version-not-a-number", "space-after-version",
        "version-beyond-int32", "negative-version", "id-no-space", "id-not-base64",
        "id-trailing-space", "id-half-padding", "id-too-long", "id-not-url-safe",
        "id-18-bytes", "zero-uuid"])
def test_a_damaged_partition_metadata_is_refused(text: str, kind: str, position: int,
                                                 tmp_path: Path) -> None:
    """Each condition Kafka's reader throws on, at the line it throws on; reading the file
    names it."""
    failure = decode_partition_metadata(text, "pm")
    assert isinstance(failure, DecodeFailure)
    assert (failure.kind, failure.position) == (kind, position)
    path = tmp_path / PARTITION_METADATA
    path.write_bytes(text.encode())
    read = read_partition_metadata(path)
    assert isinstance(read, DecodeFailure) and read.source == str(path)


@pytest.mark.parametrize(("text", "expected"), [
    ("version: 1\ntopic_id: " + TOPIC_ID, PartitionMetadata(1, TOPIC_ID)),
    ("anything: 0\nelse: " + TOPIC_ID, PartitionMetadata(0, TOPIC_ID)),
    (": 0\n: " + TOPIC_ID, PartitionMetadata(0, TOPIC_ID)),
    ("version:\t0\ntopic_id:   " + TOPIC_ID, PartitionMetadata(0, TOPIC_ID)),
    ("version: 0: \ntopic_id: " + TOPIC_ID, PartitionMetadata(0, TOPIC_ID)),
    ("version: 0\r\ntopic_id: " + TOPIC_ID + "\r\n", PartitionMetadata(0, TOPIC_ID)),
    ("version: 0\ntopic_id: " + TOPIC_ID + "==", PartitionMetadata(0, TOPIC_ID)),
    ("version: 0\ntopic_id: NjQ4FrvzSYmOXRjin9mJvx", PartitionMetadata(0, TOPIC_ID)),
    ("version: 0\ntopic_id: " + TOPIC_ID + "\ngarbage", PartitionMetadata(0, TOPIC_ID)),
], ids=["newer-version", "other-names", "no-names", "tabs-and-spaces",
        "trailing-colon-space", "crlf", "padded-id", "unused-bits", "lines-after"])
def test_a_partition_metadata_kafka_reads_is_read(text: str,
                                                  expected: PartitionMetadata) -> None:
    """What Kafka's reader accepts (a trailing ``: `` leaves an empty last field, which
    Java's split drops); the topic id comes back as Kafka prints it, without padding and
    with the unused bits of its last character cleared."""
    assert decode_partition_metadata(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("version 0\ntopic_id: " + TOPIC_ID, "Malformed line in checkpoint file [pm]: version 0"),
    ("version: x\ntopic_id: " + TOPIC_ID,  # Kafka names the line it could not parse
     "Malformed line in checkpoint file [pm]: version: x"),
    ("version: -1\ntopic_id: " + TOPIC_ID,
     "Unrecognized version of partition metadata file + (pm): -1"),  # Kafka's " + " too
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
     "Invalid topic ID in partition metadata file (pm)"),
], ids=["malformed", "version-not-a-number", "negative-version", "zero-uuid"])
def test_a_refusal_says_what_kafka_says(text: str, message: str) -> None:
    """Kafka's words for each refusal (as PartitionMetadataReadBuffer has them, a stray
    ``+`` included)."""
    failure = decode_partition_metadata(text, "pm")
    assert isinstance(failure, DecodeFailure) and failure.message == message
