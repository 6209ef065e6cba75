"""Bringing a cluster up for an experiment: controllers first, then the brokers.

The brokers are paused from the first moment until a controller is active,
then resumed and registered, as in a start where the controller quorum comes
up first. A broker that finds no leader retries its discovery fetch every
``retry_backoff_ms`` (20 ms); over the first election (1-2 s) that was about
half of a failover run's events, and it tells nothing about a failover.
"""

from __future__ import annotations

from controller.handle import OperationHandle
from controller.operations import Operation, RegisterBroker, UnfenceBroker
from sim.cluster import KRaftCluster


def start_cluster(cluster: KRaftCluster, timeout_ms: int = 60_000) -> bool:
    """Start the nodes, elect, then resume and register the brokers; False on failure."""
    sim = cluster.sim
    cluster.start(register_brokers=False)
    brokers = cluster.config.broker_ids
    for broker in brokers:
        sim.pause(broker)
    deadline = sim.now + timeout_ms
    active = cluster.run_until_active(timeout_ms)
    for broker in brokers:
        sim.resume(broker)
    if active is None:
        return False
    for operation_of in (RegisterBroker, UnfenceBroker):
        operations: list[Operation] = [operation_of(b) for b in brokers]
        if not _commit_all(cluster, operations, deadline):
            return False
    return cluster.active_controller() is not None and sim.violation is None


def _commit_all(cluster: KRaftCluster, operations: list[Operation], deadline: int) -> bool:
    """Submit the operations together; resubmit those that fail retriably; False on timeout."""
    sim = cluster.sim
    pending = list(operations)
    while pending:
        if sim.violation is not None or sim.now >= deadline:
            return False
        if cluster.run_until_active(deadline - sim.now) is None:
            return False
        handles: list[tuple[Operation, OperationHandle]] = [
            (op, cluster.submit(op)) for op in pending]
        cluster.run_until(lambda batch=handles: all(h.done for _, h in batch),  # type: ignore[misc]
                          deadline - sim.now)
        failed = [(op, h) for op, h in handles if h.error is not None]
        if any(h.error is not None and not h.error.retriable for _, h in failed):
            return False
        pending = [op for op, h in handles if not h.done or h.error is not None]
    return True
