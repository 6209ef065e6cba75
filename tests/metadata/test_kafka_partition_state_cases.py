"""A partition's replica lists, leader recovery state and the broker index, following
Kafka's ``ReplicasTest``, ``LeaderRecoveryStateTest`` and ``BrokersToIsrsTest``.

kraftsim keeps replica lists as tuples and a leader recovery state as the record's byte
(``RECOVERED`` 0, ``RECOVERING`` 1, -1 "no change" in a PartitionChangeRecord), so the
cases are written against the code that reads them: the replay of partition records,
the controller's AlterPartition and manual assignments, and the image's indexes.
Kafka's controller keeps ``BrokersToIsrs`` (broker -> the partitions whose ISR holds
it); kraftsim's image keeps ``partitions_by_broker`` (broker -> the partitions whose replicas
hold it, a superset, see ``metadata/broker_index.py``) and ``leaderless_partitions``.

Not ported:
- ``ReplicasTest``: ``testToList``, ``testToArray``, ``testClone``, ``testContains``,
  ``testContains2``, ``testCopyWithout``, ``testCopyWithout2``, ``testCopyWith``,
  ``testToSet``: Java int-array helpers; Python's tuples and sets do this.
- ``LeaderRecoveryStateTest.testOptionalInvalidValue``: a Java Optional API.
- ``BrokersToIsrsTest.testLeadersOnlyIterator``: kraftsim's index has no leaders-only
  view; a fence reads the broker's partitions from the index and takes those it leads
  (the fencing cases of ``tests/controller``).
"""

from __future__ import annotations

import random

import pytest

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.topics import validate_manual_assignment
from metadata.broker_index import partitions_of
from metadata.delta import MetadataDelta, ReplayError
from metadata.image import RECOVERED, RECOVERING, MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from tests.controller.kafka_cases import alter_partition
from tests.metadata.kafka_image_cases import image_of

T0 = "z5XgH_fQSAK3-RYoF2ymgw"
T1 = "U52uRe20RsGI0RvpcTx33Q"


def _brokers(*ids: int) -> list[MetadataRecord]:
    return [RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=10 + b, fenced=False)
            for b in ids]


def _partition(topic_id: str, pid: int, replicas: tuple[int, ...], leader: int,
               recovery: int = RECOVERED) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=replicas,
                           isr=replicas, leader=leader, leader_epoch=0, partition_epoch=0,
                           leader_recovery_state=recovery)


# ----------------------------------------------------------------- ReplicasTest


@pytest.mark.parametrize(("replicas", "refusal"), [
    ((3,), None),
    ((3, 1, 2, 6), None),
    ((1, 100), None),
    ((3, 3), "includes the broker 3 more than once"),
    ((3, 1, 2, 6, 1), "includes the broker 1 more than once"),
    ((4, -1, 3), "includes broker -1, but no such broker is registered"),
    ((-1,), "includes broker -1, but no such broker is registered"),
])
def test_a_replica_list_names_each_broker_once(replicas: tuple[int, ...],
                                               refusal: str | None) -> None:
    """Kafka's ReplicasTest.testValidate, as the controller checks a manual assignment: no
    broker twice, no negative id (no broker has one). (Kafka's helper accepts an empty
    list; a manual assignment refuses it, as Kafka's controller does.)"""
    image = image_of(_brokers(1, 2, 3, 4, 6, 100))
    if refusal is None:
        validate_manual_assignment(image, replicas, None)
        return
    with pytest.raises(ApiError, match=refusal) as refused:
        validate_manual_assignment(image, replicas, None)
    assert refused.value.code == "INVALID_REPLICA_ASSIGNMENT"


def _alter(isr: tuple[int, ...], recovery: int = RECOVERED,
           replicas: tuple[int, ...] = (3, 1, 2)) -> list[MetadataRecord]:
    image = image_of([*_brokers(1, 2, 3, 4), TopicRecord("foo", T0),
                      _partition(T0, 0, replicas, leader=replicas[0])])
    op = alter_partition(replicas[0], 10 + replicas[0], T0, 0, 0, 0, isr,
                          leader_recovery_state=recovery)
    return list(op.generate(OperationContext(image, random.Random(1), 10, 0)).records)


@pytest.mark.parametrize(("replicas", "isr"), [
    ((1, 2, 3), (1, 2, 3)),
    ((3, 1, 2), (3, 1)),
    ((3, 1, 2), (3,)),
])
def test_an_isr_within_the_replicas_is_accepted(replicas: tuple[int, ...],
                                                isr: tuple[int, ...]) -> None:
    """Kafka's ReplicasTest.testValidateIsr, the valid ISRs, through AlterPartition (whose
    ISR also holds the leader, the first replica here)."""
    records = _alter(isr, replicas=replicas)
    assert [r.isr for r in records if isinstance(r, PartitionChangeRecord)] == \
        ([] if isr == replicas else [isr])


@pytest.mark.parametrize("isr", [(3, 4), (3, 3), (4, 4), ()])
def test_an_isr_outside_the_replicas_or_repeating_one_is_refused(isr: tuple[int, ...]) -> None:
    """Kafka's ReplicasTest.testValidateIsr, the invalid ISRs (and an empty one, which
    Kafka's helper accepts but its AlterPartition refuses: the ISR must hold the
    leader)."""
    with pytest.raises(ApiError) as refused:
        _alter(isr)
    assert refused.value.code == "INVALID_REQUEST"


# ------------------------------------------------------------ LeaderRecoveryStateTest


def test_the_recovery_states_are_kafkas_values() -> None:
    """Kafka's LeaderRecoveryStateTest.testUniqueValues, testDoesNotContainNoChange,
    testByteToLeaderRecoveryState and testLeaderRecoveryStateValue."""
    assert (RECOVERED, RECOVERING) == (0, 1)
    assert -1 not in (RECOVERED, RECOVERING)


def _recovering_image() -> MetadataImage:
    return image_of([*_brokers(1, 2), TopicRecord("foo", T0), _partition(T0, 0, (1, 2), 1)])


def _change(recovery: int) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=0, topic_id=T0, leader_recovery_state=recovery)


def test_a_change_moves_the_recovery_state_or_leaves_it() -> None:
    """Kafka's LeaderRecoveryStateTest.testChangeTo: -1 keeps the state, 1 and 0 set it."""
    image = _recovering_image()
    states = []
    for recovery in (-1, RECOVERING, -1, RECOVERED):
        image = image_of([_change(recovery)], image)
        states.append(image.topics_by_id[T0].partitions[0].leader_recovery_state)
    assert states == [RECOVERED, RECOVERING, RECOVERING, RECOVERED]


@pytest.mark.parametrize("recovery", [2, -2])
def test_a_change_to_an_unknown_recovery_state_cannot_be_replayed(recovery: int) -> None:
    """Kafka's LeaderRecoveryStateTest.testInvalidValue, at replay: a PartitionChangeRecord
    with a state that is none of -1, 0 and 1 cannot apply (Kafka's changeTo throws), for
    a delta and for a standby's check alike. kraftsim stored the value."""
    image = _recovering_image()
    message = f"value {recovery} is not a valid leader recovery state"
    with pytest.raises(ReplayError, match=message):
        image_of([_change(recovery)], image)
    with pytest.raises(ReplayError, match=message):
        ReplayCheck(image).replay(_change(recovery))


@pytest.mark.parametrize("recovery", [2, -1])
@pytest.mark.parametrize("among", [0, 2], ids=["alone", "in-a-run"])
def test_a_partition_with_an_unknown_recovery_state_cannot_be_replayed(recovery: int,
                                                                       among: int) -> None:
    """Kafka's LeaderRecoveryStateTest.testInvalidValue, for a PartitionRecord: neither
    -1 nor 2 is a state (Kafka's ``LeaderRecoveryState.of`` throws), whether the record
    comes alone or amid a row of its topic's PartitionRecords (which kraftsim replays at
    once), for a delta and for a standby's check alike. kraftsim stored the value."""
    partitions = [_partition(T0, p, (1, 2), 1) for p in range(among)]
    partitions.insert(among // 2, _partition(T0, among, (1, 2), 1, recovery))
    records = [*_brokers(1, 2), TopicRecord("foo", T0), *partitions]
    message = f"foo-{among}: value {recovery} is not a valid leader recovery state"
    with pytest.raises(ReplayError, match=message):
        image_of(records)
    for delta in (MetadataDelta(MetadataImage.EMPTY), ReplayCheck(MetadataImage.EMPTY)):
        index, error = delta.replay_many(tuple(records))
        assert index == 3 + among // 2
        assert error is not None and message in str(error)


@pytest.mark.parametrize("recovery", [2, -1])
def test_an_alter_partition_with_an_unknown_recovery_state_fails(recovery: int) -> None:
    """Kafka's LeaderRecoveryStateTest.testInvalidValue, at AlterPartition: Kafka's
    ``LeaderRecoveryState.of`` throws, which its controller answers UNKNOWN_SERVER_ERROR.
    kraftsim wrote the value into a PartitionChangeRecord."""
    with pytest.raises(ApiError, match=f"Value {recovery} is not a valid") as refused:
        _alter((3, 1), recovery)
    assert refused.value.code == "UNKNOWN_SERVER_ERROR"


# --------------------------------------------------------------- BrokersToIsrsTest


def test_each_broker_lists_the_partitions_it_holds() -> None:
    """Kafka's BrokersToIsrsTest.testIterator, with replicas equal to the ISRs: a broker's
    partitions, none for a broker without any, and a partition added later."""
    image = image_of([TopicRecord("t0", T0), TopicRecord("t1", T1),
                      _partition(T0, 0, (1, 2, 3), 1), _partition(T1, 1, (2, 3, 4), 4)])
    index = image.partitions_by_broker
    assert list(partitions_of(index, 1)) == [(T0, 0)]
    assert set(partitions_of(index, 2)) == {(T0, 0), (T1, 1)}
    assert list(partitions_of(index, 4)) == [(T1, 1)]
    assert list(partitions_of(index, 5)) == []
    image = image_of([_partition(T1, 2, (3, 2, 1), 3)], image)
    assert set(partitions_of(image.partitions_by_broker, 2)) == {(T0, 0), (T1, 1), (T1, 2)}


def test_a_partition_that_loses_its_leader_is_listed_leaderless() -> None:
    """Kafka's BrokersToIsrsTest.testNoLeader, through the image's leaderless index."""
    image = image_of([TopicRecord("t0", T0), _partition(T0, 2, (1, 2, 3), 3)])
    assert dict(image.leaderless_partitions) == {}
    image = image_of([PartitionChangeRecord(partition_id=2, topic_id=T0, leader=-1)], image)
    assert dict(image.leaderless_partitions) == {T0: (2,)}
