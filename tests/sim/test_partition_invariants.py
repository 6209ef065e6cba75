"""The partition invariants (sim/invariants/partitions.py) catch what they name, and only
once eligible leader replicas were on."""

from __future__ import annotations

from typing import Any, cast

import pytest

from controller.operations.elr import ELR_FEATURE
from metadata.schema import (
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
)
from metadata.versions import ELR, METADATA_VERSION_FEATURE
from raft import Batch
from sim.invariants.history import CommittedLog
from sim.invariants.partitions import PartitionInvariants
from sim.invariants.reference import ReferenceReplay
from sim.world import InvariantViolation

FOO = "FOOFOOFOOFOOFOOFOOFOOA"


def _checker(*batches: tuple[MetadataRecord, ...]) -> PartitionInvariants:
    """A checker over a committed log of ``batches`` (the reference advanced over them)."""
    history = CommittedLog()
    offset = 0
    for records in batches:
        batch = Batch(offset, 1, records)
        assert history.observe(batch) is None
        offset = batch.end_offset
    reference = ReferenceReplay(history)
    assert reference.advance() == []
    return PartitionInvariants(reference)


def _check(checker: PartitionInvariants) -> None:
    checker.check(cast(Any, None), ())


def _setup(elr_level: int) -> tuple[MetadataRecord, ...]:
    return (FeatureLevelRecord(METADATA_VERSION_FEATURE, ELR),
            FeatureLevelRecord(ELR_FEATURE, elr_level), TopicRecord("foo", FOO),
            PartitionRecord(partition_id=0, topic_id=FOO, replicas=(1, 2, 3), isr=(1, 2, 3),
                            leader=1, leader_epoch=0, partition_epoch=0))


def test_an_elr_member_in_the_isr_is_caught() -> None:
    overlap = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2),
                                    eligible_leader_replicas=(2, 3))
    with pytest.raises(InvariantViolation, match="ElrDisjointIsr"):
        _check(_checker(_setup(1), (overlap,)))


def test_a_leader_with_an_empty_isr_is_caught() -> None:
    empty = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(),
                                  eligible_leader_replicas=(1, 2, 3))
    with pytest.raises(InvariantViolation, match="NoLeaderOutsideEmptyIsr"):
        _check(_checker(_setup(1), (empty,)))


def test_a_consistent_change_passes_and_elr_off_is_not_looked_at() -> None:
    fine = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(), leader=-1,
                                 eligible_leader_replicas=(1, 2, 3), last_known_elr=(1,))
    _check(_checker(_setup(1), (fine,)))
    overlap = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2),
                                    eligible_leader_replicas=(2, 3))
    _check(_checker(_setup(0), (overlap,)))  # ELR never on: nothing is looked at


def test_a_violation_names_the_partition_and_the_offset() -> None:
    overlap = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2),
                                    eligible_leader_replicas=(2, 3))
    # the setup batch holds offsets 0-3: the change is at 4
    with pytest.raises(InvariantViolation,
                       match=r"foo-0 at 4: ISR \[1, 2\] and ELR \[2, 3\] overlap"):
        _check(_checker(_setup(1), (overlap,)))


def test_checks_go_on_after_elr_is_turned_off() -> None:
    """Once ELR was on, the records are looked at whatever the feature level later: a
    partition may keep its ELR after ELR is turned off."""
    checker = _checker(_setup(1))
    _check(checker)
    overlap = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2),
                                    eligible_leader_replicas=(2, 3))
    history = checker.reference.history
    for offset, records in ((4, (FeatureLevelRecord(ELR_FEATURE, 0),)), (5, (overlap,))):
        assert history.observe(Batch(offset, 1, records)) is None
    assert checker.reference.advance() == []
    with pytest.raises(InvariantViolation, match="ElrDisjointIsr"):
        _check(checker)
