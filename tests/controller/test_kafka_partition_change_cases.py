"""Partition changes, following the cases of Kafka's PartitionChangeBuilderTest that
kraftsim models (its rules live in the operations that change partitions: AlterPartition
and the fencing and unfencing of brokers): nothing written when nothing changes, who is
elected (clean, then unclean where allowed), and when the leader and partition epochs
move (an ISR shrink bumps the leader epoch only below metadata.version 3.6-IV0), and
KIP-704's leader recovery state (an unclean election marks the partition RECOVERING
from 3.2-IV0; the leader's AlterPartition ends it).

Cases left out, as kraftsim does not model what they test:
- testChangeRecordIsNoOp: a check of Kafka's generated PartitionChangeRecord schema (its
  versions and tagged fields) and of the helper that drops an empty change; kraftsim
  never builds a change it then drops (test_nothing_changed_writes_nothing covers the
  outcome).
- testUpdateDirectories: no log directories (JBOD, KIP-858).

The eligible leader replica cases (KIP-966) are ported at the end:
testEligibleLeaderReplicas_IsrShrinkBelowMinISR, _IsrExpandAboveMinISR,
_IsrAddNewMemberNotInELR, _RemoveUncleanShutdownReplicasFromElr, _ElrCanBeElected,
_IsrCanShrinkToZero, _ElectLastKnownLeader and _ElectLastKnownLeaderShouldFail, each with
Kafka's controller setting of useLastKnownLeaderInBalancedRecovery (on; Kafka's cases that
turn it off would keep a lastKnownElr the controller never writes that way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from controller.errors import ApiError
from controller.operations import FenceBroker, IncrementalAlterConfigs, UnfenceBroker
from controller.operations.cluster import AlterPartition
from controller.operations.configs import ConfigChange
from controller.operations.elr import ELR_FEATURE
from controller.operations.partition_change import (
    MIGRATING_DIRECTORY,
    UNASSIGNED_DIRECTORY,
    ReassignmentReplicas,
    ReassignmentRevert,
    build_change,
)
from metadata.delta import TOPIC_RESOURCE
from metadata.image import NO_LEADER, RECOVERED, RECOVERING, MetadataImage, PartitionRegistration
from metadata.schema import (
    ConfigRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.versions import DIRECTORIES, LEADER_RECOVERY, LEVELS, NO_EPOCH_BUMP_ON_ISR_SHRINK
from tests.controller.kafka_cases import OnePartitionAlter, alter_partition

from .kafka_cases import brokers, generate, image_of, run

FOO = "FOOFOOFOOFOOFOOFOOFOOA"
OLD, NEW = NO_EPOCH_BUMP_ON_ISR_SHRINK - 1, NO_EPOCH_BUMP_ON_ISR_SHRINK


def _image(replicas: tuple[int, ...] = (2, 1, 3), isr: tuple[int, ...] = (2, 1, 3),
           leader: int = 2, level: int = NEW, fenced: tuple[int, ...] = (),
           unclean: bool = False, recovery: int = RECOVERED) -> MetadataImage:
    """Brokers 1-4 at ``level``; topic ``foo`` with one partition at leader epoch 100 and
    partition epoch 200."""
    image = image_of([*brokers(1, 2, 3, 4, level=level, fenced=fenced),
                      TopicRecord("foo", FOO),
                      PartitionRecord(partition_id=0, topic_id=FOO, replicas=replicas,
                                      isr=isr, leader=leader, leader_epoch=100,
                                      partition_epoch=200, leader_recovery_state=recovery)])
    if unclean:
        image, _, _ = run(IncrementalAlterConfigs(
            TOPIC_RESOURCE, "foo", (ConfigChange("unclean.leader.election.enable", "true"),)),
            image)
    return image


def _reg(image: MetadataImage) -> PartitionRegistration:
    return image.topics_by_id[FOO].partitions[0]


def _alter(image: MetadataImage, isr: tuple[int, ...], recovery: int = RECOVERED
           ) -> OnePartitionAlter:
    reg = _reg(image)
    return alter_partition(reg.leader, 100, FOO, 0, reg.leader_epoch, reg.partition_epoch, isr,
                            recovery)


def test_nothing_changed_writes_nothing() -> None:
    """testNoChange and testNoLeaderEpochBumpIfNothingChanged: a change that changes
    nothing writes no record (so bumps no epoch), whether a leader's AlterPartition or a
    fence."""
    image = _image()
    assert generate(_alter(image, (2, 1, 3)), image)[0] == []
    records, _ = generate(FenceBroker(4), image)  # in no ISR, leads nothing: only the fence
    assert [type(r).__name__ for r in records] == ["BrokerRegistrationChangeRecord"]


@pytest.mark.parametrize("level", [OLD, NEW])
def test_an_isr_shrink_bumps_the_leader_epoch_only_before_3_6_iv0(level: int) -> None:
    """testLeaderEpochBumpOnIsrShrink (below 3.6-IV0), testNoLeaderEpochBumpOnIsrShrink
    and testIsrChangeDoesntBumpLeaderEpoch (from 3.6-IV0): the ISR [2, 1, 3] shrunk to
    [2, 1]."""
    image = _image(level=level)
    bump = level < NO_EPOCH_BUMP_ON_ISR_SHRINK
    after, [change], response = run(_alter(image, (2, 1)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 1),
                                           leader=2 if bump else -2)
    reg = _reg(after)
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch) == (2, 100 + bump, 201)
    assert response == reg
    # the same when a follower is fenced, and with the operator's AlterPartition
    fenced, _, _ = run(FenceBroker(3), image)
    assert (_reg(fenced).isr, _reg(fenced).leader_epoch) == ((2, 1), 100 + bump)
    forced, _, _ = run(AlterPartition("foo", 0, (2, 1)), image)
    assert (_reg(forced).isr, _reg(forced).leader_epoch) == ((2, 1), 100 + bump)


@pytest.mark.parametrize("level", [OLD, NEW])
def test_an_isr_expansion_never_bumps_the_leader_epoch(level: int) -> None:
    """testNoLeaderEpochBumpOnIsrExpansion: at any metadata.version."""
    image = _image(isr=(2, 1), level=level)
    after, [change], _ = run(_alter(image, (2, 1, 3)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 1, 3))
    assert (_reg(after).leader_epoch, _reg(after).partition_epoch) == (100, 201)
    # the same members in another order shrink nothing either (Kafka: containsAll)
    image = _image(level=level)
    after, [change], _ = run(_alter(image, (1, 2, 3)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 3))
    assert (_reg(after).leader_epoch, _reg(after).partition_epoch) == (100, 201)


def test_a_leader_change_with_an_isr_change_bumps_both_epochs_once() -> None:
    """testIsrChangeAndLeaderChange: the new ISR and the new leader in one record, each
    epoch bumped once."""
    after, records, _ = run(FenceBroker(2), _image())
    assert records[0] == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 3),
                                               leader=1)
    reg = _reg(after)
    assert (reg.isr, reg.leader, reg.leader_epoch, reg.partition_epoch) == \
        ((1, 3), 1, 101, 201)


def test_the_new_leader_is_the_first_active_replica_in_the_isr() -> None:
    """testElectLeader, its clean elections: replica order decides, not ISR order; fenced
    members are skipped (its unclean ones follow, its preferred ones are in
    test_kafka_elect_leaders_cases.py)."""
    image = _image(replicas=(2, 1, 3, 4), isr=(2, 4, 3, 1), fenced=(1,))
    after, _, _ = run(FenceBroker(2), image)
    assert (_reg(after).leader, _reg(after).isr) == (3, (4, 3, 1))


def test_no_active_isr_member_leaves_the_partition_leaderless_keeping_the_last() -> None:
    image = _image(isr=(2,))
    after, _, _ = run(FenceBroker(2), image)
    assert (_reg(after).leader, _reg(after).isr) == (NO_LEADER, (2,))


def test_an_unclean_election_takes_the_first_active_replica_with_an_isr_of_it() -> None:
    image = _image(replicas=(2, 1, 3), isr=(2,), fenced=(1,), unclean=True)
    after, [change, _fence], _ = run(FenceBroker(2), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(3,), leader=3,
                                           leader_recovery_state=RECOVERING)
    assert (_reg(after).leader, _reg(after).isr, _reg(after).leader_epoch) == (3, (3,), 101)
    assert "leaderRecoveryState=RECOVERING" in _reg(after).describe()


@pytest.mark.parametrize("level", [LEVELS["3.0-IV1"], LEVELS["3.1-IV0"], LEADER_RECOVERY, NEW])
def test_an_unclean_election_marks_the_partition_recovering_from_3_2_iv0(level: int) -> None:
    """KIP-704: below 3.2-IV0 there is no leader recovery state to set."""
    image = _image(replicas=(2, 1, 3), isr=(2,), fenced=(1,), unclean=True, level=level)
    after, [change, _fence], _ = run(FenceBroker(2), image)
    expected = RECOVERING if level >= LEADER_RECOVERY else RECOVERED
    assert change.leader_recovery_state == (RECOVERING if level >= LEADER_RECOVERY else -1)
    assert _reg(after).leader_recovery_state == expected


def test_an_unclean_election_of_a_recovering_partition_leaves_the_state_alone() -> None:
    image = _image(replicas=(2, 1, 3), isr=(2,), fenced=(1,), unclean=True,
                   recovery=RECOVERING)
    after, [change, _fence], _ = run(FenceBroker(2), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(3,), leader=3)
    assert _reg(after).leader_recovery_state == RECOVERING


def test_a_clean_election_keeps_the_recovery_state() -> None:
    image = _image(replicas=(2, 1, 3), isr=(2, 1), recovery=RECOVERING)
    after, [change, _fence], _ = run(FenceBroker(2), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1)
    assert _reg(after).leader_recovery_state == RECOVERING


def test_a_returning_broker_elected_uncleanly_leads_a_recovering_partition() -> None:
    image = _image(replicas=(2, 1, 3), isr=(1,), leader=NO_LEADER, fenced=(1, 2),
                   unclean=True)
    after, records, _ = run(UnfenceBroker(2), image)
    assert records[1:] == [PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2,),
                                                 leader=2, leader_recovery_state=RECOVERING)]
    assert (_reg(after).leader, _reg(after).leader_recovery_state) == (2, RECOVERING)


def test_the_leaders_first_isr_expansion_ends_recovering() -> None:
    """The leader of a RECOVERING partition sends RECOVERED with its next ISR change
    (Kafka's makeLeader marks it recovered); the record carries both."""
    image = _image(isr=(2,), recovery=RECOVERING)
    after, [change], response = run(_alter(image, (2, 1)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 1),
                                           leader_recovery_state=RECOVERED)
    assert (_reg(after).isr, _reg(after).leader_recovery_state) == ((2, 1), RECOVERED)
    assert response == _reg(after)
    # the state alone changes too; nothing when neither changes
    after, [change], _ = run(_alter(image, (2,)), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO,
                                           leader_recovery_state=RECOVERED)
    assert generate(_alter(image, (2,), RECOVERING), image)[0] == []


def test_alter_partition_refuses_what_kip_704_forbids() -> None:
    recovering = _image(isr=(2,), recovery=RECOVERING)
    for image, isr in ((recovering, (2, 1)), (_image(isr=(2,)), (2,))):
        with pytest.raises(ApiError) as refused:
            generate(_alter(image, isr, RECOVERING), image)
        assert refused.value.code == "INVALID_REQUEST"


def test_a_returning_isr_member_leads_a_leaderless_partition() -> None:
    image = _image(isr=(2,), leader=NO_LEADER, fenced=(2,))
    after, records, _ = run(UnfenceBroker(2), image)
    assert records[1:] == [PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=2)]
    assert (_reg(after).leader, _reg(after).leader_epoch, _reg(after).partition_epoch) == \
        (2, 101, 201)


def test_a_requested_leader_change_alone_keeps_the_isr() -> None:
    image = _image(level=LEVELS["3.5-IV2"])
    after, [change], _ = run(AlterPartition("foo", 0, (2, 1, 3), leader=1), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(2, 1, 3),
                                           leader=1)
    assert (_reg(after).leader, _reg(after).leader_epoch) == (1, 101)


def test_a_returning_broker_leaves_an_unclean_election_to_the_first_active_replica() -> None:
    """An unclean election when a broker returns picks the first replica, in replica order,
    that is active or is the returning broker (PartitionChangeBuilder's unclean choice):
    not necessarily the returning broker itself."""
    image = _image(replicas=(1, 2, 3), isr=(2,), leader=NO_LEADER, fenced=(2, 3),
                   unclean=True)
    after, records, _ = run(UnfenceBroker(3), image)
    assert PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                                 leader_recovery_state=RECOVERING) in records
    assert (_reg(after).leader, _reg(after).isr) == (1, (1,))


def test_unclean_leader_election_enable_is_read_as_a_kafka_boolean() -> None:
    """unclean.leader.election.enable is a boolean config: Kafka reads it trimmed and without
    regard to case, so a log holding " TRUE " (as a Kafka-written log may) allows an
    unclean election as "true" does."""
    image = image_of([ConfigRecord(TOPIC_RESOURCE, "foo", "unclean.leader.election.enable",
                                   " TRUE ")], _image(replicas=(2, 1), isr=(2,), leader=2))
    after, _, _ = run(FenceBroker(2), image)
    assert (_reg(after).leader, _reg(after).isr) == (1, (1,))


def test_a_leaderless_partition_elects_when_an_isr_member_leaves() -> None:
    """A partition without a leader whose ISR loses a member elects from the ISR that is
    left (the leader, none, is not in the new ISR), as for a leader that leaves."""
    image = _image()
    image, _, _ = run(AlterPartition("foo", 0, (2, 1), leader=NO_LEADER), image)
    assert _reg(image).leader == NO_LEADER
    after, _, _ = run(FenceBroker(2), image)
    assert (_reg(after).leader, _reg(after).isr) == (1, (1,))


@pytest.mark.parametrize("level", [LEADER_RECOVERY - 1, LEADER_RECOVERY])
def test_a_leader_leaving_and_returning_keeps_recovering(level: int) -> None:
    """testChangeInLeadershipDoesNotChangeRecoveryState: a RECOVERING partition whose only
    ISR member, its leader, is fenced keeps that ISR, loses its leader and stays
    RECOVERING; unfenced, the member leads again by a clean election, still RECOVERING
    (the record names no recovery state either time), with or without KIP-704's version."""
    image = _image(replicas=(1, 2, 3), isr=(1,), leader=1, level=level, fenced=(2, 3),
                   recovery=RECOVERING)
    image, [change, _fence], _ = run(FenceBroker(1), image)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=NO_LEADER)
    assert (_reg(image).leader, _reg(image).isr, _reg(image).leader_recovery_state) == \
        (NO_LEADER, (1,), RECOVERING)
    image, [_unfence, change], _ = run(UnfenceBroker(1), image, offset=200)
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1)
    assert (_reg(image).leader, _reg(image).isr, _reg(image).leader_recovery_state) == \
        (1, (1,), RECOVERING)


@pytest.mark.parametrize("level", [LEADER_RECOVERY - 1, LEADER_RECOVERY])
def test_an_unclean_election_sets_recovering_only_where_supported(level: int) -> None:
    """testUncleanSetsLeaderRecoveringState: a leaderless RECOVERED partition of replicas
    [1, 2, 3] and ISR [2, 3], only broker 1 able to lead, elected uncleanly: 1 leads with
    the ISR [1], and the partition is RECOVERING from 3.2-IV0 (KIP-704), RECOVERED below
    (the record then names no recovery state)."""
    image = _image(replicas=(1, 2, 3), isr=(2, 3), leader=NO_LEADER, level=level,
                   fenced=(1, 2, 3), unclean=True)
    after, [_unfence, change], _ = run(UnfenceBroker(1), image)
    supported = level >= LEADER_RECOVERY
    assert change == PartitionChangeRecord(
        partition_id=0, topic_id=FOO, isr=(1,), leader=1,
        leader_recovery_state=RECOVERING if supported else -1)
    assert (_reg(after).leader, _reg(after).isr, _reg(after).leader_recovery_state) == \
        (1, (1,), RECOVERING if supported else RECOVERED)


# ------------------------------------------------------------------ reassignment
# Kafka's FOO and BAR registrations (its builder's acceptable leaders "r != 3": broker 3
# fenced here), with their log directories; kraftsim's build_change is the builder.

FOO_DIRS = ("dpdvA5AZSWySmnPFTnu5Kw", "V60B3cglScq3Xk8BX1NxAQ", UNASSIGNED_DIRECTORY)
BAR_ID = "LKfUsCBnQKekvL9O5dY9nw"
BAR_DIRS = (UNASSIGNED_DIRECTORY, "X5FnAcIgTheWgTMzeO5WHw", "GtrcdoSOTm2vFMGFeZq0eg",
            "YcOqPw5ARmeKr1y9W3AkFw")
FOO_REG = PartitionRegistration(replicas=(2, 1, 3), isr=(2, 1, 3), leader=1, leader_epoch=100,
                                partition_epoch=200, directories=FOO_DIRS)
BAR_REG = PartitionRegistration(replicas=(1, 2, 3, 4), isr=(1, 2, 3), leader=1,
                                leader_epoch=100, partition_epoch=200, removing_replicas=(1,),
                                adding_replicas=(4,), directories=BAR_DIRS)
RECORD_LEVELS = [LEVELS["3.7-IV0"], LEVELS["3.7-IV2"], LEVELS["4.0-IV1"]]
"""The metadata.versions of Kafka's PartitionChangeRecord versions 0, 1 and 2."""


def _brokers_image(level: int) -> MetadataImage:
    """Brokers 1-5 at ``level``, 3 fenced; 4 and 5 with two log directories each (a new
    replica on them gets UNASSIGNED, as Kafka's test's default directory provider says)."""
    records: list[MetadataRecord] = list(brokers(1, 2, 3, level=level, fenced=(3,)))
    records += [RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=100, fenced=False,
                                     log_dirs=(f"DIR{b}{'A' * 18}", f"DIR{b}{'B' * 18}"))
                for b in (4, 5)]
    return image_of(records)


def _dirs(level: int, reg: PartitionRegistration, *replicas: int) -> tuple[str, ...] | None:
    """The directories a record names for ``replicas`` at ``level`` (from 3.7-IV2): each
    replica's own, UNASSIGNED for a new one."""
    if level < DIRECTORIES:
        return None
    held = dict(zip(reg.replicas, reg.directories, strict=True))
    return tuple(held.get(r, UNASSIGNED_DIRECTORY) for r in replicas)


def _with_dirs(level: int, reg: PartitionRegistration) -> PartitionRegistration:
    """``reg`` as a partition written at ``level`` (no directories before 3.7-IV2)."""
    return reg if level >= DIRECTORIES else msgspec.structs.replace(reg, directories=())


@pytest.mark.parametrize("level", [LEVELS["3.4-IV0"], LEVELS["3.6-IV0"], LEVELS["4.0-IV0"]])
def test_leader_epoch_bump_on_new_replica_set_disjoint(level: int) -> None:
    """testLeaderEpochBumpOnNewReplicaSetDisjoint: a replica set that loses a member names
    the leader (its epoch moves), at every metadata.version."""
    reg = _with_dirs(level, FOO_REG)
    change = build_change(_brokers_image(level), FOO, 0, reg, replicas=(2, 1, 4))
    assert change is not None and change.leader == 1


@pytest.mark.parametrize("level", [LEVELS["3.4-IV0"], LEVELS["3.6-IV0"], LEVELS["3.7-IV2"]])
def test_no_leader_epoch_bump_on_empty_target_isr(level: int) -> None:
    """testNoLeaderEpochBumpOnEmptyTargetIsr (KAFKA-16624): an empty target ISR is never
    written (without ELR), so it is no shrink: the shrink step does not name the old
    leader again, even below 3.6-IV0. (Kafka's test calls the shrink step alone; here
    the whole change is built, whose election finds no leader in the empty ISR.)"""
    reg = PartitionRegistration(replicas=(2,), isr=(2,), leader=2, leader_epoch=100,
                                partition_epoch=200)
    assert build_change(_brokers_image(level), FOO, 0, reg, isr=()) == \
        PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=NO_LEADER)


@pytest.mark.parametrize("level", RECORD_LEVELS)
def test_reassignment_rearranges_replicas(level: int) -> None:
    reg = _with_dirs(level, FOO_REG)
    assert build_change(_brokers_image(level), FOO, 0, reg, replicas=(3, 2, 1)) == \
        PartitionChangeRecord(partition_id=0, topic_id=FOO, replicas=(3, 2, 1),
                              directories=_dirs(level, reg, 3, 2, 1))


@pytest.mark.parametrize("level", RECORD_LEVELS)
def test_isr_enlargement_completes_reassignment(level: int) -> None:
    reg = _with_dirs(level, BAR_REG)
    assert build_change(_brokers_image(level), BAR_ID, 0, reg, isr=(1, 2, 3, 4)) == \
        PartitionChangeRecord(partition_id=0, topic_id=BAR_ID, replicas=(2, 3, 4),
                              isr=(2, 3, 4), leader=2, removing_replicas=(),
                              adding_replicas=(), directories=_dirs(level, reg, 2, 3, 4))


@pytest.mark.parametrize("level", RECORD_LEVELS)
def test_revert_reassignment(level: int) -> None:
    reg = _with_dirs(level, BAR_REG)
    revert = ReassignmentRevert.of(reg)
    assert (revert.replicas, revert.isr) == ((1, 2, 3), (1, 2, 3))
    assert build_change(_brokers_image(level), BAR_ID, 0, reg, replicas=revert.replicas,
                        isr=revert.isr, removing=(), adding=()) == \
        PartitionChangeRecord(partition_id=0, topic_id=BAR_ID, replicas=(1, 2, 3), leader=1,
                              removing_replicas=(), adding_replicas=(),
                              directories=_dirs(level, reg, 1, 2, 3))


@pytest.mark.parametrize("level", RECORD_LEVELS)
def test_removing_replica_reassignment(level: int) -> None:
    reg = _with_dirs(level, FOO_REG)
    moves = ReassignmentReplicas.between(reg.replicas, (1, 2))
    assert (moves.removing, moves.adding, moves.replicas) == ((3,), (), (1, 2, 3))
    assert build_change(_brokers_image(level), FOO, 0, reg, replicas=moves.replicas,
                        removing=moves.removing) == \
        PartitionChangeRecord(partition_id=0, topic_id=FOO, replicas=(1, 2), isr=(2, 1),
                              leader=1, directories=_dirs(level, reg, 1, 2))


@pytest.mark.parametrize("level", RECORD_LEVELS)
def test_adding_replica_reassignment(level: int) -> None:
    reg = _with_dirs(level, FOO_REG)
    moves = ReassignmentReplicas.between(reg.replicas, (1, 2, 3, 4))
    assert (moves.removing, moves.adding, moves.replicas) == ((), (4,), (1, 2, 3, 4))
    assert build_change(_brokers_image(level), FOO, 0, reg, replicas=moves.replicas,
                        adding=moves.adding) == \
        PartitionChangeRecord(partition_id=0, topic_id=FOO, replicas=(1, 2, 3, 4),
                              adding_replicas=(4,), directories=_dirs(level, reg, 1, 2, 3, 4))


def test_stopped_leader_is_demoted_after_reassignment_completes_even_if_no_new_eligible_leaders(
        ) -> None:
    """A reassignment from [0, 1] to [2, 3] led by 0 (removed), no broker able to lead
    (all fenced here; Kafka's predicate says no to all): the completing ISR leaves the
    partition leaderless rather than led by a removed replica."""
    image = image_of(brokers(0, 1, 2, 3, level=LEVELS["3.1-IV0"], fenced=(0, 1, 2, 3)))
    reg = PartitionRegistration(replicas=(2, 3, 0, 1), isr=(0, 1), leader=0, leader_epoch=0,
                                partition_epoch=0, removing_replicas=(0, 1),
                                adding_replicas=(2, 3))
    assert build_change(image, FOO, 0, reg, isr=(0, 1, 2, 3)) == PartitionChangeRecord(
        partition_id=0, topic_id=FOO, replicas=(2, 3), isr=(2, 3), leader=NO_LEADER,
        removing_replicas=(), adding_replicas=())


def test_keeps_directories_after_reassignment() -> None:
    """testKeepsDirectoriesAfterReassignment: kept replicas keep their directories, a new
    one gets its broker's default (UNASSIGNED for a broker of two directories). Kafka's
    test also sets broker 5's directory by hand (setDirectory, AssignReplicasToDirs): not
    modelled, so 5 gets its default here too."""
    level = LEVELS["3.7-IV2"]
    image = image_of(brokers(1, 2, 3, level=level),
                     _brokers_image(level))
    reg = PartitionRegistration(
        replicas=(2, 1, 3), isr=(2, 1, 3), leader=1, leader_epoch=100, partition_epoch=200,
        directories=("v1PVrX6uS5m8CByXlLfmWg", "iU2znv45Q9yQkOpkTSy3jA",
                     "fM5NKyWTQHqEihjIkUl99Q"))
    assert build_change(image, FOO, 0, reg, replicas=(3, 1, 5, 4)) == PartitionChangeRecord(
        partition_id=0, topic_id=FOO, leader=1, replicas=(3, 1, 5, 4),
        directories=("fM5NKyWTQHqEihjIkUl99Q", "iU2znv45Q9yQkOpkTSy3jA",
                     UNASSIGNED_DIRECTORY, UNASSIGNED_DIRECTORY))


def test_elect_leader_with_new_target_replicas() -> None:
    """testElectLeader, its case with new target replicas: an unclean-allowed change
    whose ISR is just 4, a target replica not yet in the replicas, elects 4 cleanly."""
    level = LEVELS["3.7-IV2"]
    reg = _with_dirs(level, FOO_REG)
    change = build_change(_brokers_image(level), FOO, 0, reg, isr=(4,),
                          replicas=(2, 1, 3, 4), unclean=True)
    assert change is not None and (change.leader, change.isr) == (4, (4,))
    assert change.leader_recovery_state == -1  # a clean election: no RECOVERING


def test_a_new_replica_gets_its_brokers_only_directory_or_migrating() -> None:
    """Kafka's defaultDir, for the new replicas of a reassignment: a broker with one log
    directory puts the replica there, a broker that registered none gets MIGRATING (kept
    replicas keep theirs)."""
    level = LEVELS["3.7-IV2"]
    image = image_of(
        [RegisterBrokerRecord(6, "inc-6", broker_epoch=100, fenced=False,
                              log_dirs=("DIR6" + "A" * 18,)),
         RegisterBrokerRecord(7, "inc-7", broker_epoch=100, fenced=False)],
        _brokers_image(level))
    reg = _with_dirs(level, FOO_REG)
    change = build_change(image, FOO, 0, reg, replicas=(2, 1, 3, 6, 7), adding=(6, 7))
    assert change is not None and change.directories == (
        *FOO_DIRS, "DIR6" + "A" * 18, MIGRATING_DIRECTORY)


# Eligible leader replicas (KIP-966): Kafka's cases build with min ISR 3 over replicas
# [1, 2, 3, 4]; here the topic's min.insync.replicas is 3 and
# eligible.leader.replicas.version is finalized at 1 (metadata.version 4.0-IV1).
# Kafka's controller never turns off useLastKnownLeaderInBalancedRecovery (only its tests
# do), so lastKnownElr holds the last leader alone: where a case turns it off, the
# outcome below is the one the controller writes.

def _elr_image(isr: tuple[int, ...], elr: tuple[int, ...] = (),
               last_known: tuple[int, ...] = (), leader: int = 1, on: bool = True,
               level: int = LEVELS["4.0-IV1"]) -> MetadataImage:
    """Brokers 1-4 at ``level``, ELR on (or not); ``foo`` (min.insync.replicas 3) with one
    partition over replicas [1, 2, 3, 4] at leader epoch 100 and partition epoch 200."""
    records: list[MetadataRecord] = [*brokers(1, 2, 3, 4, level=level)]
    if on:
        records.append(FeatureLevelRecord(ELR_FEATURE, 1))
    return image_of([*records, TopicRecord("foo", FOO),
                     ConfigRecord(TOPIC_RESOURCE, "foo", "min.insync.replicas", "3"),
                     PartitionRecord(partition_id=0, topic_id=FOO, replicas=(1, 2, 3, 4),
                                     isr=isr, leader=leader, leader_epoch=100,
                                     partition_epoch=200, eligible_leader_replicas=elr,
                                     last_known_elr=last_known)])


def _elr_change(image: MetadataImage, acceptable: Callable[[int], bool], **targets: Any
                ) -> PartitionChangeRecord | None:
    return build_change(image, FOO, 0, _reg(image), preferred=True, acceptable=acceptable,
                        **targets)


def _elr_of(image: MetadataImage, change: PartitionChangeRecord | None
            ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The ISR, ELR and last known ELR once ``change`` is applied."""
    assert change is not None
    reg = _reg(image).merge(change)
    return reg.isr, reg.eligible_leader_replicas or (), reg.last_known_elr or ()


def test_elr_isr_shrink_below_min_isr() -> None:
    """testEligibleLeaderReplicas_IsrShrinkBelowMinISR: the ISR shrinks from [1, 2, 3, 4]
    to [1, 2], below min ISR 3: 3 and 4 become eligible leader replicas; below 4.0-IV1
    (PartitionChangeRecord v1), or with ELR off, the record holds no ELR."""
    image = _elr_image(isr=(1, 2, 3, 4))
    change = _elr_change(image, lambda r: r != 3, isr=(1, 2))
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2),
                                           eligible_leader_replicas=(3, 4))
    assert _elr_of(image, change) == ((1, 2), (3, 4), ())
    for off in (_elr_image(isr=(1, 2, 3, 4), on=False),
                _elr_image(isr=(1, 2, 3, 4), level=LEVELS["3.7-IV2"], on=False)):
        assert _elr_change(off, lambda r: r != 3, isr=(1, 2)) == PartitionChangeRecord(
            partition_id=0, topic_id=FOO, isr=(1, 2))


def test_elr_isr_expand_above_min_isr() -> None:
    """testEligibleLeaderReplicas_IsrExpandAboveMinISR: the ISR grows back to min ISR 3:
    the ELR and the last known ELR empty."""
    image = _elr_image(isr=(1, 2), elr=(3,), last_known=(4,))
    change = _elr_change(image, lambda r: r != 3, isr=(1, 2, 3))
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 2, 3),
                                           eligible_leader_replicas=(), last_known_elr=())
    assert _elr_of(image, change) == ((1, 2, 3), (), ())


def test_elr_isr_add_new_member_not_in_elr() -> None:
    """testEligibleLeaderReplicas_IsrAddNewMemberNotInELR: 4 joins the ISR [1] (still below
    min ISR): the ELR [3] stays; the last known ELR empties, as the partition keeps its
    leader (Kafka's case, with the last-known-leader mode off, keeps it)."""
    image = _elr_image(isr=(1,), elr=(3,), last_known=(2,))
    change = _elr_change(image, lambda r: r != 3, isr=(1, 4))
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1, 4),
                                           last_known_elr=())
    assert _elr_of(image, change) == ((1, 4), (3,), ())


def test_elr_removes_unclean_shutdown_replicas() -> None:
    """testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr: 3 restarted after
    an unclean shutdown, so it leaves the ELR [2, 3] (it may have lost acknowledged
    records); the last known ELR, which holds only a last leader here, stays empty."""
    image = _elr_image(isr=(1,), elr=(2, 3))
    change = _elr_change(image, lambda r: r != 3, unclean_shutdown=(3,))
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO,
                                           eligible_leader_replicas=(2,))
    assert _elr_of(image, change) == ((1,), (2,), ())


def test_elr_can_be_elected() -> None:
    """testEligibleLeaderReplicas_ElrCanBeElected: leader 1 goes offline and the ISR
    empties; 3, eligible, is elected cleanly and becomes the ISR; 1 joins the ELR."""
    image = _elr_image(isr=(1,), elr=(3,))
    change = _elr_change(image, lambda r: r != 1, isr=())
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(3,), leader=3,
                                           eligible_leader_replicas=(1,))
    assert _elr_of(image, change) == ((3,), (1,), ())


def test_elr_lets_the_isr_shrink_to_zero() -> None:
    """testEligibleLeaderReplicas_IsrCanShrinkToZero: every replica offline, the ISR
    empties (allowed with ELR on), all four become eligible and lastKnownElr keeps the
    last leader, 1; a later change (2 restarted uncleanly) leaves lastKnownElr alone."""
    image = _elr_image(isr=(1, 2, 3, 4))
    change = _elr_change(image, lambda r: False, isr=())
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(), leader=-1,
                                           eligible_leader_replicas=(1, 2, 3, 4),
                                           last_known_elr=(1,))
    assert _elr_of(image, change) == ((), (1, 2, 3, 4), (1,))
    after = image_of([change], image)
    again = build_change(after, FOO, 0, _reg(after), preferred=True,
                         acceptable=lambda r: False, unclean_shutdown=(2,))
    assert again is not None and again.last_known_elr is None
    assert again.eligible_leader_replicas == (1, 3, 4)
    # with ELR off the last ISR member stays (the ISR is never emptied)
    off = _elr_image(isr=(1, 2, 3, 4), on=False)
    assert _elr_change(off, lambda r: False, isr=()) == PartitionChangeRecord(
        partition_id=0, topic_id=FOO, leader=-1)


def test_elr_elects_the_last_known_leader() -> None:
    """testEligibleLeaderReplicas_ElectLastKnownLeader: ISR and ELR empty, lastKnownElr
    [1]: 1 is elected, uncleanly (ISR just it, RECOVERING), and lastKnownElr empties."""
    image = _elr_image(isr=(), last_known=(1,), leader=-1)
    change = _elr_change(image, lambda r: True, isr=())
    assert change == PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                                           leader_recovery_state=RECOVERING,
                                           last_known_elr=())
    assert _elr_of(image, change) == ((1,), (), ())


def test_elr_elect_last_known_leader_should_fail() -> None:
    """testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail: the ELR [3] is not empty
    (though 3 cannot lead), so the last known leader 1 is not elected: nothing changes.
    Nor is a last known leader that cannot lead itself (Kafka 4.1, KAFKA-19522)."""
    image = _elr_image(isr=(), elr=(3,), last_known=(1,), leader=-1)
    assert _elr_change(image, lambda r: r != 3, isr=()) is None
    alone = _elr_image(isr=(), last_known=(1,), leader=-1)
    assert _elr_change(alone, lambda r: r != 1, isr=()) is None
