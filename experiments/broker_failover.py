"""The broker-failover experiment: a broker (or a zone of them) fails under produce load.

3 controllers and ``brokers`` brokers with their own lifecycles (heartbeats,
fencing); one topic of ``partitions`` partitions, replication factor 3,
``min.insync.replicas`` 2, clean election only. One idempotent acks=all
producer per partition writes ``records`` numbered records, one per batch,
losing ``response-loss-pct`` percent of its answers (so it retries). Once
every broker is unfenced and the load runs, the fault hits:

============  =================================================================
``crash``     one broker crashes (its session expires: fenced after 9,000 ms)
``isolate``   one broker is cut off the network (fenced the same way; it keeps
              running and must stop acting as leader)
``shutdown``  one broker shuts down in a controlled way (wantShutDown: its
              leaderships move first, then it is fenced)
``zone``      ``zone-size`` brokers (consecutive ids, as if in one rack) crash
              at once
``cascade``   ``zone-size`` brokers (consecutive ids) shut down in a controlled
              way one after another, each once the previous one has stopped;
              not in the default grid (``--param scenario=cascade``)
============  =================================================================

After ``down-ms`` the brokers come back (restart, or heal; a broker still in
its controlled shutdown is restarted once it has stopped; in ``cascade`` they
return one by one, ``down-ms`` apart, in the order they went down), the
producers finish and the cluster settles. A row measures, from the fault: the time until
a committed image fences the broker (``fence_ms``; for ``zone``, the last of
them), until no partition names a failed broker as leader (``leaders_ms``),
the produce unavailability of every partition (the longest wait for an
acknowledgement after the fault, ``unavailable_ms``), the PartitionChangeRecords
committed after the fault, and, read back by consuming every partition at the
end: acknowledged records lost (0 with acks=all, min ISR 2 and clean election)
and records written twice (0 with idempotence). The broker invariants
(sim/invariants/brokers.py) are checked online throughout, as in every run.

``metadata-version`` is the metadata.version the cluster is bootstrapped at
(default 4.0-IV0). From 4.1-IV0 it starts with eligible leader replicas on
(KIP-966, as Kafka formats a cluster; the ``elr`` column), and that is what
``--param metadata-version=4.0-IV0,4.1-IV0`` compares. With ELR off the ISR
never empties: the last member stays in it, and a partition that lost every
replica waits, leaderless, for that one broker (clean election only). With
ELR on a replica that leaves an ISR smaller than min.insync.replicas (2 here)
becomes an eligible leader replica, the ISR may empty, and the first eligible
replica to return leads. Eligibility survives only a clean shutdown: a broker
that crashed registers again uncleanly and leaves every ELR, so in ``zone``
(crashes) ELR changes little; ``cascade`` with ``zone-size`` 3 shows the
difference. Of three replicas that shut down in turn, the first leaves an ISR
of 3 (still min ISR: not eligible), the second leaves an ISR of 2 (eligible),
the third was the last leader. They return in that order: without ELR the
partition has no leader until the third is back; with ELR the second leads
on its return (``elr_elections``), a ``down-ms`` earlier. ``leaderless_partitions``
and ``leaderless_max_ms`` show the difference, ``unavailable_ms`` its cost to
the producers. Nothing acknowledged may be lost either way: an eligible
replica left the ISR while it still met min ISR, so it holds every record
acknowledged with acks=all.

Below 3.6-IV1 no metadata transaction can be written: ``mode`` transactional
is refused there before any run, and the topic is set up non-atomically.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from broker.config import BrokerConfig
from controller.handle import OperationStatus
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from controller.operations.elr import elr_enabled
from controller.write_mode import WriteMode
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
from experiments.grid import check_levels
from experiments.model import Column, Experiment, ExperimentError, Param, Row, RunSpec
from metadata.delta import TOPIC_RESOURCE
from metadata.image import MetadataImage, PartitionRegistration
from metadata.schema import PartitionChangeRecord
from metadata.versions import LATEST_PRODUCTION, release_name, supports_transactions
from sim.clients import Producer, consume
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import Crash, Heal, Isolate, Restart, Shutdown
from sim.seeds import named_random
from sim.settings import MAX_DURATION_MS, SettingError, parse_settings
from sim.startup import start_cluster
from sim.world import Monitor, NodeSlot, Simulation

SCENARIOS = ("crash", "isolate", "shutdown", "zone", "cascade")
"""What happens to the broker(s)."""
DEFAULT_SCENARIOS = SCENARIOS[:4]
"""The scenarios a sweep runs unless told (``cascade`` is asked for by name, so that the
default grid, and so every default row, stays as it was before it existed)."""
TOPIC = "load"
"""The topic the producers write."""
MAX_RECORDS = 100_000
"""The most records one producer writes."""
CONTROLLED_SHUTDOWN_WAIT_MS = BrokerConfig().controlled_shutdown_timeout_ms + 1_000
"""How long a shut-down broker may take to stop before it is restarted (its controlled
shutdown gives up after controlled_shutdown_timeout_ms)."""

PARAMS: tuple[Param, ...] = (
    Param("scenario", str, DEFAULT_SCENARIOS, "what happens to the broker(s)",
          choices=SCENARIOS),
    Param("mode", str, MODES, "write mode of the controller's operations (a fence of many "
                              "partitions is a multi-batch write)", choices=MODES),
    cluster_param("metadata-version", (release_name(LATEST_PRODUCTION),),
                  "metadata.version the cluster is bootstrapped at (from 4.1-IV0 with "
                  "eligible leader replicas on; transactional mode needs 3.6-IV1)"),
    cluster_param("controllers", (3,), "controllers (voters)"),
    cluster_param("brokers", (5,), "brokers", minimum=3),
    *CLUSTER_PARAMS,
    Param("partitions", int, (20,), "partitions of the topic (RF 3, min ISR 2)", minimum=1,
          maximum=10_000),
    Param("records", int, (40,), "records each partition's producer writes, one per batch",
          minimum=1, maximum=MAX_RECORDS),
    Param("response-loss-pct", int, (10,), "percent of produce answers lost on the way back",
          minimum=0, maximum=90),
    Param("zone-size", int, (2,), "zone and cascade scenarios: brokers that crash together "
                                  "(zone) or shut down in turn (cascade)", minimum=1,
          maximum=50),
    Param("down-ms", int, (15_000,), "how long the broker(s) stay down or cut off (cascade: "
                                     "also the time between two returns)",
          minimum=0, maximum=MAX_DURATION_MS),
    Param("timeout-ms", int, (180_000,), "simulated time limit after the brokers return",
          minimum=1000, maximum=MAX_DURATION_MS),
    MUTATIONS_PARAM,
)

COLUMNS: tuple[Column, ...] = (
    *HEAD_COLUMNS,
    Column("failed_brokers", "long[]", "the brokers the fault hit"),
    Column("fault_at_ms", "long", "simulated time of the fault"),
    Column("fence_ms", "long", "fault -> a committed image fences every failed broker",
           nullable=True),
    Column("leaders_ms", "long", "fault -> no partition names a failed broker as leader",
           nullable=True),
    Column("moved_leaders", "long", "partitions the failed brokers led at the fault"),
    Column("unavailable_ms", "long[]", "per partition: the longest wait for an "
                                       "acknowledgement after the fault"),
    Column("unavailable_max_ms", "long", "largest of unavailable_ms"),
    Column("unavailable_p50_ms", "long", "median of unavailable_ms"),
    Column("partition_changes", "long", "PartitionChangeRecords committed after the fault"),
    Column("acked", "long", "records acknowledged to the producers"),
    Column("produce_failures", "long", "batches that failed after their retries"),
    Column("records_lost", "long", "acknowledged records missing from the final logs "
                                   "(must be 0; null when an invariant stopped the run "
                                   "before it finished)", nullable=True),
    Column("duplicates", "long", "records present twice in the final logs (must be 0; "
                                 "null when an invariant stopped the run)", nullable=True),
    Column("metadata_version", "string", "the metadata.version the cluster was bootstrapped "
                                         "at"),
    Column("elr", "bool", "eligible leader replicas were on (KIP-966: "
                          "eligible.leader.replicas.version 1, from 4.1-IV0 by default)"),
    Column("leaderless_partitions", "long", "partitions that had no leader after the fault "
                                            "(ISR emptied, or its last member down)"),
    Column("leaderless_max_ms", "long", "the longest a partition had no leader after the "
                                        "fault (to the run's end if it never got one)"),
    Column("elr_elections", "long", "leaders elected from the ELR after the fault: a "
                                    "returning eligible replica of a partition with no ISR"),
    *TAIL_COLUMNS,
)


class FenceWatch(Monitor):
    """Times, from the fault, when the committed state fences the failed brokers and when
    no partition names one of them as leader; and the partitions without a leader, for how
    long, and the leaders elected from the ELR (read from the controllers' committed
    images, looked at only when the committed log grew)."""

    def __init__(self) -> None:
        self.cluster: KRaftCluster | None = None
        self.failed: tuple[int, ...] = ()
        self.fault_at = -1
        self.fence_at: int | None = None
        self.leaders_at: int | None = None
        self.leaderless_since: dict[int, int] = {}
        """Partition -> when it was first seen without a leader (while it has none)."""
        self.leaderless: set[int] = set()
        self.leaderless_max_ms = 0
        self.elr_elections = 0
        self._partitions: dict[int, PartitionRegistration] = {}
        self._seen_end = -1

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """See the class docs."""
        cluster = self.cluster
        if cluster is None or self.fault_at < 0:
            return
        if cluster.history.end == self._seen_end:
            return
        active = cluster.active_controller()
        if active is None or active.fault is not None:
            return
        self._seen_end = cluster.history.end
        image = active.committed_image()
        if self.fence_at is None and all(
                (reg := image.brokers.get(b)) is not None and reg.fenced for b in self.failed):
            self.fence_at = sim.now
        if self.leaders_at is None and not led_by(image, self.failed):
            self.leaders_at = sim.now
        self._leaders(image, sim.now)

    def _leaders(self, image: MetadataImage, now: int) -> None:
        topic = image.topic(TOPIC)
        if topic is None:
            return
        for partition, reg in topic.partitions.items():
            before = self._partitions.get(partition)
            if before is reg:
                continue
            self._partitions[partition] = reg
            if reg.leader < 0:
                self.leaderless.add(partition)
                self.leaderless_since.setdefault(partition, now)
                continue
            since = self.leaderless_since.pop(partition, None)
            if since is not None:
                self.leaderless_max_ms = max(self.leaderless_max_ms, now - since)
            if before is not None and before.leader < 0 and not before.isr \
                    and reg.leader in (before.eligible_leader_replicas or ()):
                self.elr_elections += 1

    def finish(self, now: int) -> None:
        """Count the partitions still without a leader at the run's end."""
        for since in self.leaderless_since.values():
            self.leaderless_max_ms = max(self.leaderless_max_ms, now - since)


def led_by(image: MetadataImage, brokers: Sequence[int]) -> int:
    """Partitions of the experiment's topic whose leader is one of ``brokers``."""
    topic = image.topic(TOPIC)
    if topic is None:
        return 0
    return sum(reg.leader in brokers for reg in topic.partitions.values())


def broker_config(spec: RunSpec) -> ClusterConfig:
    """The run's cluster: its cluster parameters, its seed, and broker lifecycles on."""
    words = [f"{name}={spec.params[name]}" for name in CLUSTER_SETTING_PARAMS
             if name in spec.params]
    try:
        config = parse_settings([*words, f"seed={spec.seed}", "heartbeats=on"])
    except SettingError as exc:
        raise ExperimentError(f"parameter {exc.key}: {exc.problem}") from None
    check_levels({name: (spec.params[name],) for name in ("mode", "metadata-version")
                  if name in spec.params})
    return config


def run_broker_failover(spec: RunSpec, trace_out: IO[bytes] | None = None) -> Row:
    """Run one broker-failover scenario; the row's columns are :data:`COLUMNS`."""
    started = time.perf_counter()
    p = spec.params
    rng = named_random(spec.seed, "broker-failover")
    watch = FenceWatch()
    cluster = KRaftCluster(broker_config(spec), trace_out, [watch])
    watch.cluster = cluster
    brokers = cluster.config.broker_ids
    partitions = int(p["partitions"])
    producers: list[Producer] = []
    failed: tuple[int, ...] = ()
    moved = changes = 0
    elr = False
    settled, reason = False, "the cluster did not start"
    if start_cluster(cluster, quorum_first=True) and _create_topic(cluster, partitions):
        loss = int(p["response-loss-pct"]) / 100
        producers = [Producer(cluster, f"p{i}", TOPIC, i, acks=-1, idempotent=True,
                              response_loss=loss) for i in range(partitions)]
        for producer in producers:
            producer.send(int(p["records"]))
        cluster.sim.run_for(rng.randint(500, 2_500))
        failed = _failed_brokers(spec, brokers, rng.randrange(len(brokers)))
        active = cluster.active_controller()
        if active is not None:
            moved = led_by(active.committed_image(), failed)
        watch.failed, watch.fault_at = failed, cluster.sim.now
        elr = elr_enabled(active.committed_image()) if active is not None else False
        history_end = cluster.history.end
        if spec.scenario == "cascade":
            _cascade(cluster, failed, int(p["down-ms"]))
        else:
            _apply(cluster, spec.scenario, failed)
            cluster.sim.run_for(int(p["down-ms"]))
            _recover(cluster, spec.scenario, failed)
        settled = cluster.run_until(
            lambda: all(pr.idle for pr in producers) and cluster.idle()
            and cluster.brokers_unfenced(), int(p["timeout-ms"]))
        reason = f"the producers or the cluster did not settle within {p['timeout-ms']} ms"
        changes = _partition_changes(cluster, history_end)
    watch.finish(cluster.sim.now)
    wall_ms = round((time.perf_counter() - started) * 1000)
    return _row(spec, cluster, watch, producers, failed, (moved, changes, elr),
                (settled, reason), wall_ms)


def _create_topic(cluster: KRaftCluster, partitions: int) -> bool:
    """The set-up, written as one transaction whatever the run's mode (atomic mode would
    refuse a topic larger than one batch; the mode is for the fence, not the set-up);
    non-atomically below 3.6-IV1, which has no metadata transactions (nothing fails
    during the set-up, so no prefix of it can be left)."""
    operations = (CreateTopics((NewTopic(TOPIC, partitions, 3),)),
                  IncrementalAlterConfigs(TOPIC_RESOURCE, TOPIC,
                                          (ConfigChange("min.insync.replicas", "2"),)))
    level = cluster.config.controller.bootstrap_metadata_version
    mode = WriteMode.TRANSACTIONAL if supports_transactions(level) else WriteMode.NON_ATOMIC
    for operation in operations:
        handle = cluster.submit(operation, mode)
        if not cluster.wait(handle) or handle.status is not OperationStatus.COMMITTED:
            return False
    return cluster.run_until(cluster.idle, 30_000)


def _failed_brokers(spec: RunSpec, brokers: tuple[int, ...], first: int) -> tuple[int, ...]:
    if spec.scenario not in ("zone", "cascade"):
        return (brokers[first],)
    size = min(int(spec.params["zone-size"]), len(brokers) - 1)
    return tuple(sorted(brokers[(first + i) % len(brokers)] for i in range(size)))


def _stopped(slot: NodeSlot) -> Callable[[], bool]:
    return lambda: not slot.running


def _cascade(cluster: KRaftCluster, failed: tuple[int, ...], down_ms: int) -> None:
    """Shut the brokers down in turn (each once the previous one has stopped), then, after
    ``down_ms``, restart them one by one, ``down_ms`` apart, in the same order."""
    sim = cluster.sim
    for broker in failed:
        sim.apply_fault(Shutdown(at_ms=sim.now, node=broker))
        cluster.run_until(_stopped(sim.slots[broker]), CONTROLLED_SHUTDOWN_WAIT_MS)
    for broker in failed:
        sim.run_for(down_ms)
        if not sim.slots[broker].running:
            sim.apply_fault(Restart(at_ms=sim.now, node=broker))


def _apply(cluster: KRaftCluster, scenario: str, failed: tuple[int, ...]) -> None:
    sim = cluster.sim
    for broker in failed:
        if scenario in ("crash", "zone"):
            sim.apply_fault(Crash(at_ms=sim.now, node=broker))
        elif scenario == "isolate":
            sim.apply_fault(Isolate(at_ms=sim.now, node=broker))
        else:
            sim.apply_fault(Shutdown(at_ms=sim.now, node=broker))


def _recover(cluster: KRaftCluster, scenario: str, failed: tuple[int, ...]) -> None:
    sim = cluster.sim
    if scenario == "isolate":
        sim.apply_fault(Heal(at_ms=sim.now))
        return
    if scenario == "shutdown":  # a controlled shutdown may still be moving leaders away
        cluster.run_until(lambda: all(not sim.slots[b].running for b in failed),
                          CONTROLLED_SHUTDOWN_WAIT_MS)
    for broker in failed:
        if not sim.slots[broker].running:
            sim.apply_fault(Restart(at_ms=sim.now, node=broker))


def _partition_changes(cluster: KRaftCluster, since: int) -> int:
    count = 0
    for base in cluster.history.bases:
        batch = cluster.history.batches[base]
        if batch.end_offset > since:
            count += sum(isinstance(r, PartitionChangeRecord) for r in batch.records)
    return count


def _unavailable(producer: Producer, fault_at: int, end: int) -> int:
    """The longest wait for an acknowledgement after the fault (to the run's end if the
    producer still had records to send)."""
    times = [a.at_ms for a in producer.acknowledged if a.at_ms >= fault_at]
    last, longest = fault_at, 0
    for at in times:
        longest = max(longest, at - last)
        last = at
    if not producer.idle:
        longest = max(longest, end - last)
    return longest


def _final_logs(cluster: KRaftCluster, producers: list[Producer]) -> tuple[int, int]:
    """(acknowledged records missing, records present twice), read by consuming."""
    lost = duplicates = 0
    for producer in producers:
        values = consume(cluster, TOPIC, producer.partition)
        if values is None:  # no running leader: unreadable, judged by the settle verdict
            continue
        held = values
        seen = set(held)
        duplicates += len(held) - len(seen)
        lost += sum(v not in seen for ack in producer.acknowledged for v in ack.values)
    return lost, duplicates


def _row(spec: RunSpec, cluster: KRaftCluster, watch: FenceWatch, producers: list[Producer],
         failed: tuple[int, ...], counts: tuple[int, int, bool], settled: tuple[bool, str],
         wall_ms: int) -> Row:
    moved, changes, elr = counts
    stopped = cluster.sim.violation is not None
    lost, duplicates = (None, None) if stopped else _final_logs(cluster, producers)
    fault_at = watch.fault_at
    gaps = [_unavailable(pr, fault_at, cluster.sim.now) for pr in producers] \
        if fault_at >= 0 else []
    valid = verdict(cluster, settled[0], 0, settled[1])
    if valid[0] != "false" and (lost or duplicates):
        assert lost is not None and duplicates is not None
        valid = ("false", "AckedWriteDurable" if lost else "NoDuplicates",
                 f"{lost} acknowledged record(s) lost, {duplicates} duplicate(s) in the "
                 f"final logs")
    values: dict[str, Any] = {
        **head_values(spec),
        "failed_brokers": list(failed),
        "fault_at_ms": fault_at,
        "fence_ms": None if watch.fence_at is None else watch.fence_at - fault_at,
        "leaders_ms": None if watch.leaders_at is None else watch.leaders_at - fault_at,
        "moved_leaders": moved,
        "unavailable_ms": gaps,
        "unavailable_max_ms": max(gaps, default=0),
        "unavailable_p50_ms": round(statistics.median(gaps)) if gaps else 0,
        "partition_changes": changes,
        "acked": sum(len(a.values) for pr in producers for a in pr.acknowledged),
        "produce_failures": sum(len(pr.failed) for pr in producers),
        "records_lost": lost,
        "duplicates": duplicates,
        "metadata_version": release_name(cluster.config.controller.bootstrap_metadata_version),
        "elr": elr,
        "leaderless_partitions": len(watch.leaderless),
        "leaderless_max_ms": watch.leaderless_max_ms,
        "elr_elections": watch.elr_elections,
        **tail_values(cluster, spec, valid, wall_ms),
    }
    return {c.name: values[c.name] for c in COLUMNS}


BROKER_FAILOVER = Experiment(
    name="broker-failover", doc=__doc__ or "", params=PARAMS, columns=COLUMNS,
    run=run_broker_failover)
"""The broker-failover experiment."""
