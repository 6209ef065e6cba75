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
