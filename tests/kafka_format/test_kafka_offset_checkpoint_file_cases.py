"""The cases of Kafka's ``OffsetCheckpointFileWithFailureHandlerTest``, and how Kafka's
``CheckpointFile`` refuses a damaged offset checkpoint.

Kafka's test writes ``(topic, partition) -> offset`` maps through an
``OffsetCheckpointFile`` (``replication-offset-checkpoint`` and the other offset
checkpoints of a log directory) and reads them back. kraftsim writes the file with
:func:`~kafka_format.files.write_checkpoint` (as Kafka: whole into ``<name>.tmp``, then
renamed) and reads it with :func:`~kafka_format.files.read_checkpoint`, which returns the
entries in file order (Kafka reads them into a map; the tests compare as maps) and, for a
file Kafka would refuse, a :class:`~kafka_format.errors.DecodeFailure` instead of
Kafka's ``KafkaStorageException``.

Kafka's test ``shouldPersistAndOverwriteAndReloadFile`` means to overwrite with a second
map but adds the new entries to the first one, so it overwrites with an empty map; both
overwrites are here.

Beyond Kafka's cases, the rules of Kafka's reader (``CheckpointReadBuffer`` with
``OffsetCheckpointFile.Formatter``), each against a damaged file: the version and
count lines are read by ``Integer.parseInt`` as they are (no spaces, no ``_``, int32);
a negative count is refused (Kafka sizes a list by it); an entry line splits on ASCII
whitespace (``\\s+``), a line that starts with whitespace has an empty first field,
and it must have exactly three fields: any topic, a partition that ``parseInt`` reads
and an offset that ``Long.parseLong`` reads (negative ones included); lines end at
``\\n``, ``\\r`` or ``\\r\\n`` only; the count must equal the number of entries.

Not ported:
- testLazyOffsetCheckpoint, testLazyOffsetCheckpointFileInvalidLogDir: kraftsim has no
  ``LazyOffsetCheckpoints`` (a per-log-directory cache of reads, checked with Mockito).
- testWriteIfDirExistsShouldNotThrowWhenDirNotExists: kraftsim has no
  ``writeIfDirExists``; it writes checkpoints only when saving a run, into directories it
  has just made, and a write into a missing directory raises ``OSError``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.checkpoints import OffsetEntry, decode_checkpoint, encode_checkpoint
from kafka_format.files import read_checkpoint, write_checkpoint

KIND = "replication-offset-checkpoint"


def _as_map(entries: object) -> dict[tuple[str, int], int]:
    assert isinstance(entries, tuple)
    return {(e.topic, e.partition): e.offset for e in entries if isinstance(e, OffsetEntry)}


def _write_and_read(path: Path, offsets: dict[tuple[str, int], int]
                    ) -> dict[tuple[str, int], int]:
    write_checkpoint(path, [OffsetEntry(t, p, o) for (t, p), o in offsets.items()])
    result = read_checkpoint(path, KIND)
    assert result.error is None
    return _as_map(result.entries)


def test_should_persist_and_overwrite_and_reload_file(tmp_path: Path) -> None:
    """shouldPersistAndOverwriteAndReloadFile."""
    path = tmp_path / KIND
    offsets = {("foo", 1): 5, ("bar", 2): 10}
    assert _write_and_read(path, offsets) == offsets
    offsets2 = {("foo", 2): 15, ("bar", 3): 20}
    assert _write_and_read(path, offsets2) == offsets2
    assert _write_and_read(path, {}) == {}  # what Kafka's test really overwrites with
    assert not (tmp_path / f"{KIND}.tmp").exists()  # written through .tmp, then renamed


def test_should_handle_multiple_lines(tmp_path: Path) -> None:
    """shouldHandleMultipleLines."""
    offsets = {}
    for i in range(1, 6):
        offsets["foo", i] = 5
        offsets["bar", i + 5] = 10
    path = tmp_path / KIND
    assert _write_and_read(path, offsets) == offsets
    assert path.read_text().splitlines()[:2] == ["0", "10"]


def test_should_return_empty_map_for_empty_file(tmp_path: Path) -> None:
    """shouldReturnEmptyMapForEmptyFile: Kafka creates the file empty; it reads as no
    entries, as does a written empty map."""
    path = tmp_path / KIND
    path.write_text("")
    result = read_checkpoint(path, KIND)
    assert (result.entries, result.error) == ((), None)
    assert _write_and_read(path, {}) == {}
    assert path.read_text() == "0\n0\n"


def test_should_throw_if_version_is_not_recognised(tmp_path: Path) -> None:
    """shouldThrowIfVersionIsNotRecognised: a file of version 1 (CURRENT_VERSION + 1) is
    refused, entries and all."""
    path = tmp_path / KIND
    path.write_text("1\n1\nfoo 5 10\n")
    result = read_checkpoint(path, KIND)
    assert result.entries == () and result.error is not None
    assert (result.error.kind, result.error.position, result.error.source) == \
        ("unsupported", 0, str(path))


def test_the_text_is_kafkas() -> None:
    """OffsetCheckpointFile's format: version, count, then ``topic partition offset``."""
    text = encode_checkpoint([OffsetEntry("foo", 1, 5), OffsetEntry("bar", 2, 10)])
    assert text == "0\n2\nfoo 1 5\nbar 2 10\n"


# ------------------------------------------------------------ what Kafka's reader refuses

@pytest.mark.parametrize(("text", "kind", "position"), [
    (" 0\n1\nfoo 1 5\n", "corrupt", 0),            # parseInt takes no spaces
    ("0 \n1\nfoo 1 5\n", "corrupt", 0),
    ("0_0\n1\nfoo 1 5\n", "corrupt", 0),           # nor Python's digit separators
    ("2147483648\n0\n", "corrupt", 0),             # beyond int32: not a version at all
    ("-1\n0\n", "unsupported", 0),
    ("0\n 1\nfoo 1 5\n", "corrupt", 2),
    ("0\n-1\n", "corrupt", 2),                     # a negative count
    ("0\n-1\nfoo 1 5\n", "corrupt", 2),
    ("0\n2\nfoo 1 5\n", "truncated", 12),          # fewer entries than the count
    ("0\n1\nfoo 1 5\nbar 2 6\n", "corrupt", 12),   # more
    ("0\n1\nfoo 1\n", "corrupt", 4),               # a missing field
    ("0\n1\nfoo 1 5 6\n", "corrupt", 4),           # an extra one
    ("0\n1\n foo 1 5\n", "corrupt", 4),            # leading space: an empty first field
    ("0\n1\nfoo 1 5\n\n", "corrupt", 12),          # an empty line is not an entry
    ("0\n1\nfoo x 5\n", "corrupt", 4),
    ("0\n1\nfoo 2147483648 5\n", "corrupt", 4),    # a partition beyond int32
    ("0\n1\nfoo 1 9223372036854775808\n", "corrupt", 4),  # an offset beyond int64
    ("0\n1\nfoo 1 5.0\n", "corrupt", 4),
    ("0\n1\nfoo\u00a01 5\n", "corrupt", 4),       # a no-break space does not split
    ("0\n1\nfoo 1\x1c5\n", "corrupt", 4),         # nor end a line, as \x1c does not
    ("0\n1\nfoo -2147483649 5\n", "corrupt", 4),   # a partition below int32
    ("0\n1\nfoo 1 -9223372036854775809\n", "corrupt", 4),  # an offset below int64
], ids=["space-before-version", "space-after-version", "underscore", "int32-version",
        "version-minus-1", "space-before-count", "negative-count", "negative-count-entry",
        "fewer", "more", "two-fields", "four-fields", "leading-space", "empty-line",
        "partition-not-a-number", "partition-beyond-int32", "offset-beyond-int64",
        "offset-fraction", "no-break-space", "file-separator", "partition-below-int32",
        "offset-below-int64"])
def test_a_file_kafka_refuses_is_refused(text: str, kind: str, position: int) -> None:
    """Each condition under which Kafka's reader throws, at the line it throws on."""
    result = decode_checkpoint(text, KIND, "ck")
    assert result.error is not None
    assert (result.error.kind, result.error.position) == (kind, position)


@pytest.mark.parametrize(("text", "entries"), [
    ("", ()),
    ("0", ()),
    ("0\n", ()),
    ("0\n0\n", ()),
    ("0\n1\nfoo -1 -5\n", (OffsetEntry("foo", -1, -5),)),   # negative numbers are read
    ("0\n1\nfoo\t1   5  \n", (OffsetEntry("foo", 1, 5),)),  # runs of whitespace, trailing
    ("0\r\n1\r\nfoo 1 5\r\n", (OffsetEntry("foo", 1, 5),)),  # Windows line ends
    ("0\r1\rfoo 1 5", (OffsetEntry("foo", 1, 5),)),         # \r alone; no final line end
    ("+0\n+1\nfoo +1 +5\n", (OffsetEntry("foo", 1, 5),)),   # parseInt takes a plus sign
    ("0\n1\nfoo 1 \u0665\n", (OffsetEntry("foo", 1, 5),)),  # and digits of any script
    ("0\n1\n 1 5\n", (OffsetEntry("", 1, 5),)),             # an empty topic, as Kafka
    ("0\n2\nfoo 1 5\nfoo 1 6\n", (OffsetEntry("foo", 1, 5), OffsetEntry("foo", 1, 6))),
    ("0\n1\nfoo 1 5\x0c\n", (OffsetEntry("foo", 1, 5),)),  # \f splits, it ends no line
    ("0\n1\nfoo -2147483648 -9223372036854775808\n",      # Java's int and long ranges
     (OffsetEntry("foo", -2**31, -2**63),)),
    ("0\n1\nfoo 2147483647 9223372036854775807\n", (OffsetEntry("foo", 2**31 - 1, 2**63 - 1),)),
], ids=["empty", "version-only", "version-line", "no-entries", "negative-values",
        "whitespace-runs", "crlf", "cr", "plus-signs", "arabic-indic-digit",
        "empty-topic", "repeated-partition", "form-feed", "int-and-long-min",
        "int-and-long-max"])
def test_a_file_kafka_reads_is_read(text: str, entries: tuple[OffsetEntry, ...]) -> None:
    """What Kafka's reader accepts (a repeated partition: Kafka's map keeps the last)."""
    result = decode_checkpoint(text, KIND)
    assert result.error is None
    assert result.entries == entries


@pytest.mark.parametrize(("text", "message"), [
    ("x\n0\n", "Malformed line in checkpoint file [ck]: x"),
    ("1\n0\n", "Unrecognised version:1, expected version: 0 in checkpoint file at: ck"),
    ("0\n1\nfoo 1\n", "Malformed line in checkpoint file [ck]: foo 1"),
    ("0\n2\nfoo 1 5\n", "Expected [2] entries in checkpoint file [ck], but found only [1]"),
    ("0\n-1\n", "Illegal Capacity: -1 (a negative entry count)"),
], ids=["version", "unrecognised-version", "entry", "count", "negative-count"])
def test_a_refusal_says_what_kafka_says(text: str, message: str) -> None:
    """Kafka's words for each refusal, the file named as Kafka names it."""
    result = decode_checkpoint(text, KIND, "ck")
    assert result.error is not None and result.error.message == message
