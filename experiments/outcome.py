"""What became of an operation: its outcome in the committed log, and acknowledged losses."""

from __future__ import annotations

from controller.handle import OperationHandle, OperationStatus
from sim.cluster import KRaftCluster


def committed_batches(cluster: KRaftCluster, handle: OperationHandle, epoch: int) -> int:
    """How many of the operation's batches (written in ``epoch``) are committed, in a row."""
    count = 0
    offset = handle.first_offset
    while 0 <= offset <= handle.last_offset:
        batch = cluster.history.get(offset)
        if batch is None or batch.epoch != epoch:
            break
        count += 1
        offset = batch.end_offset
    return count


def operation_outcome(cluster: KRaftCluster, handle: OperationHandle,
                      epoch: int) -> tuple[str, int]:
    """(outcome, records committed then aborted) of an operation written in ``epoch``.

    Outcomes: ``refused`` (nothing written), ``dropped`` (written, none of it
    committed), ``committed``, ``aborted`` (its transaction's Abort is
    committed), ``partial`` (non-atomic: a strict prefix committed), ``open``
    (a transaction still open when the run ended).
    """
    if handle.first_offset < 0:
        return "refused", 0
    done = committed_batches(cluster, handle, epoch)
    if done == 0:
        return "dropped", 0
    if handle.transactional:
        reference = cluster.txn_invariants.reference
        for txn in reversed(reference.transactions):
            if txn.begin_offset == handle.first_offset:
                return txn.outcome, txn.records if txn.outcome == "aborted" else 0
        return "open", 0
    return ("committed", 0) if done == handle.batch_count else ("partial", 0)


def acked_lost(cluster: KRaftCluster, handle: OperationHandle, epoch: int, topic: str,
               partitions: int, settled: bool) -> int:
    """1 if the client was told "committed" but the operation is not all there, else 0.

    Its batches must be committed in the epoch they were written in; once the
    run has settled, the topic must also be whole on the active controller and
    on every running broker.
    """
    if handle.status is not OperationStatus.COMMITTED or handle.first_offset < 0:
        return 0
    if committed_batches(cluster, handle, epoch) != handle.batch_count:
        return 1
    if not settled:
        return 0
    active = cluster.active_controller()
    images = [active.committed_image()] if active is not None else []
    for broker in cluster.config.broker_ids:
        loader = cluster.loader(broker)
        if loader is not None and loader.published is not None:
            images.append(loader.published)
    for image in images:
        found = image.topic(topic)
        if found is None or len(found.partitions) != partitions:
            return 1
    return 0
