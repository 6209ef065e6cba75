"""Data partition directories in Kafka's layout: ``<topic>-<partition>/`` segments and indexes.

A broker's log directory holds one directory per partition replica, named
``<topic>-<partition>``, with ``<base offset, 20 digits>.log`` segments and,
for a segment holding ABORT markers, ``<base offset>.txnindex`` (Kafka
creates it lazily: a segment without aborted transactions has none). Kafka's
``.index`` and ``.timeindex`` are not written: Kafka rebuilds them on recovery
(as for the metadata log, see :mod:`kafka_format.files`).

Readers never raise on a damaged or missing file: each returns the good part
and a :class:`~kafka_format.errors.DecodeFailure`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from kafka_format.data_log import (
    AbortedTxnEntry,
    DataBatch,
    DataLogDecodeResult,
    TxnIndexDecodeResult,
    decode_data_log,
    decode_txn_index,
    encode_data_log,
    encode_txn_index,
)
from kafka_format.errors import DecodeFailure
from kafka_format.files import segment_file_name

TXN_INDEX_SUFFIX = ".txnindex"
_TXN_INDEX_NAME = re.compile(r"^(\d{20})\.txnindex$")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")


def partition_dir_name(topic: str, partition: int) -> str:
    """``orders-0``."""
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a ``<topic>-<partition>`` directory name, or None."""
    match = _PARTITION_DIR.match(name)
    return (match.group(1), int(match.group(2))) if match else None


def txn_index_file_name(base_offset: int) -> str:
    """``<base offset, 20 digits>.txnindex``."""
    return f"{base_offset:020d}{TXN_INDEX_SUFFIX}"


def is_txn_index_name(name: str) -> bool:
    """Whether ``name`` is a ``.txnindex`` file's name."""
    return _TXN_INDEX_NAME.match(name) is not None or name.endswith(TXN_INDEX_SUFFIX)


def write_partition_dir(directory: str | Path, batches: Iterable[DataBatch],
                        aborted: Iterable[AbortedTxnEntry] = (), base_offset: int = 0
                        ) -> list[Path]:
    """Write one segment (and its ``.txnindex`` if any transaction aborted) into
    ``directory``, created if needed; returns the paths. Raises ``OSError`` and
    :class:`~kafka_format.errors.EncodeError`."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    segment = path / segment_file_name(base_offset)
    segment.write_bytes(encode_data_log(batches))
    written = [segment]
    entries = list(aborted)
    if entries:
        index = path / txn_index_file_name(base_offset)
        index.write_bytes(encode_txn_index(entries))
        written.append(index)
    return written


def _read(path: Path) -> bytes | DecodeFailure:
    try:
        return path.read_bytes()
    except OSError as exc:
        return DecodeFailure(str(path), "unreadable", exc.strerror or str(exc), 0)


def read_data_segment(path: str | Path) -> DataLogDecodeResult:
    """Decode a data partition's ``.log`` segment."""
    data = _read(Path(path))
    if isinstance(data, DecodeFailure):
        return DataLogDecodeResult((), data)
    return decode_data_log(data, str(path))


def read_txn_index(path: str | Path) -> TxnIndexDecodeResult:
    """Decode a ``.txnindex`` file."""
    data = _read(Path(path))
    if isinstance(data, DecodeFailure):
        return TxnIndexDecodeResult((), data)
    return decode_txn_index(data, str(path))
