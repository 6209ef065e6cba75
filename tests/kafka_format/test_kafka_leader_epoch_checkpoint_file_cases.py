"""The cases of Kafka's ``LeaderEpochCheckpointFileWithFailureHandlerTest``, how Kafka's
reader refuses a damaged ``leader-epoch-checkpoint``, and the file a saved run writes.

Kafka's test writes lists of ``EpochEntry(epoch, startOffset)`` through a
``LeaderEpochCheckpointFile`` and reads them back, also through a second instance over
the same file. kraftsim writes the file with :func:`~kafka_format.files.write_checkpoint`
and reads it with :func:`~kafka_format.files.read_checkpoint` (kind
``leader-epoch-checkpoint``); a reader keeps nothing between reads, so "recreating the
checkpoint" is reading the file again.

Beyond Kafka's cases, the rules of Kafka's ``LeaderEpochCheckpointFile.Formatter``: an
entry line splits on ASCII whitespace into exactly two fields, the epoch read by
``Integer.parseInt`` and the start offset by ``Long.parseLong`` (a line that starts
with whitespace has an empty first field and is refused). The reader takes negative
numbers, but the file is read only to fill a broker's leader-epoch cache
(``LeaderEpochFileCache``), which refuses a negative epoch or start offset and drops
entries that break the order (:func:`~kafka_format.checkpoints.load_leader_epoch_cache`):
kraftsim's reader of the file fails at such an entry, and so does ``kraftsim dump-log``.

That a saved run (``--save``) writes each replica's leader-epoch cache as its partition directory's
``leader-epoch-checkpoint`` is checked with the broker's other files in
``tests/broker/test_kafka_highwatermark_persistence_cases.py``.

Not ported: none; both methods of the class are here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    decode_checkpoint,
    load_leader_epoch_cache,
)
from kafka_format.errors import DecodeError
from kafka_format.files import read_checkpoint, write_checkpoint
from kraftsim.cli import main


def _read(path: Path) -> tuple[EpochEntry, ...]:
    result = read_checkpoint(path, LEADER_EPOCH_CHECKPOINT)
    assert result.error is None
    return result.entries  # type: ignore[return-value]


def test_should_persist_and_overwrite_and_reload_file(tmp_path: Path) -> None:
    """shouldPersistAndOverwriteAndReloadFile."""
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    write_checkpoint(path, epochs)
    assert list(_read(path)) == epochs
    epochs2 = [EpochEntry(3, 4), EpochEntry(4, 5)]
    write_checkpoint(path, epochs2)
    assert list(_read(path)) == epochs2
    assert path.read_text() == "0\n2\n3 4\n4 5\n"


def test_should_retain_values_even_if_checkpoint_is_recreated(tmp_path: Path) -> None:
    """shouldRetainValuesEvenIfCheckpointIsRecreated."""
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    write_checkpoint(path, epochs)
    assert list(_read(Path(str(path)))) == epochs


@pytest.mark.parametrize(("text", "position"), [
    ("0\n1\n0\n", 4),                      # a missing field
    ("0\n1\n0 1 2\n", 4),                  # an extra one
    ("0\n1\n 0 1\n", 4),                   # leading whitespace: an empty first field
    ("0\n1\n2147483648 1\n", 4),           # an epoch beyond int32
    ("0\n1\n0 9223372036854775808\n", 4),  # a start offset beyond int64
    ("0\n1\n0 1.5\n", 4),
    ("0\n1\n0x1 1\n", 4),
    ("0\n2\n0 1\n1\n", 8),
    ("0\n-2\n", 2),                        # a negative count
    ("00\n1\n0 1\n0 1\n", 9),              # version 0 written "00"; one entry too many
], ids=["one-field", "three-fields", "leading-space", "epoch-beyond-int32",
        "offset-beyond-int64", "fraction", "hex", "second-line-short", "negative-count",
        "extra-entry"])
def test_a_damaged_epoch_file_is_refused(text: str, position: int) -> None:
    """Each line Kafka's reader throws on, where it throws."""
    result = decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT, "epochs")
    assert result.error is not None and result.error.position == position


@pytest.mark.parametrize(("text", "entries"), [
    ("0\n1\n3\t\t170 \n", (EpochEntry(3, 170),)),
    ("0\n0\n", ()),
    ("0\n2\n2 10\n1 5\n", (EpochEntry(2, 10), EpochEntry(1, 5))),  # as the file has them
], ids=["tabs-and-trailing-space", "empty", "out-of-order"])
def test_an_epoch_file_kafka_reads_is_read(text: str,
                                           entries: tuple[EpochEntry, ...]) -> None:
    """Runs of whitespace are read, as Kafka's formatter reads them; entries out of order
    are read (the cache drops what breaks the order, see below)."""
    result = decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT)
    assert (result.entries, result.error) == (entries, None)


@pytest.mark.parametrize(("text", "position", "good"), [
    ("0\n1\n-1 -1\n", 4, ()),
    ("0\n2\n0 0\n3 -7\n", 8, (EpochEntry(0, 0),)),
    ("0\n3\n0 0\n-3 7\n", 13, (EpochEntry(0, 0), EpochEntry(-3, 7))),  # the count first
], ids=["negative-both", "negative-start-offset", "count-before-values"])
def test_an_epoch_file_with_a_negative_entry_fails(text: str, position: int,
                                                   good: tuple[EpochEntry, ...]) -> None:
    """Kafka's file reader takes negative numbers, but the leader-epoch cache it fills
    refuses the entry (after the whole file is read, so a wrong count is found first)."""
    result = decode_checkpoint(text, LEADER_EPOCH_CHECKPOINT, "epochs")
    assert result.error is not None and result.error.position == position
    assert result.entries == good
    if len(good) < 2:
        assert result.error.message.startswith(
            "Received invalid partition leader epoch entry EpochEntry(epoch=")


def test_a_crlf_file_says_where_in_its_bytes(tmp_path: Path) -> None:
    """A file with Windows line ends is read as Kafka reads it, and a failure's position is
    a byte of the file as it is on disk."""
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    path.write_bytes(b"0\r\n2\r\n0 0\r\n1\r\n")
    result = read_checkpoint(path, LEADER_EPOCH_CHECKPOINT)
    assert result.entries == (EpochEntry(0, 0),)
    assert result.error is not None and result.error.position == 11


# ----------------------------------------------- loading the entries into the epoch cache

@pytest.mark.parametrize(("entries", "message"), [
    ([EpochEntry(-1, 0)], r"EpochEntry\(epoch=-1, startOffset=0\)"),
    ([EpochEntry(0, 0), EpochEntry(1, -5)], r"EpochEntry\(epoch=1, startOffset=-5\)"),
], ids=["negative-epoch", "negative-start-offset"])
def test_a_negative_entry_does_not_load(entries: list[EpochEntry], message: str) -> None:
    """Kafka's file reader reads negative numbers, but its LeaderEpochFileCache refuses
    such an entry when it loads the file ("Received invalid partition leader epoch
    entry ...")."""
    with pytest.raises(DecodeError, match="^Received invalid partition leader epoch entry "
                       + message + "$") as refused:
        load_leader_epoch_cache(entries)
    assert refused.value.position == len(entries) - 1


@pytest.mark.parametrize(("entries", "cache"), [
    ([(0, 0), (1, 5), (3, 9)], [(0, 0), (1, 5), (3, 9)]),
    ([(0, 0), (0, 0), (0, 4)], [(0, 0)]),                # the latest epoch again: no change
    ([(0, 0), (1, 5), (1, 3)], [(0, 0), (1, 3)]),        # the latest epoch, earlier: moves
    ([(0, 0), (2, 5), (1, 7)], [(0, 0), (1, 7)]),        # a lower epoch drops the higher
    ([(0, 0), (1, 5), (2, 4)], [(0, 0), (2, 4)]),        # an earlier start drops the later
    ([(3, 10), (1, 2)], [(1, 2)]),
    ([(0, 0), (1, 5), (2, 5)], [(0, 0), (2, 5)]),        # the same start drops the older
    ([(1, 0), (2, 10), (3, 20), (2, 25)], [(1, 0), (2, 25)]),  # an earlier epoch again
    ([], []),
], ids=["monotonic", "same-epoch-later", "same-epoch-earlier", "lower-epoch",
        "earlier-start", "all-dropped", "same-start", "earlier-epoch-again", "empty"])
def test_entries_load_as_kafkas_cache_assigns_them(entries: list[tuple[int, int]],
                                                   cache: list[tuple[int, int]]) -> None:
    """The cache Kafka builds from a file's entries, assigned one by one."""
    assert load_leader_epoch_cache([EpochEntry(*e) for e in entries]) == \
        tuple(EpochEntry(*e) for e in cache)


def test_dump_log_refuses_an_epoch_file_a_broker_would_not_load(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``kraftsim dump-log`` prints the entries up to the bad one and fails (exit 1)."""
    path = tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT
    path.parent.mkdir()
    path.write_text("0\n2\n0 0\n-1 4\n")
    assert main(["dump-log", str(path)]) == 1
    captured = capsys.readouterr()
    assert "epoch: 0 startOffset: 0" in captured.out  # the entries before the bad one
    assert "epoch: -1" not in captured.out
    assert "Received invalid partition leader epoch entry" in captured.err
    path.write_text("0\n2\n0 0\n1 4\n")
    assert main(["dump-log", str(path)]) == 0
