"""An image as the records of a snapshot, and back.

Snapshots hold no transaction markers and follow Kafka's order: features
(metadata.version first), the ZK migration state, brokers, controllers,
topics with their partitions, configs, client quotas, producer ids, ACLs,
SCRAM credentials, delegation tokens. Everything is sorted, so the same image
always gives the same records in any process. (Kafka's writer leaves SCRAM
credentials out below metadata.version 3.5-IV2 and delegation tokens below
3.6-IV2, reporting the loss; kraftsim writes what the image holds.)
"""

from __future__ import annotations

from collections.abc import Iterable

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage, QuotaEntity
from metadata.schema import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    ConfigRecord,
    DelegationTokenRecord,
    EntityData,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
    UserScramCredentialRecord,
    ZkMigrationStateRecord,
    is_marker,
)
from metadata.versions import METADATA_VERSION_FEATURE


def image_to_records(image: MetadataImage) -> list[MetadataRecord]:
    """The records that rebuild ``image`` from the empty image."""
    out: list[MetadataRecord] = []
    features = sorted(image.features.items(), key=lambda f: (f[0] != METADATA_VERSION_FEATURE,
                                                             f[0]))
    out.extend(FeatureLevelRecord(name, level) for name, level in features)
    if image.zk_migration_state:
        out.append(ZkMigrationStateRecord(image.zk_migration_state))
    for broker_id in sorted(image.brokers):
        b = image.brokers[broker_id]
        out.append(RegisterBrokerRecord(
            broker_id=b.broker_id, incarnation_id=b.incarnation_id, broker_epoch=b.epoch,
            end_points=b.endpoints, features=b.features, rack=b.rack, fenced=b.fenced,
            in_controlled_shutdown=b.in_controlled_shutdown,
            is_migrating_zk_broker=b.is_migrating_zk_broker, log_dirs=b.directories))
    for controller_id in sorted(image.controllers):
        c = image.controllers[controller_id]
        out.append(RegisterControllerRecord(
            controller_id=c.controller_id, incarnation_id=c.incarnation_id,
            zk_migration_ready=c.zk_migration_ready, end_points=c.endpoints,
            features=c.features))
    for name in sorted(image.topics_by_name):
        topic = image.topics_by_id[image.topics_by_name[name]]
        out.append(TopicRecord(topic.name, topic.topic_id))
        for pid in sorted(topic.partitions):
            p = topic.partitions[pid]
            out.append(PartitionRecord(
                partition_id=pid, topic_id=topic.topic_id, replicas=p.replicas, isr=p.isr,
                removing_replicas=p.removing_replicas, adding_replicas=p.adding_replicas,
                leader=p.leader, leader_recovery_state=p.leader_recovery_state,
                leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch,
                directories=p.directories, eligible_leader_replicas=p.eligible_leader_replicas,
                last_known_elr=p.last_known_elr))
    for (resource_type, resource_name) in sorted(image.configs):
        entries = image.configs[(resource_type, resource_name)]
        out.extend(ConfigRecord(resource_type, resource_name, key, entries[key])
                   for key in sorted(entries))
    out.extend(_client_quota_records(image))
    if image.next_producer_id:
        out.append(ProducerIdsRecord(broker_id=-1, next_producer_id=image.next_producer_id))
    out.extend(_security_records(image))
    return out


def _entity_order(entity: QuotaEntity) -> tuple[tuple[str, bool, str], ...]:
    return tuple((kind, name is not None, name or "") for kind, name in entity)


def _client_quota_records(image: MetadataImage) -> list[MetadataRecord]:
    out: list[MetadataRecord] = []
    for entity in sorted(image.client_quotas, key=_entity_order):
        values = image.client_quotas[entity]
        parts = tuple(EntityData(kind, name) for kind, name in entity)
        out.extend(ClientQuotaRecord(parts, key, values[key]) for key in sorted(values))
    return out


def _security_records(image: MetadataImage) -> list[MetadataRecord]:
    """ACLs, SCRAM credentials and delegation tokens, as Kafka's image writes them last."""
    out: list[MetadataRecord] = []
    for acl_id in sorted(image.acls):
        acl = image.acls[acl_id]
        out.append(AccessControlEntryRecord(
            id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
            pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
            operation=acl.operation, permission_type=acl.permission_type))
    for mechanism in sorted(image.scram):
        users = image.scram[mechanism]
        for user in sorted(users):
            data = users[user]
            out.append(UserScramCredentialRecord(
                name=user, mechanism=mechanism, salt=data.salt, stored_key=data.stored_key,
                server_key=data.server_key, iterations=data.iterations))
    for token_id in sorted(image.delegation_tokens):
        token = image.delegation_tokens[token_id]
        out.append(DelegationTokenRecord(
            owner=token.owner, requester=token.requester, renewers=token.renewers,
            issue_timestamp=token.issue_timestamp, max_timestamp=token.max_timestamp,
            expiration_timestamp=token.expiration_timestamp, token_id=token_id))
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
