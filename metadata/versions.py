"""metadata.version: Kafka's feature levels and the capabilities kraftsim models.

metadata.version is a finalized feature (``FeatureLevelRecord(name=
"metadata.version")``). A log without one is at 3.0-IV1 (level 1), Kafka's
``MINIMUM_KRAFT_VERSION``. Levels and names follow Kafka's ``MetadataVersion``
enum; capabilities are the ones this project's behaviour depends on.
"""

from __future__ import annotations

METADATA_VERSION_FEATURE = "metadata.version"
"""The feature name of metadata.version."""

_RELEASES: tuple[str, ...] = (
    "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3",
    "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
    "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
    "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0",
    "4.2-IV1", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2", "4.5-IV0",
)  # fmt: skip

LEVELS: dict[str, int] = {name: level for level, name in enumerate(_RELEASES, start=1)}
"""Feature level of each known release name, e.g. ``LEVELS["3.6-IV1"] == 13``."""

MINIMUM_KRAFT = LEVELS["3.0-IV1"]
"""Level 1: the version of a log that has no metadata.version record."""
MINIMUM_BOOTSTRAP = LEVELS["3.3-IV0"]
"""Level 4: the first with FeatureLevelRecord; UpdateFeatures sets no lower
metadata.version, and no other feature may be enabled below it."""
LEADER_RECOVERY = LEVELS["3.2-IV0"]
"""Level 3: an unclean election marks the partition RECOVERING until its new leader's
first AlterPartition says RECOVERED (KIP-704)."""
NOOP_RECORDS = LEVELS["3.3-IV1"]
"""Level 5: the active controller writes periodic NoOpRecords."""
BROKER_REGISTRATION_CHANGE = LEVELS["3.3-IV2"]
"""Level 6: BrokerRegistrationChangeRecord replaces Fence/UnfenceBrokerRecord."""
IN_CONTROLLED_SHUTDOWN_STATE = LEVELS["3.3-IV3"]
"""Level 7: BrokerRegistrationChangeRecord v1 and RegisterBrokerRecord v1 can say a broker
is in controlled shutdown (Kafka's ``isInControlledShutdownStateSupported``)."""
ZK_MIGRATION_RECORD = LEVELS["3.4-IV0"]
"""Level 8: bootstrap writes a ZkMigrationStateRecord."""
FETCH_BROKER_EPOCH = LEVELS["3.5-IV1"]
"""Level 10: a follower's fetch carries its broker epoch (Kafka's Fetch v15, KIP-903); below
it the fetch carries none, so a leader holds -1 for each follower (which the ISR-eligibility
check lets pass) and its AlterPartition names -1 for every member but itself."""
NO_EPOCH_BUMP_ON_ISR_SHRINK = LEVELS["3.6-IV0"]
"""Level 12: an ISR shrink no longer bumps the leader epoch (below it, Kafka's
PartitionChangeBuilder sets the leader again so that the epoch moves: KAFKA-15021)."""
CONTROLLER_REGISTRATION = LEVELS["3.7-IV0"]
"""Level 15: controllers register (RegisterControllerRecord), so UpdateFeatures checks what
they support (Kafka's ``isControllerRegistrationSupported``)."""
TRANSACTIONS = LEVELS["3.6-IV1"]
"""Level 13: metadata transactions (KIP-868) are available."""
DIRECTORIES = LEVELS["3.7-IV2"]
"""Level 17: PartitionRecord v1, PartitionChangeRecord v1, RegisterBrokerRecord v3."""
ELR = LEVELS["4.0-IV1"]
"""Level 23: PartitionRecord v2 and PartitionChangeRecord v2 (ELR fields)."""
LATEST_PRODUCTION = LEVELS["4.0-IV0"]
"""Level 22: the default of a fresh kraftsim cluster (Kafka's LATEST_PRODUCTION in 2024)."""


SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {
    "eligible.leader.replicas.version": (0, 1),
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    METADATA_VERSION_FEATURE: (MINIMUM_KRAFT, len(_RELEASES)),
    "transaction.version": (0, 2),
}
"""The feature levels kraftsim's controllers and brokers support, as (lowest, highest):
what a broker registers (Kafka's ``supportedFeatures``) and what UpdateFeatures allows. A
feature not named here is supported at level 0 only (Kafka's ``QuorumFeatures.DISABLED``)."""

ELR_DEFAULT = LEVELS["4.1-IV0"]
"""Level 26: the first whose formatted clusters get eligible.leader.replicas.version 1
(Kafka's EligibleLeaderReplicasVersion.ELRV_1 bootstraps at 4.1-IV0)."""

FEATURE_DEFAULTS: tuple[tuple[str, int, int], ...] = (
    ("eligible.leader.replicas.version", 1, ELR_DEFAULT),
    ("group.version", 1, LEVELS["4.0-IV0"]),
    ("transaction.version", 2, LEVELS["4.0-IV2"]),
)
"""(feature, level, the first metadata.version formatted with it) for each feature kraftsim
supports besides metadata.version and kraft.version: Kafka's ``bootstrapMetadataVersion``
of GroupVersion.GV_1, TransactionVersion.TV_2 (TV_1 bootstraps at the same level, so it is
never a default) and EligibleLeaderReplicasVersion.ELRV_1."""


def default_feature_levels(metadata_version: int) -> dict[str, int]:
    """The feature levels above 0, metadata.version and kraft.version aside, that a cluster
    formatted at ``metadata_version`` starts with (Kafka's Formatter: each supported
    feature's highest level whose bootstrap metadata.version is at most the release's;
    kraft.version is kept in the log's control records, not as a FeatureLevelRecord)."""
    return {name: level for name, level, since in FEATURE_DEFAULTS if metadata_version >= since}


DISABLED: tuple[int, int] = (0, 0)
"""The range of a feature a node does not know: level 0 only."""


def range_text(lowest: int, highest: int) -> str:
    """A version range as Kafka's ``VersionRange`` prints it: ``3``, ``0-2``, or ``1+``
    when it has no upper bound (Short.MAX_VALUE)."""
    if lowest == highest:
        return str(lowest)
    if highest == 32767:
        return f"{lowest}+"
    return f"{lowest}-{highest}"


_CHANGES_METADATA: frozenset[int] = frozenset(
    LEVELS[name] for name in (
        "3.0-IV1", "3.2-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV2",
        "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV2", "4.0-IV1"))
"""The levels up to 4.0-IV3 whose records differ from the level before (Kafka's
``MetadataVersion.didMetadataChange``)."""
_KNOWN_CHANGES = LEVELS["4.0-IV3"]
"""The last level whose ``didMetadataChange`` kraftsim knows; later ones count as changes."""


def metadata_changed_between(low: int, high: int) -> bool:
    """True when some level in ``(low, high]`` changed the metadata records, so that going
    down from ``high`` to ``low`` could drop what they hold (Kafka's
    ``MetadataVersion.checkIfMetadataChanged``). Levels past 4.0-IV3 count as changes."""
    low, high = min(low, high), max(low, high)
    return any(level in _CHANGES_METADATA or level > _KNOWN_CHANGES
               for level in range(low + 1, high + 1))


def release_name(level: int) -> str:
    """The release name of a feature level, e.g. ``"3.6-IV1"``; unknown ones are labelled."""
    if 1 <= level <= len(_RELEASES):
        return _RELEASES[level - 1]
    return f"unknown level {level}"


def parse_metadata_version(text: str) -> int:
    """A level from a release name (``3.6-IV1``) or a number (``13``); raises ValueError."""
    if text in LEVELS:
        return LEVELS[text]
    try:
        level = int(text)
    except ValueError:
        raise ValueError(
            f"unknown metadata.version {text!r}; use a level 1-{len(_RELEASES)} "
            f"or a release name such as 3.6-IV1"
        ) from None
    if not 1 <= level <= len(_RELEASES):
        raise ValueError(f"metadata.version level {level} is outside 1-{len(_RELEASES)}")
    return level


def supports_transactions(level: int) -> bool:
    """True when metadata transactions (KIP-868) may be written at this level."""
    return level >= TRANSACTIONS


PRE_KRAFT = 0
"""What :func:`parse_release_version` returns for a release before 3.0-IV1 (no KRaft)."""

_PRE_KRAFT_RELEASES: tuple[str, ...] = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0",
    "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2",
    "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0",
    "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0",
    "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0",
)  # fmt: skip
"""Kafka's inter.broker.protocol versions before 3.0-IV1, oldest first (no feature level)."""


def short_version(name: str) -> str:
    """The release of a version name, without its internal version: ``3.3-IV2`` ->
    ``3.3`` (Kafka's ``MetadataVersion.shortVersion``)."""
    return name.split("-", 1)[0]


def _version_strings() -> dict[str, int]:
    """Every string :func:`parse_release_version` accepts whole: each version's name, and
    each release's short name for its newest production version."""
    table = dict.fromkeys(_PRE_KRAFT_RELEASES, PRE_KRAFT) | LEVELS
    newest: dict[str, int] = {}
    for name in _PRE_KRAFT_RELEASES:
        newest[short_version(name)] = PRE_KRAFT
    for name, level in LEVELS.items():
        if level <= LATEST_PRODUCTION:
            newest[short_version(name)] = level
    return table | newest


_VERSION_STRINGS = _version_strings()


def parse_release_version(text: str) -> int:
    """The level of an ``inter.broker.protocol.version``-style string, as Kafka's
    ``MetadataVersion.fromVersionString`` reads it: only its first two dot-separated parts
    count (three for a 0.x release, so ``3.6.1`` reads as ``3.6`` and ``0.10.0.1`` as
    ``0.10.0``); that is a version's full name (``3.3-IV2``) or a release, which stands for
    its newest version up to :data:`LATEST_PRODUCTION` (``3.3`` is 3.3-IV3, ``4.0`` is
    4.0-IV0). Versions before 3.0-IV1 (``2.7``, ``0.10.2``, ``3.0-IV0``) give
    :data:`PRE_KRAFT`. Raises ValueError for anything else (``0.1.0``, ``8.0``, a release
    with no production version yet)."""
    parts = text.split(".")
    count = 3 if text.startswith("0.") else 2
    key = text if count >= len(parts) else ".".join(parts[:count])
    level = _VERSION_STRINGS.get(key)
    if level is None:
        raise ValueError(f"Version {text} is not a valid version")
    return level
