"""How an operation's records become raft batches: transactional, atomic or non-atomic.

- ``transactional`` (KIP-868's intent; the default at metadata.version >= 3.6-IV1):
  records that fit one batch are one atomic batch; more are written as
  Begin(name), the records, End, split into batches of at most
  ``max_records_per_batch`` records (markers included).
- ``atomic`` (Kafka as built for most operations): one batch, or
  POLICY_VIOLATION and nothing written when the records do not fit. Operations
  that Kafka writes as non-atomic results (a broker's fence, unfence and
  controlled shutdown, whose PartitionChangeRecords can be many, and leader
  elections) say so with a class attribute ``splits_when_atomic = True`` and
  are written non-atomically in this mode: refusing them would leave a dead
  broker unfenced and leader, or a live one fenced.
- ``non-atomic`` (Kafka as built for some operations): split into batches
  without markers, so a failover can commit a prefix.
"""

from __future__ import annotations

from enum import StrEnum

from controller.errors import ApiError, policy_violation_too_large
from metadata.schema import (
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
)
from metadata.versions import release_name, supports_transactions


class WriteMode(StrEnum):
    """How an operation larger than one batch is written."""

    TRANSACTIONAL = "transactional"
    ATOMIC = "atomic"
    NON_ATOMIC = "non-atomic"


def default_mode(metadata_version: int) -> WriteMode:
    """Transactional where the metadata.version allows it, else atomic."""
    return WriteMode.TRANSACTIONAL if supports_transactions(metadata_version) else WriteMode.ATOMIC


def split(records: list[MetadataRecord], size: int) -> list[list[MetadataRecord]]:
    """Consecutive chunks of at most ``size`` records."""
    return [records[i:i + size] for i in range(0, len(records), size)]


def plan_batches(records: list[MetadataRecord], mode: WriteMode, max_records_per_batch: int,
                 metadata_version: int, name: str) -> list[list[MetadataRecord]]:
    """The batches to append for ``records``; raises ApiError when the mode refuses them."""
    if not records:
        return []
    if len(records) <= max_records_per_batch:
        return [records]
    if mode is WriteMode.ATOMIC:
        raise policy_violation_too_large(len(records), max_records_per_batch)
    if mode is WriteMode.NON_ATOMIC:
        return split(records, max_records_per_batch)
    if not supports_transactions(metadata_version):
        raise ApiError("UNSUPPORTED_VERSION",
                       f"transactional writes need metadata.version 3.6-IV1 or later; the "
                       f"cluster is at {release_name(metadata_version)}")
    framed = [BeginTransactionRecord(name[:255]), *records, EndTransactionRecord()]
    return split(framed, max_records_per_batch)
