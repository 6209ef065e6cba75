"""The wire schema of every modelled metadata record, as a table.

Facts from Kafka's ``metadata/src/main/resources/common/metadata/*.json``
(field order, types, the version a field appears in, tags), restated as data
for :mod:`kafka_format.message_codec`. Defaults come from the record
Structs in :mod:`metadata.schema`, which carry Kafka's defaults.
Every metadata schema is flexible from version 0.
"""

from __future__ import annotations

from typing import Any

from kafka_format.message_codec import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    UINT16,
    UUID,
    ArrayOf,
    Field,
    MessageSchema,
    StructOf,
)
from metadata import schema as records


def _endpoint(values: dict[str, Any]) -> records.BrokerEndpoint:
    return records.BrokerEndpoint(**values)


def _feature(values: dict[str, Any]) -> records.BrokerFeature:
    return records.BrokerFeature(**values)


ENDPOINT = StructOf(
    "Endpoint",
    (
        Field("name", STRING),
        Field("host", STRING),
        Field("port", UINT16),
        Field("security_protocol", INT16),
    ),
    _endpoint,
)
"""A broker's or controller's listener (BrokerEndpoint / ControllerEndpoint)."""

FEATURE = StructOf(
    "Feature",
    (
        Field("name", STRING),
        Field("min_supported_version", INT16),
        Field("max_supported_version", INT16),
    ),
    _feature,
)
"""A supported feature range (BrokerFeature / ControllerFeature)."""

def _entity_data(values: dict[str, Any]) -> records.EntityData:
    return records.EntityData(**values)


ENTITY_DATA = StructOf(
    "EntityData",
    (
        Field("entity_type", STRING),
        Field("entity_name", NULLABLE_STRING),
    ),
    _entity_data,
)
"""One (type, name) part of a client quota entity."""

INT32_ARRAY = ArrayOf(INT32)
NULLABLE_INT32_ARRAY = ArrayOf(INT32, nullable=True)
UUID_ARRAY = ArrayOf(UUID)
NULLABLE_UUID_ARRAY = ArrayOf(UUID, nullable=True)

_SCHEMAS: tuple[MessageSchema, ...] = (
    MessageSchema(records.RegisterBrokerRecord, "RegisterBrokerRecord", 3, (
        Field("broker_id", INT32),
        Field("is_migrating_zk_broker", BOOL, since=2),
        Field("incarnation_id", UUID),
        Field("broker_epoch", INT64),
        Field("end_points", ArrayOf(ENDPOINT)),
        Field("features", ArrayOf(FEATURE)),
        Field("rack", NULLABLE_STRING),
        Field("fenced", BOOL),
        Field("in_controlled_shutdown", BOOL, since=1),
        Field("log_dirs", UUID_ARRAY, since=3, tag=0),
    )),
    MessageSchema(records.UnregisterBrokerRecord, "UnregisterBrokerRecord", 0, (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
    )),
    MessageSchema(records.TopicRecord, "TopicRecord", 0, (
        Field("name", STRING),
        Field("topic_id", UUID),
    )),
    MessageSchema(records.PartitionRecord, "PartitionRecord", 2, (
        Field("partition_id", INT32),
        Field("topic_id", UUID),
        Field("replicas", INT32_ARRAY),
        Field("isr", INT32_ARRAY),
        Field("removing_replicas", INT32_ARRAY),
        Field("adding_replicas", INT32_ARRAY),
        Field("leader", INT32),
        Field("leader_recovery_state", INT8, tag=0),
        Field("leader_epoch", INT32),
        Field("partition_epoch", INT32),
        Field("directories", UUID_ARRAY, since=1),
        Field("eligible_leader_replicas", NULLABLE_INT32_ARRAY, since=2, tag=1),
        Field("last_known_elr", NULLABLE_INT32_ARRAY, since=2, tag=2),
    )),
    MessageSchema(records.ConfigRecord, "ConfigRecord", 0, (
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("name", STRING),
        Field("value", NULLABLE_STRING),
    )),
    MessageSchema(records.PartitionChangeRecord, "PartitionChangeRecord", 2, (
        Field("partition_id", INT32),
        Field("topic_id", UUID),
        Field("isr", NULLABLE_INT32_ARRAY, tag=0),
        Field("leader", INT32, tag=1),
        Field("replicas", NULLABLE_INT32_ARRAY, tag=2),
        Field("removing_replicas", NULLABLE_INT32_ARRAY, tag=3),
        Field("adding_replicas", NULLABLE_INT32_ARRAY, tag=4),
        Field("leader_recovery_state", INT8, tag=5),
        Field("directories", NULLABLE_UUID_ARRAY, since=1, tag=8),
        Field("eligible_leader_replicas", NULLABLE_INT32_ARRAY, since=2, tag=6),
        Field("last_known_elr", NULLABLE_INT32_ARRAY, since=2, tag=7),
    )),
    MessageSchema(records.FenceBrokerRecord, "FenceBrokerRecord", 0, (
        Field("id", INT32),
        Field("epoch", INT64),
    )),
    MessageSchema(records.UnfenceBrokerRecord, "UnfenceBrokerRecord", 0, (
        Field("id", INT32),
        Field("epoch", INT64),
    )),
    MessageSchema(records.RemoveTopicRecord, "RemoveTopicRecord", 0, (
        Field("topic_id", UUID),
    )),
    MessageSchema(records.DelegationTokenRecord, "DelegationTokenRecord", 0, (
        Field("owner", STRING),
        Field("requester", STRING),
        Field("renewers", ArrayOf(STRING)),
        Field("issue_timestamp", INT64),
        Field("max_timestamp", INT64),
        Field("expiration_timestamp", INT64),
        Field("token_id", STRING),
    )),
    MessageSchema(records.UserScramCredentialRecord, "UserScramCredentialRecord", 0, (
        Field("name", STRING),
        Field("mechanism", INT8),
        Field("salt", BYTES),
        Field("stored_key", BYTES),
        Field("server_key", BYTES),
        Field("iterations", INT32),
    )),
    MessageSchema(records.FeatureLevelRecord, "FeatureLevelRecord", 0, (
        Field("name", STRING),
        Field("feature_level", INT16),
    )),
    MessageSchema(records.ClientQuotaRecord, "ClientQuotaRecord", 0, (
        Field("entity", ArrayOf(ENTITY_DATA)),
        Field("key", STRING),
        Field("value", FLOAT64),
        Field("remove", BOOL),
    )),
    MessageSchema(records.ProducerIdsRecord, "ProducerIdsRecord", 0, (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
        Field("next_producer_id", INT64),
    )),
    # Kafka's LogDirs here is a non-nullable tagged array (default empty); the
    # Struct keeps None for "absent", so an explicitly empty array survives too.
    MessageSchema(records.BrokerRegistrationChangeRecord, "BrokerRegistrationChangeRecord", 2, (
        Field("broker_id", INT32),
        Field("broker_epoch", INT64),
        Field("fenced", INT8, tag=0),
        Field("in_controlled_shutdown", INT8, since=1, tag=1),
        Field("log_dirs", NULLABLE_UUID_ARRAY, since=2, tag=2),
    )),
    MessageSchema(records.AccessControlEntryRecord, "AccessControlEntryRecord", 0, (
        Field("id", UUID),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("pattern_type", INT8),
        Field("principal", STRING),
        Field("host", STRING),
        Field("operation", INT8),
        Field("permission_type", INT8),
    )),
    MessageSchema(records.RemoveAccessControlEntryRecord, "RemoveAccessControlEntryRecord", 0, (
        Field("id", UUID),
    )),
    MessageSchema(records.NoOpRecord, "NoOpRecord", 0, ()),
    MessageSchema(records.ZkMigrationStateRecord, "ZkMigrationStateRecord", 0, (
        Field("zk_migration_state", INT8),
    )),
    MessageSchema(records.RemoveUserScramCredentialRecord, "RemoveUserScramCredentialRecord", 0, (
        Field("name", STRING),
        Field("mechanism", INT8),
    )),
    MessageSchema(records.BeginTransactionRecord, "BeginTransactionRecord", 0, (
        Field("name", NULLABLE_STRING, tag=0),
    )),
    MessageSchema(records.EndTransactionRecord, "EndTransactionRecord", 0, ()),
    MessageSchema(records.AbortTransactionRecord, "AbortTransactionRecord", 0, (
        Field("reason", NULLABLE_STRING, tag=0),
    )),
    MessageSchema(records.RemoveDelegationTokenRecord, "RemoveDelegationTokenRecord", 0, (
        Field("token_id", STRING),
    )),
    MessageSchema(records.RegisterControllerRecord, "RegisterControllerRecord", 0, (
        Field("controller_id", INT32),
        Field("incarnation_id", UUID),
        Field("zk_migration_ready", BOOL),
        Field("end_points", ArrayOf(ENDPOINT)),
        Field("features", ArrayOf(FEATURE)),
    )),
    MessageSchema(records.ClearElrRecord, "ClearElrRecord", 0, (
        Field("topic_name", STRING),
    )),
)  # fmt: skip

METADATA_SCHEMAS: dict[int, MessageSchema] = {s.cls.API_KEY: s for s in _SCHEMAS}
"""The schema of every modelled record type, by apiKey."""
