"""Errors of the Kafka file codec, and the report a damaged file yields.

Two exceptions cross the codec's inner layers: :class:`DecodeError` (bytes
that are not what Kafka would write, with the absolute byte position where the
reader gave up) and :class:`EncodeError` (a value Kafka's format cannot hold).
Callers of the file-level functions never see them: those return the valid
prefix plus a :class:`DecodeFailure`, the way Kafka's log recovery keeps the
good batches of a segment and truncates at the first bad one.
"""

from __future__ import annotations

from typing import Literal

import msgspec

FailureKind = Literal[
    "truncated",
    "crc-mismatch",
    "corrupt",
    "unsupported",
    "missing-header",
    "missing-footer",
    "unreadable",
]
"""What went wrong: a cut tail, a checksum that does not match, bytes that
break the format, a feature this codec does not read (compression, old magic),
a snapshot without its header or footer record, or a file that cannot be
read at all (missing, a directory, no permission)."""


class KafkaFilesError(Exception):
    """Base of the codec's exceptions."""


class DecodeError(KafkaFilesError):
    """Bytes that do not follow Kafka's format.

    ``position`` is the absolute byte position (in the buffer handed to the
    decoder) where decoding failed; ``kind`` classifies the failure.
    """

    def __init__(self, message: str, position: int, kind: FailureKind = "corrupt") -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.kind: FailureKind = kind


class EncodeError(KafkaFilesError, ValueError):
    """A value that Kafka's format (or the chosen record version) cannot hold."""


class DecodeFailure(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Where and why decoding a file stopped; the batches before it are good.

    ``source`` names the file (or a label for in-memory bytes),
    ``batch_index`` counts batches from 0 in that file, ``batch_offset`` is the
    base offset the damaged batch declares (``None`` when its header is cut),
    ``batch_position`` the byte where that batch starts and ``position`` the
    byte where the reader found the problem.
    """

    source: str
    kind: FailureKind
    message: str
    position: int
    batch_index: int | None = None
    batch_offset: int | None = None
    batch_position: int | None = None

    def describe(self) -> str:
        """One line for a terminal: file, batch, offset, byte position, reason."""
        where = [self.source]
        if self.batch_index is not None:
            batch = f"batch {self.batch_index}"
            if self.batch_offset is not None:
                batch += f" (base offset {self.batch_offset})"
            if self.batch_position is not None:
                batch += f" starting at byte {self.batch_position}"
            where.append(batch)
        if self.kind != "unreadable":
            where.append(f"byte {self.position}")
        return f"{': '.join(where)}: {self.kind}: {self.message}"
