"""A consume-transform-produce world: topics, coordinators, input load, loops and the verdict.

:class:`EosWorld` sets up, on a running cluster with brokers: topic ``in``
(one partition per loop) filled by idempotent acks=all producers, topic
``out`` (RF 3, min.insync.replicas 2), ``__transaction_state`` and
``__consumer_offsets``, and one :class:`~sim.eos_clients.EosLoop` per input
partition (its group and transactional id ``loop<i>``). :meth:`final_check`
reads the outputs back read_committed and counts duplicates, missing outputs
and aborted reads. The monitors (:func:`eos_monitors`) must be given to the
cluster when it is made, so that they see every event.
"""

from __future__ import annotations

import msgspec

from broker.replica import Replica
from broker.txn.coordinator import TxnCoordinatorConfig
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from broker.txn.mutations import TxnMutation
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE
from sim.clients import Producer
from sim.cluster import KRaftCluster
from sim.eos_clients import EosLoop, EosProducer, input_label
from sim.group_cluster import GroupCluster
from sim.invariants.producer_txn import ExactlyOnceInvariant, ProducerTxnInvariants, txn_key
from sim.txn_cluster import TxnCluster

INPUT_TOPIC = "in"
OUTPUT_TOPIC = "out"


class EosSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the world runs."""

    loops: int = 1
    records: int = 30
    """Input records per input partition."""
    batch: int = 5
    """Input records one transaction consumes at most."""
    output_partitions: int = 2
    transactional: bool = True
    """False: the idempotence-only application (no transactions)."""
    protocol: str = "classic"
    txn_timeout_ms: int = 10_000
    mutations: frozenset[TxnMutation] = frozenset()


class EosCheck(msgspec.Struct, frozen=True):
    """The outputs read back read_committed at the end of a run."""

    outputs: int
    duplicates: int
    missing: int
    """Input records below the committed offset with no committed output."""
    aborted_reads: int
    """Records read_committed returned whose transaction aborted."""
    readable: bool
    """False when a partition had no leader to read from (see :meth:`EosWorld.readable`
    for what the run waits for before it reads)."""


def eos_monitors(lso_bound_ms: int = 60_000) -> tuple[ProducerTxnInvariants,
                                                     ExactlyOnceInvariant]:
    """The producer-transaction invariants and the exactly-once one that reads them."""
    txn = ProducerTxnInvariants(lso_bound_ms=lso_bound_ms)
    return txn, ExactlyOnceInvariant(txn)


class EosWorld:
    """See the module docs."""

    def __init__(self, cluster: KRaftCluster, settings: EosSettings,
                 txn_monitor: ProducerTxnInvariants, eos_monitor: ExactlyOnceInvariant | None,
                 coordinator_config: TxnCoordinatorConfig | None = None) -> None:
        self.cluster = cluster
        self.settings = settings
        self.txn_monitor = txn_monitor
        self.eos_monitor = eos_monitor
        config = coordinator_config or TxnCoordinatorConfig(
            num_partitions=3, abort_timed_out_interval_ms=1_000)
        self.txns = TxnCluster(cluster, config, settings.mutations,
                               on_transition=txn_monitor.transition)
        self.groups = GroupCluster(cluster, mutations=settings.mutations)
        self.loops: list[EosLoop] = []
        self.inputs: list[Producer] = []

    def setup(self) -> bool:
        """Create the topics and the internal topics; False if any failed."""
        c = self.cluster
        s = self.settings
        rf = min(3, len(c.config.broker_ids))
        for topic, partitions in ((INPUT_TOPIC, s.loops), (OUTPUT_TOPIC, s.output_partitions)):
            if not c.wait(c.submit(CreateTopics((NewTopic(topic, partitions, rf),)))) or \
                    not c.wait(c.submit(IncrementalAlterConfigs(
                        TOPIC_RESOURCE, topic,
                        (ConfigChange("min.insync.replicas", str(min(2, rf))),)))):
                return False
        return self.txns.start() and self.groups.start()

    def start(self) -> None:
        """Start the input producers and the loops."""
        s = self.settings
        for i in range(s.loops):
            producer = Producer(self.cluster, f"input{i}", INPUT_TOPIC, i, acks=-1,
                                idempotent=True, batch_size=5)
            producer.send(s.records)
            self.inputs.append(producer)
            loop = EosLoop(self.txns, self.groups, f"loop{i}", (INPUT_TOPIC, i), OUTPUT_TOPIC,
                           s.output_partitions, s.batch, s.transactional, s.protocol,
                           s.txn_timeout_ms, on_producer=self._hook)
            if self.eos_monitor is not None:
                self.eos_monitor.watch(loop.group_id, (INPUT_TOPIC, i), OUTPUT_TOPIC)
            self.loops.append(loop)
            loop.start()

    def _hook(self, producer: EosProducer) -> None:
        monitor, eos, sim = self.txn_monitor, self.eos_monitor, self.cluster.sim

        def sent(value: str, now: int) -> None:
            monitor.sent(value, now)
            if eos is not None:
                eos.sent(value, now)

        producer.on_initialized = lambda p: monitor.initialized(p.transactional_id, p.instance,
                                                                sim.now)
        producer.on_sent = sent
        loop_acked = producer.on_committed

        def committed(txn: str) -> None:
            monitor.commit_acknowledged(txn)
            if loop_acked is not None:
                loop_acked(txn)

        producer.on_committed = committed

    def finished(self) -> bool:
        """Every loop has consumed and committed all its input, with nothing in flight."""
        return all(loop.position == self.settings.records and not loop.busy
                   for loop in self.loops) and all(p.idle for p in self.inputs)

    def stop(self) -> None:
        """Stop the loops' polling."""
        for loop in self.loops:
            loop.stop()

    # ------------------------------------------------------------------ verdict
    def _output_leader(self, partition: int) -> Replica | None:
        """The replica that leads output ``partition`` and answers reads, if any."""
        c = self.cluster
        manager = c.replica_manager(c.partition_leader(OUTPUT_TOPIC, partition))
        found = manager.leader_replica(OUTPUT_TOPIC, partition) if manager is not None else None
        return None if found is None or isinstance(found, str) else found

    def readable(self) -> bool:
        """Every output partition has a leader that answers reads, whose high watermark
        has reached its log end and no transaction is open below it: what a
        read_committed consumer reading to the end waits for. (After a crash and an
        at-once restart the old incarnation's session lasts until it expires, and its
        leaderships with it; a new leader's high watermark moves once its followers
        fetch, and the markers of the last transactions land on it after that.)"""
        for partition in range(self.settings.output_partitions):
            leader = self._output_leader(partition)
            if leader is None:
                return False
            log = leader.log
            hw = log.high_watermark
            if hw < log.end_offset or log.txns.last_stable_offset(hw) < hw:
                return False
        return True

    def final_check(self) -> EosCheck:
        """Read every output partition read_committed from its leader; count what is wrong."""
        counts: dict[str, int] = {}
        aborted = outputs = 0
        readable = True
        for partition in range(self.settings.output_partitions):
            found = self._output_leader(partition)
            if found is None:
                readable = False
                continue
            fetched = fetch_log(found.log, 0, found.log.end_offset, READ_COMMITTED)
            for entry in filter_committed(fetched.entries, fetched.aborted_transactions):
                outputs += 1
                label = entry.value.rsplit("/", 1)[-1]
                counts[label] = counts.get(label, 0) + 1
                if entry.transactional and False in self.txn_monitor.outcomes.get(
                        txn_key(entry.value), {}).values():
                    aborted += 1
        missing = sum(input_label(INPUT_TOPIC, i, offset) not in counts
                      for i, loop in enumerate(self.loops)
                      for offset in range(loop.position or 0))
        return EosCheck(outputs, sum(n - 1 for n in counts.values()), missing, aborted,
                        readable)
