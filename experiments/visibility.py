"""The visibility experiment: when does each broker see an operation, and ever a part of it?

3 controllers and a few brokers; a client submits ``ops`` CreateTopics, each
filling between 1 and ``max-batches`` batches, at random moments, written in
``mode`` (transactional, non-atomic or atomic). Scenarios shape the brokers:

==========  ================================================================
``steady``  no extra delay: the baseline
``lag``     every broker gets its own fetch lag, uniform in [0, max-lag-ms],
            on every link from a controller
``pause``   each broker is paused (messages wait, timers stand still) up to
            twice, for up to pause-max-ms, while the operations are written
==========  ================================================================

The row counts partial-visibility observations (a broker publishing an image
inside a multi-batch operation: an invariant violation in transactional mode,
Kafka's as-built behaviour in non-atomic mode), the visibility latency of
every operation on every broker (submit -> the first image that holds all of
it), the largest delta a broker buffered, and the refusals (atomic mode
refuses an operation larger than one batch).

Every run of one cluster configuration starts from the same booted cluster,
reseeded with the run's seed (:mod:`experiments.boots`): a sweep boots each
configuration once and forks it for every run. The ``lag`` scenario's delays
apply from the end of the boot.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from typing import IO, Any

import msgspec

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
from experiments.outcome import acked_lost
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import Pause
from sim.seeds import named_random
from sim.settings import MAX_DURATION_MS, MAX_FETCH_LAG_MS
from sim.startup import start_cluster
from sim.world import Monitor, NodeSlot, NodeStatus, Simulation

MAX_OPS = 1000
"""The most operations one visibility run submits."""
MAX_GAP_MS = 3_600_000
"""The longest wait between operations, and the longest pause: an hour."""
SCENARIOS = ("steady", "lag", "pause")
"""The scenarios: what the brokers suffer."""

PARAMS: tuple[Param, ...] = (
    Param("scenario", str, SCENARIOS, "what the brokers suffer", choices=SCENARIOS),
    Param("mode", str, MODES, "write mode of the operations", choices=MODES),
    cluster_param("controllers", (3,), "controllers (voters)"),
    cluster_param("brokers", (3,), "brokers (observers)", minimum=1),
    *CLUSTER_PARAMS,
    Param("ops", int, (4,), "operations the client submits", minimum=1, maximum=MAX_OPS),
    Param("max-batches", int, (8,), "an operation fills 1 to max-batches batches "
                                    "(max-batches x batch-records at most 1,000,000)",
          minimum=1, maximum=MAX_OPERATION_RECORDS),
    Param("gap-max-ms", int, (300,), "the client waits up to this long between operations",
          minimum=0, maximum=MAX_GAP_MS),
    Param("max-lag-ms", int, (200,), "lag scenario: the largest fetch lag of a broker (below "
                                     "the lag at which every fetch times out)",
          minimum=0, maximum=MAX_FETCH_LAG_MS),
    Param("pause-max-ms", int, (1000,), "pause scenario: the longest pause of a broker",
          minimum=1, maximum=MAX_GAP_MS),
    Param("timeout-ms", int, (30_000,), "simulated time limit after the last operation",
          minimum=1000, maximum=MAX_DURATION_MS),
    MUTATIONS_PARAM,
)

COLUMNS: tuple[Column, ...] = (
    *HEAD_COLUMNS,
    Column("operations", "long", "operations submitted"),
    Column("batches", "long", "batches the operations were written in"),
    Column("refusals", "long", "operations refused (atomic mode: too large for one batch)"),
    Column("committed", "long", "operations acknowledged as committed"),
    Column("aborted", "long", "transactions aborted in the committed log"),
    Column("partial_brokers", "long", "brokers that published at least one partial image"),
    Column("largest_delta", "long", "most records a broker buffered in one delta"),
    Column("broker_lag_ms", "long[]", "the extra fetch lag of each broker (index = broker id)"),
    Column("latency_ms", "long[]", "visibility latency of each committed operation on each "
                                   "broker, submit -> published whole (operation-major)"),
    Column("latency_p50_ms", "long", "median of latency_ms", nullable=True),
    Column("latency_max_ms", "long", "largest of latency_ms", nullable=True),
    Column("acked_lost", "long", "acknowledged operations missing from the final state "
                                 "(must be 0)"),
    *TAIL_COLUMNS,
)


class _Submitted(msgspec.Struct):
    handle: OperationHandle
    topic: str
    partitions: int
    epoch: int


class PartialWatch(Monitor):
    """Remembers which brokers published a partial image (as the checker judged it then)."""

    def __init__(self) -> None:
        self.cluster: KRaftCluster | None = None
        self.nodes: set[int] = set()
        self._seen = 0
        self._count = 0

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Look at the images published by the last event, if the count of partial ones grew."""
        if self.cluster is None:
            return
        txn = self.cluster.txn_invariants
        published = txn.on_publish
        if txn.partial_observations != self._count:
            self._count = txn.partial_observations
            for pub in published[self._seen:]:
                # the checker's own test, at the same moment, so the two never disagree
                if txn._span_containing(pub.image.offset) is not None:
                    self.nodes.add(pub.node_id)
        self._seen = len(published)


_Booted = tuple[KRaftCluster, PartialWatch, bool]
BOOTS: Boots[_Booted] = Boots("visibility", own_cluster_config, CLUSTER_SETTING_PARAMS)
"""Booted clusters by configuration: a sweep's runs fork them instead of booting."""


def _boot(config: ClusterConfig, trace_out: IO[bytes] | None) -> _Booted:
    watch = PartialWatch()
    cluster = KRaftCluster(config, trace_out, [watch])
    watch.cluster = cluster
    return cluster, watch, start_cluster(cluster, quorum_first=True)


def run_visibility(spec: RunSpec, trace_out: IO[bytes] | None = None) -> Row:
    """Run one visibility scenario; the row's columns are :data:`COLUMNS`."""
    started = time.perf_counter()
    p = spec.params
    rng = named_random(spec.seed, "visibility")
    brokers = int(p["brokers"])
    cluster, watch, up = BOOTS.world(spec, lambda config: _boot(config, trace_out),
                                     fresh=trace_out is not None)
    go_on_as(cluster, spec)
    lags = [0] * brokers
    if spec.scenario == "lag":
        lags = _apply_lag(cluster, rng, int(p["max-lag-ms"]))
    submitted: list[_Submitted] = []
    if up:
        settled = _workload(spec, cluster, rng, submitted)
        reason = f"the cluster did not settle within {p['timeout-ms']} ms"
    else:
        settled, reason = False, "the cluster did not start"
    wall_ms = round((time.perf_counter() - started) * 1000)
    return _row(spec, cluster, watch, submitted, lags, (settled, reason), wall_ms)


def _workload(spec: RunSpec, cluster: KRaftCluster, rng: random.Random,
              submitted: list[_Submitted]) -> bool:
    """Submit the operations at random moments; True once the cluster has settled."""
    p = spec.params
    brokers = int(p["brokers"])
    paused_until = cluster.sim.now
    if spec.scenario == "pause":
        paused_until = _schedule_pauses(cluster, rng, int(p["pause-max-ms"]),
                                        int(p["ops"]) * max(1, int(p["gap-max-ms"])))
    for index in range(int(p["ops"])):
        cluster.sim.run_for(rng.randint(0, int(p["gap-max-ms"])))
        partitions = partitions_for(rng.randint(1, int(p["max-batches"])),
                                    int(p["batch-records"]))
        topic = f"topic-{index}"
        active = cluster.active_controller()
        epoch = (active.claimed_epoch or 0) if active is not None else 0
        handle = cluster.submit(CreateTopics((NewTopic(topic, partitions, min(3, brokers)),)))
        submitted.append(_Submitted(handle, topic, partitions, epoch))
    return cluster.run_until(
        lambda: cluster.sim.now >= paused_until and not _paused(cluster) and cluster.idle(),
        int(p["timeout-ms"]) + max(0, paused_until - cluster.sim.now))


def _paused(cluster: KRaftCluster) -> bool:
    """Whether a node is still paused: the last resume may be due in this very millisecond,
    queued behind other events of it (and a paused broker does not count as lagging)."""
    return any(slot.status is NodeStatus.PAUSED for slot in cluster.sim.slots.values())


def _apply_lag(cluster: KRaftCluster, rng: random.Random, largest: int) -> list[int]:
    """Give every broker its own extra delay, up to ``largest`` ms, on links from controllers."""
    base = cluster.config.network
    lags = [rng.randint(0, largest) for _ in cluster.config.broker_ids]
    for broker, lag in zip(cluster.config.broker_ids, lags, strict=True):
        link = msgspec.structs.replace(base, latency_ms=base.latency_ms + lag)
        for controller in cluster.config.controller_ids:
            cluster.sim.network.set_link(controller, broker, link)
    return lags


def _schedule_pauses(cluster: KRaftCluster, rng: random.Random, longest: int,
                     span: int) -> int:
    """Up to two pauses per broker, starting within the next ``span`` ms; returns their end."""
    now = end = cluster.sim.now
    for broker in cluster.config.broker_ids:
        for _ in range(rng.randint(0, 2)):
            at = now + rng.randint(0, span)
            duration = rng.randint(1, longest)
            cluster.sim.schedule_fault(Pause(at_ms=at, node=broker, duration_ms=duration))
            end = max(end, at + duration)
    return end


def _latencies(cluster: KRaftCluster, submitted: list[_Submitted]) -> list[int]:
    """Per committed operation, per broker: submit -> first image holding all of it."""
    firsts: dict[int, list[tuple[int, int]]] = {b: [] for b in cluster.config.broker_ids}
    for pub in cluster.txn_invariants.on_publish:
        if pub.node_id in firsts:
            firsts[pub.node_id].append((pub.image.offset, pub.at_ms))
    out = []
    for op in submitted:
        handle = op.handle
        if handle.status is not OperationStatus.COMMITTED or handle.first_offset < 0:
            continue
        for broker in cluster.config.broker_ids:
            seen = next((at for offset, at in firsts[broker] if offset >= handle.last_offset),
                        None)
            if seen is not None:
                out.append(seen - handle.submitted_at)
    return out


def _row(spec: RunSpec, cluster: KRaftCluster, watch: PartialWatch,
         submitted: list[_Submitted], lags: list[int], settled: tuple[bool, str],
         wall_ms: int) -> Row:
    handles = [op.handle for op in submitted]
    latencies = _latencies(cluster, submitted)
    loaders = [cluster.loader(b) for b in cluster.config.broker_ids]
    lost = sum(acked_lost(cluster, op.handle, op.epoch, op.topic, op.partitions, settled[0])
               for op in submitted)
    valid = verdict(cluster, settled[0], lost, settled[1])
    values: dict[str, Any] = {
        **head_values(spec),
        "operations": len(handles),
        "batches": sum(h.batch_count for h in handles),
        "refusals": sum(h.first_offset < 0 and h.error is not None for h in handles),
        "committed": sum(h.status is OperationStatus.COMMITTED for h in handles),
        "aborted": sum(t.outcome == "aborted"
                       for t in cluster.txn_invariants.reference.transactions),
        "partial_brokers": len(watch.nodes),
        "largest_delta": max((ld.batch_loader.largest_delta for ld in loaders if ld), default=0),
        "broker_lag_ms": lags,
        "latency_ms": latencies,
        "latency_p50_ms": round(statistics.median(latencies)) if latencies else None,
        "latency_max_ms": max(latencies) if latencies else None,
        "acked_lost": lost,
        **tail_values(cluster, spec, valid, wall_ms),
    }
    return {c.name: values[c.name] for c in COLUMNS}


VISIBILITY = Experiment(
    name="visibility", doc=__doc__ or "", params=PARAMS, columns=COLUMNS, run=run_visibility)
"""The visibility experiment."""
