"""AlterPartitionOp: a broker's AlterPartition request, with Kafka's epoch checks.

A request carries the ISR changes of every partition its broker leads and has one waiting
(Kafka's AlterPartitionManager batches them, grouped by topic). It is taken whole, as
Kafka's ``ReplicationControlManager.alterPartition`` takes it, against the controller's
latest state when the operation runs:

- the requesting broker is registered with the request's broker epoch, else the whole
  request is refused STALE_BROKER_EPOCH (nothing written, no partition answered);
- a topic id the controller does not know answers each of its partitions
  UNKNOWN_TOPIC_ID;
- every other check is the partition's own (:func:`alter_one`, below); a refused
  partition is answered its error and the others go on;
- the records of every partition changed are written as one result, which Kafka writes
  non-atomically (``ControllerResult.of``: split over batches when large, so this
  operation ``splits_when_atomic``; a metadata transaction in kraftsim's transactional
  mode), and the response lists every partition asked for, in the request's order.

The checks of one partition, in Kafka's order:

- the partition exists, else UNKNOWN_TOPIC_OR_PARTITION;
- a leader or partition epoch above the partition's answers NOT_CONTROLLER (the
  leader knows a later state: this controller is likely no longer active);
- a lower leader epoch is FENCED_LEADER_EPOCH (the leader was replaced);
- the requester is the leader, else INVALID_REQUEST;
- a lower partition epoch is INVALID_UPDATE_VERSION (another change came first);
- the new ISR holds only replicas, each once, and the leader, else INVALID_REQUEST;
- a leader recovery state other than RECOVERED (0) and RECOVERING (1) fails the whole
  request UNKNOWN_SERVER_ERROR (Kafka's ``LeaderRecoveryState.of`` throws out of the
  request's handling; Kafka's controller then also renounces, kraftsim's does not);
- a leader still RECOVERING (KIP-704) asks for an ISR of just itself, and a
  RECOVERED partition never goes back to RECOVERING, else INVALID_REQUEST;
- every member of the new ISR, those it keeps included, is an active broker
  (registered, unfenced, not in controlled shutdown) and, where the request gives
  the member's broker epoch (KIP-903, AlterPartition v3), registered with that
  epoch, else INELIGIBLE_REPLICA (KIP-841; Kafka's ``ineligibleReplicasForIsr``
  checks them all): a leader's request built before a follower restarted and
  registered again must not take the new incarnation into the ISR.

An unchanged ISR and recovery state write nothing and answer the current state; a
RECOVERING partition whose leader says RECOVERED is recorded so (with its ISR). Below
metadata.version 3.6-IV0 a shrink also bumps the leader epoch (the record sets the
leader again), as Kafka's PartitionChangeBuilder does there. A partition's answer is its
registration after the change.

With eligible leader replicas on (KIP-966), and while the partition is being
reassigned, the change is Kafka's PartitionChangeBuilder's
(:func:`controller.operations.partition_change.build_change`): an ISR that holds every
target replica completes the reassignment in the same record (the replicas become the
target, the removed replicas leave the ISR, a removed leader is replaced: that partition
is then answered NEW_LEADER_ELECTED, its record written, as Kafka does from
AlterPartition v2).
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.elr import elr_enabled
from controller.operations.leadership import active, unclean_allowed
from controller.operations.partition_change import build_change, reassignment_in_progress
from metadata.image import (
    NO_LEADER_CHANGE,
    RECOVERED,
    RECOVERING,
    MetadataImage,
    PartitionRegistration,
)
from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResponse,
)
from metadata.schema import MetadataRecord, PartitionChangeRecord
from metadata.versions import NO_EPOCH_BUMP_ON_ISR_SHRINK


class AlterPartitionOp(msgspec.Struct, frozen=True):
    """A broker's AlterPartition request, every partition of it (see the module docs).

    The response (once written) is the request's answers: a tuple of
    :class:`~metadata.requests.AlterPartitionTopicResponse`, topics and partitions in
    the request's order."""

    broker_id: int
    broker_epoch: int
    topics: tuple[AlterPartitionTopicData, ...]

    splits_when_atomic: ClassVar[bool] = True
    """Kafka writes the request's records as a non-atomic result (see
    controller/write_mode.py)."""

    def describe(self) -> str:
        """E.g. ``AlterPartition(Xyz-0 isr=[1, 2], Xyz-1 isr=[1])``."""
        return "AlterPartition(" + ", ".join(
            f"{topic.topic_id}-{part.partition_index} isr={list(part.new_isr)}"
            for topic in self.topics for part in topic.partitions) + ")"

    def early_result(self) -> Generated | None:
        """A request with no topics is answered at once, empty (Kafka's
        QuorumController.alterPartition)."""
        return Generated([], ()) if not self.topics else None

    def generate(self, ctx: OperationContext) -> Generated:
        """The PartitionChangeRecords of every partition whose change passed its checks,
        and the answers of all; raises ApiError for a refusal of the whole request."""
        image = ctx.image
        broker = image.brokers.get(self.broker_id)
        if broker is None:  # (Kafka's words: ClusterControlManager.checkBrokerEpoch)
            raise ApiError("STALE_BROKER_EPOCH",
                           f"No broker registration found for broker id {self.broker_id}")
        if broker.epoch != self.broker_epoch:
            raise ApiError("STALE_BROKER_EPOCH",
                           f"Expected broker epoch {broker.epoch}, but got broker epoch "
                           f"{self.broker_epoch}")
        records: list[MetadataRecord] = []
        answers: list[AlterPartitionTopicResponse] = []
        for topic in self.topics:
            if topic.topic_id not in image.topics_by_id:
                answers.append(AlterPartitionTopicResponse(topic.topic_id, tuple(
                    AlterPartitionPartitionResponse(part.partition_index, "UNKNOWN_TOPIC_ID")
                    for part in topic.partitions)))
                continue
            parts: list[AlterPartitionPartitionResponse] = []
            for part in topic.partitions:
                pid = part.partition_index
                try:
                    change, reg = alter_one(image, ctx.node_id, self.broker_id,
                                            topic.topic_id, part)
                except ApiError as refused:
                    if refused.code == "UNKNOWN_SERVER_ERROR":
                        raise  # Kafka's throw: the whole request fails
                    parts.append(AlterPartitionPartitionResponse(pid, refused.code))
                    continue
                if change is not None:
                    records.append(change)
                if reg.leader != self.broker_id:
                    # the change completed a reassignment that removed the requesting
                    # leader: written, and answered with an error so that it fetches the
                    # new metadata
                    parts.append(AlterPartitionPartitionResponse(pid, "NEW_LEADER_ELECTED"))
                    continue
                parts.append(AlterPartitionPartitionResponse(
                    pid, "NONE", reg.leader, reg.leader_epoch, reg.isr,
                    reg.leader_recovery_state, reg.partition_epoch))
            answers.append(AlterPartitionTopicResponse(topic.topic_id, tuple(parts)))
        return Generated(records, tuple(answers))


def alter_one(image: MetadataImage, node_id: int, broker_id: int, topic_id: str,
              part: AlterPartitionPartitionData
              ) -> tuple[PartitionChangeRecord | None, PartitionRegistration]:
    """One partition's change of a request by ``broker_id`` whose topic ``image`` holds:
    its record (None: nothing changes) and its registration after it; raises ApiError
    with the partition's refusal (see the module docs)."""
    topic = image.topics_by_id[topic_id]
    partition_id = part.partition_index
    new_isr = part.new_isr
    reg = topic.partitions.get(partition_id)
    if reg is None:
        raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                       f"no partition {topic_id}-{partition_id}")
    if part.leader_epoch > reg.leader_epoch or part.partition_epoch > reg.partition_epoch:
        raise ApiError("NOT_CONTROLLER",
                       f"leader epoch {part.leader_epoch} and partition epoch "
                       f"{part.partition_epoch} are ahead of this controller's "
                       f"{reg.leader_epoch} and {reg.partition_epoch}")
    if part.leader_epoch < reg.leader_epoch:
        raise ApiError("FENCED_LEADER_EPOCH",
                       f"leader epoch {part.leader_epoch}, the partition is at "
                       f"{reg.leader_epoch}")
    if reg.leader != broker_id:
        raise ApiError("INVALID_REQUEST", f"broker {broker_id} does not lead the partition")
    if part.partition_epoch < reg.partition_epoch:
        raise ApiError("INVALID_UPDATE_VERSION",
                       f"partition epoch {part.partition_epoch}, the partition is at "
                       f"{reg.partition_epoch}")
    if broker_id not in new_isr or not set(new_isr) <= set(reg.replicas) \
            or len(set(new_isr)) != len(new_isr):
        raise ApiError("INVALID_REQUEST",
                       f"ISR {list(new_isr)} lacks the leader, repeats a replica or "
                       f"is not within the replicas {list(reg.replicas)}")
    recovery = part.leader_recovery_state
    if recovery not in (RECOVERED, RECOVERING):
        # Kafka's LeaderRecoveryState.of throws: an unexpected error, not an API one
        raise ApiError("UNKNOWN_SERVER_ERROR",
                       f"Value {recovery} is not a valid leader recovery state")
    if recovery == RECOVERING and len(new_isr) > 1:
        raise ApiError("INVALID_REQUEST",
                       f"ISR {list(new_isr)} has more than the leader while it is "
                       f"still recovering from an unclean leader election")
    if reg.leader_recovery_state == RECOVERED and recovery == RECOVERING:
        raise ApiError("INVALID_REQUEST",
                       "the leader recovery state cannot change from RECOVERED to "
                       "RECOVERING")
    epochs = part.new_isr_epochs
    if epochs and len(epochs) != len(new_isr):
        raise ApiError("INVALID_REQUEST",
                       f"{len(epochs)} broker epochs for an ISR of {len(new_isr)}")
    for i, replica in enumerate(new_isr):
        if not active(image, replica):
            raise ApiError("INELIGIBLE_REPLICA",
                           f"replica {replica} is fenced, shutting down or unregistered")
        epoch = epochs[i] if epochs else -1
        registered = image.brokers[replica].epoch
        if epoch != -1 and epoch != registered:
            raise ApiError("INELIGIBLE_REPLICA",
                           f"replica {replica} broker epoch mismatch: requested={epoch} "
                           f"VS expected={registered}")
    if reassignment_in_progress(reg) or elr_enabled(image) or reg.eligible_leader_replicas:
        built = build_change(image, topic_id, partition_id, reg, isr=tuple(new_isr),
                             recovery=recovery,
                             unclean=unclean_allowed(image, topic.name, node_id))
        return built, reg if built is None else reg.merge(built)
    same_isr = tuple(new_isr) == reg.isr
    if same_isr and recovery == reg.leader_recovery_state:
        return None, reg
    bump = image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK and \
        not set(reg.isr) <= set(new_isr)
    change = PartitionChangeRecord(
        partition_id=partition_id, topic_id=topic_id,
        isr=None if same_isr else tuple(new_isr),
        leader=reg.leader if bump else NO_LEADER_CHANGE,
        leader_recovery_state=-1 if recovery == reg.leader_recovery_state else recovery)
    return change, reg.merge(change)
