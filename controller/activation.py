"""What a new leader writes before anything else (Kafka's ActivationRecordsGenerator).

- An empty log: the bootstrap records (:class:`~metadata.bootstrap.BootstrapMetadata`:
  metadata.version and whatever else the bootstrap holds), the cluster-level
  min.insync.replicas when the bootstrap turns eligible leader replicas on, then a
  ZkMigrationStateRecord at >= 3.4-IV0. At the bootstrap's metadata.version
  >= 3.6-IV1 inside a transaction named "Bootstrap records", written
  non-atomically; below, one atomic batch without markers.
- A committed log that ends inside an open transaction: exactly one atomic
  ``AbortTransactionRecord(reason="Controller failover")``; below 3.6-IV1 this
  is a fatal fault, as in Kafka.
- Otherwise nothing.

Kafka's "partial bootstrap" branch (empty log *and* an open transaction) can
never be taken, because any replayed record, a Begin included, makes the log
non-empty; kraftsim does not model it.
"""

from __future__ import annotations

import msgspec

from controller.errors import ControllerFault
from controller.operations.elr import ELR_FEATURE, MIN_INSYNC_REPLICAS, STATIC_MIN_INSYNC_REPLICAS
from metadata.bootstrap import BootstrapMetadata
from metadata.delta import BROKER_RESOURCE
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    MetadataRecord,
    ZkMigrationStateRecord,
)
from metadata.versions import ZK_MIGRATION_RECORD, release_name, supports_transactions

BOOTSTRAP_TRANSACTION = "Bootstrap records"
"""The name of the bootstrap transaction."""
FAILOVER_ABORT_REASON = "Controller failover"
"""The reason of the abort a new leader writes."""


class ActivationRecords(msgspec.Struct, frozen=True):
    """Records to write on activation; ``atomic``: in one batch."""

    records: list[MetadataRecord]
    atomic: bool


def bootstrap_records(bootstrap: BootstrapMetadata) -> list[MetadataRecord]:
    """What the first leader of an empty log sets up (without markers): with eligible
    leader replicas on in the bootstrap, also the cluster-level min.insync.replicas they
    need (Kafka 4.1's ActivationRecordsGenerator writes its ELR safety records)."""
    records = list(bootstrap.records)
    if any(isinstance(r, FeatureLevelRecord) and r.name == ELR_FEATURE and r.feature_level >= 1
           for r in bootstrap.records):
        records.append(ConfigRecord(BROKER_RESOURCE, "", MIN_INSYNC_REPLICAS,
                                    str(STATIC_MIN_INSYNC_REPLICAS)))
    if bootstrap.metadata_version >= ZK_MIGRATION_RECORD:
        records.append(ZkMigrationStateRecord(0))
    return records


def activation_records(log_empty: bool, transaction_start: int, metadata_version: int,
                       bootstrap: BootstrapMetadata) -> ActivationRecords:
    """The records a new leader writes first; raises ControllerFault when it cannot go on.

    ``metadata_version`` is the one of the replayed log; ``bootstrap`` is used only when
    the log is empty.
    """
    if log_empty:
        records = bootstrap_records(bootstrap)
        if supports_transactions(bootstrap.metadata_version):
            return ActivationRecords(
                [BeginTransactionRecord(BOOTSTRAP_TRANSACTION), *records, EndTransactionRecord()],
                atomic=False)
        return ActivationRecords(records, atomic=True)
    if transaction_start != -1:
        if not supports_transactions(metadata_version):
            raise ControllerFault(
                f"Detected in-progress transaction at offset {transaction_start}, but the "
                f"metadata.version {release_name(metadata_version)} does not support "
                f"transactions. Cannot continue.", transaction_start)
        return ActivationRecords([AbortTransactionRecord(FAILOVER_ABORT_REASON)], atomic=True)
    return ActivationRecords([], atomic=True)
