"""BootstrapMetadata: the records the first leader of an empty log writes (Kafka's
``metadata/bootstrap/BootstrapMetadata``).

A formatted node holds them in ``bootstrap.checkpoint`` (read and written by
:mod:`kafka_format.files`), or a configured metadata.version stands in for
the file. They always set metadata.version: the *last* ``FeatureLevelRecord``
for it gives the version, which must be at least 3.3-IV0 (Kafka's
``MINIMUM_BOOTSTRAP_VERSION``, the first level with FeatureLevelRecord); any
other records (configs, SCRAM credentials, other features) are written with
it. The controller adds the markers and the ZkMigrationStateRecord
(:mod:`controller.activation`); they are not part of the bootstrap metadata.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from metadata.schema import FeatureLevelRecord, MetadataRecord
from metadata.versions import (
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    default_feature_levels,
    release_name,
)


class BootstrapError(ValueError):
    """Bootstrap records that cannot start a cluster (no metadata.version, or one too old)."""


def _version_of(record: MetadataRecord) -> int | None:
    """The metadata.version ``record`` sets, or None when it sets none."""
    if isinstance(record, FeatureLevelRecord) and record.name == METADATA_VERSION_FEATURE:
        return record.feature_level
    return None


class BootstrapMetadata(msgspec.Struct, frozen=True):
    """Bootstrap records, the metadata.version they set and where they come from.

    Build one with :meth:`from_version` or :meth:`from_records`; both raise
    :class:`BootstrapError` for a metadata.version below 3.3-IV0.
    """

    records: tuple[MetadataRecord, ...]
    metadata_version: int
    source: str

    def __post_init__(self) -> None:
        if self.metadata_version < MINIMUM_BOOTSTRAP:
            raise BootstrapError(
                f"Bootstrap metadata.version before {release_name(MINIMUM_BOOTSTRAP)} are not "
                f"supported. Can't load metadata from {self.source}")

    @classmethod
    def from_version(cls, metadata_version: int, source: str) -> BootstrapMetadata:
        """Only the metadata.version record, at ``metadata_version``."""
        return cls((FeatureLevelRecord(METADATA_VERSION_FEATURE, metadata_version),),
                   metadata_version, source)

    @classmethod
    def formatted(cls, metadata_version: int, source: str) -> BootstrapMetadata:
        """What formatting a cluster at ``metadata_version`` writes (Kafka's Formatter): the
        metadata.version record, then each feature's default level above 0
        (:func:`metadata.versions.default_feature_levels`)."""
        defaults = default_feature_levels(metadata_version)
        return cls((FeatureLevelRecord(METADATA_VERSION_FEATURE, metadata_version),
                    *(FeatureLevelRecord(name, level) for name, level in sorted(defaults.items()))),
                   metadata_version, source)

    @classmethod
    def from_records(cls, records: Iterable[MetadataRecord], source: str) -> BootstrapMetadata:
        """``records`` as they are; the last metadata.version record among them gives the
        version. Raises BootstrapError when there is none."""
        kept = tuple(records)
        versions = [v for v in map(_version_of, kept) if v is not None]
        if not versions:
            raise BootstrapError(f"No FeatureLevelRecord for {METADATA_VERSION_FEATURE} was "
                                 f"found in the bootstrap metadata from {source}")
        return cls(kept, versions[-1], source)

    def copy_with_only_version(self) -> BootstrapMetadata:
        """The same bootstrap with only its (last) metadata.version record."""
        last = [r for r in self.records if _version_of(r) is not None]
        if not last:
            raise BootstrapError(f"No FeatureLevelRecord for {METADATA_VERSION_FEATURE} was "
                                 f"found in {self.source}")
        return BootstrapMetadata((last[-1],), self.metadata_version, self.source)
