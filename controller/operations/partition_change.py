"""One partition's change (Kafka's PartitionChangeBuilder, PartitionReassignmentReplicas
and PartitionReassignmentRevert), with reassignment and eligible leader replicas (KIP-966)
in it.

A reassignment lives in the partition's registration: ``replicas`` is the target
followed by the replicas being removed, ``adding_replicas`` the target's new members and
``removing_replicas`` the old members it leaves out. It completes in the first change
whose ISR, once the removing replicas are taken out of it, still has a member and holds
every target replica: the replicas become the target, the removing replicas leave the
ISR, adding and removing are emptied, and a leader that left is replaced, all in that
one record.

:func:`build_change` is the builder's ``build``, in its order: completion, the target
ELR, election, the leader epoch bump of a replica set that loses a member, the ELR, the
ISR, the bump of an ISR shrink below metadata.version 3.6-IV0, the last known leader,
the replica lists, the leader recovery state. With eligible leader replicas on
(:mod:`controller.operations.elr`) the ELR follows the ISR against the topic's min ISR,
the ISR may become empty, a partition with an empty ISR elects from its ELR, and
lastKnownElr keeps the last leader (Kafka's controller leaves
``useLastKnownLeaderInBalancedRecovery`` on); with them off, a change empties the ELR a
partition kept from a time they were on. The ELR fields are written from
metadata.version 4.0-IV1 (PartitionChangeRecord v2) only.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from controller.errors import ApiError
from controller.operations.elr import effective_min_isr, elr_enabled
from controller.operations.leadership import active
from metadata.image import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERING,
    MetadataImage,
    PartitionRegistration,
)
from metadata.schema import PartitionChangeRecord
from metadata.uuids import MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY
from metadata.versions import DIRECTORIES, ELR, LEADER_RECOVERY, NO_EPOCH_BUMP_ON_ISR_SHRINK


class CompletedReassignment(msgspec.Struct, frozen=True):
    """The replicas and ISR a completed reassignment leaves."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]


class ReassignmentReplicas(msgspec.Struct, frozen=True):
    """A reassignment's replica lists (Kafka's PartitionReassignmentReplicas): the
    replicas (the target, then those being removed), and the replicas being removed and
    added, each in broker id order."""

    removing: tuple[int, ...]
    adding: tuple[int, ...]
    replicas: tuple[int, ...]

    @classmethod
    def between(cls, current: tuple[int, ...], target: tuple[int, ...]
                ) -> ReassignmentReplicas:
        """The lists that move ``current`` to ``target``: those only in ``current`` are
        removing, those only in ``target`` adding; the replicas are the target followed by
        the removing ones."""
        removing = tuple(sorted(set(current) - set(target)))
        adding = tuple(sorted(set(target) - set(current)))
        return cls(removing, adding, (*target, *removing))

    @classmethod
    def of(cls, reg: PartitionRegistration) -> ReassignmentReplicas:
        """The lists ``reg`` carries."""
        return cls(reg.removing_replicas, reg.adding_replicas, reg.replicas)

    @property
    def in_progress(self) -> bool:
        """True when a replica is being added or removed."""
        return bool(self.removing or self.adding)

    def maybe_complete(self, target_isr: tuple[int, ...]) -> CompletedReassignment | None:
        """The completion ``target_isr`` allows, else None: the ISR and replicas without the
        removing replicas, when neither is empty and the ISR holds every replica left."""
        if not self.in_progress:
            return None
        isr, replicas = target_isr, self.replicas
        if self.removing:
            gone = set(self.removing)
            isr = tuple(r for r in target_isr if r not in gone)
            if not isr:
                return None
            replicas = tuple(r for r in self.replicas if r not in gone)
            if not replicas:
                return None
        if not set(replicas) <= set(isr):
            return None
        return CompletedReassignment(replicas, isr)

    def original_replicas(self) -> tuple[int, ...]:
        """The replicas before the reassignment: the replicas without the adding ones."""
        adding = set(self.adding)
        return tuple(r for r in self.replicas if r not in adding)


def reassignment_in_progress(reg: PartitionRegistration) -> bool:
    """True while ``reg`` has replicas being added or removed."""
    return bool(reg.removing_replicas or reg.adding_replicas)


class ReassignmentRevert(msgspec.Struct, frozen=True):
    """What cancelling ``reg``'s reassignment leaves (Kafka's PartitionReassignmentRevert):
    the original replicas, and the ISR without the adding replicas; when that ISR is
    empty, the first original replica alone, an unclean choice (``unclean``)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    unclean: bool

    @classmethod
    def of(cls, reg: PartitionRegistration) -> ReassignmentRevert:
        """The revert of ``reg``; INVALID_REPLICA_ASSIGNMENT when every replica is being
        added (no partition reaches that state)."""
        ongoing = ReassignmentReplicas.of(reg)
        replicas = ongoing.original_replicas()
        adding = set(ongoing.adding)
        isr = tuple(r for r in reg.isr if r not in adding)
        if isr:
            return cls(replicas, isr, False)
        if not replicas:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           "Invalid replica assignment: addingReplicas contains all "
                           "replicas.")
        return cls(replicas, (replicas[0],), True)


def _default_directory(image: MetadataImage, broker_id: int) -> str:
    """The directory a new replica on ``broker_id`` gets (Kafka's defaultDir): its only
    directory, MIGRATING when it registered none, else UNASSIGNED."""
    broker = image.brokers.get(broker_id)
    if broker is None:
        return UNASSIGNED_DIRECTORY
    if not broker.directories:
        return MIGRATING_DIRECTORY
    return broker.directories[0] if len(broker.directories) == 1 else UNASSIGNED_DIRECTORY


def build_change(image: MetadataImage, topic_id: str, partition_id: int,
                 reg: PartitionRegistration, *, isr: tuple[int, ...] | None = None,
                 replicas: tuple[int, ...] | None = None,
                 removing: tuple[int, ...] | None = None,
                 adding: tuple[int, ...] | None = None,
                 recovery: int | None = None, unclean: bool = False,
                 preferred: bool = False, acceptable: Callable[[int], bool] | None = None,
                 unclean_shutdown: tuple[int, ...] = ()
                 ) -> PartitionChangeRecord | None:
    """The record that takes ``reg`` to the targets given (None: as it is), or None when
    nothing changes; ``unclean`` allows an unclean election (the topic's
    ``unclean.leader.election.enable``), ``preferred`` asks for the first replica first
    (a PREFERRED election), ``acceptable`` says which brokers may lead (default: the
    active ones) and ``unclean_shutdown`` names brokers that restarted uncleanly (they
    leave the ELR).

    The reassignment completes first when the target ISR allows it; then, with eligible
    leader replicas on (:mod:`controller.operations.elr`), the target ELR; then the
    leader: the current one if it may still lead, else the first target replica that
    may, else the last known leader, else (``unclean``) the first acceptable target
    replica, alone in the ISR and RECOVERING from 3.2-IV0, else none. A replica may lead
    when it is acceptable and in the target ISR, or, when that ISR is empty, in the
    target ELR (it then becomes the ISR, alone). A replica set that loses a member bumps
    the leader epoch (the record names the leader again), as does, below 3.6-IV0, an ISR
    that loses one. Directories are written only for a partition that has them
    (kraftsim's CreateTopics assigns none, as before metadata.version 3.7-IV2): its
    replicas keep theirs, a new replica gets its broker's default.
    """
    target_isr = reg.isr if isr is None else isr
    target_replicas = reg.replicas if replicas is None else replicas
    target_removing = reg.removing_replicas if removing is None else removing
    target_adding = reg.adding_replicas if adding is None else adding
    completed = ReassignmentReplicas(target_removing, target_adding, target_replicas) \
        .maybe_complete(target_isr)
    if completed is not None:
        target_isr, target_replicas = completed.isr, completed.replicas
        target_removing = target_adding = ()
    if acceptable is None:
        def acceptable(replica: int) -> bool:
            return active(image, replica)
    elr = elr_enabled(image)
    old_elr = reg.eligible_leader_replicas or ()
    old_last_known = reg.last_known_elr or ()
    target_elr = old_elr
    if elr:
        target_elr = _target_elr(image, topic_id, reg, target_isr, target_elr,
                                 unclean_shutdown)
    leader = NO_LEADER_CHANGE
    record_isr: tuple[int, ...] | None = None
    record_recovery = -1
    elected, was_unclean = _elect(reg, target_isr, target_elr, target_replicas, unclean,
                                  preferred, acceptable, elr)
    if elected != reg.leader:
        leader = elected
        if elected in target_elr:  # an eligible leader replica: the ISR is just it
            target_isr = (elected,)
            target_elr = tuple(r for r in target_elr if r != elected)
        if was_unclean:
            record_isr = (elected,)
            if reg.leader_recovery_state != RECOVERING and \
                    image.metadata_version >= LEADER_RECOVERY:
                record_recovery = RECOVERING
    if leader == NO_LEADER_CHANGE and not set(reg.replicas) <= set(target_replicas):
        leader = reg.leader  # a replica leaves: the leader epoch moves
    if record_isr is not None or not elr:
        target_elr = ()  # an unclean election, or ELR off, empties the ELR
    record_elr = None if target_elr == old_elr else target_elr
    if record_isr is None and (target_isr or elr) and target_isr != reg.isr:
        record_isr = target_isr
    if image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK and leader == NO_LEADER_CHANGE \
            and record_isr is not None and not set(reg.isr) <= set(record_isr):
        leader = reg.leader
    record_last_known = None
    if elr:
        record_last_known = _last_known_leader(reg, record_isr, leader, old_last_known)
    if image.metadata_version < ELR:
        record_elr = record_last_known = None  # PartitionChangeRecord v2 fields
    record_replicas = record_directories = None
    if target_replicas:
        if reg.directories and image.metadata_version >= DIRECTORIES:
            held = dict(zip(reg.replicas, reg.directories, strict=False))
            directories = tuple(held.get(r) or _default_directory(image, r)
                                for r in target_replicas)
            if directories != reg.directories:
                record_directories = directories
        if target_replicas != reg.replicas:
            record_replicas = target_replicas
    if recovery is not None and recovery != reg.leader_recovery_state:
        record_recovery = recovery
    change = PartitionChangeRecord(
        partition_id=partition_id, topic_id=topic_id, isr=record_isr, leader=leader,
        replicas=record_replicas,
        removing_replicas=None if target_removing == reg.removing_replicas
        else target_removing,
        adding_replicas=None if target_adding == reg.adding_replicas else target_adding,
        leader_recovery_state=record_recovery, directories=record_directories,
        eligible_leader_replicas=record_elr, last_known_elr=record_last_known)
    if change.isr is None and change.leader == NO_LEADER_CHANGE and change.replicas is None \
            and change.removing_replicas is None and change.adding_replicas is None \
            and change.leader_recovery_state == -1 and change.directories is None \
            and change.eligible_leader_replicas is None and change.last_known_elr is None:
        return None
    return change


def _target_elr(image: MetadataImage, topic_id: str, reg: PartitionRegistration,
                target_isr: tuple[int, ...], current: tuple[int, ...],
                unclean_shutdown: tuple[int, ...]) -> tuple[int, ...]:
    """The ELR before the election (Kafka's maybePopulateTargetElr): empty while the target
    ISR has min.insync.replicas members; else the current ELR and the current ISR, less
    the target ISR and the replicas that shut down uncleanly, in broker id order."""
    if len(target_isr) >= effective_min_isr(image, topic_id):
        return ()
    dropped = set(target_isr).union(unclean_shutdown)
    return tuple(sorted(r for r in set(current).union(reg.isr) if r not in dropped))


def _last_known_leader(reg: PartitionRegistration, record_isr: tuple[int, ...] | None,
                       leader: int, current: tuple[int, ...]) -> tuple[int, ...] | None:
    """The lastKnownElr the record sets, None to keep it (Kafka's
    maybeUpdateLastKnownLeader, which keeps the last leader there): the leader before the
    change when the ISR becomes empty (the first time only), empty once the partition
    has, or keeps, a leader."""
    if record_isr is not None and not record_isr and current != (reg.leader,):
        return (reg.leader,)
    if current and (leader >= 0 or (reg.leader != NO_LEADER and leader != NO_LEADER)):
        return ()
    return None


def _elect(reg: PartitionRegistration, target_isr: tuple[int, ...],
           target_elr: tuple[int, ...], target_replicas: tuple[int, ...], unclean: bool,
           preferred: bool, acceptable: Callable[[int], bool], elr: bool
           ) -> tuple[int, bool]:
    """The leader after the change and whether it was elected uncleanly (Kafka's
    electPreferredLeader and electAnyLeader): for a preferred election the first target
    replica if it may lead; the current leader while it may; else the first target
    replica that may; else the last known leader (ELR on, ISR and ELR empty, it alone
    in lastKnownElr and acceptable: Kafka 4.1, KAFKA-19522), uncleanly; else, when
    ``unclean``, the first acceptable target replica; else no leader."""
    def valid(replica: int) -> bool:
        return (replica in target_isr or (not target_isr and replica in target_elr)) \
            and acceptable(replica)

    if preferred and target_replicas and valid(target_replicas[0]):
        return target_replicas[0], False
    if valid(reg.leader):
        return reg.leader, False
    for replica in target_replicas:
        if valid(replica):
            return replica, False
    last_known = reg.last_known_elr or ()
    if elr and not target_isr and not target_elr and len(last_known) == 1 \
            and acceptable(last_known[0]):
        return last_known[0], True
    if unclean and not preferred:
        for replica in target_replicas:
            if acceptable(replica):
                return replica, True
    return NO_LEADER, False
