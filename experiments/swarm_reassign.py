"""The swarm's partition reassignments: the request, when the cluster has settled, the verdict.

Kafka's promises for AlterPartitionReassignments, as the swarm judges them once every
fault is healed and the cluster has settled:

- an acknowledged reassignment (its partition's result NONE) that no later
  reassignment or cancel of the same partition may have replaced, of a topic no
  delete may have removed, has completed: the partition's replicas are the target in
  the target's order, nothing is being added or removed, the leader is one of the
  target and the ISR lies within the replicas (``ReassignmentCompleted``);
- an acknowledged cancel, likewise not replaced, leaves no reassignment in progress
  (``CancelEndsReassignment``);
- a refused one (its partition's result an error, or the request failed before it was
  written) wrote nothing, and when no other reassignment or cancel of the partition
  may have applied, the partition still has the replicas it was created with and no
  reassignment in progress (``RefusedChangesNothing``).

Settling includes the reassignments: once every broker is back, each one in progress
completes (its target replicas catch up and join the ISR) or was cancelled, so a run
in which one is still in progress at the end of ``settle-ms`` does not settle, and its
message names the partition (:func:`unsettled`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from controller.handle import OperationHandle, OperationStatus
from controller.operations import (
    AlterPartitionReassignments,
    ReassignablePartition,
    ReassignableTopic,
)
from controller.operations.partition_change import reassignment_in_progress
from experiments.swarm_setup import REASSIGN_KINDS, SwarmSetup, WorkOp
from metadata.image import MetadataImage, PartitionRegistration
from metadata.schema import PartitionRecord
from sim.cluster import KRaftCluster

REASSIGN_INVARIANT = "ReassignmentCompleted"
"""Name used when an acknowledged reassignment has not completed as asked."""
CANCEL_INVARIANT = "CancelEndsReassignment"
"""Name used when an acknowledged cancel left a reassignment in progress."""
REFUSED_INVARIANT = "RefusedChangesNothing"
"""Name used when a refused reassignment or cancel changed its partition."""

Created = Mapping[tuple[str, int], tuple[int, ...]]
"""Each partition's replicas when it was created, by (topic id, partition)."""


def reassignment(op: WorkOp, setup: SwarmSetup) -> AlterPartitionReassignments:
    """The request of a ``reassign`` or ``cancel`` operation: one partition."""
    return AlterPartitionReassignments((ReassignableTopic(op.topic, (
        ReassignablePartition(op.partition, op.target(setup.brokers)),)),))


def unsettled(cluster: KRaftCluster) -> str | None:
    """Why the healed cluster has not settled although idle: a node still shutting down, a
    broker still fenced, unregistered or in controlled shutdown, or a partition still
    being reassigned (None: none of these)."""
    shutting = sorted(n for n, slot in cluster.sim.slots.items() if slot.shutting_down)
    if shutting:
        return f"node(s) {shutting} still shutting down"
    active = cluster.active_controller()
    if active is None:
        return None
    image = active.committed_image()
    fenced = [b for b in cluster.config.broker_ids
              if (broker := image.brokers.get(b)) is None or broker.fenced]
    if fenced:
        return f"broker(s) {fenced} still fenced or unregistered"
    stopping = [b for b in cluster.config.broker_ids
                if (broker := image.brokers.get(b)) is not None and broker.in_controlled_shutdown]
    if stopping:
        return f"broker(s) {stopping} still in controlled shutdown"
    for name in sorted(image.topics_by_name):
        topic = image.topic(name)
        if topic is None:
            continue
        for pid in sorted(topic.partitions):
            reg = topic.partitions[pid]
            if reassignment_in_progress(reg):
                return f"partition {name}-{pid} is still being reassigned ({_state(reg)})"
    return None


def created_replicas(cluster: KRaftCluster) -> dict[tuple[str, int], tuple[int, ...]]:
    """Each partition's replicas in its PartitionRecord, from the committed history."""
    history = cluster.txn_invariants.reference.history
    created: dict[tuple[str, int], tuple[int, ...]] = {}
    for base in history.bases:
        for record in history.batches[base].records:
            if isinstance(record, PartitionRecord):
                created.setdefault((record.topic_id, record.partition_id), record.replicas)
    return created


def partition_error(handle: OperationHandle) -> str | None:
    """The partition's error code in an answered reassignment (None: not answered)."""
    if handle.status is not OperationStatus.COMMITTED or not isinstance(handle.response,
                                                                          dict):
        return None
    for topic in handle.response.get("responses", ()):
        for partition in topic.get("partitions", ()):
            return str(partition["errorCode"])
    return None


def accepted(handle: OperationHandle) -> bool:
    """Acknowledged, its partition's result NONE."""
    return partition_error(handle) == "NONE"


def refused(handle: OperationHandle) -> bool:
    """Answered with an error for its partition, or failed before it was written."""
    error = partition_error(handle)
    if error is not None:
        return error != "NONE"
    return handle.status is OperationStatus.FAILED and handle.first_offset < 0


def may_change(handle: OperationHandle) -> bool:
    """Accepted, or failed after it was written (so it may have been committed)."""
    return accepted(handle) or (handle.status is OperationStatus.FAILED
                                and handle.first_offset >= 0)


def reassign_problem(image: MetadataImage, setup: SwarmSetup,
                     submitted: Sequence[tuple[WorkOp, OperationHandle]], index: int,
                     deletes: set[str], created: Created | None) -> tuple[str, str] | None:
    """(invariant, message) when ``submitted[index]``, a reassign or cancel, broke one of
    the rules of the module docs in ``image`` (``created``: see :func:`created_replicas`;
    None skips the check of a refused one's replicas)."""
    op, handle = submitted[index]
    name = f"{op.topic}-{op.partition}"
    if refused(handle) and handle.record_count:
        return REFUSED_INVARIANT, (f"refused with {_error(handle)} but wrote "
                                   f"{handle.record_count} record(s) at offsets "
                                   f"{handle.first_offset}-{handle.last_offset}")
    if op.topic in deletes:
        return None
    same = [i for i, (other, _) in enumerate(submitted)
            if other.kind in REASSIGN_KINDS and other.topic == op.topic
            and other.partition == op.partition]
    topic_id = image.topics_by_name.get(op.topic)
    topic = None if topic_id is None else image.topics_by_id.get(topic_id)
    reg = None if topic is None else topic.partitions.get(op.partition)
    if accepted(handle):
        if any(i > index and may_change(submitted[i][1]) for i in same):
            return None  # replaced by a later one
        if reg is None:
            invariant = REASSIGN_INVARIANT if op.kind == "reassign" else CANCEL_INVARIANT
            return invariant, f"partition {name} does not exist"
        if op.kind == "cancel":
            if reassignment_in_progress(reg):
                return CANCEL_INVARIANT, (f"partition {name} is still being reassigned "
                                          f"after the cancel ({_state(reg)})")
            return None
        target = op.target(setup.brokers) or ()
        found = _incomplete(reg, target)
        if found:
            return REASSIGN_INVARIANT, (f"partition {name}, target {list(target)}: "
                                        f"{'; '.join(found)} ({_state(reg)})")
        return None
    if not refused(handle) or reg is None or created is None or topic_id is None:
        return None
    if any(i != index and may_change(submitted[i][1]) for i in same):
        return None  # another one may have moved it
    original = created.get((topic_id, op.partition))
    if original is None:
        return None
    if reg.replicas != original or reassignment_in_progress(reg):
        return REFUSED_INVARIANT, (f"refused with {_error(handle)}, yet partition {name} "
                                   f"was created on {list(original)} and now has "
                                   f"{_state(reg)}")
    return None


def _incomplete(reg: PartitionRegistration, target: tuple[int, ...]) -> list[str]:
    found = []
    if reg.replicas != target:
        found.append(f"replicas {list(reg.replicas)} are not the target")
    if reassignment_in_progress(reg):
        found.append("still being reassigned")
    if reg.leader not in target:
        found.append(f"leader {reg.leader} is not in the target")
    outside = sorted(set(reg.isr) - set(reg.replicas))
    if outside:
        found.append(f"ISR members {outside} are not replicas")
    return found


def _state(reg: PartitionRegistration) -> str:
    return (f"replicas {list(reg.replicas)}, adding {list(reg.adding_replicas)}, removing "
            f"{list(reg.removing_replicas)}, ISR {list(reg.isr)}, leader {reg.leader}")


def _error(handle: OperationHandle) -> str:
    error = partition_error(handle)
    if error is not None:
        return error
    return handle.error.code if handle.error is not None else handle.outcome()
