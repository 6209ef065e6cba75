"""The record version Kafka would write for a record at a metadata.version level.

Kafka picks most versions from ``MetadataVersion`` (``registerBrokerRecordVersion``,
``partitionRecordVersion``, ``partitionChangeRecordVersion``,
``registerControllerRecordVersion``, as of trunk in October 2024) and picks
BrokerRegistrationChangeRecord's version from what the record changes (0 for
fencing, 1 for a controlled shutdown, 2 for log directories). Every other
modelled record has version 0 only. An :class:`UnknownRecord` keeps its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_format.errors import EncodeError
from metadata import schema as records
from metadata import versions as mv

_IN_CONTROLLED_SHUTDOWN = mv.LEVELS["3.3-IV3"]
_ZK_MIGRATION = mv.LEVELS["3.4-IV0"]
_CONTROLLER_REGISTRATION = mv.LEVELS["3.7-IV0"]

LEVEL_VERSIONED_TYPES: frozenset[type[records.MetadataRecord]] = frozenset(
    cls
    for cls in records.RECORD_TYPES.values()
    if cls not in (records.UnknownRecord, records.BrokerRegistrationChangeRecord)
)
"""The record types whose version :func:`record_version` picks from the level alone."""


def register_broker_record_version(metadata_version: int) -> int:
    """RegisterBrokerRecord: 3 with log dirs (3.7-IV2), 2 from 3.4-IV0, 1 from 3.3-IV3."""
    if metadata_version >= mv.DIRECTORIES:
        return 3
    if metadata_version >= _ZK_MIGRATION:
        return 2
    if metadata_version >= _IN_CONTROLLED_SHUTDOWN:
        return 1
    return 0


def partition_record_version(metadata_version: int) -> int:
    """PartitionRecord and PartitionChangeRecord: 2 with ELR (4.0-IV1), 1 from 3.7-IV2."""
    if metadata_version >= mv.ELR:
        return 2
    if metadata_version >= mv.DIRECTORIES:
        return 1
    return 0


def broker_registration_change_version(record: records.BrokerRegistrationChangeRecord) -> int:
    """The lowest version that holds what the record changes (as Kafka's controller does)."""
    if record.log_dirs is not None:
        return 2
    if record.in_controlled_shutdown != 0:
        return 1
    return 0


def metadata_version_after(applied: Iterable[object], metadata_version: int) -> int:
    """The metadata.version level once ``applied`` records are replayed (the last one wins).

    Kafka's active controller writes every record after a metadata.version
    FeatureLevelRecord with the versions of the new level.
    """
    for record in applied:
        if isinstance(record, records.FeatureLevelRecord) and (
            record.name == mv.METADATA_VERSION_FEATURE and record.feature_level > 0
        ):
            metadata_version = record.feature_level
    return metadata_version


def record_version(record: records.MetadataRecord, metadata_version: int) -> int:
    """The version to write ``record`` at a metadata.version level.

    Raises :class:`EncodeError` where Kafka refuses too: a RegisterControllerRecord
    below 3.7-IV0.
    """
    if isinstance(record, records.UnknownRecord):
        return record.version
    if isinstance(record, records.RegisterBrokerRecord):
        return register_broker_record_version(metadata_version)
    if isinstance(record, records.PartitionRecord | records.PartitionChangeRecord):
        return partition_record_version(metadata_version)
    if isinstance(record, records.BrokerRegistrationChangeRecord):
        return broker_registration_change_version(record)
    if isinstance(record, records.RegisterControllerRecord):
        if metadata_version < _CONTROLLER_REGISTRATION:
            raise EncodeError(
                "controller registration needs metadata.version 3.7-IV0 or later, not "
                f"{mv.release_name(metadata_version)}"
            )
        return 0
    return 0
