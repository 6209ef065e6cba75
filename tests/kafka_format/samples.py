"""Sample records of every modelled type, with every field a version has set off its default."""

from __future__ import annotations

from metadata import schema as rec
from raft.batch import (
    ControlRecord,
    KRaftVersionRecord,
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    Voter,
    VoterEndpoint,
    VotersRecord,
)

TOPIC_A = "YNY5hm01SZ-bAGeCLAGqWA"
TOPIC_B = "h6pDfZcK7RCGV0SBTRYdAA"
DIR_1 = "Teb3PFb009qvAZgMDEFH4g"
DIR_2 = "TI41VB4bRXaNhjWRBlFXvA"
ENDPOINTS = (
    rec.BrokerEndpoint(name="PLAINTEXT", host="broker-1.example", port=9092, security_protocol=0),
    rec.BrokerEndpoint(name="SSL", host="h\u00e9te", port=65535, security_protocol=1),
)
FEATURES = (
    rec.BrokerFeature(name="metadata.version", min_supported_version=1, max_supported_version=23),
    rec.BrokerFeature(name="kraft.version", min_supported_version=0, max_supported_version=1),
)


def sample_record(api_key: int, version: int) -> rec.MetadataRecord:
    """A record of ``api_key`` using every field that ``version`` can hold."""
    if api_key == 0:
        return rec.RegisterBrokerRecord(
            broker_id=7, incarnation_id=DIR_2, broker_epoch=1 << 40, end_points=ENDPOINTS,
            features=FEATURES, rack="rack-\u00e9", fenced=False,
            in_controlled_shutdown=version >= 1, is_migrating_zk_broker=version >= 2,
            log_dirs=(DIR_1, DIR_2) if version >= 3 else (),
        )  # fmt: skip
    if api_key == 1:
        return rec.UnregisterBrokerRecord(broker_id=3, broker_epoch=-5)
    if api_key == 2:
        return rec.TopicRecord(name="orders", topic_id=TOPIC_A)
    if api_key == 3:
        return rec.PartitionRecord(
            partition_id=4, topic_id=TOPIC_A, replicas=(1, 2, 3), isr=(1, 2),
            removing_replicas=(3,), adding_replicas=(4,), leader=1, leader_recovery_state=1,
            leader_epoch=9, partition_epoch=12,
            directories=(DIR_1, DIR_2, DIR_1) if version >= 1 else (),
            eligible_leader_replicas=(3,) if version >= 2 else None,
            last_known_elr=() if version >= 2 else None,
        )  # fmt: skip
    if api_key == 4:
        return rec.ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms",
                                value=None)  # fmt: skip
    if api_key == 5:
        return rec.PartitionChangeRecord(
            partition_id=0, topic_id=TOPIC_B, isr=(2,), leader=-1, replicas=(2, 3),
            removing_replicas=(), adding_replicas=(3,), leader_recovery_state=0,
            directories=(DIR_1, DIR_2) if version >= 1 else None,
            eligible_leader_replicas=(2,) if version >= 2 else None,
            last_known_elr=(1,) if version >= 2 else None,
        )  # fmt: skip
    if api_key == 7:
        return rec.FenceBrokerRecord(id=2, epoch=100)
    if api_key == 8:
        return rec.UnfenceBrokerRecord(id=2, epoch=101)
    if api_key == 9:
        return rec.RemoveTopicRecord(topic_id=TOPIC_A)
    if api_key == 10:
        return rec.DelegationTokenRecord(
            owner="User:alice", requester="User:admin", renewers=("User:bob", "User:\u00e9va"),
            issue_timestamp=1_700_000_000_000, max_timestamp=1_700_604_800_000,
            expiration_timestamp=1_700_086_400_000, token_id="4Ex5-QJdTv6QZ7Tm9e0YhQ",
        )  # fmt: skip
    if api_key == 11:
        return rec.UserScramCredentialRecord(
            name="alice", mechanism=2, salt=bytes(range(1, 17)), stored_key=b"\x00" * 3 + b"k",
            server_key=bytes(range(200, 232)), iterations=8192,
        )  # fmt: skip
    if api_key == 12:
        return rec.FeatureLevelRecord(name="group.version", feature_level=1)
    if api_key == 14:
        return rec.ClientQuotaRecord(
            entity=(rec.EntityData("user", "alice"), rec.EntityData("client-id", None)),
            key="producer_byte_rate", value=1024.5, remove=True,
        )  # fmt: skip
    if api_key == 15:
        return rec.ProducerIdsRecord(broker_id=1, next_producer_id=2000, broker_epoch=44)
    if api_key == 17:
        return rec.BrokerRegistrationChangeRecord(
            broker_id=1, broker_epoch=55, fenced=-1,
            in_controlled_shutdown=1 if version >= 1 else 0,
            log_dirs=(DIR_2,) if version >= 2 else None,
        )  # fmt: skip
    if api_key == 18:
        return rec.AccessControlEntryRecord(
            id=TOPIC_B, resource_type=2, resource_name="orders-", pattern_type=4,
            principal="User:alice", host="10.0.0.1", operation=4, permission_type=2,
        )  # fmt: skip
    if api_key == 19:
        return rec.RemoveAccessControlEntryRecord(id=TOPIC_B)
    if api_key == 20:
        return rec.NoOpRecord()
    if api_key == 21:
        return rec.ZkMigrationStateRecord(zk_migration_state=3)
    if api_key == 22:
        return rec.RemoveUserScramCredentialRecord(name="alice", mechanism=1)
    if api_key == 23:
        return rec.BeginTransactionRecord(name="CreateTopics orders")
    if api_key == 24:
        return rec.EndTransactionRecord()
    if api_key == 25:
        return rec.AbortTransactionRecord(reason="Controller failover")
    if api_key == 26:
        return rec.RemoveDelegationTokenRecord(token_id="4Ex5-QJdTv6QZ7Tm9e0YhQ")
    if api_key == 27:
        return rec.RegisterControllerRecord(controller_id=3000, incarnation_id=DIR_1,
                                            zk_migration_ready=True, end_points=ENDPOINTS[:1],
                                            features=FEATURES)  # fmt: skip
    if api_key == 28:
        return rec.ClearElrRecord(topic_name="foo")
    raise KeyError(api_key)


def sample_control_records() -> list[ControlRecord]:
    """One control record of each modelled type."""
    return [
        LeaderChangeMessage(leader_id=2, voters=(1, 2, 3), granting_voters=(2, 3)),
        SnapshotHeaderRecord(last_contained_log_timestamp=1_700_000_000_123),
        SnapshotFooterRecord(),
        KRaftVersionRecord(kraft_version=1),
        VotersRecord(voters=(
            Voter(voter_id=1, voter_directory_id=DIR_1,
                  endpoints=(VoterEndpoint(name="CONTROLLER", host="c1", port=9093),),
                  min_kraft_version=0, max_kraft_version=1),
            Voter(voter_id=2, voter_directory_id=DIR_2),
        )),
    ]  # fmt: skip
