"""UpdateFeatures, AlterPartition, AllocateProducerIds and the periodic NoOp."""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.elr import (
    ELR_FEATURE,
    MIN_INSYNC_REPLICAS,
    STATIC_MIN_INSYNC_REPLICAS,
    elr_enabled,
)
from controller.operations.partition_change import build_change, reassignment_in_progress
from metadata.delta import BROKER_RESOURCE
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import (
    BrokerFeature,
    ConfigRecord,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    ProducerIdsRecord,
)
from metadata.versions import (
    CONTROLLER_REGISTRATION,
    DISABLED,
    ELR,
    LEVELS,
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    NO_EPOCH_BUMP_ON_ISR_SHRINK,
    SUPPORTED_FEATURES,
    metadata_changed_between,
    range_text,
    release_name,
)

PRODUCER_ID_BLOCK_SIZE = 1000
"""Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE."""
MAX_PRODUCER_ID = (1 << 63) - 1
"""Producer ids are int64: no block may end past this one."""

KNOWN_FEATURES: dict[str, int] = {name: high for name, (_, high) in SUPPORTED_FEATURES.items()}
"""Features kraftsim accepts, with their highest level."""


FEATURE_DEPENDENCIES: dict[tuple[str, int], int] = {
    ("kraft.version", 1): LEVELS["3.9-IV0"],
    ("eligible.leader.replicas.version", 1): ELR,
}
"""The metadata.version a feature level needs beyond 3.3-IV0 (Kafka's
``FeatureVersion.dependencies``)."""


class FeatureUpdate(msgspec.Struct, frozen=True):
    """Set ``name`` to ``level`` (Kafka's FeatureUpdate with its upgrade type).

    A lower level needs ``allow_downgrade`` (Kafka's SAFE_DOWNGRADE) or ``unsafe``
    (UNSAFE_DOWNGRADE); either refuses a higher level.
    """

    name: str
    level: int
    allow_downgrade: bool = False
    unsafe: bool = False

    @property
    def downgrade(self) -> bool:
        """True when the update is meant as a downgrade (safe or unsafe)."""
        return self.allow_downgrade or self.unsafe


def _refused(update: FeatureUpdate, why: str) -> ApiError:
    """INVALID_UPDATE_VERSION in Kafka's words (FeatureControlManager.invalidUpdateVersion)."""
    return ApiError("INVALID_UPDATE_VERSION",
                    f"Invalid update version {update.level} for feature {update.name}. {why}")


def _refused_metadata_version(update: FeatureUpdate, why: str) -> ApiError:
    """INVALID_UPDATE_VERSION for metadata.version (Kafka's invalidMetadataVersion)."""
    return ApiError("INVALID_UPDATE_VERSION", f"Invalid metadata.version {update.level}. {why}")


class UpdateFeatures(msgspec.Struct, frozen=True):
    """Finalize feature levels, metadata.version included (Kafka's FeatureControlManager)."""

    updates: tuple[FeatureUpdate, ...]

    def describe(self) -> str:
        """E.g. ``UpdateFeatures(metadata.version=13)``."""
        return "UpdateFeatures(" + ", ".join(f"{u.name}={u.level}" for u in self.updates) + ")"

    def generate(self, ctx: OperationContext) -> Generated:
        """One FeatureLevelRecord per update; all or nothing. Each update is checked in
        Kafka's order, and refused in its words: a level not below 0; a level this
        controller, every registered broker and (from 3.7-IV0) every other registered
        controller supports, and (from 3.7-IV0) every controller of the quorum has
        registered; no downgrade without asking for one, and no upgrade asked
        for as a downgrade; for metadata.version nothing below 3.3-IV0 and no downgrade
        across a level that changed the metadata records (safe: it might drop metadata;
        unsafe: not supported); for another feature one kraftsim knows, and a level above
        0 needs metadata.version 3.3-IV0 and the feature's own dependencies, as they
        stand with the request's updates (eligible.leader.replicas.version 1 needs
        metadata.version 4.0-IV1). Raises INVALID_UPDATE_VERSION. Turning eligible leader
        replicas on first writes :func:`elr_safety_records`; turning them off writes only
        the feature level, as Kafka 4.1 does (the ELRs then empty as each partition next
        changes)."""
        image = ctx.image
        proposed = {**image.features, METADATA_VERSION_FEATURE: image.metadata_version,
                    **{u.name: u.level for u in self.updates}}
        records = ctx.records()
        for update in self.updates:
            if update.level < 0:
                raise _refused(update, "A feature version cannot be less than 0.")
            reason = _reason_not_supported(image, ctx.node_id, update.name, update.level,
                                           ctx.controller_ids)
            if reason is not None:
                raise _refused(update, reason)
            if update.name == METADATA_VERSION_FEATURE:
                current = image.metadata_version
            else:
                current = image.features.get(update.name, 0)
            if update.level < current and not update.downgrade:
                raise _refused(update, "Can't downgrade the version of this feature without "
                                       "setting the upgrade type to either safe or unsafe "
                                       "downgrade.")
            if update.level > current and update.downgrade:
                raise _refused(update, "Can't downgrade to a newer version.")
            if update.name == METADATA_VERSION_FEATURE:
                _check_metadata_version(update, current)
            elif update.name not in SUPPORTED_FEATURES:
                # only level 0 gets here (a node supports an unknown feature at 0 only);
                # Kafka fails where it looks the feature up
                raise _refused(update, f"Feature {update.name} not found.")
            else:
                _check_dependencies(update, proposed)
            records.append(FeatureLevelRecord(update.name, update.level))
        if any(u.name == ELR_FEATURE and u.level > 0 for u in self.updates):
            records[:0] = elr_safety_records(image)
        return Generated(records, {u.name: u.level for u in self.updates})


def elr_safety_records(image: MetadataImage) -> list[ConfigRecord]:
    """The config records that make turning eligible leader replicas on safe (Kafka's
    ConfigurationControlManager.maybeGenerateElrSafetyRecords, written before the feature
    level): a cluster-level min.insync.replicas where there is none (the static default,
    1), and the removal of every single broker's min.insync.replicas (with ELR on, one
    min ISR holds per topic)."""
    out: list[ConfigRecord] = []
    cluster = image.configs.get((BROKER_RESOURCE, ""))
    if cluster is None or MIN_INSYNC_REPLICAS not in cluster:
        out.append(ConfigRecord(BROKER_RESOURCE, "", MIN_INSYNC_REPLICAS,
                                str(STATIC_MIN_INSYNC_REPLICAS)))
    named = sorted((name for (kind, name), values in image.configs.items()
                    if kind == BROKER_RESOURCE and name and MIN_INSYNC_REPLICAS in values),
                   key=lambda name: (len(name), name))  # broker id order
    out.extend(ConfigRecord(BROKER_RESOURCE, name, MIN_INSYNC_REPLICAS, None)
               for name in named)
    return out


def _range_of(features: tuple[BrokerFeature, ...], name: str) -> tuple[int, int]:
    """The levels a registration says it supports of ``name`` (level 0 only when unnamed)."""
    for feature in features:
        if feature.name == name:
            return feature.min_supported_version, feature.max_supported_version
    return DISABLED


def _outside(level: int, who: str, supported: tuple[int, int]) -> str | None:
    """Why ``who`` cannot run ``level`` of a feature it supports in ``supported``, in
    Kafka's words (QuorumFeatures.reasonNotSupported); None when it can."""
    lowest, highest = supported
    if lowest <= level <= highest:
        return None
    if highest == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {range_text(lowest, highest)}"


def _reason_not_supported(image: MetadataImage, node_id: int, name: str,
                          level: int, quorum: frozenset[int] = frozenset()) -> str | None:
    """The first node that cannot run ``level`` of ``name`` (Kafka's
    FeatureControlManager.reasonNotSupported): this controller, then the registered
    brokers and, from 3.7-IV0, the other registered controllers, each in id order, and
    then a member of the ``quorum`` (the controllers' ids) that has not registered.

    A registration that lists no feature at all is not checked: Kafka's brokers always
    list at least metadata.version, so such a one comes from a hand-built log (or an
    older kraftsim) that did not record what the node supports."""
    reason = _outside(level, f"Local controller {node_id}",
                      SUPPORTED_FEATURES.get(name, DISABLED))
    if reason is not None:
        return reason
    for broker_id in sorted(image.brokers):
        features = image.brokers[broker_id].features
        if features:
            reason = _outside(level, f"Broker {broker_id}", _range_of(features, name))
            if reason is not None:
                return reason
    if image.metadata_version >= CONTROLLER_REGISTRATION:
        for controller_id in sorted(image.controllers):
            features = image.controllers[controller_id].features
            if controller_id != node_id and features:
                reason = _outside(level, f"Controller {controller_id}",
                                  _range_of(features, name))
                if reason is not None:
                    return reason
        for controller_id in sorted(quorum):
            if controller_id != node_id and controller_id not in image.controllers:
                return (f"controller {controller_id} has not registered, and may not support "
                        f"this feature")
    return None


def _check_metadata_version(update: FeatureUpdate, current: int) -> None:
    """metadata.version: not below 3.3-IV0, and a downgrade only across levels that left
    the metadata records as they were (Kafka's updateMetadataVersion, in its words)."""
    level = update.level
    if level < MINIMUM_BOOTSTRAP:
        raise _refused_metadata_version(update, f"Unable to set a metadata.version less than "
                                                f"{release_name(MINIMUM_BOOTSTRAP)}")
    if level < current and metadata_changed_between(level, current):
        if update.unsafe:
            raise _refused_metadata_version(update, "Unsafe metadata downgrade is not "
                                                    "supported in this version.")
        raise _refused_metadata_version(update, "Refusing to perform the requested downgrade "
                                                "because it might delete metadata "
                                                "information.")


def _check_dependencies(update: FeatureUpdate, proposed: dict[str, int]) -> None:
    """A feature level above 0 needs metadata.version 3.3-IV0 and its own dependencies, in
    the levels the request leaves (Kafka's Features.validateVersion, in its words)."""
    if update.level < 1:
        return
    metadata_version = proposed[METADATA_VERSION_FEATURE]
    if metadata_version < MINIMUM_BOOTSTRAP:
        raise _refused(update, f"{update.name} could not be set to {update.level} because it "
                               f"depends on metadata.version={MINIMUM_BOOTSTRAP} "
                               f"({release_name(MINIMUM_BOOTSTRAP)})")
    needed = FEATURE_DEPENDENCIES.get((update.name, update.level), 0)
    if metadata_version < needed:
        raise _refused(update, f"{update.name} could not be set to {update.level} because it "
                               f"depends on metadata.version level {needed}")


class AlterPartition(msgspec.Struct, frozen=True):
    """Change a partition's ISR (and, optionally, its leader), as a partition leader asks.

    For a partition being reassigned, with no leader given, the change is Kafka's
    PartitionChangeBuilder's (an ISR that holds every target replica completes the
    reassignment)."""

    topic: str
    partition: int
    isr: tuple[int, ...]
    leader: int | None = None

    def describe(self) -> str:
        """E.g. ``AlterPartition(foo-0 isr=[1, 2])``."""
        return f"AlterPartition({self.topic}-{self.partition} isr={list(self.isr)})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One PartitionChangeRecord, after checking the ISR against replicas and brokers."""
        topic = ctx.image.topic(self.topic)
        reg = topic.partitions.get(self.partition) if topic else None
        if topic is None or reg is None:
            raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                           f"This server does not host this topic-partition: "
                           f"{self.topic}-{self.partition}")
        if not self.isr or not set(self.isr) <= set(reg.replicas):
            raise ApiError("INVALID_REQUEST",
                           f"ISR {list(self.isr)} is empty or not within the replicas "
                           f"{list(reg.replicas)}")
        for replica in self.isr:
            broker = ctx.image.brokers.get(replica)
            if broker is None or broker.fenced:
                raise ApiError("INELIGIBLE_REPLICA",
                               f"Replica {replica} is fenced or not registered")
        if self.leader is None and (reassignment_in_progress(reg) or elr_enabled(ctx.image)
                                    or reg.eligible_leader_replicas):
            # a reassigning partition (Kafka's builder may complete it), or ELR on
            built = build_change(ctx.image, topic.topic_id, self.partition, reg, isr=self.isr)
            return Generated([] if built is None else [built],
                             {"topic": self.topic, "partition": self.partition})
        leader = -2
        if self.leader is not None and self.leader != reg.leader:
            if self.leader != NO_LEADER and self.leader not in self.isr:
                raise ApiError("INVALID_REQUEST", f"leader {self.leader} is not in the ISR")
            leader = self.leader
        elif reg.leader not in self.isr:
            leader = self.isr[0]
        elif ctx.image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK \
                and not set(reg.isr) <= set(self.isr):
            leader = reg.leader  # an older version bumps the leader epoch on a shrink
        change = PartitionChangeRecord(partition_id=self.partition, topic_id=topic.topic_id,
                                       isr=self.isr, leader=leader)
        return Generated([change], {"topic": self.topic, "partition": self.partition})


class AllocateProducerIds(msgspec.Struct, frozen=True):
    """Give a broker the next block of producer ids (Kafka's ProducerIdControlManager)."""

    broker_id: int
    broker_epoch: int | None = None
    """The epoch the broker asks with; None (an operator's tool): its current one."""

    def describe(self) -> str:
        """E.g. ``AllocateProducerIds(1)``."""
        return f"AllocateProducerIds({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One ProducerIdsRecord moving the next id one block on.

        Raises STALE_BROKER_EPOCH when the broker is not registered or asks with
        another epoch than its registration's, and UNKNOWN_SERVER_ERROR once the
        next block would pass the largest int64 (the ids are exhausted).
        """
        broker = ctx.image.brokers.get(self.broker_id)
        if broker is None:  # (Kafka's words: ClusterControlManager.checkBrokerEpoch)
            raise ApiError("STALE_BROKER_EPOCH",
                           f"No broker registration found for broker id {self.broker_id}")
        epoch = broker.epoch if self.broker_epoch is None else self.broker_epoch
        if epoch != broker.epoch:
            raise ApiError("STALE_BROKER_EPOCH",
                           f"Expected broker epoch {broker.epoch}, but got broker epoch {epoch}")
        start = ctx.image.next_producer_id
        if start > MAX_PRODUCER_ID - PRODUCER_ID_BLOCK_SIZE:
            raise ApiError("UNKNOWN_SERVER_ERROR",
                           "Exhausted all producerIds as the next block's end producerId has "
                           "exceeded the int64 type limit")
        record = ProducerIdsRecord(broker_id=self.broker_id, broker_epoch=epoch,
                                   next_producer_id=start + PRODUCER_ID_BLOCK_SIZE)
        return Generated([record], {"producerIdStart": start,
                                    "producerIdLen": PRODUCER_ID_BLOCK_SIZE})


class NoOp(msgspec.Struct, frozen=True):
    """The active controller's periodic NoOpRecord."""

    def describe(self) -> str:
        """``NoOp``."""
        return "NoOp"

    def generate(self, ctx: OperationContext) -> Generated:
        """One NoOpRecord."""
        return Generated([NoOpRecord()])
