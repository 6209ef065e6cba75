"""ElectLeaders: a preferred or unclean leader election on request (Kafka's
ReplicationControlManager.electLeaders and PartitionChangeBuilder's elections).

Each partition gets its own result, as in Kafka: the request itself fails only
for an unknown election type. A PREFERRED election moves leadership to the first
replica when it is in the ISR and active (registered, unfenced, not shutting
down); else the current leader stays if it can, else the next such replica
leads. An UNCLEAN election gives a leaderless partition a leader: an active ISR
member if there is one, else the first active replica, uncleanly (the ISR just
it, RECOVERING where metadata.version has KIP-704), whatever the topic's
``unclean.leader.election.enable``.

With eligible leader replicas on (KIP-966, :mod:`controller.operations.elr`) both are
Kafka's PartitionChangeBuilder elections
(:func:`controller.operations.partition_change.build_change`): a partition whose ISR is
empty elects an active ELR member cleanly (the ISR becomes just it), else its last known
leader (uncleanly), and an unclean election empties the ELR.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.elr import elr_enabled
from controller.operations.leadership import active, unclean_change
from controller.operations.partition_change import build_change
from metadata.image import NO_LEADER, MetadataImage, PartitionRegistration
from metadata.schema import MetadataRecord, PartitionChangeRecord

ELECTION_TYPES = ("PREFERRED", "UNCLEAN")
"""Kafka's ElectionType names (values 0 and 1)."""
_MESSAGES = {
    "ELECTION_NOT_NEEDED": "Leader election not needed for topic partition.",
    "PREFERRED_LEADER_NOT_AVAILABLE": "The preferred leader was not available.",
    "ELIGIBLE_LEADERS_NOT_AVAILABLE": "Eligible topic partition leaders are not available.",
}


class TopicPartitions(msgspec.Struct, frozen=True):
    """One topic's partitions to elect leaders for."""

    topic: str
    partitions: tuple[int, ...]


class ElectLeaders(msgspec.Struct, frozen=True):
    """Elect leaders of the given partitions (None: every partition of every topic, whose
    results leave out the partitions that need no election, as Kafka's)."""

    splits_when_atomic: ClassVar[bool] = True
    """Kafka writes an election as a non-atomic result, like a fence."""
    election_type: str = "PREFERRED"
    partitions: tuple[TopicPartitions, ...] | None = None

    def describe(self) -> str:
        """E.g. ``ElectLeaders(PREFERRED foo-0 foo-1)``."""
        if self.partitions is None:
            return f"ElectLeaders({self.election_type} every partition)"
        named = " ".join(f"{t.topic}-{p}" for t in self.partitions for p in t.partitions)
        return f"ElectLeaders({self.election_type} {named})"

    def early_result(self) -> Generated | None:
        """No partitions named (an empty tuple, not None, which means every partition): the
        answer, given at once without a write (Kafka's QuorumController.electLeaders)."""
        if self.partitions is not None and not self.partitions:
            return Generated([], {"electionType": self.election_type, "results": []})
        return None

    def generate(self, ctx: OperationContext) -> Generated:
        """A PartitionChangeRecord per partition whose leader changes; the response has
        every partition's error (NONE when elected) by topic."""
        if self.election_type not in ELECTION_TYPES:
            raise ApiError("INVALID_REQUEST", f"Unknown election type {self.election_type}")
        image = ctx.image
        records = ctx.records()
        results: list[dict[str, Any]] = []
        wanted = self.partitions
        if wanted is None:
            wanted = tuple(TopicPartitions(name, tuple(sorted(image.topics_by_id[topic_id]
                                                               .partitions)))
                           for name, topic_id in sorted(image.topics_by_name.items()))
        for topic in wanted:
            answers = []
            for pid in topic.partitions:
                error, message = _elect(image, topic.topic, pid, self.election_type, records)
                if self.partitions is None and error == "ELECTION_NOT_NEEDED":
                    continue
                answers.append({"partition": pid, "error": error, "message": message})
            results.append({"topic": topic.topic, "partitions": answers})
        return Generated(records, {"electionType": self.election_type, "results": results})


def _elect(image: MetadataImage, name: str, pid: int, election: str,
           records: list[MetadataRecord]) -> tuple[str, str | None]:
    """One partition's election (Kafka's electLeader): appends its record, if any, and
    returns its error and message."""
    topic_id = image.topics_by_name.get(name)
    if topic_id is None:
        return "UNKNOWN_TOPIC_OR_PARTITION", f"No such topic as {name}"
    reg = image.topics_by_id[topic_id].partitions.get(pid)
    if reg is None:
        return "UNKNOWN_TOPIC_OR_PARTITION", f"No such partition as {name}-{pid}"
    preferred = reg.replicas[0] if reg.replicas else NO_LEADER
    if (election == "PREFERRED" and reg.leader == preferred) or \
            (election == "UNCLEAN" and reg.leader != NO_LEADER):
        return "ELECTION_NOT_NEEDED", _MESSAGES["ELECTION_NOT_NEEDED"]
    change = preferred_change(image, topic_id, pid, reg) if election == "PREFERRED" \
        else unclean_election(image, topic_id, pid, reg)
    if change is None:
        error = "PREFERRED_LEADER_NOT_AVAILABLE" if election == "PREFERRED" \
            else "ELIGIBLE_LEADERS_NOT_AVAILABLE"
        return error, _MESSAGES[error]
    records.append(change)
    return "NONE", None


def _valid(image: MetadataImage, reg: PartitionRegistration, replica: int) -> bool:
    """A clean leader: in the ISR and active (PartitionChangeBuilder.isValidNewLeader)."""
    return replica in reg.isr and active(image, replica)


def preferred_change(image: MetadataImage, topic_id: str, pid: int,
                     reg: PartitionRegistration) -> PartitionChangeRecord | None:
    """A preferred election's change (None: none): the first replica if it is valid; else
    the current leader stays; else the next valid replica (PartitionChangeBuilder's
    electPreferredLeader)."""
    if elr_enabled(image) or reg.eligible_leader_replicas:
        if not reg.replicas:
            return None
        return build_change(image, topic_id, pid, reg, preferred=True)
    if reg.replicas and (_valid(image, reg, reg.replicas[0])
                         or not _valid(image, reg, reg.leader)):
        leader = next((r for r in reg.replicas if _valid(image, reg, r)), NO_LEADER)
        if leader != reg.leader:
            return PartitionChangeRecord(partition_id=pid, topic_id=topic_id, leader=leader)
    return None


def unclean_election(image: MetadataImage, topic_id: str, pid: int,
                     reg: PartitionRegistration) -> PartitionChangeRecord | None:
    """An UNCLEAN election's change for a leaderless partition (None: no replica is
    active): a valid replica, else the first active one, uncleanly."""
    if elr_enabled(image) or reg.eligible_leader_replicas:
        return build_change(image, topic_id, pid, reg, unclean=True)
    leader = next((r for r in reg.replicas if _valid(image, reg, r)), NO_LEADER)
    if leader != NO_LEADER:
        return PartitionChangeRecord(partition_id=pid, topic_id=topic_id, leader=leader)
    unclean = next((r for r in reg.replicas if active(image, r)), NO_LEADER)
    if unclean == NO_LEADER:
        return None
    return unclean_change(image, topic_id, pid, reg, unclean)
