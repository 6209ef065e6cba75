"""Kafka's PartitionReassignmentRevertTest, against kraftsim's
:class:`controller.operations.partition_change.ReassignmentRevert`: what cancelling a
reassignment leaves (the original replicas, the ISR without the adding replicas, and
the first original replica alone when nothing else is left, an unclean choice).

Kafka's registrations carry log directories, which play no part in the revert; kraftsim's
are built without them.

Not ported: none (every test method of the class is ported).
"""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.operations.partition_change import ReassignmentRevert
from metadata.image import PartitionRegistration


def _reg(replicas: tuple[int, ...], isr: tuple[int, ...], removing: tuple[int, ...] = (),
         adding: tuple[int, ...] = ()) -> PartitionRegistration:
    return PartitionRegistration(replicas=replicas, isr=isr, leader=3, leader_epoch=100,
                                 partition_epoch=200, removing_replicas=removing,
                                 adding_replicas=adding)


def test_none_added_or_removed() -> None:
    assert ReassignmentRevert.of(_reg((3, 2, 1), (3, 2))) == \
        ReassignmentRevert(replicas=(3, 2, 1), isr=(3, 2), unclean=False)


def test_some_removing() -> None:
    assert ReassignmentRevert.of(_reg((3, 2, 1), (3, 2), removing=(2, 1))) == \
        ReassignmentRevert(replicas=(3, 2, 1), isr=(3, 2), unclean=False)


def test_some_adding() -> None:
    assert ReassignmentRevert.of(_reg((4, 5, 3, 2, 1), (4, 5, 2), adding=(4, 5))) == \
        ReassignmentRevert(replicas=(3, 2, 1), isr=(2,), unclean=False)


def test_some_removing_and_adding() -> None:
    reg = _reg((4, 5, 3, 2, 1), (4, 5, 2), removing=(2,), adding=(4, 5))
    assert ReassignmentRevert.of(reg) == \
        ReassignmentRevert(replicas=(3, 2, 1), isr=(2,), unclean=False)


def test_isr_special_case() -> None:
    """Every ISR member is being added: the first original replica alone, uncleanly."""
    reg = _reg((4, 5, 3, 2, 1), (4, 5), removing=(2,), adding=(4, 5))
    assert ReassignmentRevert.of(reg) == \
        ReassignmentRevert(replicas=(3, 2, 1), isr=(3,), unclean=True)


def test_every_replica_adding_is_an_invalid_assignment() -> None:
    """Kafka's constructor throws when no original replica is left (no partition gets
    there: kraftsim's checks, not one of Kafka's test methods)."""
    with pytest.raises(ApiError) as refused:
        ReassignmentRevert.of(_reg((4, 5), (4,), adding=(4, 5)))
    assert refused.value.code == "INVALID_REPLICA_ASSIGNMENT"
