"""The JSON-lines trace of a run and its fingerprint.

One line per processed event, keys in a fixed order, simulated time only, so
that the same seed gives a byte-identical trace in any process (whatever its
PYTHONHASHSEED). The fingerprint is the SHA-256 of every line; it is computed
even when no trace file is written.

Notes (:meth:`Trace.note`, lines with a ``"note"`` key) annotate a written
trace with what the events did: node status and role changes, transaction
markers as they commit, broker publications, faults. They are written only
to a trace file and are not part of the fingerprint, which is therefore the
same with and without a file. :mod:`sim.timeline_html` draws a trace.
"""

from __future__ import annotations

import hashlib
from typing import IO, Any

import msgspec

_encoder = msgspec.json.Encoder()
HASH_BATCH = 64
"""Lines hashed together (one SHA-256 update per batch)."""


class Trace:
    """Collects trace lines into a fingerprint and, optionally, a file.

    Lines are hashed in batches of :data:`HASH_BATCH` (the digest of the
    concatenation is the same; one hash call per batch, not per line).
    """

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self.out = out
        self._hash = hashlib.sha256()
        self._unhashed: list[bytes] = []  # encoded lines, each without its newline
        self.lines = 0

    def write(self, line: dict[str, Any]) -> None:
        """Add one line (a JSON object)."""
        data = _encoder.encode(line)
        unhashed = self._unhashed
        unhashed.append(data)
        self.lines += 1
        if self.out is not None:
            self.out.write(data + b"\n")
        if len(unhashed) >= HASH_BATCH:
            self._hash_lines()

    def _hash_lines(self) -> None:
        unhashed = self._unhashed
        if unhashed:
            unhashed.append(b"")  # the last line's newline
            self._hash.update(b"\n".join(unhashed))
            unhashed.clear()

    def copy(self) -> Trace:
        """A trace without a file whose fingerprint goes on from this one's (a fork's)."""
        self._hash_lines()
        clone = Trace()
        clone._hash = self._hash.copy()
        clone.lines = self.lines
        return clone

    @property
    def recording(self) -> bool:
        """Whether lines go to a file (notes are only worth making then)."""
        return self.out is not None

    def note(self, line: dict[str, Any]) -> None:
        """Add an annotation to the file only: not counted, not in the fingerprint."""
        if self.out is not None:
            self.out.write(_encoder.encode(line) + b"\n")

    @property
    def fingerprint(self) -> str:
        """SHA-256 of every line so far (first 16 hex digits)."""
        self._hash_lines()
        return self._hash.hexdigest()[:16]
