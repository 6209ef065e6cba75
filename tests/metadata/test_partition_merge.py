"""A PartitionChangeRecord merged into a registration (Kafka's PartitionRegistration.merge):
every field the record sets replaces the registration's, every field it leaves unset
(``None``, leader -2, leader recovery state -1) keeps it; a leader value, even the same
one, bumps the leader epoch; every change bumps the partition epoch."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from metadata.image import PartitionRegistration
from metadata.schema import PartitionChangeRecord

_IDS = st.lists(st.integers(0, 9), max_size=4).map(tuple)
_DIRS = st.lists(st.sampled_from(("dir-a", "dir-b", "dir-c")), max_size=3).map(tuple)


def _unset_mostly(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """None three times in four: changes of one or two fields come often."""
    return st.one_of(st.none(), st.none(), st.none(), values)


_REGISTRATIONS = st.builds(
    PartitionRegistration, replicas=_IDS, isr=_IDS, leader=st.integers(-1, 9),
    leader_epoch=st.integers(0, 1_000), partition_epoch=st.integers(0, 1_000),
    removing_replicas=_IDS, adding_replicas=_IDS, leader_recovery_state=st.integers(0, 1),
    directories=_DIRS, eligible_leader_replicas=st.none() | _IDS,
    last_known_elr=st.none() | _IDS)

_CHANGES = st.builds(
    PartitionChangeRecord, partition_id=st.just(0), topic_id=st.just("t"),
    isr=_unset_mostly(_IDS), leader=st.sampled_from((-2, -2, -2, -1, 0, 3)),
    replicas=_unset_mostly(_IDS), removing_replicas=_unset_mostly(_IDS),
    adding_replicas=_unset_mostly(_IDS),
    leader_recovery_state=st.sampled_from((-1, -1, -1, 0, 1)),
    directories=_unset_mostly(_DIRS), eligible_leader_replicas=_unset_mostly(_IDS),
    last_known_elr=_unset_mostly(_IDS))

_LISTS = ("isr", "replicas", "removing_replicas", "adding_replicas", "directories",
          "eligible_leader_replicas", "last_known_elr")

_BASE = PartitionRegistration(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=7,
                              partition_epoch=9, removing_replicas=(3,), adding_replicas=(5,),
                              leader_recovery_state=1, directories=("a", "b", "c"),
                              eligible_leader_replicas=(2,), last_known_elr=(3,))


@given(_REGISTRATIONS, _CHANGES)
def test_a_merge_takes_each_field_the_change_sets_and_keeps_the_others(
        reg: PartitionRegistration, change: PartitionChangeRecord) -> None:
    merged = reg.merge(change)
    expected: dict[str, Any] = {name: getattr(reg, name) if getattr(change, name) is None
                                else getattr(change, name) for name in _LISTS}
    assert {name: getattr(merged, name) for name in _LISTS} == expected
    if change.leader == -2:
        assert (merged.leader, merged.leader_epoch) == (reg.leader, reg.leader_epoch)
    else:
        assert (merged.leader, merged.leader_epoch) == (change.leader, reg.leader_epoch + 1)
    assert merged.leader_recovery_state == (
        reg.leader_recovery_state if change.leader_recovery_state == -1
        else change.leader_recovery_state)
    assert merged.partition_epoch == reg.partition_epoch + 1


@pytest.mark.parametrize("field, value", [
    *((name, ("x",) if name == "directories" else (4,)) for name in _LISTS),
    *((name, ()) for name in _LISTS if name not in ("eligible_leader_replicas",
                                                    "last_known_elr")),
    ("leader_recovery_state", 0), ("leader", 2), ("leader", 1), ("leader", -1)])
def test_a_change_of_one_field_changes_that_field_alone(field: str, value: Any) -> None:
    merged = _BASE.merge(PartitionChangeRecord(partition_id=0, topic_id="t", **{field: value}))
    bumped = {"partition_epoch": 10, field: value}
    if field == "leader":
        bumped["leader_epoch"] = 8
    assert merged == msgspec.structs.replace(_BASE, **bumped)


def test_kafkas_reassignment_vectors() -> None:
    """PartitionRegistrationTest#testMergePartitionChangeRecordWithReassignmentData."""
    partition0 = PartitionRegistration(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1,
                                       leader_epoch=100, partition_epoch=200)
    partition1 = partition0.merge(PartitionChangeRecord(
        partition_id=0, topic_id="t", removing_replicas=(3,), adding_replicas=(4,),
        replicas=(1, 2, 3, 4)))
    assert partition1 == PartitionRegistration(
        replicas=(1, 2, 3, 4), isr=(1, 2, 3), removing_replicas=(3,), adding_replicas=(4,),
        leader=1, leader_epoch=100, partition_epoch=201)
    partition2 = partition1.merge(PartitionChangeRecord(
        partition_id=0, topic_id="t", isr=(1, 2, 4), removing_replicas=(), adding_replicas=(),
        replicas=(1, 2, 4)))
    assert partition2 == PartitionRegistration(
        replicas=(1, 2, 4), isr=(1, 2, 4), leader=1, leader_epoch=100, partition_epoch=202)


def test_an_isr_and_leader_change_keeps_everything_else() -> None:
    """The common change (a fence, an AlterPartition) on a registration with every field."""
    merged = _BASE.merge(PartitionChangeRecord(partition_id=0, topic_id="t", isr=(2, 3),
                                               leader=2))
    assert merged == PartitionRegistration(
        replicas=(1, 2, 3), isr=(2, 3), leader=2, leader_epoch=8, partition_epoch=10,
        removing_replicas=(3,), adding_replicas=(5,), leader_recovery_state=1,
        directories=("a", "b", "c"), eligible_leader_replicas=(2,), last_known_elr=(3,))
