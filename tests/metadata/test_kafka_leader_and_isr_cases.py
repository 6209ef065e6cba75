"""A partition's leader and ISR, following Kafka's ``LeaderAndIsrTest``
(metadata/src/test/java/org/apache/kafka/metadata/).

kraftsim has no ``LeaderAndIsr`` value class: a partition's leader, ISR, leader epoch and
leader recovery state are its :class:`~metadata.image.PartitionRegistration`, created by a
PartitionRecord and changed by the PartitionChangeRecords it merges (``None`` lists and
leader -2 keep the current value; naming a leader, even the same one, bumps the leader
epoch). Kafka's ``newLeader``/``newLeaderAndIsr``/``newRecoveringLeaderAndIsr``/``newEpoch``
are the changes below.

Ported: testRecoveringLeaderAndIsr, testNewLeaderAndIsr, testNewLeader, testNewEpoch (a
created partition's leader epoch is 0, as a new ``LeaderAndIsr``'s).

Not ported: testLeaderOpt: Java's ``Optional`` accessor of ``LeaderAndIsr``; kraftsim's
leader is an int, -1 (``NO_LEADER``) when there is none.
"""

from __future__ import annotations

from controller.operations import CreateTopics, NewTopic
from metadata.image import RECOVERED, RECOVERING, PartitionRegistration
from metadata.schema import PartitionChangeRecord, PartitionRecord
from tests.controller.kafka_cases import brokers, generate, image_of

TOPIC_ID = "3B134hrsQgKtz8Sp6QBIfg"


def _partition(leader: int, isr: tuple[int, ...]) -> PartitionRegistration:
    """A partition as Kafka's ``new LeaderAndIsr(leader, isr)``: leader epoch 0, recovered."""
    return PartitionRegistration(replicas=(1, 2, 3), isr=isr, leader=leader, leader_epoch=0,
                                 partition_epoch=0)


def _change(leader: int, isr: tuple[int, ...] | None = None,
            leader_recovery_state: int = -1) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, isr=isr, leader=leader,
                                 leader_recovery_state=leader_recovery_state)


def test_recovering_leader_and_isr() -> None:
    """LeaderAndIsrTest.testRecoveringLeaderAndIsr: a new leader and ISR marked RECOVERING
    (an unclean election's change) hold all three."""
    changed = _partition(1, (1, 2)).merge(
        _change(leader=3, isr=(3,), leader_recovery_state=RECOVERING))
    assert (changed.leader, changed.isr, changed.leader_recovery_state) == (3, (3,), RECOVERING)


def test_new_leader_and_isr() -> None:
    """LeaderAndIsrTest.testNewLeaderAndIsr: a new leader with an ISR stays RECOVERED."""
    changed = _partition(1, (1, 2)).merge(_change(leader=2, isr=(1, 2)))
    assert (changed.leader, changed.isr, changed.leader_recovery_state) == (2, (1, 2), RECOVERED)


def test_new_leader() -> None:
    """LeaderAndIsrTest.testNewLeader: a new leader alone keeps the ISR."""
    partition = _partition(2, (1, 2, 3))
    assert (partition.leader, partition.isr) == (2, (1, 2, 3))
    changed = partition.merge(_change(leader=3))
    assert (changed.leader, changed.isr) == (3, (1, 2, 3))


def test_new_epoch() -> None:
    """LeaderAndIsrTest.testNewEpoch: a created partition starts at leader epoch 0 and a
    change naming its leader again moves it to 1."""
    image = image_of(brokers(1, 2, 3))
    records, _ = generate(CreateTopics((NewTopic("foo", 1, 3),)), image)
    [created] = [r for r in records if isinstance(r, PartitionRecord)]
    assert created.leader_epoch == 0
    partition = _partition(3, (1, 2, 3))
    changed = partition.merge(_change(leader=3))
    assert (changed.leader, changed.leader_epoch) == (3, 1)
