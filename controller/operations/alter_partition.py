"""AlterPartitionOp: a partition leader's ISR change, with Kafka's epoch checks.

Checked against the controller's latest state when the operation runs (Kafka's
``ReplicationControlManager.alterPartition``), in this order:

- the requesting broker is registered with that broker epoch, else
  STALE_BROKER_EPOCH;
- the topic exists, else UNKNOWN_TOPIC_ID; the partition, else
  UNKNOWN_TOPIC_OR_PARTITION;
- a leader or partition epoch above the partition's answers NOT_CONTROLLER (the
  leader knows a later state: this controller is likely no longer active);
- a lower leader epoch is FENCED_LEADER_EPOCH (the leader was replaced);
- the requester is the leader, else INVALID_REQUEST;
- a lower partition epoch is INVALID_UPDATE_VERSION (another change came first);
- the new ISR holds only replicas, each once, and the leader, else INVALID_REQUEST;
- a leader recovery state other than RECOVERED (0) and RECOVERING (1) is
  UNKNOWN_SERVER_ERROR (Kafka's ``LeaderRecoveryState.of`` throws; Kafka's
  controller then also renounces, kraftsim's does not);
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
leader again), as Kafka's PartitionChangeBuilder does there. The response is the
partition registration after the change.

With eligible leader replicas on (KIP-966), and while the partition is being
reassigned, the change is Kafka's PartitionChangeBuilder's
(:func:`controller.operations.partition_change.build_change`): an ISR that holds every
target replica completes the reassignment in the same record (the replicas become the
target, the removed replicas leave the ISR, a removed leader is replaced: the broker
service then answers NEW_LEADER_ELECTED, as Kafka does from AlterPartition v2).
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.elr import elr_enabled
from controller.operations.leadership import active, unclean_allowed
from controller.operations.partition_change import build_change, reassignment_in_progress
from metadata.image import NO_LEADER_CHANGE, RECOVERED, RECOVERING
from metadata.schema import PartitionChangeRecord
from metadata.versions import NO_EPOCH_BUMP_ON_ISR_SHRINK


class AlterPartitionOp(msgspec.Struct, frozen=True):
    """The ISR a partition leader asks for (Kafka's AlterPartition request, one partition)."""

    broker_id: int
    broker_epoch: int
    topic_id: str
    partition_id: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]
    leader_recovery_state: int = RECOVERED
    new_isr_epochs: tuple[int, ...] = ()
    """The broker epoch of each member of ``new_isr``, in its order (KIP-903); -1 for a
    member, or no epochs at all (a request before AlterPartition v3), skips the check."""

    def describe(self) -> str:
        """E.g. ``AlterPartition(Xyz-0 isr=[1, 2])``."""
        return (f"AlterPartition({self.topic_id}-{self.partition_id} "
                f"isr={list(self.new_isr)})")

    def generate(self, ctx: OperationContext) -> Generated:
        """One PartitionChangeRecord with the new ISR, after the checks above."""
        image = ctx.image
        broker = image.brokers.get(self.broker_id)
        if broker is None:  # (Kafka's words: ClusterControlManager.checkBrokerEpoch)
            raise ApiError("STALE_BROKER_EPOCH",
                           f"No broker registration found for broker id {self.broker_id}")
        if broker.epoch != self.broker_epoch:
            raise ApiError("STALE_BROKER_EPOCH",
                           f"Expected broker epoch {broker.epoch}, but got broker epoch "
                           f"{self.broker_epoch}")
        topic = image.topics_by_id.get(self.topic_id)
        if topic is None:
            raise ApiError("UNKNOWN_TOPIC_ID", f"no topic with id {self.topic_id}")
        reg = topic.partitions.get(self.partition_id)
        if reg is None:
            raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                           f"no partition {self.topic_id}-{self.partition_id}")
        if self.leader_epoch > reg.leader_epoch or self.partition_epoch > reg.partition_epoch:
            raise ApiError("NOT_CONTROLLER",
                           f"leader epoch {self.leader_epoch} and partition epoch "
                           f"{self.partition_epoch} are ahead of this controller's "
                           f"{reg.leader_epoch} and {reg.partition_epoch}")
        if self.leader_epoch < reg.leader_epoch:
            raise ApiError("FENCED_LEADER_EPOCH",
                           f"leader epoch {self.leader_epoch}, the partition is at "
                           f"{reg.leader_epoch}")
        if reg.leader != self.broker_id:
            raise ApiError("INVALID_REQUEST",
                           f"broker {self.broker_id} does not lead the partition")
        if self.partition_epoch < reg.partition_epoch:
            raise ApiError("INVALID_UPDATE_VERSION",
                           f"partition epoch {self.partition_epoch}, the partition is at "
                           f"{reg.partition_epoch}")
        if self.broker_id not in self.new_isr or not set(self.new_isr) <= set(reg.replicas) \
                or len(set(self.new_isr)) != len(self.new_isr):
            raise ApiError("INVALID_REQUEST",
                           f"ISR {list(self.new_isr)} lacks the leader, repeats a replica or "
                           f"is not within the replicas {list(reg.replicas)}")
        if self.leader_recovery_state not in (RECOVERED, RECOVERING):
            # Kafka's LeaderRecoveryState.of throws: an unexpected error, not an API one
            raise ApiError("UNKNOWN_SERVER_ERROR",
                           f"Value {self.leader_recovery_state} is not a valid leader "
                           f"recovery state")
        if self.leader_recovery_state == RECOVERING and len(self.new_isr) > 1:
            raise ApiError("INVALID_REQUEST",
                           f"ISR {list(self.new_isr)} has more than the leader while it is "
                           f"still recovering from an unclean leader election")
        if reg.leader_recovery_state == RECOVERED and self.leader_recovery_state == RECOVERING:
            raise ApiError("INVALID_REQUEST",
                           "the leader recovery state cannot change from RECOVERED to "
                           "RECOVERING")
        if self.new_isr_epochs and len(self.new_isr_epochs) != len(self.new_isr):
            raise ApiError("INVALID_REQUEST",
                           f"{len(self.new_isr_epochs)} broker epochs for an ISR of "
                           f"{len(self.new_isr)}")
        for i, replica in enumerate(self.new_isr):
            if not active(image, replica):
                raise ApiError("INELIGIBLE_REPLICA",
                               f"replica {replica} is fenced, shutting down or unregistered")
            epoch = self.new_isr_epochs[i] if self.new_isr_epochs else -1
            registered = image.brokers[replica].epoch
            if epoch != -1 and epoch != registered:
                raise ApiError("INELIGIBLE_REPLICA",
                               f"replica {replica} broker epoch mismatch: requested={epoch} "
                               f"VS expected={registered}")
        recovery = self.leader_recovery_state
        if reassignment_in_progress(reg) or elr_enabled(image) or reg.eligible_leader_replicas:
            topic_name = topic.name
            built = build_change(image, self.topic_id, self.partition_id, reg,
                                 isr=tuple(self.new_isr), recovery=recovery,
                                 unclean=unclean_allowed(image, topic_name, ctx.node_id))
            return Generated([] if built is None else [built],
                             reg if built is None else reg.merge(built))
        same_isr = tuple(self.new_isr) == reg.isr
        if same_isr and recovery == reg.leader_recovery_state:
            return Generated([], reg)
        bump = image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK and \
            not set(reg.isr) <= set(self.new_isr)
        change = PartitionChangeRecord(
            partition_id=self.partition_id, topic_id=self.topic_id,
            isr=None if same_isr else tuple(self.new_isr),
            leader=reg.leader if bump else NO_LEADER_CHANGE,
            leader_recovery_state=-1 if recovery == reg.leader_recovery_state else recovery)
        return Generated([change], reg.merge(change))
