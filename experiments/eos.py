"""The eos experiment: a consume-transform-produce loop under coordinator, leader and producer
failures, with transactions (exactly once) or with idempotence only.

3 controllers and ``brokers`` brokers with their own lifecycles; topic ``in``
(one partition per loop, filled with ``records`` records by an idempotent
producer), topic ``out`` of ``output-partitions`` partitions, RF 3 and
min.insync.replicas 2 everywhere (``__transaction_state`` and
``__consumer_offsets`` too). Each loop (sim/eos_clients.py) reads its input
partition read_committed from its group's committed offset, writes one
output per input record and commits the outputs with the consumed offsets
(``sendOffsetsToTransaction``) in one transaction of at most ``batch`` input
records. With ``delivery=idempotence-only`` it writes idempotent outputs
and then commits the offsets with a plain OffsetCommit, as an application
without transactions does.

The fault hits in the middle of the work: 0-600 ms after a random number of
the loops' transactions (at least one, not the last) committed:

====================  ==========================================================
``coordinator``       the transaction coordinator of the loops' transactional id
                      crashes (idempotence only: the group coordinator)
``partition-leader``  the leader of an output partition crashes
``producer``          every loop's application process crashes and restarts
                      (a new producer instance, from the committed offset)
``none``              nothing: the baseline
====================  ==========================================================

A crashed broker restarts after ``down-ms``. The run ends when every loop has
committed all its input. A row counts the transactions, the client's round
trips (every request, FindCoordinator and retries included), the
CONCURRENT_TRANSACTIONS answers (the classic protocol's bounces while the
previous transaction's markers are written), the commit latencies (begin ->
commit acknowledged), and, reading ``out`` back read_committed: duplicates,
inputs without output, and aborted reads. With transactions the three must be
0 (and ExactlyOnce, like every producer-transaction invariant, is checked
online); with idempotence only, duplicates are what the experiment shows.

``protocol`` is the producer client's transaction protocol: ``classic``
(Kafka's, KIP-98) or ``pre-registration`` (the seed-002 proposal); it has no
effect with ``delivery=idempotence-only`` (no transactions).

Every run of one configuration (cluster, delivery, protocol, loops, records,
batch, output partitions) starts from the same world, booted and set up
(topics made, coordinators started, all idle) with a seed of its own, then
reseeded with the run's seed (:mod:`experiments.boots`): a sweep sets up
each configuration once and forks it for every run.
"""

from __future__ import annotations

import time
from typing import IO, Any

from broker.txn.mutations import TxnMutation
from experiments.boots import Boots, go_on_as
from experiments.broker_failover import broker_config
from experiments.common import (
    CLUSTER_PARAMS,
    CLUSTER_SETTING_PARAMS,
    HEAD_COLUMNS,
    MODES,
    MUTATIONS_PARAM,
    TAIL_COLUMNS,
    cluster_param,
    head_values,
    tail_values,
    verdict,
)
from experiments.model import Column, Experiment, ExperimentError, Param, Row, RunSpec
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_clients import PROTOCOLS, supported_protocols
from sim.eos_world import OUTPUT_TOPIC, EosCheck, EosSettings, EosWorld, eos_monitors
from sim.faults import Crash, Restart
from sim.seeds import named_random
from sim.settings import MAX_DURATION_MS, mutation_names
from sim.startup import start_cluster

SCENARIOS = ("coordinator", "partition-leader", "producer", "none")
"""What fails."""
DELIVERIES = ("exactly-once", "idempotence-only")
"""Transactions with the offsets inside, or idempotent outputs then a plain offset commit."""

PARAMS: tuple[Param, ...] = (
    Param("scenario", str, SCENARIOS, "what fails", choices=SCENARIOS),
    Param("mode", str, ("transactional",), "write mode of the controller's operations",
          choices=MODES),
    Param("delivery", str, DELIVERIES, "exactly-once (transactions) or idempotence-only",
          choices=DELIVERIES),
    Param("protocol", str, supported_protocols(), "the producer's transaction protocol: "
          "classic (KIP-98) or pre-registration (seed 002)", choices=PROTOCOLS),
    cluster_param("controllers", (3,), "controllers (voters)"),
    cluster_param("brokers", (3,), "brokers", minimum=3),
    *CLUSTER_PARAMS,
    Param("loops", int, (1,), "consume-transform-produce loops (input partitions)",
          minimum=1, maximum=20),
    Param("records", int, (30,), "input records per loop", minimum=1, maximum=10_000),
    Param("batch", int, (5,), "input records one transaction consumes at most", minimum=1,
          maximum=1_000),
    Param("output-partitions", int, (2,), "partitions of the output topic", minimum=1,
          maximum=100),
    Param("down-ms", int, (12_000,), "how long a crashed broker stays down",
          minimum=0, maximum=MAX_DURATION_MS),
    Param("timeout-ms", int, (180_000,), "simulated time limit for the loops to finish",
          minimum=1000, maximum=MAX_DURATION_MS),
    MUTATIONS_PARAM,
)

COLUMNS: tuple[Column, ...] = (
    *HEAD_COLUMNS,
    Column("delivery", "string", "exactly-once or idempotence-only"),
    Column("protocol", "string", "the producer's transaction protocol"),
    Column("failed_broker", "long", "the broker that crashed (null: none)", nullable=True),
    Column("fault_at_ms", "long", "simulated time of the fault"),
    Column("input_records", "long", "input records of every loop"),
    Column("transactions", "long", "transactions committed (idempotence only: offset "
                                   "commits)"),
    Column("aborted_transactions", "long", "transactions the loops saw aborted"),
    Column("restarts", "long", "producer instances started after the first (crash or "
                               "fencing)"),
    Column("round_trips", "long", "requests the loops' producers sent (FindCoordinator, "
                                  "retries and InitProducerId included)"),
    Column("concurrent_transactions_bounces", "long", "CONCURRENT_TRANSACTIONS answers to "
                                                      "the producers"),
    Column("unstable_offset_bounces", "long", "OffsetFetch answers UNSTABLE_OFFSET_COMMIT "
                                              "(require_stable)"),
    Column("commit_latency_ms", "long[]", "per transaction: begin -> commit acknowledged"),
    Column("processing_ms", "long", "loops started -> the last input committed (to the run's "
                                    "end if unfinished)"),
    Column("outputs", "long", "output records a read_committed consumer returns (null: the "
                              "run was stopped)", nullable=True),
    Column("duplicates", "long", "outputs beyond the first of an input record (null: the run "
                                 "was stopped)", nullable=True),
    Column("missing", "long", "committed input records without an output (null: the run was "
                              "stopped)", nullable=True),
    Column("aborted_reads", "long", "records read_committed returned from aborted "
                                    "transactions (null: the run was stopped)", nullable=True),
    *TAIL_COLUMNS,
)


_Booted = tuple[KRaftCluster, EosWorld, bool]
BOOTS: Boots[_Booted] = Boots("eos", broker_config, (
    *CLUSTER_SETTING_PARAMS, "delivery", "protocol", "loops", "records", "batch",
    "output-partitions"))
"""Set-up worlds by configuration: a sweep's runs fork them instead of setting up."""


def _settings(spec: RunSpec) -> EosSettings:
    p = spec.params
    mutations = frozenset(TxnMutation(m) for m in mutation_names(str(p["mutations"]))
                          if m in {t.value for t in TxnMutation})
    return EosSettings(loops=int(p["loops"]), records=int(p["records"]),
                       batch=int(p["batch"]), output_partitions=int(p["output-partitions"]),
                       transactional=p["delivery"] == "exactly-once",
                       protocol=str(p["protocol"]), mutations=mutations)


def _set_up(config: ClusterConfig, settings: EosSettings,
            trace_out: IO[bytes] | None) -> _Booted:
    """The cluster booted, the world's topics and internal topics made, all of it idle."""
    txn, eos = eos_monitors()
    monitors = [txn, eos] if settings.transactional else [txn]
    cluster = KRaftCluster(config, trace_out, monitors)
    world = EosWorld(cluster, settings, txn, eos if settings.transactional else None)
    ready = start_cluster(cluster, quorum_first=True) and world.setup() and \
        cluster.run_until(cluster.idle, 30_000)
    return cluster, world, ready


def run_eos(spec: RunSpec, trace_out: IO[bytes] | None = None) -> Row:
    """Run one eos scenario; the row's columns are :data:`COLUMNS`."""
    started = time.perf_counter()
    p = spec.params
    protocol = str(p["protocol"])
    if protocol not in supported_protocols():
        raise ExperimentError(f"protocol {protocol!r} is not built in this version; choose "
                              f"from {', '.join(supported_protocols())}")
    rng = named_random(spec.seed, "eos")
    settings = _settings(spec)
    cluster, world, ready = BOOTS.world(
        spec, lambda config: _set_up(config, settings, trace_out), fresh=trace_out is not None)
    go_on_as(cluster, spec)
    failed: int | None = None
    fault_at = began = -1
    finished_at: int | None = None
    settled, reason = False, "the cluster did not start"
    if ready:
        began = cluster.sim.now
        world.start()
        txns = -(-settings.records // settings.batch)
        target = rng.randint(1, max(1, txns - 1))
        cluster.run_until(lambda: sum(loop.committed_txns for loop in world.loops) >= target,
                          int(p["timeout-ms"]))
        cluster.sim.run_for(rng.randint(0, 600))
        fault_at = cluster.sim.now
        failed = _apply(world, spec.scenario, rng.randrange(settings.output_partitions))
        if failed is not None:
            cluster.sim.run_until_true(lambda: cluster.sim.violation is not None,
                                       int(p["down-ms"]))
            cluster.sim.apply_fault(Restart(at_ms=cluster.sim.now, node=failed))
        settled = cluster.run_until(world.finished, int(p["timeout-ms"]))
        reason = f"the loops did not finish within {p['timeout-ms']} ms"
        if settled:
            finished_at = cluster.sim.now
            cluster.sim.run_for(2_000)  # the last markers
            # the read-back is a read_committed consumer: it waits for the outputs' leaders
            cluster.run_until(world.readable, int(p["timeout-ms"]))
    world.stop()
    wall_ms = round((time.perf_counter() - started) * 1000)
    end = finished_at if finished_at is not None else cluster.sim.now
    return _row(spec, cluster, world, (failed, fault_at, end - began if began >= 0 else 0),
                (settled, reason), wall_ms)


def _apply(world: EosWorld, scenario: str, partition: int) -> int | None:
    """Start the fault; the broker that crashed, if one did."""
    cluster, sim = world.cluster, world.cluster.sim
    if scenario == "producer":
        for loop in world.loops:
            loop.crash_producer()
        return None
    if scenario == "coordinator":
        name = world.loops[0].name
        broker = world.txns.find_coordinator(name) if world.settings.transactional \
            else world.groups.find_coordinator(name)
    elif scenario == "partition-leader":
        broker = cluster.partition_leader(OUTPUT_TOPIC, partition)
    else:
        return None
    if broker is None:
        return None
    sim.apply_fault(Crash(at_ms=sim.now, node=broker))
    return broker


def _row(spec: RunSpec, cluster: KRaftCluster, world: EosWorld,
         fault: tuple[int | None, int, int], settled: tuple[bool, str], wall_ms: int) -> Row:
    failed, fault_at, processing_ms = fault
    stopped = cluster.sim.violation is not None
    check: EosCheck | None = None if stopped else world.final_check()
    valid = verdict(cluster, settled[0], 0, settled[1])
    if valid[0] == "true" and check is not None and not check.readable:
        valid = ("unknown", None, f"an output partition was not readable to its end (no "
                                  f"leader answering, or its high watermark or last stable "
                                  f"offset short of its log end) within "
                                  f"{spec.params['timeout-ms']} ms of the end")
    if valid[0] == "true" and check is not None:
        if world.settings.transactional and (check.duplicates or check.missing or
                                             check.aborted_reads):
            valid = ("false", "ExactlyOnce",
                     f"read back read_committed: {check.duplicates} duplicate(s), "
                     f"{check.missing} input(s) without output, {check.aborted_reads} "
                     f"aborted read(s)")
        elif check.missing:
            valid = ("false", "AtLeastOnce", f"{check.missing} committed input(s) without "
                                             f"output")
    loops = world.loops
    values: dict[str, Any] = {
        **head_values(spec),
        "delivery": str(spec.params["delivery"]),
        "protocol": str(spec.params["protocol"]),
        "failed_broker": failed,
        "fault_at_ms": fault_at,
        "input_records": world.settings.records * world.settings.loops,
        "transactions": sum(loop.committed_txns for loop in loops),
        "aborted_transactions": sum(loop.aborted_txns for loop in loops),
        "restarts": sum(loop.instances - 1 for loop in loops),
        "round_trips": sum(loop.round_trips for loop in loops),
        "concurrent_transactions_bounces": sum(loop.errors("CONCURRENT_TRANSACTIONS")
                                               for loop in loops),
        "unstable_offset_bounces": sum(loop.unstable_bounces for loop in loops),
        "commit_latency_ms": [ms for loop in loops for ms in loop.commit_latencies],
        "processing_ms": processing_ms,
        "outputs": None if check is None else check.outputs,
        "duplicates": None if check is None else check.duplicates,
        "missing": None if check is None else check.missing,
        "aborted_reads": None if check is None else check.aborted_reads,
        **tail_values(cluster, spec, valid, wall_ms),
    }
    return {c.name: values[c.name] for c in COLUMNS}


EOS = Experiment(name="eos", doc=__doc__ or "", params=PARAMS, columns=COLUMNS, run=run_eos)
"""The eos experiment."""
