"""Replica directory ids, following Kafka's ``DirectoryIdTest``
(server-common/src/test/java/org/apache/kafka/common/).

kraftsim has no ``DirectoryId`` class: a directory id is a Uuid in Kafka's text form; the
reserved ones it uses are ``MIGRATING_DIRECTORY``, ``UNASSIGNED_DIRECTORY`` and
``LOST_DIRECTORY`` of :mod:`metadata.uuids`; a partition's directories are a tuple
paired with its replicas (replica i in directory i), and whether a replica's directory is
online is the metadata cache's offline-replica rule.

Ported: testMigratingIsReserved, testUnassignedIsReserved, testLostIsReserved (each is the
Uuid Kafka reserves: high bits 0, low bits below 100); testCreateAssignmentMap (a
partition's replicas and directories pair up one by one, and a record whose lengths differ
is refused); testIsOnline (every case but the broker without directories is also
``test_a_replica_is_online_in_a_directory_the_broker_has_online`` of
``test_kafka_broker_registration_cases.py``).

Fixed while porting (failed on the old code): a PartitionRecord, or a PartitionChangeRecord
with replicas, naming directories that do not pair up with its replicas was replayed as
given; Kafka refuses it (``PartitionRegistration.checkDirectories`` throws
InvalidReplicaDirectoriesException, "The lengths for replicas and directories do not
match"), and so does kraftsim now, in its replay and its replay check.

Not ported: none.
"""

from __future__ import annotations

import pytest

from broker.metadata_cache import (
    offline_replicas,
)
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import (
    BrokerEndpoint,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.uuids import LOST_DIRECTORY, MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY, uuid_order

from .kafka_image_cases import image_of

TOPIC_ID = "ThIaNwRnSM2Nt9Mx1v0RvA"
DIRS = ("upjfkCrUR9GNn1i94ip1wg", "bCF3l0RIQjOKhUqgbivHZA", "Fg3mFhcVQlqCWRk4dZazxw",
        "bv9TEYi4TqOm52hLmrxT5w")
MISMATCH = "The lengths for replicas and directories do not match"


def _reserved(uuid: str) -> bool:
    """Kafka's ``DirectoryId.reserved``: high bits 0 and low bits below 100."""
    high, low = uuid_order(uuid)
    return high == 0 and 0 <= low < 100


@pytest.mark.parametrize(("uuid", "low"), [
    (MIGRATING_DIRECTORY, 0), (UNASSIGNED_DIRECTORY, 1), (LOST_DIRECTORY, 2)])
def test_reserved_directory_ids(uuid: str, low: int) -> None:
    """DirectoryIdTest.testMigratingIsReserved, testUnassignedIsReserved and
    testLostIsReserved: Kafka's Uuid(0, 0), Uuid(0, 1) and Uuid(0, 2), all reserved."""
    assert uuid_order(uuid) == (0, low)
    assert _reserved(uuid)
    assert not _reserved(DIRS[0])


def _partition(replicas: tuple[int, ...], directories: tuple[str, ...]) -> PartitionRecord:
    return PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=replicas,
                           isr=replicas, leader=replicas[0], directories=directories)


def _refusal(records: list[MetadataRecord]) -> str | None:
    """The error replaying ``records`` gives, checked to be the replay check's too."""
    errors = []
    for delta in (MetadataDelta(MetadataImage.EMPTY), ReplayCheck(MetadataImage.EMPTY)):
        _, error = delta.replay_many(records)
        errors.append(None if error is None else str(error))
    assert errors[0] == errors[1]
    return errors[0]


def test_create_assignment_map() -> None:
    """DirectoryIdTest.testCreateAssignmentMap: two replicas with three directories are
    refused; four with four pair up in order."""
    assert _refusal([TopicRecord("foo", TOPIC_ID), _partition((1, 2), DIRS[:3])]) == (
        f"PartitionRecord for foo-0: {MISMATCH}")
    image = image_of([TopicRecord("foo", TOPIC_ID), _partition((1, 2, 3, 4), DIRS)])
    registration = image.topics_by_id[TOPIC_ID].partitions[0]
    assert dict(zip(registration.replicas, registration.directories, strict=True)) == {
        1: DIRS[0], 2: DIRS[1], 3: DIRS[2], 4: DIRS[3]}


def test_a_run_of_partition_records_refuses_the_mismatched_one() -> None:
    """testCreateAssignmentMap, in a batch: replayed as a run of PartitionRecords, the
    record whose lengths differ is still refused, at its index."""
    records: list[MetadataRecord] = [
        TopicRecord("foo", TOPIC_ID), _partition((1, 2), DIRS[:2]),
        PartitionRecord(partition_id=1, topic_id=TOPIC_ID, replicas=(1, 2), isr=(1, 2),
                        leader=1, directories=DIRS[:3])]
    for delta in (MetadataDelta(MetadataImage.EMPTY), ReplayCheck(MetadataImage.EMPTY)):
        index, error = delta.replay_many(records)
        assert (index, str(error)) == (2, f"PartitionRecord for foo-1: {MISMATCH}")


def test_a_change_with_replicas_and_other_directories_is_refused() -> None:
    """testCreateAssignmentMap, for a PartitionChangeRecord: new replicas with directories
    that do not pair up are refused; new directories alone, or replicas alone, are not
    checked against the record (Kafka checks only a record with both)."""
    base: list[MetadataRecord] = [TopicRecord("foo", TOPIC_ID), _partition((1, 2), DIRS[:2])]
    change = PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(1, 2, 3),
                                   directories=DIRS[:2])
    assert _refusal([*base, change]) == f"PartitionChangeRecord for foo-0: {MISMATCH}"
    assert _refusal([*base, PartitionChangeRecord(
        partition_id=0, topic_id=TOPIC_ID, replicas=(1, 2, 3), directories=DIRS[:3])]) is None


@pytest.mark.parametrize(("directory", "online"), [
    (DIRS[0], True), (MIGRATING_DIRECTORY, True), (UNASSIGNED_DIRECTORY, True),
    (LOST_DIRECTORY, False), (DIRS[1], False)])
def test_is_online(directory: str, online: bool) -> None:
    """DirectoryIdTest.testIsOnline: a replica in one of its broker's directories, or in
    none yet (MIGRATING, UNASSIGNED), is online; in LOST or an unknown one it is offline;
    and a broker that registered no directories has every directory online (KAFKA-16162)."""
    for log_dirs, expected in (((DIRS[0], DIRS[2]), online), ((), directory != LOST_DIRECTORY)):
        image = image_of([
            RegisterBrokerRecord(broker_id=0, incarnation_id="m6CiJvfITZeKVC6UuhlZew",
                                 end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9090),),
                                 fenced=False, log_dirs=log_dirs),
            TopicRecord("foo", TOPIC_ID), _partition((0,), (directory,))])
        partition = image.topics_by_id[TOPIC_ID].partitions[0]
        assert offline_replicas(image, partition) == (() if expected else (0,))
