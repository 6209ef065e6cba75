"""Kafka's KRaft metadata records as frozen msgspec Structs.

One Struct per record type, with Kafka's apiKey (``API_KEY``) and Kafka's
field meanings (``metadata/src/main/resources/common/metadata/*.json``).
Python attributes are snake_case; JSON output uses Kafka's camelCase names
(``topicId``, ``leaderEpoch``, ...), as ``kafka-dump-log`` prints them.

Records are ``frozen=True, gc=False`` and every sequence field is a tuple: one
record object is shared by every node of the single process, and a million of
them cost the garbage collector nothing (DESIGN.md, "Decisions already taken").

Topic, incarnation, directory and ACL ids are Kafka Uuids in Kafka's text form
(URL safe base64 of the 16 bytes, no padding), see :mod:`metadata.uuids`. The
records of ACLs, SCRAM credentials, client quotas and delegation tokens carry
Kafka's enum codes as they are (resource type, operation, SCRAM mechanism, ...);
the shell names them (:mod:`shell.security_tree`). Byte fields print in JSON as
base64, as Kafka's JSON converters print them.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from metadata.uuids import ZERO_UUID


class MetadataRecord(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """Base of every metadata record; ``API_KEY`` and ``TYPE_NAME`` name the type."""

    API_KEY: ClassVar[int] = -1
    TYPE_NAME: ClassVar[str] = "UNKNOWN_RECORD"


class BrokerEndpoint(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One listener of a registered broker or controller."""

    name: str
    host: str
    port: int
    security_protocol: int = 0


class BrokerFeature(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """A feature range a broker or controller supports."""

    name: str
    min_supported_version: int
    max_supported_version: int


class RegisterBrokerRecord(MetadataRecord, frozen=True, gc=False):
    """A broker registration (apiKey 0). A new registration starts fenced."""

    API_KEY: ClassVar[int] = 0
    TYPE_NAME: ClassVar[str] = "REGISTER_BROKER_RECORD"
    broker_id: int
    incarnation_id: str = ZERO_UUID
    broker_epoch: int = 0
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    is_migrating_zk_broker: bool = False
    log_dirs: tuple[str, ...] = ()


class UnregisterBrokerRecord(MetadataRecord, frozen=True, gc=False):
    """Removes a broker registration whose epoch matches (apiKey 1)."""

    API_KEY: ClassVar[int] = 1
    TYPE_NAME: ClassVar[str] = "UNREGISTER_BROKER_RECORD"
    broker_id: int
    broker_epoch: int


class TopicRecord(MetadataRecord, frozen=True, gc=False):
    """Creates a topic (apiKey 2); its partitions follow as PartitionRecords."""

    API_KEY: ClassVar[int] = 2
    TYPE_NAME: ClassVar[str] = "TOPIC_RECORD"
    name: str
    topic_id: str


class PartitionRecord(MetadataRecord, frozen=True, gc=False):
    """Creates or replaces one partition of a topic (apiKey 3)."""

    API_KEY: ClassVar[int] = 3
    TYPE_NAME: ClassVar[str] = "PARTITION_RECORD"
    partition_id: int
    topic_id: str
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = -1
    leader_recovery_state: int = 0
    leader_epoch: int = -1
    partition_epoch: int = -1
    directories: tuple[str, ...] = ()
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


class ConfigRecord(MetadataRecord, frozen=True, gc=False):
    """Sets (or, with ``value=None``, deletes) one config key (apiKey 4).

    ``resource_type`` uses Kafka's ConfigResource.Type ids (TOPIC=2, BROKER=4,
    ...); an empty ``resource_name`` names the cluster-wide default.
    """

    API_KEY: ClassVar[int] = 4
    TYPE_NAME: ClassVar[str] = "CONFIG_RECORD"
    resource_type: int
    resource_name: str
    name: str
    value: str | None


class PartitionChangeRecord(MetadataRecord, frozen=True, gc=False):
    """Changes a partition (apiKey 5).

    ``None`` lists and ``leader == -2`` mean "unchanged"; setting a leader bumps
    the leader epoch; every change bumps the partition epoch.
    """

    API_KEY: ClassVar[int] = 5
    TYPE_NAME: ClassVar[str] = "PARTITION_CHANGE_RECORD"
    partition_id: int
    topic_id: str
    isr: tuple[int, ...] | None = None
    leader: int = -2
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = -1
    directories: tuple[str, ...] | None = None
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


class FenceBrokerRecord(MetadataRecord, frozen=True, gc=False):
    """Fences a broker (apiKey 7); written only below metadata.version 3.3-IV2."""

    API_KEY: ClassVar[int] = 7
    TYPE_NAME: ClassVar[str] = "FENCE_BROKER_RECORD"
    id: int
    epoch: int


class UnfenceBrokerRecord(MetadataRecord, frozen=True, gc=False):
    """Unfences a broker (apiKey 8); written only below metadata.version 3.3-IV2."""

    API_KEY: ClassVar[int] = 8
    TYPE_NAME: ClassVar[str] = "UNFENCE_BROKER_RECORD"
    id: int
    epoch: int


class RemoveTopicRecord(MetadataRecord, frozen=True, gc=False):
    """Deletes a topic, its partitions and its configs (apiKey 9)."""

    API_KEY: ClassVar[int] = 9
    TYPE_NAME: ClassVar[str] = "REMOVE_TOPIC_RECORD"
    topic_id: str


class DelegationTokenRecord(MetadataRecord, frozen=True, gc=False):
    """Creates or renews a delegation token (apiKey 10).

    Principals are text (``User:alice``); times are milliseconds since the epoch.
    The token's HMAC is not in the record: brokers derive it from a secret.
    """

    API_KEY: ClassVar[int] = 10
    TYPE_NAME: ClassVar[str] = "DELEGATION_TOKEN_RECORD"
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiration_timestamp: int
    token_id: str


class UserScramCredentialRecord(MetadataRecord, frozen=True, gc=False):
    """Sets a user's SCRAM credential for one mechanism (apiKey 11).

    ``mechanism``: 1 is SCRAM-SHA-256, 2 SCRAM-SHA-512 (Kafka's ScramMechanism types).
    """

    API_KEY: ClassVar[int] = 11
    TYPE_NAME: ClassVar[str] = "USER_SCRAM_CREDENTIAL_RECORD"
    name: str
    mechanism: int
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


class EntityData(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One part of a client quota entity: ``user``, ``client-id`` or ``ip``, and a name.

    A ``None`` name is the type's default entity.
    """

    entity_type: str
    entity_name: str | None


class ClientQuotaRecord(MetadataRecord, frozen=True, gc=False):
    """Sets (or, with ``remove``, deletes) one quota key of a client entity (apiKey 14)."""

    API_KEY: ClassVar[int] = 14
    TYPE_NAME: ClassVar[str] = "CLIENT_QUOTA_RECORD"
    entity: tuple[EntityData, ...]
    key: str
    value: float
    remove: bool = False


class FeatureLevelRecord(MetadataRecord, frozen=True, gc=False):
    """Sets a finalized feature level (apiKey 12); level 0 removes a feature.

    ``name == "metadata.version"`` sets the metadata version.
    """

    API_KEY: ClassVar[int] = 12
    TYPE_NAME: ClassVar[str] = "FEATURE_LEVEL_RECORD"
    name: str
    feature_level: int


class ProducerIdsRecord(MetadataRecord, frozen=True, gc=False):
    """Allocates a block of producer ids to a broker (apiKey 15)."""

    API_KEY: ClassVar[int] = 15
    TYPE_NAME: ClassVar[str] = "PRODUCER_IDS_RECORD"
    broker_id: int
    next_producer_id: int
    broker_epoch: int = -1


class BrokerRegistrationChangeRecord(MetadataRecord, frozen=True, gc=False):
    """Changes a broker registration (apiKey 17).

    ``fenced``: 1 fences, -1 unfences, 0 leaves it; ``in_controlled_shutdown``:
    1 starts a controlled shutdown, 0 leaves it.
    """

    API_KEY: ClassVar[int] = 17
    TYPE_NAME: ClassVar[str] = "BROKER_REGISTRATION_CHANGE_RECORD"
    broker_id: int
    broker_epoch: int
    fenced: int = 0
    in_controlled_shutdown: int = 0
    log_dirs: tuple[str, ...] | None = None


class AccessControlEntryRecord(MetadataRecord, frozen=True, gc=False):
    """Creates an ACL under its id (apiKey 18).

    The codes are Kafka's: ResourceType (TOPIC=2, GROUP=3, CLUSTER=4, ...),
    PatternType (LITERAL=3, PREFIXED=4), AclOperation (ALL=2, READ=3, WRITE=4,
    ...), AclPermissionType (DENY=2, ALLOW=3).
    """

    API_KEY: ClassVar[int] = 18
    TYPE_NAME: ClassVar[str] = "ACCESS_CONTROL_ENTRY_RECORD"
    id: str
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


class RemoveAccessControlEntryRecord(MetadataRecord, frozen=True, gc=False):
    """Deletes the ACL with this id (apiKey 19)."""

    API_KEY: ClassVar[int] = 19
    TYPE_NAME: ClassVar[str] = "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"
    id: str


class NoOpRecord(MetadataRecord, frozen=True, gc=False):
    """An empty record the active controller writes periodically (apiKey 20)."""

    API_KEY: ClassVar[int] = 20
    TYPE_NAME: ClassVar[str] = "NO_OP_RECORD"


class ZkMigrationStateRecord(MetadataRecord, frozen=True, gc=False):
    """ZooKeeper migration state (apiKey 21); NONE = 0. Read for interop only."""

    API_KEY: ClassVar[int] = 21
    TYPE_NAME: ClassVar[str] = "ZK_MIGRATION_STATE_RECORD"
    zk_migration_state: int = 0


class RemoveUserScramCredentialRecord(MetadataRecord, frozen=True, gc=False):
    """Deletes a user's SCRAM credential for one mechanism (apiKey 22)."""

    API_KEY: ClassVar[int] = 22
    TYPE_NAME: ClassVar[str] = "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"
    name: str
    mechanism: int


class BeginTransactionRecord(MetadataRecord, frozen=True, gc=False):
    """Opens a metadata transaction (apiKey 23, KIP-868)."""

    API_KEY: ClassVar[int] = 23
    TYPE_NAME: ClassVar[str] = "BEGIN_TRANSACTION_RECORD"
    name: str | None = None


class EndTransactionRecord(MetadataRecord, frozen=True, gc=False):
    """Commits the open metadata transaction (apiKey 24, KIP-868)."""

    API_KEY: ClassVar[int] = 24
    TYPE_NAME: ClassVar[str] = "END_TRANSACTION_RECORD"


class AbortTransactionRecord(MetadataRecord, frozen=True, gc=False):
    """Aborts the open metadata transaction (apiKey 25, KIP-868)."""

    API_KEY: ClassVar[int] = 25
    TYPE_NAME: ClassVar[str] = "ABORT_TRANSACTION_RECORD"
    reason: str | None = None


class RemoveDelegationTokenRecord(MetadataRecord, frozen=True, gc=False):
    """Deletes (expires) the delegation token with this id (apiKey 26)."""

    API_KEY: ClassVar[int] = 26
    TYPE_NAME: ClassVar[str] = "REMOVE_DELEGATION_TOKEN_RECORD"
    token_id: str


class RegisterControllerRecord(MetadataRecord, frozen=True, gc=False):
    """A controller registration (apiKey 27). Read for interop only."""

    API_KEY: ClassVar[int] = 27
    TYPE_NAME: ClassVar[str] = "REGISTER_CONTROLLER_RECORD"
    controller_id: int
    incarnation_id: str = ZERO_UUID
    zk_migration_ready: bool = False
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()


class ClearElrRecord(MetadataRecord, frozen=True, gc=False):
    """Clears the eligible leader replicas (KIP-966: ``eligibleLeaderReplicas`` and
    ``lastKnownElr``) of one topic's partitions, or of every topic's when the name is
    empty (apiKey 28; Kafka 4.1's controller writes it, with eligible leader replicas on,
    after each change of a topic's or the cluster's min.insync.replicas)."""

    API_KEY: ClassVar[int] = 28
    TYPE_NAME: ClassVar[str] = "CLEAR_ELR_RECORD"
    topic_name: str


class UnknownRecord(MetadataRecord, frozen=True, gc=False):
    """A record of a type or version kraftsim does not model, kept as bytes."""

    api_key: int
    version: int
    payload: bytes


TRANSACTION_MARKERS: tuple[type[MetadataRecord], ...] = (
    BeginTransactionRecord,
    EndTransactionRecord,
    AbortTransactionRecord,
)

RECORD_TYPES: dict[int, type[MetadataRecord]] = {
    cls.API_KEY: cls
    for cls in (
        RegisterBrokerRecord,
        UnregisterBrokerRecord,
        TopicRecord,
        PartitionRecord,
        ConfigRecord,
        PartitionChangeRecord,
        FenceBrokerRecord,
        UnfenceBrokerRecord,
        RemoveTopicRecord,
        DelegationTokenRecord,
        UserScramCredentialRecord,
        FeatureLevelRecord,
        ClientQuotaRecord,
        ProducerIdsRecord,
        BrokerRegistrationChangeRecord,
        AccessControlEntryRecord,
        RemoveAccessControlEntryRecord,
        NoOpRecord,
        ZkMigrationStateRecord,
        RemoveUserScramCredentialRecord,
        BeginTransactionRecord,
        EndTransactionRecord,
        AbortTransactionRecord,
        RemoveDelegationTokenRecord,
        RegisterControllerRecord,
        ClearElrRecord,
    )
}
"""Every modelled record type by Kafka apiKey."""


def is_marker(record: object) -> bool:
    """True for Begin/End/AbortTransactionRecord."""
    return isinstance(record, TRANSACTION_MARKERS)


def record_to_json(record: MetadataRecord) -> dict[str, object]:
    """The record as ``{"type": ..., "data": {...}}`` with Kafka's field names."""
    if isinstance(record, UnknownRecord):
        return {
            "type": f"UNKNOWN(apiKey={record.api_key})",
            "version": record.version,
            "data": {"payload": record.payload.hex()},
        }
    data = msgspec.to_builtins(record)
    return {"type": record.TYPE_NAME, "data": data}
