"""Kafka's BoundedList for an operation's records: past the limit, the operation fails at once.

Kafka generates the records of a user operation into
``BoundedList.newArrayBacked(MAX_RECORDS_PER_USER_OP)``; the add past the limit
throws, and the controller answers POLICY_VIOLATION "Unable to perform
excessively large batch operation." with nothing written and no failover.
Failing on that add (not after the whole operation is generated) is what
keeps a request for millions of partitions from exhausting memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import SupportsIndex

from controller.errors import ApiError
from metadata.schema import MetadataRecord

MAX_RECORDS_PER_USER_OP = 10_000
"""Kafka's QuorumController.MAX_RECORDS_PER_USER_OP (= its MAX_RECORDS_PER_BATCH)."""

EXCESSIVELY_LARGE = "Unable to perform excessively large batch operation."
"""Kafka's message for an operation past the bound (EventHandlerExceptionInfo)."""


def too_large() -> ApiError:
    """The refusal of an operation whose records pass the bound."""
    return ApiError("POLICY_VIOLATION", EXCESSIVELY_LARGE)


class BoundedRecords(list[MetadataRecord]):
    """A list of at most ``limit`` records; adding one more raises POLICY_VIOLATION."""

    def __init__(self, limit: int = MAX_RECORDS_PER_USER_OP) -> None:
        super().__init__()
        self.limit = limit

    def append(self, record: MetadataRecord, /) -> None:
        """Add one record; raises ApiError(POLICY_VIOLATION) past the limit."""
        if len(self) >= self.limit:
            raise too_large()
        super().append(record)

    def extend(self, records: Iterable[MetadataRecord], /) -> None:
        """Add records; a huge (lazy) iterable is read only one record past the limit, and
        then nothing is added and ApiError(POLICY_VIOLATION) raised."""
        room = self.limit - len(self)
        taken = list(islice(records, max(room, 0) + 1))
        if len(taken) > room:
            raise too_large()
        super().extend(taken)

    def insert(self, index: SupportsIndex, record: MetadataRecord, /) -> None:
        """Insert one record; raises ApiError(POLICY_VIOLATION) past the limit."""
        if len(self) >= self.limit:
            raise too_large()
        super().insert(index, record)

    def __iadd__(self, records: Iterable[MetadataRecord]) -> BoundedRecords:  # type: ignore[override,misc]
        self.extend(records)
        return self
