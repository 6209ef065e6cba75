"""An image as the records of a snapshot, and back.

Snapshots hold no transaction markers and follow Kafka's order: features
(metadata.version first), the ZK migration state, brokers, controllers,
topics with their partitions, configs, client quotas, producer ids, ACLs,
SCRAM credentials, delegation tokens. Everything is sorted, so the same image
always gives the same records in any process.

Without a ``metadata_version`` the writer writes everything the image holds (the
controller's snapshots: an image holds nothing its own metadata.version cannot
say, since a downgrade across a level that changed the records is refused). Given
one (Kafka's ``ImageWriterOptions``), it writes the records as that version has
them and leaves out what the version cannot hold, telling ``on_loss`` once per kind
of loss, or raising :class:`UnwritableMetadataError` for the first when there is
no ``on_loss`` (Kafka's default loss handler throws): below 3.3-IV0 no
FeatureLevelRecord at all (a feature other than metadata.version is a loss),
below 3.3-IV3 no controlled-shutdown state of a broker, below 3.4-IV0 no ZK
migration state, below 3.5-IV2 no SCRAM credentials, below 3.6-IV2 no delegation
tokens, below 3.7-IV0 no controller registrations, below 3.7-IV2 no log
directories (of brokers and of replicas), and below 4.0-IV1 no eligible leader
replicas (dropped without a report, as Kafka does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage, QuotaEntity
from metadata.schema import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    ConfigRecord,
    EntityData,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
    ZkMigrationStateRecord,
    is_marker,
)
from metadata.versions import (
    DIRECTORIES,
    ELR,
    IN_CONTROLLED_SHUTDOWN_STATE,
    LEVELS,
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    ZK_MIGRATION_RECORD,
    release_name,
)

SCRAM_RECORDS = LEVELS["3.5-IV2"]
"""The first metadata.version whose snapshots hold SCRAM credentials."""
DELEGATION_TOKEN_RECORDS = LEVELS["3.6-IV2"]
"""The first metadata.version whose snapshots hold delegation tokens."""
CONTROLLER_REGISTRATIONS = LEVELS["3.7-IV0"]
"""The first metadata.version whose snapshots hold controller registrations."""

_MECHANISM_NAMES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


class UnwritableMetadataError(Exception):
    """Part of an image that the metadata.version it is written at cannot hold (Kafka's
    UnwritableMetadataException, with its message; the version named is the one asked
    for, even below 3.3-IV0, which is written as 3.0-IV1 is)."""

    def __init__(self, metadata_version: int, loss: str) -> None:
        super().__init__(f"Metadata has been lost because the following could not be "
                         f"represented in metadata.version {release_name(metadata_version)}: "
                         f"{loss}")
        self.metadata_version = metadata_version
        """The level the image was to be written at."""
        self.loss = loss
        """What would be lost, e.g. ``"feature flag(s): foo.feature"``."""


class _Losses:
    """Reports each kind of loss once, to ``on_loss`` or by raising."""

    def __init__(self, metadata_version: int, on_loss: Callable[[str], None] | None) -> None:
        self.metadata_version = metadata_version
        self.on_loss = on_loss
        self.seen: set[str] = set()

    def report(self, loss: str) -> None:
        if loss in self.seen:
            return
        self.seen.add(loss)
        if self.on_loss is None:
            raise UnwritableMetadataError(self.metadata_version, loss)
        self.on_loss(loss)


def image_to_records(image: MetadataImage, metadata_version: int | None = None,
                     on_loss: Callable[[str], None] | None = None) -> list[MetadataRecord]:
    """The records that rebuild ``image`` from the empty image.

    With ``metadata_version``, the records as that level has them: what it cannot hold
    is left out and reported (see the module's docstring); ``on_loss`` gets each kind of
    loss once, and without it the first loss raises :class:`UnwritableMetadataError`.
    """
    if metadata_version is None:
        return _records(image, None, None)
    return _records(image, metadata_version, _Losses(metadata_version, on_loss))


def _records(image: MetadataImage, level: int | None,
             losses: _Losses | None) -> list[MetadataRecord]:
    out: list[MetadataRecord] = []
    _feature_records(image, level, losses, out)
    _cluster_records(image, level, losses, out)
    elr = level is None or level >= ELR
    directories = level is None or level >= DIRECTORIES
    for name in sorted(image.topics_by_name):
        topic = image.topics_by_id[image.topics_by_name[name]]
        out.append(TopicRecord(topic.name, topic.topic_id))
        for pid in sorted(topic.partitions):
            p = topic.partitions[pid]
            if p.directories and not directories:
                assert losses is not None
                losses.report("the directory assignment state of one or more replicas")
            out.append(PartitionRecord(
                partition_id=pid, topic_id=topic.topic_id, replicas=p.replicas, isr=p.isr,
                removing_replicas=p.removing_replicas, adding_replicas=p.adding_replicas,
                leader=p.leader, leader_recovery_state=p.leader_recovery_state,
                leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch,
                directories=p.directories if directories else (),
                eligible_leader_replicas=p.eligible_leader_replicas if elr else None,
                last_known_elr=p.last_known_elr if elr else None))
    for (resource_type, resource_name) in sorted(image.configs):
        entries = image.configs[(resource_type, resource_name)]
        out.extend(ConfigRecord(resource_type, resource_name, key, entries[key])
                   for key in sorted(entries))
    out.extend(_client_quota_records(image))
    if image.next_producer_id:
        out.append(ProducerIdsRecord(broker_id=-1, next_producer_id=image.next_producer_id))
    out.extend(_security_records(image, level, losses))
    return out


def _feature_records(image: MetadataImage, level: int | None, losses: _Losses | None,
                     out: list[MetadataRecord]) -> None:
    """metadata.version first (the written level when one is given), then the others."""
    others = sorted((name, feature_level) for name, feature_level in image.features.items()
                    if name != METADATA_VERSION_FEATURE)
    if level is None:
        if METADATA_VERSION_FEATURE in image.features:
            out.append(FeatureLevelRecord(METADATA_VERSION_FEATURE,
                                          image.features[METADATA_VERSION_FEATURE]))
        out.extend(FeatureLevelRecord(name, feature_level) for name, feature_level in others)
        if image.zk_migration_state:
            out.append(ZkMigrationStateRecord(image.zk_migration_state))
        return
    assert losses is not None
    if level < MINIMUM_BOOTSTRAP:
        if others:
            losses.report("feature flag(s): " + ", ".join(name for name, _ in others))
    else:
        out.append(FeatureLevelRecord(METADATA_VERSION_FEATURE, level))
        out.extend(FeatureLevelRecord(name, feature_level) for name, feature_level in others)
    if image.zk_migration_state:
        if level >= ZK_MIGRATION_RECORD:
            out.append(ZkMigrationStateRecord(image.zk_migration_state))
        else:
            losses.report(f"the ZK migration state {image.zk_migration_state}")


def _cluster_records(image: MetadataImage, level: int | None, losses: _Losses | None,
                     out: list[MetadataRecord]) -> None:
    """Brokers, then controllers, as ``level`` has them."""
    shutdown = level is None or level >= IN_CONTROLLED_SHUTDOWN_STATE
    migrating = level is None or level >= ZK_MIGRATION_RECORD
    directories = level is None or level >= DIRECTORIES
    for broker_id in sorted(image.brokers):
        b = image.brokers[broker_id]
        if losses is not None:
            if b.in_controlled_shutdown and not shutdown:
                losses.report("the inControlledShutdown state of one or more brokers")
            if b.is_migrating_zk_broker and not migrating:
                losses.report("the isMigratingZkBroker state of one or more brokers")
            if b.directories and not directories:
                losses.report("the online log directories of one or more brokers")
        out.append(RegisterBrokerRecord(
            broker_id=b.broker_id, incarnation_id=b.incarnation_id, broker_epoch=b.epoch,
            end_points=b.endpoints, features=b.features, rack=b.rack, fenced=b.fenced,
            in_controlled_shutdown=b.in_controlled_shutdown and shutdown,
            is_migrating_zk_broker=b.is_migrating_zk_broker and migrating,
            log_dirs=b.directories if directories else ()))
    if not image.controllers:
        return
    if level is not None and level < CONTROLLER_REGISTRATIONS:
        assert losses is not None
        losses.report("controller registration data")
        return
    for controller_id in sorted(image.controllers):
        c = image.controllers[controller_id]
        out.append(RegisterControllerRecord(
            controller_id=c.controller_id, incarnation_id=c.incarnation_id,
            zk_migration_ready=c.zk_migration_ready, end_points=c.endpoints,
            features=c.features))


def _entity_order(entity: QuotaEntity) -> tuple[tuple[str, bool, str], ...]:
    return tuple((kind, name is not None, name or "") for kind, name in entity)


def _client_quota_records(image: MetadataImage) -> list[MetadataRecord]:
    out: list[MetadataRecord] = []
    for entity in sorted(image.client_quotas, key=_entity_order):
        values = image.client_quotas[entity]
        parts = tuple(EntityData(kind, name) for kind, name in entity)
        out.extend(ClientQuotaRecord(parts, key, values[key]) for key in sorted(values))
    return out


def _security_records(image: MetadataImage, level: int | None = None,
                      losses: _Losses | None = None) -> list[MetadataRecord]:
    """ACLs, SCRAM credentials and delegation tokens, as Kafka's image writes them last."""
    out: list[MetadataRecord] = []
    for acl_id in sorted(image.acls):
        acl = image.acls[acl_id]
        out.append(AccessControlEntryRecord(
            id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
            pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
            operation=acl.operation, permission_type=acl.permission_type))
    if level is not None and level < SCRAM_RECORDS:
        held = [f"{_MECHANISM_NAMES.get(m, m)}: {', '.join(sorted(image.scram[m]))}"
                for m in sorted(image.scram) if image.scram[m]]
        if held:
            assert losses is not None
            losses.report("SCRAM credentials (" + "; ".join(held) + ")")
        return out + _token_records(image, level, losses)
    for mechanism in sorted(image.scram):
        users = image.scram[mechanism]
        for user in sorted(users):
            out.append(users[user].to_record(user, mechanism))
    return out + _token_records(image, level, losses)


def _token_records(image: MetadataImage, level: int | None,
                   losses: _Losses | None) -> list[MetadataRecord]:
    out: list[MetadataRecord] = []
    if level is not None and level < DELEGATION_TOKEN_RECORDS:
        if image.delegation_tokens:
            assert losses is not None
            losses.report("delegation tokens (" + ", ".join(sorted(image.delegation_tokens))
                          + ")")
        return out
    out.extend(image.delegation_tokens[token_id].to_record()
               for token_id in sorted(image.delegation_tokens))
    return out


def image_from_records(records: Iterable[MetadataRecord], offset: int,
                       epoch: int) -> MetadataImage:
    """Rebuild an image from snapshot records; a marker or bad record raises ReplayError."""
    delta = MetadataDelta(MetadataImage.EMPTY)
    for record in records:
        if is_marker(record):
            raise ReplayError(f"{type(record).__name__} cannot appear within a snapshot")
        delta.replay(record)
    return delta.apply(offset, epoch)
