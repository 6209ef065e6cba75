"""Cases of Kafka's TimeIndexTest for what kraftsim does with a time index: write it
(:func:`kafka_format.log_indexes.encode_time_index`), read it back
(:func:`kafka_format.files.read_index`) and run the broker's start-up check on it
(``dump-log --index-sanity-check``, Kafka's ``sanityCheck``).

Kafka class followed: ``TimeIndexTest``
(``storage/src/test/java/org/apache/kafka/storage/internals/log``): base offset 45,
entries (10 i, 45 + 10 i) for i from 1.

Ported: testEntry, testEntrySize, testParseEntry, testLastEntry (the last entry read back),
testSanityCheck (Kafka overrides the index's last entry and length with a mock; here the
file itself holds the damage: a last offset below the base offset, a last timestamp
below the first, a length that is not whole entries).

Not ported: testLookUp (kraftsim looks nothing up in an index), testEntryOverflow,
testTruncate, testAppend, testIsFull, testResize (kraftsim keeps no live, preallocated
index to append to, truncate or resize).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.files import read_index
from kafka_format.log_indexes import TIME_ENTRY, TimeIndexEntry, encode_time_index
from kraftsim.dump_log import main

BASE_OFFSET = 45


def _entries(count: int) -> list[TimeIndexEntry]:
    """Kafka's appendEntries: (10 i, base + 10 i) for i in 1..count."""
    return [TimeIndexEntry(i * 10, i * 10 + BASE_OFFSET) for i in range(1, count + 1)]


def _index(directory: Path, entries: list[TimeIndexEntry], case: str = "") -> Path:
    """The index file, in its own directory per ``case``."""
    (directory / case).mkdir(exist_ok=True)
    path = directory / case / f"{BASE_OFFSET:020d}.timeindex"
    path.write_bytes(encode_time_index(entries, BASE_OFFSET))
    return path


def _sane(path: Path, capsys: pytest.CaptureFixture[str]) -> bool:
    code = main(["--index-sanity-check", str(path)])
    out = capsys.readouterr().out
    assert (code == 0) == (f"{path} passed sanity check." in out)
    return code == 0


def test_entry(tmp_path: Path) -> None:
    result = read_index(_index(tmp_path, _entries(29)), time_index=True)
    assert result.error is None
    assert list(result.entries[:4]) == [TimeIndexEntry(10, 55), TimeIndexEntry(20, 65),
                                        TimeIndexEntry(30, 75), TimeIndexEntry(40, 85)]


def test_entry_size() -> None:
    assert TIME_ENTRY.size == 12


def test_parse_entry_and_last_entry(tmp_path: Path) -> None:
    """testParseEntry and testLastEntry: the one entry (1, base + 1) reads back as it was
    written, and is the last; its bytes are the timestamp (int64) then the offset
    relative to the base (int32)."""
    path = _index(tmp_path, [TimeIndexEntry(1, BASE_OFFSET + 1)])
    assert path.read_bytes() == (1).to_bytes(8, "big") + (1).to_bytes(4, "big")
    result = read_index(path, time_index=True)
    assert result.entries[-1] == TimeIndexEntry(1, BASE_OFFSET + 1)


def test_sanity_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _sane(_index(tmp_path, [], "empty"), capsys)
    good = _index(tmp_path, _entries(5), "good")
    assert _sane(good, capsys)
    below_base = _index(tmp_path, [*_entries(4), TimeIndexEntry(50, BASE_OFFSET - 1)],
                        "offset")
    assert not _sane(below_base, capsys)
    earlier_than_first = _index(tmp_path, [*_entries(4), TimeIndexEntry(9, 95)],
                                "timestamp")
    assert not _sane(earlier_than_first, capsys)
    cut = _index(tmp_path, [], "length")
    cut.write_bytes(good.read_bytes()[:-1])
    assert not _sane(cut, capsys)
