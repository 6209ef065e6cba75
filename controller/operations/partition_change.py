"""One partition's change with reassignment in it (Kafka's PartitionChangeBuilder,
PartitionReassignmentReplicas and PartitionReassignmentRevert), eligible leader replicas
(KIP-966) left out, as everywhere in kraftsim.

A reassignment lives in the partition's registration: ``replicas`` is the target
followed by the replicas being removed, ``adding_replicas`` the target's new members and
``removing_replicas`` the old members it leaves out. It completes in the first change
whose ISR, once the removing replicas are taken out of it, still has a member and holds
every target replica: the replicas become the target, the removing replicas leave the
ISR, adding and removing are emptied, and a leader that left is replaced, all in that
one record.

:func:`build_change` is the builder's ``build``, in its order: completion, election,
the leader epoch bump of a replica set that loses a member, the ISR, the bump of an ISR
shrink below metadata.version 3.6-IV0, the replica lists, the leader recovery state.
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
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
from metadata.versions import DIRECTORIES, LEADER_RECOVERY, NO_EPOCH_BUMP_ON_ISR_SHRINK


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
                 recovery: int | None = None, unclean: bool = False
                 ) -> PartitionChangeRecord | None:
    """The record that takes ``reg`` to the targets given (None: as it is), or None when
    nothing changes; ``unclean`` allows an unclean election (the topic's
    ``unclean.leader.election.enable``).

    The reassignment completes first when the target ISR allows it; then the leader: the
    current one if it is in the target ISR and active, else the first such target
    replica, else (``unclean``) the first active target replica, alone in the ISR and
    RECOVERING from 3.2-IV0, else none. A replica set that loses a member bumps the leader
    epoch (the record names the leader again), as does, below 3.6-IV0, an ISR that loses
    one. Directories are written only for a partition that has them (kraftsim's
    CreateTopics assigns none, as before metadata.version 3.7-IV2): its replicas keep
    theirs, a new replica gets its broker's default.
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
    leader = NO_LEADER_CHANGE
    record_isr: tuple[int, ...] | None = None
    record_recovery = -1
    elected, was_unclean = _elect(image, reg, target_isr, target_replicas, unclean)
    if elected != reg.leader:
        leader = elected
        if was_unclean:
            record_isr = (elected,)
            if reg.leader_recovery_state != RECOVERING and \
                    image.metadata_version >= LEADER_RECOVERY:
                record_recovery = RECOVERING
    if leader == NO_LEADER_CHANGE and not set(reg.replicas) <= set(target_replicas):
        leader = reg.leader  # a replica leaves: the leader epoch moves
    if record_isr is None and target_isr and target_isr != reg.isr:
        record_isr = target_isr
    if image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK and leader == NO_LEADER_CHANGE \
            and record_isr is not None and not set(reg.isr) <= set(record_isr):
        leader = reg.leader
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
        leader_recovery_state=record_recovery, directories=record_directories)
    if change.isr is None and change.leader == NO_LEADER_CHANGE and change.replicas is None \
            and change.removing_replicas is None and change.adding_replicas is None \
            and change.leader_recovery_state == -1 and change.directories is None:
        return None
    return change


def _elect(image: MetadataImage, reg: PartitionRegistration, target_isr: tuple[int, ...],
           target_replicas: tuple[int, ...], unclean: bool) -> tuple[int, bool]:
    """The leader after the change and whether it was elected uncleanly (Kafka's
    electAnyLeader): the current leader while it may lead, else the first target replica
    in the target ISR that is active, else, when ``unclean``, the first active target
    replica, else no leader."""
    if reg.leader in target_isr and active(image, reg.leader):
        return reg.leader, False
    for replica in target_replicas:
        if replica in target_isr and active(image, replica):
            return replica, False
    if unclean:
        for replica in target_replicas:
            if active(image, replica):
                return replica, True
    return NO_LEADER, False
