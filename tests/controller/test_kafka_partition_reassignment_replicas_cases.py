"""Kafka's PartitionReassignmentReplicasTest, against kraftsim's
:class:`controller.operations.partition_change.ReassignmentReplicas` (a reassignment's
replicas, adding and removing lists; when an ISR completes it) and
:func:`controller.operations.partition_change.reassignment_in_progress`.

Kafka builds the lists from two PartitionAssignments (replicas with their directories);
kraftsim's :meth:`ReassignmentReplicas.between` takes the two replica tuples, as the
directories play no part in the lists.

Not ported: none (every test method of the class is ported).
"""

from __future__ import annotations

from controller.operations.partition_change import (
    CompletedReassignment,
    ReassignmentReplicas,
    reassignment_in_progress,
)
from metadata.image import PartitionRegistration


def test_none_added_or_removed() -> None:
    replicas = ReassignmentReplicas.between((3, 2, 1), (3, 2, 1))
    assert (replicas.removing, replicas.adding, replicas.replicas) == ((), (), (3, 2, 1))


def test_additions() -> None:
    replicas = ReassignmentReplicas.between((3, 2, 1), (3, 6, 2, 1, 5))
    assert (replicas.removing, replicas.adding, replicas.replicas) == \
        ((), (5, 6), (3, 6, 2, 1, 5))


def test_removals() -> None:
    replicas = ReassignmentReplicas.between((3, 2, 1, 0), (3, 1))
    assert (replicas.removing, replicas.adding, replicas.replicas) == \
        ((0, 2), (), (3, 1, 0, 2))


def test_additions_and_removals() -> None:
    replicas = ReassignmentReplicas.between((3, 2, 1, 0), (7, 3, 1, 9))
    assert (replicas.removing, replicas.adding, replicas.replicas) == \
        ((0, 2), (7, 9), (7, 3, 1, 9, 0, 2))


def test_rearrangement() -> None:
    replicas = ReassignmentReplicas.between((3, 2, 1, 0), (0, 1, 3, 2))
    assert (replicas.removing, replicas.adding, replicas.replicas) == ((), (), (0, 1, 3, 2))


def test_does_not_complete_reassignment() -> None:
    replicas = ReassignmentReplicas.between((0, 1, 2), (3, 4, 5))
    assert replicas.in_progress
    assert replicas.maybe_complete((0, 1, 2, 3, 4)) is None


def test_does_not_complete_reassignment_if_none_ongoing() -> None:
    replicas = ReassignmentReplicas((), (), (0, 1, 2))
    assert not replicas.in_progress
    assert replicas.maybe_complete((0, 1, 2)) is None


def test_does_complete_reassignment_all_new_replicas() -> None:
    replicas = ReassignmentReplicas.between((0, 1, 2), (3, 4, 5))
    assert replicas.in_progress
    assert replicas.maybe_complete((0, 1, 2, 3, 4, 5)) == \
        CompletedReassignment(replicas=(3, 4, 5), isr=(3, 4, 5))


def test_does_complete_reassignment_some_new_replicas() -> None:
    replicas = ReassignmentReplicas.between((0, 1, 2), (0, 1, 3))
    assert replicas.in_progress
    assert replicas.maybe_complete((0, 1, 2, 3)) == \
        CompletedReassignment(replicas=(0, 1, 3), isr=(0, 1, 3))


def test_is_reassignment_in_progress() -> None:
    def reg(removing: tuple[int, ...], adding: tuple[int, ...]) -> PartitionRegistration:
        replicas = (0, 1, 3, 2) if removing or adding else (0, 1, 2)
        return PartitionRegistration(replicas=replicas, isr=replicas, leader=0, leader_epoch=0,
                                     partition_epoch=0, removing_replicas=removing,
                                     adding_replicas=adding)
    assert reassignment_in_progress(reg((2,), (3,)))
    assert reassignment_in_progress(reg((2,), ()))
    assert reassignment_in_progress(reg((), (3,)))
    assert not reassignment_in_progress(reg((), ()))


def test_does_not_complete_reassignment_if_isr_does_not_have_all_target_replicas() -> None:
    replicas = ReassignmentReplicas.between((0, 1, 2), (0, 1, 3))
    assert replicas.in_progress
    assert replicas.maybe_complete((3,)) is None


def test_original_replicas() -> None:
    replicas = ReassignmentReplicas.between((0, 1, 2), (0, 1, 3))
    assert replicas.original_replicas() == (0, 1, 2)
