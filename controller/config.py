"""Settings of a controller, with Kafka's defaults where Kafka has them."""

from __future__ import annotations

import msgspec

from controller.write_mode import WriteMode
from metadata.versions import (
    LATEST_PRODUCTION,
    MINIMUM_BOOTSTRAP,
    parse_metadata_version,
    release_name,
)
from raft.config import ConfigError


class ControllerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How a controller writes and what it bootstraps."""

    max_records_per_batch: int = 10_000
    """Kafka's MAX_RECORDS_PER_BATCH: records in one raft batch (markers included)."""
    write_mode: WriteMode | None = None
    """How larger operations are written; None: transactional at >= 3.6-IV1, else atomic."""
    bootstrap_metadata_version: int = LATEST_PRODUCTION
    """metadata.version written by the first leader of an empty log (at least 3.3-IV0, the
    first with a FeatureLevelRecord, as Kafka's BootstrapMetadata requires)."""
    noop_interval_ms: int = 500
    """metadata.max.idle.interval.ms: the active controller writes a NoOpRecord this often
    (0: never; only at metadata.version >= 3.3-IV1)."""
    leader_imbalance_check_interval_ms: int = 300_000
    """leader.imbalance.check.interval.seconds (in ms) with auto.leader.rebalance.enable:
    how long after a partition's leader moved off its preferred replica the active
    controller elects preferred leaders (0: never; see :mod:`controller.leader_balance`)."""
    unclean_leader_election_interval_ms: int = 300_000
    """unclean.leader.election.interval.ms: how often, while partitions are leaderless,
    the active controller elects leaders uncleanly where their topic allows it (0: never;
    see :mod:`controller.unclean_elections`)."""
    snapshot_every_records: int = 0
    """Make a snapshot after this many committed records (0: never)."""
    max_records_per_operation: int = 10_000
    """Kafka's MAX_RECORDS_PER_USER_OP: an operation is refused with POLICY_VIOLATION
    ("Unable to perform excessively large batch operation.") as soon as it generates
    more records than this, before the rest are generated. Markers do not count.
    Raise it to let the transactional mode write operations larger than Kafka allows."""

    def validate(self) -> ControllerConfig:
        """Return self, or raise ConfigError naming the bad setting."""
        if self.max_records_per_batch < 3:
            raise ConfigError("max-records-per-batch",
                              f"must be at least 3 (Begin, a record, End), got "
                              f"{self.max_records_per_batch}")
        if self.noop_interval_ms < 0:
            raise ConfigError("noop-interval-ms", "must not be negative")
        if self.leader_imbalance_check_interval_ms < 0:
            raise ConfigError("leader-imbalance-check-interval-ms", "must not be negative")
        if self.unclean_leader_election_interval_ms < 0:
            raise ConfigError("unclean-leader-election-interval-ms", "must not be negative")
        if self.max_records_per_operation < 1:
            raise ConfigError("max-records-per-operation",
                              f"must be positive, got {self.max_records_per_operation}")
        if self.snapshot_every_records < 0:
            raise ConfigError("snapshot-every-records", "must not be negative")
        try:
            parse_metadata_version(str(self.bootstrap_metadata_version))
        except ValueError as exc:
            raise ConfigError("metadata-version", str(exc)) from None
        if self.bootstrap_metadata_version < MINIMUM_BOOTSTRAP:
            raise ConfigError("metadata-version",
                              f"Bootstrap metadata.version before "
                              f"{release_name(MINIMUM_BOOTSTRAP)} are not supported, got "
                              f"{release_name(self.bootstrap_metadata_version)}")
        return self
