"""Cases of Kafka's OffsetIndexTest for what kraftsim does with an offset index: write it
(:func:`kafka_format.log_indexes.encode_offset_index`, as ``--save`` does), read it back
(:func:`kafka_format.files.read_index`, as ``dump-log`` does) and run the broker's
start-up check on it (``dump-log --index-sanity-check``, Kafka's ``sanityCheck``).

Kafka class followed: ``OffsetIndexTest``
(``storage/src/test/java/org/apache/kafka/storage/internals/log``); its index has base
offset 45.

Ported: testEntry (the entries read back in order), testReopen (an index written, then
read: its entries, last offset and count), testSanityLastOffsetEqualToBaseOffset.

Not ported: randomLookupTest, lookupExtremeCases, testFetchUpperBoundOffset (kraftsim
looks nothing up in an index: its logs are in memory, and ``dump-log`` reads a segment
whole), testEntryOverflow, appendTooMany, appendOutOfOrder, truncate, forceUnmap (kraftsim
keeps no live, memory-mapped, preallocated index to append to, truncate or unmap).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.files import read_index
from kafka_format.log_indexes import OFFSET_ENTRY, OffsetIndexEntry, encode_offset_index
from kraftsim.dump_log import main

BASE_OFFSET = 45


def _index(directory: Path, base_offset: int, entries: list[OffsetIndexEntry]) -> Path:
    path = directory / f"{base_offset:020d}.index"
    path.write_bytes(encode_offset_index(entries, base_offset))
    return path


def test_entry(tmp_path: Path) -> None:
    """testEntry: entry i of an index of consecutive offsets is (base + i, i)."""
    written = [OffsetIndexEntry(BASE_OFFSET + i, i) for i in range(30)]
    path = _index(tmp_path, BASE_OFFSET, written)
    assert path.stat().st_size == 30 * OFFSET_ENTRY.size == 240
    result = read_index(path)
    assert result.error is None and list(result.entries) == written


def test_reopen(tmp_path: Path) -> None:
    """testReopen: the entries (51, 0) and (52, 1) written, the index read again holds
    both, 52 last."""
    first, second = OffsetIndexEntry(51, 0), OffsetIndexEntry(52, 1)
    result = read_index(_index(tmp_path, BASE_OFFSET, [first, second]))
    assert result.error is None
    assert list(result.entries) == [first, second]
    assert result.entries[-1].offset == 52 and len(result.entries) == 2


def test_sanity_last_offset_equal_to_base_offset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """testSanityLastOffsetEqualToBaseOffset: an index whose only (last) entry is at the
    base offset passes the start-up check."""
    path = _index(tmp_path, 20, [OffsetIndexEntry(20, 0)])
    assert main(["--index-sanity-check", str(path)]) == 0
    assert f"{path} passed sanity check." in capsys.readouterr().out
