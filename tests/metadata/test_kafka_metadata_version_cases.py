"""metadata.version levels and the gates kraftsim uses, following the cases of Kafka's
``MetadataVersionTest`` (server-common/src/test/java/org/apache/kafka/server/common/).

Ported: versions before 3.0-IV1 have no KRaft level and the later ones count up from 1
(testKRaftFeatureLevelsBefore3_0_IV1, testKRaftFeatureLevelsAtAndAfter3_0_IV1,
testKRaftVersions); version strings read as ``fromVersionString`` reads them, invalid ones
refused (testFromVersionString); a version's name and its release (testVersion,
testShortVersion); whether the metadata records changed between two levels, in either order
(testMetadataChanged); the latest production level is below the newest one
(assertLatestProductionIsLessThanLatest). The gates, over every level: a broker's
controlled-shutdown state from 3.3-IV3 (testIsInControlledShutdownStateSupported),
delegation tokens from 3.6-IV2 (testIsDelegationTokenSupported), replica directories from
3.7-IV2 (testDirectoryAssignmentSupported), ELR from 4.0-IV1 (testIsElrSupported), each as
what an image written at that level holds; the record versions of PartitionRecord,
PartitionChangeRecord and RegisterBrokerRecord (testPartitionRecordVersion,
testPartitionChangeRecordVersion, testRegisterBrokerRecordVersion; at a few levels also in
tests/kafka_format/test_kafka_records.py::test_record_versions_follow_metadata_version).
Beyond Kafka's test, the gates kraftsim adds on the same levels: metadata transactions from
3.6-IV1 (Kafka's ``isMetadataTransactionSupported``: the bootstrap is written as one) and
controller registrations from 3.7-IV0.

Also ported, from ``MetadataVersionValidatorTest``: testMetadataVersionValidator (every
version the validator of inter.broker.protocol.version lists is read as itself).

Fixed while porting (each failed on the old code): a version string counts only its first
two dot-separated parts (three for 0.x), so ``3.6.1`` is 3.6-IV2 where kraftsim refused it;
a release stands for its newest *production* version, so ``4.0`` is 4.0-IV0, not 4.0-IV3;
and an unknown old version such as ``0.1.0`` is refused where kraftsim took any release
below 3.0 as pre-KRaft.

Where kraftsim differs on purpose: a version before 3.0-IV1 reads as level 0
(:data:`~metadata.versions.PRE_KRAFT`); Kafka's has feature level -1. Either way it is no
KRaft level, and every caller only compares it with the minimum bootstrap level.

Not modelled: testPrevious (kraftsim's levels are integers, the previous of a level is the
one below it); testMinSupportedVersionFor (kraftsim writes record batch v2 only); the group
metadata and offset commit value versions and the request versions a level selects
(testGroupMetadataValueVersion, testOffsetCommitValueVersion,
testOffsetCommitValueVersionWithExpiredTimestamp, testListOffsetsValueVersion,
testProductionMetadataDontUseUnstableApiVersion: kraftsim has no group coordinator records
and no request versions); assertLatestProductionIsProduction and assertLatestIsNotProduction
(kraftsim keeps no production flag per level, only LATEST_PRODUCTION).
"""

from __future__ import annotations

import pytest

from controller.activation import activation_records
from kafka_format.errors import EncodeError
from kafka_format.record_versions import record_version
from metadata.bootstrap import BootstrapMetadata
from metadata.schema import (
    BeginTransactionRecord,
    DelegationTokenRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
)
from metadata.snapshot import image_to_records
from metadata.versions import (
    DIRECTORIES,
    ELR,
    IN_CONTROLLED_SHUTDOWN_STATE,
    LATEST_PRODUCTION,
    LEVELS,
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    MINIMUM_KRAFT,
    PRE_KRAFT,
    TRANSACTIONS,
    metadata_changed_between,
    parse_release_version,
    release_name,
    short_version,
)
from tests.metadata.kafka_image_cases import image_of

EVERY_LEVEL = sorted(LEVELS.values())
NEWEST = EVERY_LEVEL[-1]
TOPIC_ID = "5JPuABiJTPu2pQjpZWM6_A"

PRE_KRAFT_VERSIONS = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1",
    "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0",
    "1.1-IV0", "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1",
    "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1",
    "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0")


def _at(level: int, *records: MetadataRecord) -> list[MetadataRecord]:
    """The records of an image that holds ``records``, written at ``level``."""
    newest = image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, NEWEST), *records])
    return image_to_records(newest, level, lambda loss: None)


# ---------------------------------------------------------------- levels and names


@pytest.mark.parametrize("name", PRE_KRAFT_VERSIONS)
def test_versions_before_3_0_iv1_have_no_kraft_level(name: str) -> None:
    assert parse_release_version(name) == PRE_KRAFT
    assert name not in LEVELS


def test_levels_count_up_from_1_at_3_0_iv1() -> None:
    assert MINIMUM_KRAFT == LEVELS["3.0-IV1"] == 1
    assert list(range(1, len(LEVELS) + 1)) == EVERY_LEVEL
    assert all(LEVELS[release_name(level)] == level for level in EVERY_LEVEL)
    assert [release_name(level) for level in (1, 4, 7, 13, 14, 17, 22, 25)] == [
        "3.0-IV1", "3.3-IV0", "3.3-IV3", "3.6-IV1", "3.6-IV2", "3.7-IV2", "4.0-IV0", "4.0-IV3"]


@pytest.mark.parametrize(("text", "release"), [
    ("0.8.0", None), ("0.8.0.0", None), ("0.8.0.1", None), ("0.10.0-IV0", None),
    ("0.10.0.0-IV0", None), ("0.10.1-IV2", None), ("0.11.0.1", None), ("1.0", None),
    ("1.0.0-IV0", None), ("1.0.1", None), ("2.7", None), ("2.8-IV1", None), ("3.0-IV0", None),
    ("3.0", "3.0-IV1"), ("3.0-IV1", "3.0-IV1"), ("3.1", "3.1-IV0"), ("3.2-IV0", "3.2-IV0"),
    ("3.3", "3.3-IV3"), ("3.3-IV1", "3.3-IV1"), ("3.4", "3.4-IV0"), ("3.5", "3.5-IV2"),
    ("3.5-IV1", "3.5-IV1"), ("3.6", "3.6-IV2"), ("3.6-IV0", "3.6-IV0"), ("3.7", "3.7-IV4"),
    ("3.7-IV2", "3.7-IV2"), ("3.8", "3.8-IV0"), ("3.9", "3.9-IV0"), ("4.0-IV0", "4.0-IV0"),
    ("4.0-IV1", "4.0-IV1"), ("4.0-IV2", "4.0-IV2"), ("4.0-IV3", "4.0-IV3"),
    # the same rules, past Kafka's own list: a patch release, and a release's short name
    # standing for its newest production version (old code: refused; 4.0-IV3)
    ("3.6.1", "3.6-IV2"), ("3.3.2-IV0", "3.3-IV3"), ("4.0", "4.0-IV0"),
])
def test_version_strings_read_as_kafka_reads_them(text: str, release: str | None) -> None:
    assert parse_release_version(text) == (PRE_KRAFT if release is None else LEVELS[release])


@pytest.mark.parametrize("text", ["8.0", "0.1.0", "0.1.0.0", "0.1.0-IV0", "0.1.0.0-IV0",
                                  "2.7-IV9", "4.1"])
def test_an_invalid_version_string_is_refused(text: str) -> None:
    # 4.1: its levels are past LATEST_PRODUCTION, so it has no release short name
    with pytest.raises(ValueError, match=rf"Version {text} is not a valid version"):
        parse_release_version(text)


def test_every_version_the_validator_lists_is_read() -> None:
    """MetadataVersionValidatorTest.testMetadataVersionValidator: Kafka's validator of
    inter.broker.protocol.version lists every version, one per MetadataVersion; kraftsim's
    validator is parse_release_version, and each version's full name reads as that version
    (the ones before 3.0-IV1 as PRE_KRAFT), none twice."""
    listed = [*PRE_KRAFT_VERSIONS, *(release_name(level) for level in EVERY_LEVEL)]
    assert len(set(listed)) == len(listed) == len(PRE_KRAFT_VERSIONS) + len(LEVELS)
    assert [parse_release_version(name) for name in listed] == \
        [PRE_KRAFT] * len(PRE_KRAFT_VERSIONS) + EVERY_LEVEL


def test_a_version_name_and_its_release() -> None:
    assert [short_version(release_name(level)) for level in (1, 2, 3, 4, 7, 8, 11, 14, 19,
                                                               20, 21, 22, 25)] == [
        "3.0", "3.1", "3.2", "3.3", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0",
        "4.0"]
    assert [short_version(name) for name in ("0.8.0", "0.10.0-IV1", "2.7-IV2")] == [
        "0.8.0", "0.10.0", "2.7"]


def test_whether_the_metadata_changed_between_two_levels() -> None:
    v = LEVELS
    assert not metadata_changed_between(v["3.2-IV0"], v["3.2-IV0"])
    assert metadata_changed_between(v["3.2-IV0"], v["3.1-IV0"])
    assert metadata_changed_between(v["3.2-IV0"], v["3.0-IV1"])
    assert metadata_changed_between(v["3.2-IV0"], parse_release_version("3.0-IV0"))
    assert metadata_changed_between(v["3.2-IV0"], parse_release_version("2.8-IV1"))
    assert metadata_changed_between(v["3.3-IV1"], v["3.3-IV0"])
    assert metadata_changed_between(parse_release_version("3.0-IV0"), v["3.2-IV0"])
    assert metadata_changed_between(parse_release_version("2.8-IV1"), v["3.2-IV0"])


def test_the_latest_production_level_is_below_the_newest() -> None:
    assert LATEST_PRODUCTION < NEWEST
    assert release_name(LATEST_PRODUCTION) == "4.0-IV0"


# ---------------------------------------------------------------- gates, at every level


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_the_controlled_shutdown_state_is_held_from_3_3_iv3(level: int) -> None:
    broker = RegisterBrokerRecord(broker_id=1, incarnation_id="XgjKo16hRWeWrTui0iR5Nw",
                                  broker_epoch=5, fenced=False, in_controlled_shutdown=True)
    written = [r for r in _at(level, broker) if isinstance(r, RegisterBrokerRecord)]
    assert written[0].in_controlled_shutdown == (level >= IN_CONTROLLED_SHUTDOWN_STATE)
    assert (level >= IN_CONTROLLED_SHUTDOWN_STATE) == (level >= LEVELS["3.3-IV3"])


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_delegation_tokens_are_held_from_3_6_iv2(level: int) -> None:
    token = DelegationTokenRecord(owner="User:alice", requester="User:alice", renewers=(),
                                  issue_timestamp=0, max_timestamp=10, expiration_timestamp=5,
                                  token_id="token")
    held = any(isinstance(r, DelegationTokenRecord) for r in _at(level, token))
    assert held == (level >= LEVELS["3.6-IV2"])


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_replica_directories_are_held_from_3_7_iv2(level: int) -> None:
    placed = PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(0, 1), isr=(0, 1),
                             leader=0, leader_epoch=1, partition_epoch=2,
                             directories=("c7QfSi6xSIGQVh3Qd5RJxA", "rWaCHejCRRiptDMvW5Xw0g"))
    written = [r for r in _at(level, TopicRecord("foo", TOPIC_ID), placed)
               if isinstance(r, PartitionRecord)]
    assert bool(written[0].directories) == (level >= LEVELS["3.7-IV2"]) == (level >= DIRECTORIES)


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_elr_is_held_from_4_0_iv1(level: int) -> None:
    partition = PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(0, 1, 2),
                                isr=(0,), leader=0, leader_epoch=1, partition_epoch=2,
                                eligible_leader_replicas=(1,), last_known_elr=(2,))
    written = [r for r in _at(level, TopicRecord("foo", TOPIC_ID), partition)
               if isinstance(r, PartitionRecord)]
    supported = level >= LEVELS["4.0-IV1"]
    assert supported == (level >= ELR)
    assert written[0].eligible_leader_replicas == ((1,) if supported else None)
    assert written[0].last_known_elr == ((2,) if supported else None)


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_partition_record_versions_follow_elr_and_directories(level: int) -> None:
    expected = 2 if level >= LEVELS["4.0-IV1"] else 1 if level >= LEVELS["3.7-IV2"] else 0
    assert record_version(PartitionRecord(0, TOPIC_ID, (0,), (0,)), level) == expected
    assert record_version(PartitionChangeRecord(0, TOPIC_ID), level) == expected


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_register_broker_record_versions(level: int) -> None:
    expected = 3 if level >= LEVELS["3.7-IV2"] else 2 if level >= LEVELS["3.4-IV0"] else \
        1 if level >= LEVELS["3.3-IV3"] else 0
    assert record_version(RegisterBrokerRecord(1, "XgjKo16hRWeWrTui0iR5Nw"), level) == expected


@pytest.mark.parametrize("level", [level for level in EVERY_LEVEL if level >= MINIMUM_BOOTSTRAP])
def test_the_bootstrap_is_a_metadata_transaction_from_3_6_iv1(level: int) -> None:
    bootstrap = BootstrapMetadata.from_version(level, "test")
    activation = activation_records(log_empty=True, transaction_start=-1,
                                    metadata_version=level, bootstrap=bootstrap)
    transaction = isinstance(activation.records[0], BeginTransactionRecord)
    assert transaction == (level >= LEVELS["3.6-IV1"]) == (level >= TRANSACTIONS)
    assert activation.atomic == (not transaction)


@pytest.mark.parametrize("level", EVERY_LEVEL)
def test_controller_registrations_are_held_from_3_7_iv0(level: int) -> None:
    controller = RegisterControllerRecord(controller_id=3000,
                                          incarnation_id="9ABu6HEgRuS-hjHLgC4cHw")
    held = any(isinstance(r, RegisterControllerRecord) for r in _at(level, controller))
    assert held == (level >= LEVELS["3.7-IV0"])
    if held:
        assert record_version(controller, level) == 0
    else:
        with pytest.raises(EncodeError, match=r"needs metadata\.version 3\.7-IV0"):
            record_version(controller, level)
