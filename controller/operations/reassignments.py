"""AlterPartitionReassignments and ListPartitionReassignments (Kafka's
ReplicationControlManager.alterPartitionReassignments and listPartitionReassignments).

A reassignment moves a partition to a target replica list in up to two records. The
first (written here) puts the target's new replicas in the partition's replicas and
names them as adding and the replicas the target leaves out as removing; the new
replicas then fetch, and once the leader's AlterPartition takes them into the ISR the
second record completes it (:mod:`controller.operations.partition_change`): the replicas
become the target, the removed replicas leave the ISR, and a removed leader is replaced.
A target that adds nothing the ISR lacks (a reordering, or only removals while a kept
replica is in sync) completes in the first record. Cancelling (a None target) reverts to
the original replicas, the adding ones taken out of the ISR.

Each partition gets its own result, as Kafka's response has, checked in Kafka's order:
the topic (UNKNOWN_TOPIC_OR_PARTITION "Unable to find a topic named foo."), the
partition ("Unable to find partition foo:2."); then, for a cancel, a reassignment in
progress (NO_REASSIGNMENT_IN_PROGRESS, no message, as Kafka's response leaves the
generic message out) and a revert that needs no unclean election unless the topic allows
one (INVALID_REPLICA_ASSIGNMENT); for a target, Kafka's checks of a manual assignment
(INVALID_REPLICA_ASSIGNMENT: an empty list, a broker not registered, a negative id among
them, or one named twice, in broker id order). The records are computed against the
state before the request, one per partition that changes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.leadership import unclean_allowed
from controller.operations.partition_change import (
    ReassignmentReplicas,
    ReassignmentRevert,
    build_change,
    reassignment_in_progress,
)
from controller.operations.topics import validate_manual_assignment
from metadata.image import MetadataImage
from metadata.schema import PartitionChangeRecord


class ReassignablePartition(msgspec.Struct, frozen=True):
    """One partition's target replicas; None cancels its reassignment."""

    partition: int
    replicas: tuple[int, ...] | None


class ReassignableTopic(msgspec.Struct, frozen=True):
    """One topic's partitions to reassign."""

    name: str
    partitions: tuple[ReassignablePartition, ...]


class AlterPartitionReassignments(msgspec.Struct, frozen=True):
    """Reassign (or cancel the reassignment of) partitions; the response has one result
    per partition, by topic, as Kafka's: ``{"responses": [{"name", "partitions":
    [{"partitionIndex", "errorCode", "errorMessage"}]}]}``."""

    topics: tuple[ReassignableTopic, ...]

    def describe(self) -> str:
        """E.g. ``AlterPartitionReassignments(foo-0 -> [1, 2] foo-1 cancel)``."""
        parts = [f"{t.name}-{p.partition} " +
                 ("cancel" if p.replicas is None else f"-> {list(p.replicas)}")
                 for t in self.topics for p in t.partitions]
        return f"AlterPartitionReassignments({' '.join(parts)})"

    def early_result(self) -> Generated | None:
        """No topics: the empty answer at once, without a write (Kafka's QuorumController)."""
        return Generated([], {"responses": []}) if not self.topics else None

    def generate(self, ctx: OperationContext) -> Generated:
        """A PartitionChangeRecord per partition that changes, and every partition's
        result."""
        records = ctx.records()
        responses: list[dict[str, Any]] = []
        for topic in self.topics:
            results: list[dict[str, Any]] = []
            for target in topic.partitions:
                try:
                    change = alter_partition_reassignment(ctx.image, topic.name, target,
                                                          ctx.node_id)
                except ApiError as error:
                    results.append({"partitionIndex": target.partition,
                                    "errorCode": error.code,
                                    "errorMessage": error.message or None})
                    continue
                if change is not None:
                    records.append(change)
                results.append({"partitionIndex": target.partition, "errorCode": "NONE",
                                "errorMessage": None})
            responses.append({"name": topic.name, "partitions": results})
        return Generated(records, {"responses": responses})


def alter_partition_reassignment(image: MetadataImage, topic_name: str,
                                 target: ReassignablePartition, node_id: int | None = None
                                 ) -> PartitionChangeRecord | None:
    """The record that starts, completes or cancels one partition's reassignment (None:
    nothing changes); raises ApiError with the partition's error. ``node_id`` is the
    controller whose unclean-election setting applies where the topic has none."""
    topic_id = image.topics_by_name.get(topic_name)
    if topic_id is None:
        raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                       f"Unable to find a topic named {topic_name}.")
    topic = image.topics_by_id.get(topic_id)
    if topic is None:
        raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                       f"Unable to find a topic with ID {topic_id}.")
    reg = topic.partitions.get(target.partition)
    if reg is None:
        raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                       f"Unable to find partition {topic_name}:{target.partition}.")
    if target.replicas is None:
        if not reassignment_in_progress(reg):
            raise ApiError("NO_REASSIGNMENT_IN_PROGRESS", "")
        revert = ReassignmentRevert.of(reg)
        unclean = unclean_allowed(image, topic_name, node_id)
        if revert.unclean and not unclean:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           f"Unable to revert partition assignment for {topic_name}:"
                           f"{target.partition} because it would require an unclean leader "
                           f"election.")
        return build_change(image, topic_id, target.partition, reg, isr=revert.isr,
                            replicas=revert.replicas, removing=(), adding=(), unclean=unclean)
    validate_manual_assignment(image, target.replicas, None)
    moves = ReassignmentReplicas.between(reg.replicas, target.replicas)
    return build_change(
        image, topic_id, target.partition, reg,
        replicas=moves.replicas if moves.replicas != reg.replicas else None,
        removing=moves.removing or None, adding=moves.adding or None)


class ListPartitionReassignments(msgspec.Struct, frozen=True):
    """The ongoing reassignments: of every partition (``topics`` None) or of the named
    ones. Writes nothing; see :func:`list_partition_reassignments` for the answer."""

    topics: tuple[tuple[str, tuple[int, ...]], ...] | None = None

    def describe(self) -> str:
        """E.g. ``ListPartitionReassignments(all)``."""
        if self.topics is None:
            return "ListPartitionReassignments(all)"
        named = " ".join(f"{t}-{p}" for t, ps in self.topics for p in ps)
        return f"ListPartitionReassignments({named})"

    def early_result(self) -> Generated | None:
        """An empty (not None) topic list: the empty answer at once (Kafka's
        QuorumController)."""
        return Generated([], {"topics": []}) if self.topics is not None and not self.topics \
            else None

    def generate(self, ctx: OperationContext) -> Generated:
        """No records; the answer read from the controller's latest state (it completes
        once that state is committed)."""
        return Generated([], list_partition_reassignments(ctx.image, self.topics))


def list_partition_reassignments(image: MetadataImage,
                                 topics: tuple[tuple[str, tuple[int, ...]], ...] | None = None
                                 ) -> dict[str, Any]:
    """Kafka's ListPartitionReassignments answer against ``image``: ``{"topics": [{"name",
    "partitions": [{"partitionIndex", "replicas", "addingReplicas",
    "removingReplicas"}]}]}``, only partitions being reassigned, only topics with one.
    Every such partition (topics in topic id order, partitions in id order) when
    ``topics`` is None; else the named ones in the order named (an unknown topic or
    partition is left out, as Kafka does)."""
    if topics is None:
        wanted = [(topic_id, tuple(sorted(image.topics_by_id[topic_id].partitions)))
                  for topic_id in sorted(image.topics_by_id)]
    else:
        wanted = [(image.topics_by_name[name], pids) for name, pids in topics
                  if name in image.topics_by_name]
    answer: list[dict[str, Any]] = []
    for topic_id, pids in wanted:
        topic = image.topics_by_id.get(topic_id)
        if topic is None:
            continue
        ongoing = []
        for pid in pids:
            reg = topic.partitions.get(pid)
            if reg is None or not reassignment_in_progress(reg):
                continue
            ongoing.append({"partitionIndex": pid, "replicas": list(reg.replicas),
                            "addingReplicas": list(reg.adding_replicas),
                            "removingReplicas": list(reg.removing_replicas)})
        if ongoing:
            answer.append({"name": topic.name, "partitions": ongoing})
    return {"topics": answer}
