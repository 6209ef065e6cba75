"""The failover experiment: one fault placed in a window of a multi-batch operation.

3 controllers and a few brokers; one CreateTopics whose records fill
``batches`` batches, written in ``mode``. Once the operation is in the chosen
``window`` the controller leader suffers the scenario's fault:

=================  ==========================================================
``crash``          hard crash once its log is flushed (nothing is lost)
``crash-unflushed`` hard crash with appends not yet flushed: before Begin
                   commits that is the operation itself; in later windows a
                   client's follow-up operation, appended just before
``partition``      the leader is cut off from every other node
``resign``         graceful shutdown: the leader flushes and resigns
=================  ==========================================================

Windows, from the committed log's point of view:

================  =============================================================
``before-begin``  the operation's first batch (its Begin) is not committed
``inside``        the first batch is committed, the last (its End) is on no
                  follower yet
``end-appended``  the last batch is on a follower but not committed
``committed``     the last batch is committed (the client has its answer)
================  =============================================================

A window spans several events; the fault hits the k-th of them, k drawn from
the run's seed (when the window is shorter than k the run is repeated with k
modulo its length, so the fault always lands inside). After a new controller
has taken over, the faulty node rejoins (restart, or the partition heals)
``rejoin-ms`` later, and the run ends once every node has caught up.

Every run of one cluster configuration starts from the same booted cluster:
booted with a seed of the configuration's own (:func:`boot_seed`), then
reseeded with the run's seed (every random stream starts over; a ``reseed``
trace line says so). A sweep boots each configuration once and forks it for
every run (:mod:`sim.fork`); a run that writes its trace boots afresh, and
both give the same row and trace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from controller.handle import OperationHandle, OperationStatus
from controller.operations import CreateTopics, NewTopic
from experiments.boots import Boots, go_on_as
from experiments.common import (
    CLUSTER_PARAMS,
    CLUSTER_SETTING_PARAMS,
    HEAD_COLUMNS,
    MAX_OPERATION_RECORDS,
    MODES,
    MUTATIONS_PARAM,
    TAIL_COLUMNS,
    cluster_param,
    head_values,
    own_cluster_config,
    partitions_for,
    tail_values,
    verdict,
)
from experiments.model import Column, Experiment, Param, Row, RunSpec
from experiments.outcome import acked_lost, operation_outcome
from experiments.recovery import RecoveryProbe
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import Heal, Restart, parse_fault_target
from sim.seeds import named_random
from sim.settings import MAX_DURATION_MS
from sim.startup import start_cluster

FAULTS = ("crash", "crash-unflushed", "partition", "resign")
"""The scenarios: what happens to the controller leader."""
WINDOWS = ("before-begin", "inside", "end-appended", "committed")
"""Where in the operation the fault lands."""
FIRE_SPREAD = 8
"""The fault hits one of the first FIRE_SPREAD events of its window."""
TOPIC = "orders"
FOLLOW_UP = "follow-up"

PARAMS: tuple[Param, ...] = (
    Param("scenario", str, FAULTS, "the fault", choices=FAULTS),
    Param("window", str, WINDOWS, "where in the operation the fault lands", choices=WINDOWS),
    Param("mode", str, ("transactional", "non-atomic"), "write mode of the operation",
          choices=MODES),
    cluster_param("controllers", (3,), "controllers (voters)", minimum=3),
    cluster_param("brokers", (2,), "brokers (observers)", minimum=1),
    *CLUSTER_PARAMS,
    Param("batches", int, (6,), "batches the operation's records fill (batches x "
                                "batch-records at most 1,000,000)", minimum=1,
          maximum=MAX_OPERATION_RECORDS),
    Param("rejoin-ms", int, (500,), "delay from the new controller's takeover to the "
                                    "faulty node's return", minimum=0, maximum=MAX_DURATION_MS),
    Param("timeout-ms", int, (30_000,), "simulated time limit after the fault; a run that "
                                        "has not settled by then is unknown", minimum=1000,
          maximum=MAX_DURATION_MS),
    MUTATIONS_PARAM,
)

COLUMNS: tuple[Column, ...] = (
    *HEAD_COLUMNS[:3],
    Column("window", "string", "where the fault was placed"),
    *HEAD_COLUMNS[3:],
    Column("window_hit", "bool", "the fault landed inside its window (false: the operation "
                                 "left it first, e.g. refused)"),
    Column("outcome", "string", "committed, aborted, refused (nothing written), dropped "
                                "(written, none of it committed) or partial (non-atomic: a "
                                "prefix committed)"),
    Column("client_outcome", "string", "what the client was told: committed or an error "
                                       "code"),
    Column("fault_at_ms", "long", "simulated time of the fault", nullable=True),
    Column("leader_ms", "long", "fault -> a raft leader of a newer epoch", nullable=True),
    Column("hw_ms", "long", "fault -> the first batch of the new epoch committed",
           nullable=True),
    Column("abort_ms", "long", "fault -> the operation's Abort committed", nullable=True),
    Column("unavailable_ms", "long", "fault -> a new controller can acknowledge operations "
                                     "(no operation completes before)", nullable=True),
    Column("recovery_ms", "long", "fault -> every reachable node caught up, no transaction "
                                  "open", nullable=True),
    Column("records_aborted", "long", "records of the operation committed, then aborted"),
    Column("records_truncated", "long", "offsets cut from node logs (lost unflushed or "
                                        "divergent), summed over nodes"),
    Column("records_rolled_back", "long", "records_aborted + records_truncated"),
    Column("acked_lost", "long", "acknowledged operations missing from the final state "
                                 "(must be 0)"),
    *TAIL_COLUMNS,
)


@dataclass
class _Attempt:
    """One try at a run; ``window_events`` set when the fault must be placed earlier."""

    cluster: KRaftCluster
    probe: RecoveryProbe
    handle: OperationHandle | None = None
    follow_up: OperationHandle | None = None
    epoch: int = 0
    window_hit: bool = False
    settled: bool = False
    reason: str = ""
    window_events: int | None = None


def run_failover(spec: RunSpec, trace_out: IO[bytes] | None = None) -> Row:
    """Run one failover scenario; the row's columns are :data:`COLUMNS`."""
    started = time.perf_counter()
    rng = named_random(spec.seed, "failover")
    fire = rng.randrange(FIRE_SPREAD)
    attempt = _attempt(spec, trace_out, fire)
    if attempt.window_events is not None:
        if trace_out is not None:
            trace_out.seek(0)
            trace_out.truncate()
        attempt = _attempt(spec, trace_out, fire % attempt.window_events)
    return _row(spec, attempt, round((time.perf_counter() - started) * 1000))


_Booted = tuple[KRaftCluster, RecoveryProbe, bool]
BOOTS: Boots[_Booted] = Boots("failover", own_cluster_config, CLUSTER_SETTING_PARAMS)
"""Booted clusters by configuration: a sweep's runs fork them instead of booting."""


def set_boot_reuse(on: bool) -> None:
    """Fork cached booted clusters (the default) or boot every run afresh (same rows)."""
    BOOTS.set_reuse(on)


def boot_seed(config: ClusterConfig) -> int:
    """The seed a configuration boots with: one per configuration, whatever the run's seed."""
    return BOOTS.seed(config)


def booted_cluster(spec: RunSpec, trace_out: IO[bytes] | None = None) -> _Booted:
    """The run's cluster, started: booted with :func:`boot_seed`, then reseeded with the
    run's seed. A run without a trace file forks a cached boot (:mod:`sim.fork`); one with
    a trace file boots afresh; both give the same run event for event."""
    def boot(config: ClusterConfig) -> _Booted:
        probe = RecoveryProbe()
        cluster = KRaftCluster(config, trace_out, [probe])
        probe.attach(cluster)
        return cluster, probe, start_cluster(cluster, quorum_first=True)

    booted = BOOTS.world(spec, boot, fresh=trace_out is not None)
    go_on_as(booted[0], spec)  # a fork is set-up too (sim.gc_policy)
    return booted


def _attempt(spec: RunSpec, trace_out: IO[bytes] | None, fire: int) -> _Attempt:
    p = spec.params
    cluster, probe, started = booted_cluster(spec, trace_out)
    attempt = _Attempt(cluster, probe)
    active = cluster.active_controller() if started else None
    if active is None:
        attempt.reason = "the cluster did not start (no active controller, or brokers not " \
                         "registered)"
        return attempt
    brokers = int(p["brokers"])
    partitions = partitions_for(int(p["batches"]), int(p["batch-records"]))
    handle = cluster.submit(CreateTopics((NewTopic(TOPIC, partitions, min(3, brokers)),)))
    attempt.handle, attempt.epoch = handle, active.claimed_epoch or 0
    if handle.transactional:
        probe.watch_transaction(handle.first_offset)
    scenario, window = spec.scenario, str(p["window"])
    in_window = _window_predicate(cluster, handle, scenario, window)
    past = _past_predicate(cluster, handle, window)
    seen = 0

    def ready() -> bool:
        nonlocal seen
        if cluster.sim.violation is not None:
            return True
        if in_window():
            if seen == fire:
                return True
            seen += 1
            return False
        return seen > 0 or past()

    cluster.sim.run_until_true(ready, int(p["timeout-ms"]))
    attempt.window_hit = in_window()
    if not attempt.window_hit and 0 < seen <= fire:
        attempt.window_events = seen
        return attempt
    _fault_and_recover(spec, attempt)
    return attempt


def _window_predicate(cluster: KRaftCluster, handle: OperationHandle, scenario: str,
                      window: str) -> Callable[[], bool]:
    """Whether the run is inside ``window`` of the operation now.

    Asked after every event until the fault, so it is made once per run for its window
    and scenario: one closure that reads the committed log's end, the handle's status and
    at most the leader's and the other controllers' logs.
    """
    first, last = handle.first_offset, handle.last_offset
    if first < 0:  # nothing written: the offsets are set when it is submitted, never after
        return lambda: False
    history, sim = cluster.history, cluster.sim
    followers = [sim.slots[n] for n in cluster.config.controller_ids]
    failed = OperationStatus.FAILED

    def on_follower(offset: int) -> bool:
        """A controller other than the leader holds ``offset``."""
        leader = sim.leader_slot()
        for slot in followers:
            if slot is not leader and slot.storage.log.end_offset > offset:
                return True
        return False

    if window == "before-begin":
        def where() -> bool:
            return history.end <= first and handle.status is not failed
    elif window == "inside":
        def where() -> bool:
            return history.end > first and handle.status is not failed and \
                not on_follower(last)
    elif window == "end-appended":
        def where() -> bool:
            return history.end <= last and handle.status is not failed and on_follower(last)
    else:
        def where() -> bool:
            return history.end > last and handle.status is not failed

    if scenario == "crash":  # the leader has flushed everything it holds
        def flushed_where() -> bool:
            if not where():
                return False
            slot = sim.leader_slot()
            return slot is None or slot.storage.log.flushed_end == slot.storage.log.end_offset
        return flushed_where
    if scenario == "crash-unflushed" and window == "before-begin":  # nothing flushed yet
        def unflushed_where() -> bool:
            if not where():
                return False
            slot = sim.leader_slot()
            return slot is None or slot.storage.log.flushed_end <= last
        return unflushed_where
    return where


def _past_predicate(cluster: KRaftCluster, handle: OperationHandle,
                    window: str) -> Callable[[], bool]:
    """The operation is done, or beyond ``window`` (a later window holds)."""
    order = WINDOWS.index(window)

    def past() -> bool:
        if handle.done:
            return True
        end = cluster.history.end
        if order == 0:
            return end > handle.first_offset
        if order <= 2:
            return end > handle.last_offset
        return False

    return past


def _fault_and_recover(spec: RunSpec, attempt: _Attempt) -> None:
    cluster, probe = attempt.cluster, attempt.probe
    sim = cluster.sim
    p = spec.params
    deadline = sim.now + int(p["timeout-ms"])
    leader = sim.leader_slot()
    if leader is None or leader.raft is None or sim.violation is not None:
        attempt.reason = "no leader at the fault" if sim.violation is None else ""
        return
    node, epoch = leader.node_id, leader.raft.epoch
    probe.arm(epoch, sim.now)
    scenario = spec.scenario
    if scenario == "crash-unflushed" and p["window"] != "before-begin":
        attempt.follow_up = cluster.submit(CreateTopics((NewTopic(FOLLOW_UP, 1, 1),)))
    kind = {"crash": "crash", "crash-unflushed": "crash", "partition": "isolate",
            "resign": "shutdown"}[scenario]
    sim.apply_fault(parse_fault_target(kind, str(node), sim.now))

    def taken_over() -> bool:
        active = cluster.active_controller()
        return active is not None and (active.claimed_epoch or 0) > epoch

    if not cluster.run_until(taken_over, max(0, deadline - sim.now)):
        attempt.reason = f"no new controller within {p['timeout-ms']} ms of the fault"
        return
    sim.run_for(min(int(p["rejoin-ms"]), max(0, deadline - sim.now)))
    sim.apply_fault(Heal(at_ms=sim.now) if kind == "isolate"
                    else Restart(at_ms=sim.now, node=node))
    attempt.settled = cluster.run_until(
        lambda: probe.recovered_at is not None and cluster.idle(), max(0, deadline - sim.now))
    if not attempt.settled:
        attempt.reason = f"the cluster did not settle within {p['timeout-ms']} ms of the fault"


def _row(spec: RunSpec, attempt: _Attempt, wall_ms: int) -> Row:
    cluster, probe, handle = attempt.cluster, attempt.probe, attempt.handle
    p = spec.params
    partitions = partitions_for(int(p["batches"]), int(p["batch-records"]))
    outcome, aborted_records = ("refused", 0) if handle is None else \
        operation_outcome(cluster, handle, attempt.epoch)
    lost = 0
    if handle is not None:
        lost += acked_lost(cluster, handle, attempt.epoch, TOPIC, partitions, attempt.settled)
    if attempt.follow_up is not None:
        lost += acked_lost(cluster, attempt.follow_up, attempt.epoch, FOLLOW_UP, 1,
                           attempt.settled)
    valid = verdict(cluster, attempt.settled, lost, attempt.reason)
    values: dict[str, Any] = {
        **head_values(spec),
        "window": str(p["window"]),
        "window_hit": attempt.window_hit,
        "outcome": outcome,
        "client_outcome": handle.outcome() if handle is not None else "not-submitted",
        "fault_at_ms": probe.fault_at,
        "leader_ms": probe.since_fault(probe.leader_at),
        "hw_ms": probe.since_fault(probe.hw_at),
        "abort_ms": probe.since_fault(probe.txn_closed_at) if outcome == "aborted" else None,
        "unavailable_ms": probe.since_fault(probe.available_at),
        "recovery_ms": probe.since_fault(probe.recovered_at),
        "records_aborted": aborted_records,
        "records_truncated": probe.truncated_offsets,
        "records_rolled_back": aborted_records + probe.truncated_offsets,
        "acked_lost": lost,
        **tail_values(cluster, spec, valid, wall_ms),
    }
    return {c.name: values[c.name] for c in COLUMNS}


FAILOVER = Experiment(
    name="failover", doc=__doc__ or "", params=PARAMS, columns=COLUMNS, run=run_failover)
"""The failover experiment."""
