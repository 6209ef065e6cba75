"""Bringing a cluster up: one start-up path for the shell, the demo, the experiments.

:func:`start_cluster` starts every node, runs until a controller is active,
then brings every broker in: with broker lifecycles on
(``BrokerSettings.lifecycle``, ``heartbeats=on``) the brokers register and
heartbeat by themselves and start-up runs until each is unfenced; off, the
cluster registers and unfences each one through operations. At metadata.version
3.7-IV0 or later it also waits until every controller has registered itself
(KIP-919; usually long done by then). Two orders exist, both deterministic:

- *together* (the default: ``cluster``, ``kraftsim demo``, tests): every node
  starts at once; each broker is registered, then each is unfenced, one
  operation at a time, each resubmitted after a retriable error.
- *quorum first* (the experiments): the brokers are paused from the first
  moment until a controller is active, then resumed and registered together,
  as in a start where the controller quorum comes up first. A broker that
  finds no leader asks a voter again after each answer (as Kafka's observer,
  once per round trip; every ``retry_backoff_ms`` before that was modelled);
  over the first election (1-2 s) even the slower pace was about half of a
  failover run's events, and it tells nothing about a failover.

With no brokers the cluster still runs until a controller is active.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.handle import OperationHandle
from controller.operations import Operation, RegisterBroker, UnfenceBroker
from sim.gc_policy import freeze_setup

if TYPE_CHECKING:
    from sim.cluster import KRaftCluster

DEFAULT_START_TIMEOUT_MS = 60_000
"""How long start-up may take (simulated ms) before it gives up."""


def start_cluster(cluster: KRaftCluster, *, quorum_first: bool = False,
                  register_brokers: bool = True,
                  timeout_ms: int = DEFAULT_START_TIMEOUT_MS) -> bool:
    """Start ``cluster``; True once a controller is active and every broker is unfenced.

    ``register_brokers=False`` only starts the nodes (no time passes). Inside
    :func:`sim.gc_policy.simulation_gc` what start-up built is then frozen.
    """
    deadline = cluster.sim.now + timeout_ms
    started = _start(cluster, quorum_first, register_brokers, timeout_ms)
    if started and not cluster.controllers_registered():
        started = cluster.run_until(cluster.controllers_registered, deadline - cluster.sim.now)
    freeze_setup()
    return started


def _start(cluster: KRaftCluster, quorum_first: bool, register_brokers: bool,
           timeout_ms: int) -> bool:
    sim = cluster.sim
    if quorum_first:
        return _quorum_first(cluster, timeout_ms)
    sim.start()
    if not register_brokers:
        return False
    if not cluster.config.brokers:
        cluster.run_until_active(timeout_ms)
    if cluster.config.brokers_settings.lifecycle:
        return _self_registered(cluster, timeout_ms)
    ok = True
    for operation_of in (RegisterBroker, UnfenceBroker):
        for broker_id in cluster.config.broker_ids:
            ok = _submit_until_committed(cluster, operation_of(broker_id), timeout_ms) and ok
    return ok and cluster.active_controller() is not None and sim.violation is None


def _self_registered(cluster: KRaftCluster, timeout_ms: int) -> bool:
    """Run until every broker has registered itself and is unfenced."""
    ok = cluster.run_until(cluster.brokers_unfenced, timeout_ms)
    return ok and cluster.active_controller() is not None and cluster.sim.violation is None


def _submit_until_committed(cluster: KRaftCluster, operation: Operation,
                            timeout_ms: int) -> bool:
    sim = cluster.sim
    deadline = sim.now + timeout_ms
    while sim.now < deadline and sim.violation is None:
        if cluster.run_until_active(deadline - sim.now) is None:
            return False
        handle = cluster.submit(operation)
        cluster.wait(handle, deadline - sim.now)
        if handle.error is None or not handle.error.retriable:
            return handle.error is None and handle.done
    return False


def _quorum_first(cluster: KRaftCluster, timeout_ms: int) -> bool:
    sim = cluster.sim
    sim.start()
    brokers = cluster.config.broker_ids
    for broker in brokers:
        sim.pause(broker)
    deadline = sim.now + timeout_ms
    active = cluster.run_until_active(timeout_ms)
    for broker in brokers:
        sim.resume(broker)
    if active is None:
        return False
    if cluster.config.brokers_settings.lifecycle:
        return _self_registered(cluster, deadline - sim.now)
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
