"""AlterPartitionReassignments and ListPartitionReassignments beyond Kafka's test cases:
the checks of a target in Kafka's order and words, a cancel that would need an unclean
election, a leader that leaves with the first record, and the empty requests."""

from __future__ import annotations

import pytest

from controller.operations import (
    AlterPartition,
    AlterPartitionReassignments,
    IncrementalAlterConfigs,
    ListPartitionReassignments,
    ReassignablePartition,
    ReassignableTopic,
)
from controller.operations.configs import ConfigChange
from controller.operations.reassignments import list_partition_reassignments
from metadata.delta import TOPIC_RESOURCE
from metadata.image import RECOVERED, RECOVERING, MetadataImage, PartitionRegistration
from metadata.schema import PartitionChangeRecord, PartitionRecord, TopicRecord
from metadata.versions import LATEST_PRODUCTION, LEADER_RECOVERY, NO_EPOCH_BUMP_ON_ISR_SHRINK
from tests.controller.kafka_cases import alter_partition

from .kafka_cases import brokers, generate, image_of, run

FOO = "FOOFOOFOOFOOFOOFOOFOOA"


def _image(replicas: tuple[int, ...] = (1, 2, 3), isr: tuple[int, ...] | None = None,
           fenced: tuple[int, ...] = (), level: int = LATEST_PRODUCTION) -> MetadataImage:
    """Brokers 1-5 at metadata.version ``level``; topic foo, one partition led by its first
    replica at epochs 0."""
    return image_of([*brokers(1, 2, 3, 4, 5, fenced=fenced, level=level),
                     TopicRecord("foo", FOO),
                     PartitionRecord(partition_id=0, topic_id=FOO, replicas=replicas,
                                     isr=replicas if isr is None else isr,
                                     leader=replicas[0], leader_epoch=0, partition_epoch=0)])


def _one(target: tuple[int, ...] | None, topic: str = "foo", pid: int = 0
         ) -> AlterPartitionReassignments:
    return AlterPartitionReassignments(
        (ReassignableTopic(topic, (ReassignablePartition(pid, target),)),))


def _error(op: AlterPartitionReassignments, image: MetadataImage) -> tuple[str, str | None]:
    records, response = generate(op, image)
    assert records == []
    result = response["responses"][0]["partitions"][0]  # type: ignore[index]
    return result["errorCode"], result["errorMessage"]


def _reg(image: MetadataImage) -> PartitionRegistration:
    return image.topics_by_id[FOO].partitions[0]


def test_targets_are_checked_in_kafkas_order_and_words() -> None:
    image = _image()
    assert _error(_one((1, 2), topic="bar"), image) == \
        ("UNKNOWN_TOPIC_OR_PARTITION", "Unable to find a topic named bar.")
    assert _error(_one((1, 2), pid=7), image) == \
        ("UNKNOWN_TOPIC_OR_PARTITION", "Unable to find partition foo:7.")
    assert _error(_one(()), image) == ("INVALID_REPLICA_ASSIGNMENT",
                                       "The manual partition assignment includes an empty "
                                       "replica list.")
    assert _error(_one((2, -1)), image) == (
        "INVALID_REPLICA_ASSIGNMENT",
        "The manual partition assignment includes broker -1, but no such broker is "
        "registered.")
    assert _error(_one((4, 2, 4)), image) == (
        "INVALID_REPLICA_ASSIGNMENT",
        "The manual partition assignment includes the broker 4 more than once.")
    assert _error(_one(None), image) == ("NO_REASSIGNMENT_IN_PROGRESS", None)


def test_a_target_already_in_sync_completes_in_one_record() -> None:
    """Only removals, the kept replicas in sync: one record, the leader (removed) replaced
    by the first target replica."""
    after, [change], _ = run(_one((3, 2)), _image())
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 3), leader=3,
                                           replicas=(3, 2))
    reg = _reg(after)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_epoch, reg.adding_replicas,
            reg.removing_replicas) == ((3, 2), (2, 3), 3, 1, (), ())
    assert list_partition_reassignments(after) == {"topics": []}


def test_the_same_replicas_write_nothing() -> None:
    records, response = generate(_one((1, 2, 3)), _image())
    assert records == []
    assert response == {"responses": [{"name": "foo", "partitions": [
        {"partitionIndex": 0, "errorCode": "NONE", "errorMessage": None}]}]}


def test_a_new_replica_waits_for_the_isr_then_the_removed_leader_is_replaced() -> None:
    image, [start], _ = run(_one((4, 2, 3)), _image())
    assert start == PartitionChangeRecord(partition_id=0, topic_id=FOO, replicas=(4, 2, 3, 1),
                                          removing_replicas=(1,), adding_replicas=(4,))
    reg = _reg(image)
    assert reg.leader == 1  # the old leader leads until the reassignment completes
    same = alter_partition(1, 100, FOO, 0, reg.leader_epoch, reg.partition_epoch, (1, 2))
    image, [shrink], _ = run(same, image, offset=image.offset + 1)
    assert shrink == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2))
    reg = _reg(image)
    lacking = alter_partition(1, 100, FOO, 0, reg.leader_epoch, reg.partition_epoch,
                               (1, 2, 4))
    image, [wait], _ = run(lacking, image, offset=image.offset + 1)
    assert wait == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 4))
    reg = _reg(image)
    grow = alter_partition(1, 100, FOO, 0, reg.leader_epoch, reg.partition_epoch,
                            (1, 2, 4, 3))
    image, [done], answer = run(grow, image, offset=image.offset + 1)
    assert done == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 4, 3), leader=4,
                                         replicas=(4, 2, 3), removing_replicas=(),
                                         adding_replicas=())
    assert isinstance(answer, PartitionRegistration) and answer.leader == 4
    reg = _reg(image)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_epoch) == \
        ((4, 2, 3), (2, 4, 3), 4, 1)


def test_a_cancel_that_needs_an_unclean_election_is_refused_unless_the_topic_allows() -> None:
    """Every ISR member is being added (the original replicas fell out of it): the
    revert would make the first original replica leader uncleanly. Allowed, the record is
    Kafka's: the ISR just that replica, which its election then picks as a clean leader
    (no RECOVERING state, as Kafka's builder writes it)."""
    image = _image(replicas=(4, 5, 1), isr=(4, 5))
    image = image_of([PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=4,
                                            adding_replicas=(4, 5))], image, 100)
    assert _error(_one(None), image) == (
        "INVALID_REPLICA_ASSIGNMENT",
        "Unable to revert partition assignment for foo:0 because it would require an "
        "unclean leader election.")
    image, _, _ = run(IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (
        ConfigChange("unclean.leader.election.enable", "true"),)), image, offset=101)
    after, [change], _ = run(_one(None), image, offset=102)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                                           replicas=(1,), adding_replicas=())
    reg = _reg(after)
    assert (reg.replicas, reg.isr, reg.leader, reg.adding_replicas) == ((1,), (1,), 1, ())


@pytest.mark.parametrize("level", [LEADER_RECOVERY - 1, LEADER_RECOVERY])
def test_an_allowed_unclean_cancel_elects_the_first_active_original_replica(level: int
                                                                             ) -> None:
    """The revert's ISR is the first original replica, 1, but 1 is fenced: with unclean
    elections allowed the first active original replica, 2, leads uncleanly, the ISR just
    it, and the partition is RECOVERING from 3.2-IV0 (KIP-704), as Kafka's builder does;
    a partition already RECOVERING keeps that state without the record naming it."""
    image = _image(replicas=(4, 5, 1, 2, 3), isr=(4,), fenced=(1,), level=level)
    image = image_of([PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=4,
                                            adding_replicas=(4, 5))], image, 100)
    image, _, _ = run(IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (
        ConfigChange("unclean.leader.election.enable", "true"),)), image, offset=101)
    supported = level >= LEADER_RECOVERY
    after, [change], _ = run(_one(None), image, offset=102)
    assert change == PartitionChangeRecord(
        partition_id=0, topic_id=FOO, isr=(2,), leader=2, replicas=(1, 2, 3),
        adding_replicas=(), leader_recovery_state=RECOVERING if supported else -1)
    reg = _reg(after)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_recovery_state) == \
        ((1, 2, 3), (2,), 2, RECOVERING if supported else RECOVERED)
    if supported:
        recovering = image_of([PartitionChangeRecord(
            partition_id=0, topic_id=FOO, leader_recovery_state=RECOVERING)], image, 102)
        _, [change], _ = run(_one(None), recovering, offset=103)
        assert (change.isr, change.leader, change.leader_recovery_state) == ((2,), 2, -1)


@pytest.mark.parametrize("level", [NO_EPOCH_BUMP_ON_ISR_SHRINK - 1,
                                   NO_EPOCH_BUMP_ON_ISR_SHRINK])
def test_a_reassigning_partitions_isr_shrink_bumps_the_leader_epoch_only_before_3_6_iv0(
        level: int) -> None:
    """A leader's AlterPartition while a reassignment is in progress follows the same
    epoch rule as any other: a shrink bumps the leader epoch below 3.6-IV0 only; an
    expansion, or the same members in another order, never does."""
    image, _, _ = run(_one((4, 2, 3)), _image(level=level))
    bump = level < NO_EPOCH_BUMP_ON_ISR_SHRINK

    def alter(image: MetadataImage, isr: tuple[int, ...]) -> MetadataImage:
        reg = _reg(image)
        op = alter_partition(1, 100, FOO, 0, reg.leader_epoch, reg.partition_epoch, isr)
        after, [change], _ = run(op, image, offset=image.offset + 1)
        assert change.isr == isr
        return after

    image = alter(image, (3, 1, 2))  # reordered: no shrink
    assert (_reg(image).leader_epoch, _reg(image).partition_epoch) == (0, 2)
    image = alter(image, (1, 2))
    assert (_reg(image).leader, _reg(image).leader_epoch, _reg(image).partition_epoch) == \
        (1, int(bump), 3)
    image = alter(image, (1, 2, 3))
    assert (_reg(image).leader_epoch, _reg(image).partition_epoch) == (int(bump), 4)


def test_a_removal_waits_for_a_kept_replica_in_sync_and_its_cancel_keeps_the_epochs_order(
        ) -> None:
    """Only removals, but the ISR is just the removed leader: the reassignment waits (no
    kept replica in sync), the replica set loses nothing yet, so no leader epoch moves.
    Cancelled, the replicas stay in the reassigned order (Kafka's original replicas are
    the replicas without the adding ones) and only the removing list is cleared: still
    no new leader epoch."""
    image, [start], _ = run(_one((2, 3)), _image(isr=(1,)))
    assert start == PartitionChangeRecord(partition_id=0, topic_id=FOO, replicas=(2, 3, 1),
                                          removing_replicas=(1,))
    assert (_reg(image).leader, _reg(image).leader_epoch) == (1, 0)
    after, [cancel], _ = run(_one(None), image, offset=image.offset + 1)
    assert cancel == PartitionChangeRecord(partition_id=0, topic_id=FOO, removing_replicas=())
    reg = _reg(after)
    assert (reg.replicas, reg.isr, reg.leader, reg.leader_epoch, reg.partition_epoch) == \
        ((2, 3, 1), (1,), 1, 0, 2)
    assert list_partition_reassignments(after) == {"topics": []}


def test_empty_requests_answer_at_once() -> None:
    early = AlterPartitionReassignments(()).early_result()
    assert early is not None and early.response == {"responses": []}
    listed = ListPartitionReassignments(()).early_result()
    assert listed is not None and listed.response == {"topics": []}
    assert ListPartitionReassignments().early_result() is None


def test_list_reads_the_latest_state_and_leaves_out_unknown_names() -> None:
    image, _, _ = run(_one((4, 2, 3)), _image())
    ongoing = {"topics": [{"name": "foo", "partitions": [
        {"partitionIndex": 0, "replicas": [4, 2, 3, 1], "addingReplicas": [4],
         "removingReplicas": [1]}]}]}
    assert generate(ListPartitionReassignments(), image) == ([], ongoing)
    assert generate(ListPartitionReassignments((("foo", (0, 5)), ("nope", (0,)))),
                    image) == ([], ongoing)
    assert ListPartitionReassignments().describe() == "ListPartitionReassignments(all)"
    assert _one((4, 2, 3)).describe() == "AlterPartitionReassignments(foo-0 -> [4, 2, 3])"


def test_the_operators_alter_partition_completes_a_reassignment_too() -> None:
    """kraftsim's operator AlterPartition (no leader given) takes the builder's path for a
    reassigning partition: an ISR with every target replica completes it."""
    image, _, _ = run(_one((4, 2, 3)), _image())
    after, [change], _ = run(AlterPartition("foo", 0, (1, 2, 3, 4)), image,
                             offset=image.offset + 1)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 3, 4),
                                           leader=4, replicas=(4, 2, 3), removing_replicas=(),
                                           adding_replicas=())
    assert list_partition_reassignments(after) == {"topics": []}
