"""One swarm simulation: start, workload under faults, heal, settle, judge.

1. Start the cluster (controllers elect, brokers register).
2. For ``horizon-ms`` the client submits its operations (retrying while no
   controller is active) and the faults fire.
3. At the horizon every fault is healed: links restored, paused nodes
   resumed, crashed, stopped and wiped nodes restarted (a broker still in a
   controlled shutdown once it has stopped).
4. The cluster must settle within ``settle-ms``: every operation answered,
   a controller active, no transaction open, every node caught up, every
   broker unfenced and no partition reassignment in progress.
5. Judged: every invariant held after every event, and every acknowledged
   operation is in the final state of the active controller and of every
   broker (a run that does not settle is ``non_terminating``); reassignments
   and cancels by the rules of :mod:`experiments.swarm_reassign`.

A run is ``outside_model`` when its faults leave what Raft promises to
survive: more controllers wiped than the quorum tolerates (a majority of 3,
any of 1 or 2), or a failure with a controller's disk wiped at all (a wiped
voter forgets the vote it promised and the log it acknowledged; Raft assumes
durable storage, and kraftsim has no KIP-853 directory ids to notice).
"""

from __future__ import annotations

from typing import IO

import msgspec

from controller import ControllerConfig, WriteMode
from controller.handle import OperationHandle, OperationStatus
from controller.operations import (
    ConfigChange,
    CreateTopics,
    DeleteTopics,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
)
from experiments.common import ACK_INVARIANT, partitions_for
from experiments.swarm_reassign import (
    Created,
    created_replicas,
    reassign_problem,
    reassignment,
    unsettled,
)
from experiments.swarm_setup import REASSIGN_KINDS, SwarmSetup, WorkOp
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from raft import RaftConfig
from sim.brokers import BrokerSettings
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_faults
from sim.startup import start_cluster
from sim.world import NodeStatus

ATOMIC_INVARIANT = "AllOrNothingOutcome"
"""Name used when, outside non-atomic mode, an operation is only partly in the final state."""

VERDICTS = ("ok", "violation", "outside_model", "non_terminating")
"""A swarm run's verdict."""

RETRY_MS = 250
"""The client resubmits an operation this long after finding no active controller."""
RETRIES = 8

TOPIC_KEY = "retention.ms"
BROKER_KEY = "log.retention.ms"


class Outcome(msgspec.Struct, frozen=True):
    """What one simulation of a setup found."""

    verdict: str
    """One of :data:`VERDICTS`."""
    valid: str
    """true, false (an invariant failed) or unknown (did not settle)."""
    invariant: str | None
    message: str | None
    model: str
    """``in``, or why the run is outside the model."""
    events: int
    simulated_ms: int
    fingerprint: str
    partial_visibility: int
    acknowledged: int
    failed_ops: int
    transactions_aborted: int
    wiped_controllers: int
    faults_applied: int

    @property
    def failing(self) -> bool:
        """An invariant failed or the run did not settle."""
        return self.valid != "true"

    def signature(self) -> str:
        """What a shrink must keep: the failed invariant, or non-termination."""
        return self.invariant if self.valid == "false" and self.invariant else self.valid


def cluster_config(seed: int, mode: str, mutations: frozenset[str],
                   setup: SwarmSetup) -> ClusterConfig:
    """The ClusterConfig of a setup."""
    return ClusterConfig(
        seed=seed, controllers=setup.controllers, brokers=setup.brokers,
        # brokers register and heartbeat by themselves and hold partition replicas, so
        # that a reassignment completes (its new replicas catch up and join the ISR)
        brokers_settings=BrokerSettings(),
        controller=ControllerConfig(max_records_per_batch=setup.batch_records,
                                    write_mode=WriteMode(mode),
                                    noop_interval_ms=setup.noop_ms,
                                    snapshot_every_records=setup.snapshot_every),
        raft=RaftConfig(fetch_max_records=setup.fetch_records,
                        append_linger_ms=setup.linger_ms, pre_vote=setup.pre_vote),
        mutations=mutations)


def simulate(seed: int, mode: str, mutations: frozenset[str], setup: SwarmSetup,
             settle_ms: int, trace_out: IO[bytes] | None = None) -> Outcome:
    """Run ``setup`` once and judge it (see the module docs)."""
    cluster = KRaftCluster(cluster_config(seed, mode, mutations, setup), trace_out)
    sim = cluster.sim
    submitted: list[tuple[WorkOp, OperationHandle]] = []
    if not start_cluster(cluster, quorum_first=True):
        settled, reason = False, "the cluster did not start"
    else:
        start = sim.now
        for fault in setup.faults:
            for spec in parse_faults([fault.text(start)]):
                sim.schedule_fault(spec)
        _workload(cluster, setup, start, submitted)
        sim.run_until(start + setup.horizon_ms)
        sim.act("swarm: heal every fault", lambda: _heal_all(cluster))
        deadline = sim.now + settle_ms
        # a broker in a controlled shutdown at the horizon stops only once it is done (a
        # restart before that finds it running): restart it then
        if any(slot.shutting_down for slot in sim.slots.values()) and cluster.run_until(
                lambda: not any(slot.shutting_down for slot in sim.slots.values()),
                settle_ms):
            sim.act("swarm: restart the nodes that finished shutting down",
                    lambda: _heal_all(cluster))
        settled = cluster.run_until(
            lambda: all(h.done for _, h in submitted) and cluster.idle()
            and unsettled(cluster) is None, max(0, deadline - sim.now))
        reason = f"the cluster did not settle within {settle_ms} ms of the horizon"
        why = None if settled else unsettled(cluster)
        if why is not None:
            reason += f": {why}"
    return _judge(cluster, setup, mode, submitted, settled, reason)


def _operation(op: WorkOp, setup: SwarmSetup) -> Operation:
    if op.kind == "create":
        partitions = partitions_for(op.batches, setup.batch_records)
        return CreateTopics((NewTopic(op.topic, partitions, min(3, setup.brokers)),))
    if op.kind == "delete":
        return DeleteTopics((op.topic,))
    if op.kind in REASSIGN_KINDS:
        return reassignment(op, setup)
    if op.kind == "alter-topic":
        return IncrementalAlterConfigs(TOPIC_RESOURCE, op.topic,
                                       (ConfigChange(TOPIC_KEY, str(op.value)),))
    return IncrementalAlterConfigs(BROKER_RESOURCE, "", (ConfigChange(BROKER_KEY,
                                                                      str(op.value)),))


def _workload(cluster: KRaftCluster, setup: SwarmSetup, start: int,
              submitted: list[tuple[WorkOp, OperationHandle]]) -> None:
    """Submit each operation at its time; resubmit while no controller is active."""
    sim = cluster.sim
    end = start + setup.horizon_ms
    queue: list[tuple[int, int, WorkOp, int]] = [(start + op.at_ms, i, op, 0)
                                                 for i, op in enumerate(setup.ops)]
    while queue and sim.violation is None:
        queue.sort(key=lambda item: (item[0], item[1]))
        at, index, op, tries = queue.pop(0)
        if at >= end:
            continue
        sim.run_until(at)
        if sim.violation is not None:
            return
        handle = cluster.submit(_operation(op, setup))
        unanswered = handle.error is not None and handle.error.code == "NOT_CONTROLLER" \
            and handle.first_offset < 0
        if unanswered and tries < RETRIES and at + RETRY_MS < end:
            queue.append((at + RETRY_MS, index, op, tries + 1))
            continue
        submitted.append((op, handle))


def _heal_all(cluster: KRaftCluster) -> None:
    sim = cluster.sim
    sim.network.heal()
    for node_id, slot in sim.slots.items():
        if slot.status is NodeStatus.PAUSED:
            sim.resume(node_id)
        elif slot.status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
            sim.restart(node_id)


def _judge(cluster: KRaftCluster, setup: SwarmSetup, mode: str,
           submitted: list[tuple[WorkOp, OperationHandle]], settled: bool,
           reason: str) -> Outcome:
    sim = cluster.sim
    violation = sim.violation
    valid, invariant, message = "true", None, None
    if violation is not None:
        valid, invariant, message = "false", violation.invariant, violation.message
    elif cluster.controller_faults:
        node, at, fault = cluster.controller_faults[0]
        valid, invariant = "false", "ControllerFault"
        message = f"controller {node} stopped at {at} ms: {fault}"
    elif not settled:
        valid, message = "unknown", reason
    else:
        found = final_state_problem(cluster, setup, mode, submitted)
        if found is not None:
            valid, invariant, message = "false", found[0], found[1]
    wiped = [n for n in setup.controller_ids if sim.slots[n].wipe_count > 0]
    model = _model(setup.controllers, wiped, valid != "true")
    if model != "in":
        verdict = "outside_model"
    else:
        verdict = {"true": "ok", "false": "violation", "unknown": "non_terminating"}[valid]
    return Outcome(
        verdict=verdict, valid=valid, invariant=invariant, message=message, model=model,
        events=sim.events, simulated_ms=sim.now, fingerprint=sim.trace.fingerprint,
        partial_visibility=cluster.txn_invariants.partial_observations,
        acknowledged=sum(h.status is OperationStatus.COMMITTED for _, h in submitted),
        failed_ops=sum(h.status is OperationStatus.FAILED for _, h in submitted),
        transactions_aborted=sum(t.outcome == "aborted"
                                 for t in cluster.txn_invariants.reference.transactions),
        wiped_controllers=len(wiped), faults_applied=len(sim.faults_applied))


def _model(controllers: int, wiped: list[int], failing: bool) -> str:
    """``in``, or why wiping the controllers in ``wiped`` puts the run outside the model."""
    tolerated = (controllers - 1) // 2
    if len(wiped) > tolerated:
        return (f"wiped {len(wiped)} of {controllers} controllers' disks; a quorum of "
                f"{controllers} survives at most {tolerated}")
    if wiped and failing:
        return (f"controller(s) {', '.join(map(str, wiped))} wiped: a wiped voter forgets its "
                f"vote and its log (Raft assumes durable storage)")
    return "in"


def _may_apply(handle: OperationHandle) -> bool:
    """The operation was written to a log (so it may be committed even if it failed)."""
    return handle.status is OperationStatus.COMMITTED or handle.first_offset >= 0


def final_state_problem(cluster: KRaftCluster, setup: SwarmSetup, mode: str,
                        submitted: list[tuple[WorkOp, OperationHandle]]
                        ) -> tuple[str, str] | None:
    """(invariant, message) if the settled state lacks an acknowledged operation.

    Checked on the active controller's committed image and every running
    broker's published image: an acknowledged create is whole unless a delete
    of it may have applied; an acknowledged delete left nothing; an
    acknowledged config change holds unless a later one may have replaced it.
    Outside non-atomic mode every topic is also whole or absent. Reassignments and
    cancels: see :mod:`experiments.swarm_reassign`.
    """
    images: list[tuple[str, MetadataImage]] = []
    active = cluster.active_controller()
    if active is not None:
        images.append((f"controller {active.node_id}", active.committed_image()))
    for broker in setup.broker_ids:
        loader = cluster.loader(broker)
        if loader is not None and loader.published is not None:
            images.append((f"broker {broker}", loader.published))
    deletes = {op.topic for op, h in submitted if op.kind == "delete" and _may_apply(h)}
    created = created_replicas(cluster) if any(
        op.kind in REASSIGN_KINDS for op, _ in submitted) else None
    for where, image in images:
        for index, (_op, handle) in enumerate(submitted):
            problem = _op_problem(image, setup, mode, submitted, index, deletes, created)
            if problem is not None:
                kind, what = problem
                return kind, f"{where}: {handle.description} ({handle.outcome()}): {what}"
    return None


def _op_problem(image: MetadataImage, setup: SwarmSetup, mode: str,
                submitted: list[tuple[WorkOp, OperationHandle]], index: int,
                deletes: set[str], created: Created | None = None
                ) -> tuple[str, str] | None:
    op, handle = submitted[index]
    if op.kind in REASSIGN_KINDS:
        return reassign_problem(image, setup, submitted, index, deletes, created)
    acked = handle.status is OperationStatus.COMMITTED
    if op.kind == "create":
        want = partitions_for(op.batches, setup.batch_records)
        topic = image.topic(op.topic)
        have = 0 if topic is None else len(topic.partitions)
        if acked and op.topic not in deletes and have != want:
            return ACK_INVARIANT, f"topic {op.topic} has {have} of {want} partitions"
        if mode != WriteMode.NON_ATOMIC.value and have not in (0, want):
            return ATOMIC_INVARIANT, f"topic {op.topic} has {have} of {want} partitions"
        return None
    if not acked:
        return None
    if op.kind == "delete":
        if image.topic(op.topic) is not None:
            return ACK_INVARIANT, f"topic {op.topic} still exists"
        return None
    if op.kind == "alter-topic":
        if op.topic in deletes or image.topic(op.topic) is None:
            return None
        key: tuple[int, str] = (TOPIC_RESOURCE, op.topic)
        name = TOPIC_KEY
    else:
        key, name = (BROKER_RESOURCE, ""), BROKER_KEY
    allowed = {str(op.value)}
    allowed |= {str(later.value) for later, h in submitted[index + 1:]
                if later.kind == op.kind and later.topic == op.topic and _may_apply(h)}
    configs = image.configs.get(key)
    value = None if configs is None else configs.get(name)
    if value not in allowed:
        return ACK_INVARIANT, f"{name} of {key[1] or 'the broker default'} is {value}, " \
                              f"expected one of {sorted(allowed)}"
    return None
