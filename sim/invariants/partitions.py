"""Partition invariants of the committed metadata, checked online after every event that
commits records (the transaction invariants run them once their replay has moved:
:attr:`sim.invariants.transactions.TransactionInvariants.after_replay`).

Against the reference replay of the committed log (:mod:`sim.invariants.reference`),
each partition a committed PartitionRecord or PartitionChangeRecord touched is checked
once the records are replayed:

- ElrDisjointIsr: no replica is both in the ISR and an eligible leader replica (KIP-966:
  a replica joins the ELR only as it leaves the ISR and leaves the ELR as it is elected;
  Kafka's ReplicationControlManager.updatePartitionInfo reports an overlap as an error).
- NoLeaderOutsideEmptyIsr: a partition whose ISR is empty has no leader (KIP-966: the ISR
  may empty only with ELR on, and a leader elected then, from the ELR or as the last
  known leader, becomes the ISR; Kafka's PartitionChangeBuilder.tryElection).

These hold whatever the eligible.leader.replicas.version, as Kafka's builder empties the
ELR of every partition it changes with ELR off; but without ELR neither can break (no
ELR is written and an ISR never empties), so the records are looked at only from the
first committed state with eligible.leader.replicas.version 1 or more on: a cluster that
never turns ELR on pays nothing for them. Then only the partitions the new records name
are looked at.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.operations.elr import ELR_FEATURE
from metadata.image import NO_LEADER
from metadata.schema import PartitionChangeRecord, PartitionRecord
from sim.invariants.reference import ReferenceReplay
from sim.world import InvariantViolation, Monitor, NodeSlot, Simulation

PARTITION_INVARIANTS: dict[str, str] = {
    "ElrDisjointIsr": "no replica both in the ISR and the ELR (KIP-966; Kafka "
                      "updatePartitionInfo)",
    "NoLeaderOutsideEmptyIsr": "an empty ISR has no leader (KIP-966; Kafka "
                               "PartitionChangeBuilder)",
}
"""Every partition invariant with its source."""


class PartitionInvariants(Monitor):
    """The partition catalogue above, over the partitions the committed records touch;
    ``reference`` is the transaction invariants' replay, advanced before this runs."""

    def __init__(self, reference: ReferenceReplay) -> None:
        self.reference = reference
        self.next_offset = 0
        self.elr_seen = False

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Check the partitions named by the records the reference replayed since the
        last check."""
        reference = self.reference
        if reference.next_offset == self.next_offset or reference.gap:
            return  # nothing newly replayed (most events), or no replay to read
        if not self.elr_seen:
            if reference.image.features.get(ELR_FEATURE, 0) < 1:
                self.next_offset = reference.next_offset  # nothing to look at before
                return
            self.elr_seen = True
        history = reference.history
        names: set[tuple[str, int]] = set()
        while self.next_offset < reference.next_offset:
            batch = history.get(self.next_offset)
            if batch is None:
                return
            if not batch.is_control:
                for record in batch.records:
                    if isinstance(record, PartitionChangeRecord | PartitionRecord):
                        names.add((record.topic_id, record.partition_id))
            self.next_offset = batch.end_offset
        if not names:
            return
        topics = reference.image.topics_by_id
        at = reference.next_offset - 1
        for topic_id, pid in sorted(names):
            topic = topics.get(topic_id)
            if topic is None:
                continue
            reg = topic.partitions.get(pid)
            if reg is None:
                continue
            elr = reg.eligible_leader_replicas
            if elr and not set(elr).isdisjoint(reg.isr):
                raise InvariantViolation(
                    "ElrDisjointIsr", f"{topic.name}-{pid} at {at}: ISR {list(reg.isr)} and "
                                      f"ELR {list(elr)} overlap")
            if not reg.isr and reg.leader != NO_LEADER:
                raise InvariantViolation(
                    "NoLeaderOutsideEmptyIsr", f"{topic.name}-{pid} at {at}: leader "
                                               f"{reg.leader} with an empty ISR")
