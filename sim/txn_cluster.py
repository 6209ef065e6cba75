"""Transaction coordinators in a simulated cluster, and the WriteTxnMarkers path between brokers.

:class:`TxnCluster` hosts one :class:`~broker.txn.coordinator.TransactionCoordinator`
per running broker incarnation (a crash loses it; the restarted broker starts
a new one), creates ``__transaction_state`` (``num_partitions`` partitions,
transaction.state.log.replication.factor replicas, or one per broker in a
smaller cluster, and transaction.state.log.min.isr as its min.insync.replicas,
at most its replica count) and, every ``tick_ms``:

- hands each coordinator the ``__transaction_state`` partitions its broker now
  leads (it loads them from the local log: coordinator epoch = leader epoch)
  and takes away those it lost;
- polls it (marker retries, timed-out transactions) and delivers its
  WriteTxnMarkers partitions to the partition leader a client's metadata
  names, after ``marker_delay_ms`` each way. Markers a coordinator queues
  between ticks (a PrepareCommit/PrepareAbort made durable) go at once, in an
  event of their own (Kafka's marker send thread is woken when markers are
  queued).

Each running broker's :class:`~broker.replica_manager.ReplicaManager` gets a
:class:`~broker.txn.verification.TxnVerifier` (KIP-890 part 1,
transaction.partition.verification.enable) whose
:class:`~broker.txn.add_partitions_manager.AddPartitionsToTxnManager` finds the
coordinator in the broker's own metadata and sends AddPartitionsToTxn v4
VerifyOnly to that broker's request handler, ``marker_delay_ms`` each way as
the markers go: a request to a broker that is down is answered
NETWORK_EXCEPTION, and one whose sender stopped is dropped
(:meth:`TxnCluster.data_replica_manager` attaches it; the producers reach the
data partitions' leaders through it).

Every producer.id.expiration.check.interval.ms (at the first tick then) each running
broker's partitions forget the producers idle for producer.id.expiration.ms (Kafka's
periodic producer expiration check of every log;
:meth:`~broker.replica_manager.ReplicaManager.remove_expired_producers`).

Clients call the coordinator in-process, as the sim's producers call the
replica managers; FindCoordinator is :meth:`find_coordinator`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.metadata_cache import alive_broker_epoch
from broker.replica_manager import ProduceResult, ReplicaManager
from broker.txn.add_partitions_manager import AddPartitionsToTxnManager, Answer, request_version
from broker.txn.coordinator import (
    TRANSACTION_STATE_TOPIC,
    MarkerRequest,
    TransactionCoordinator,
    TxnCoordinatorConfig,
)
from broker.txn.mutations import TxnMutation
from broker.txn.prereg import GROUP_METADATA_TOPIC
from broker.txn.requests import AddPartitionsTxn, TxnErrors, handle_add_partitions_to_txn
from broker.txn.state import TransactionState
from broker.txn.verification import TxnVerifier
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE

if TYPE_CHECKING:
    from sim.cluster import KRaftCluster

SMALL_CONFIG = TxnCoordinatorConfig(num_partitions=3, two_phase_commit_enable=True)
"""Three ``__transaction_state`` partitions (enough for tests and demos), KIP-939 2PC on."""

TransitionHook = Callable[[int, str, TransactionState, TransactionState], None]
"""(broker, transactional id, from, to): every state change a coordinator takes."""


class TxnCluster:
    """See the module docs."""

    def __init__(self, cluster: KRaftCluster,
                 config: TxnCoordinatorConfig = SMALL_CONFIG,
                 mutations: frozenset[TxnMutation] = frozenset(), marker_delay_ms: int = 5,
                 tick_ms: int = 100, on_transition: TransitionHook | None = None) -> None:
        self.cluster = cluster
        self.config = config.validate()
        self.mutations = mutations
        self.marker_delay_ms = marker_delay_ms
        self.tick_ms = tick_ms
        self.on_transition = on_transition
        self.coordinators: dict[int, tuple[int, TransactionCoordinator]] = {}
        self.markers_sent = 0
        self.verifications_sent = 0
        """AddPartitionsToTxn VerifyOnly requests the partition leaders sent."""
        self._next_expiration_check = 0

    def start(self) -> bool:
        """Create ``__transaction_state`` and start ticking; False if the topic failed."""
        c = self.cluster
        rf = min(self.config.state_log_replication_factor, len(c.config.broker_ids))
        ok = c.wait(c.submit(CreateTopics((NewTopic(TRANSACTION_STATE_TOPIC,
                                                    self.config.num_partitions, rf),))))
        min_isr = min(self.config.state_log_min_isr, rf)
        ok = ok and c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, TRANSACTION_STATE_TOPIC,
            (ConfigChange("min.insync.replicas", str(min_isr)),))))
        c.sim.schedule(c.sim.now + self.tick_ms, self._tick, "txn coordinators tick")
        self._next_expiration_check = \
            c.sim.now + self.config.producer_id_expiration_check_interval_ms
        return ok

    def _expire_producers(self) -> None:
        """The brokers' periodic producer expiration check, when due (at the first tick
        at or after it: no event of its own, so a run's trace is the same without it)."""
        sim = self.cluster.sim
        if sim.now < self._next_expiration_check:
            return
        self._next_expiration_check = sim.now + self.config.producer_id_expiration_check_interval_ms
        for broker in self.cluster.config.broker_ids:
            manager = self.cluster.replica_manager(broker)
            if manager is not None:
                manager.remove_expired_producers(sim.now, self.config.producer_id_expiration_ms)

    # ------------------------------------------------------------------ coordinators
    def coordinator(self, broker: int | None) -> TransactionCoordinator | None:
        """The coordinator of running broker ``broker`` (made on first use per incarnation)."""
        manager = self.cluster.replica_manager(broker)
        if broker is None or manager is None:
            return None
        slot = self.cluster.sim.slots[broker]
        held = self.coordinators.get(broker)
        if held is None or held[0] != slot.incarnation:
            coordinator = TransactionCoordinator(
                broker, self.config, self._appender(manager),
                lambda: manager.init_producer_id(self.cluster.sim.now), self.mutations,
                self._hook(broker))
            coordinator.clock = lambda: self.cluster.sim.now
            coordinator.defer = self._deferrer(broker, slot.incarnation)
            coordinator.wakeup = self._waker(
                broker, slot.incarnation, f"txn coordinator {broker} sends markers",
                lambda: self.flush(broker))
            coordinator.offsets_topic_partitions = lambda: self._partition_count(
                broker, GROUP_METADATA_TOPIC)
            if held is not None:
                held[1].close()  # the previous incarnation's held requests lost their broker
            self.coordinators[broker] = (slot.incarnation, coordinator)
            return coordinator
        return held[1]

    def _partition_count(self, broker: int, topic: str) -> int | None:
        loader = self.cluster.loader(broker)
        image = loader.published if loader is not None else None
        found = image.topic(topic) if image is not None else None
        return len(found.partitions) if found is not None else None

    def _deferrer(self, broker: int, incarnation: int
                  ) -> Callable[[Callable[[], None]], None]:
        sim = self.cluster.sim

        def defer(action: Callable[[], None]) -> None:
            def run() -> None:
                slot = sim.slots[broker]
                if slot.running and slot.incarnation == incarnation:
                    action()
            sim.schedule(sim.now, run, f"txn coordinator {broker} wakes held requests")
        return defer

    def _waker(self, broker: int, incarnation: int, label: str,
               action: Callable[[], object]) -> Callable[[], None]:
        """A wake-up that runs ``action`` in an event of its own, now (once however often it
        is woken before that event runs), unless broker ``broker``'s ``incarnation`` has
        stopped: a coordinator that queued markers (Kafka wakes its marker send thread
        rather than leaving them to the next tick), a verification sender with requests."""
        sim = self.cluster.sim
        pending = [False]

        def run() -> None:
            pending[0] = False
            slot = sim.slots[broker]
            if slot.running and slot.incarnation == incarnation:
                action()

        def wake() -> None:
            if not pending[0]:
                pending[0] = True
                sim.schedule(sim.now, run, label)
        return wake

    def _hook(self, broker: int) -> Callable[[str, TransactionState, TransactionState], None]:
        def hook(txn_id: str, before: TransactionState, after: TransactionState) -> None:
            if self.on_transition is not None:
                self.on_transition(broker, txn_id, before, after)
        return hook

    @staticmethod
    def _appender(manager: ReplicaManager) -> Callable[[int, str, Callable[[str], None]], None]:
        def append(partition: int, text: str, done: Callable[[str], None]) -> None:
            manager.produce(TRANSACTION_STATE_TOPIC, partition, [text], -1,
                            lambda result: done(result.error), from_coordinator=True)
        return append

    def find_coordinator(self, transactional_id: str) -> int | None:
        """FindCoordinator: the leader of the id's ``__transaction_state`` partition."""
        partition = TransactionCoordinator.partition_of_id(transactional_id, self.config)
        return self.cluster.partition_leader(TRANSACTION_STATE_TOPIC, partition)

    def finalized_transaction_version(self) -> int:
        """The finalized ``transaction.version`` a client learns from a running broker's
        metadata (Kafka's ApiVersions finalized features): 0 if none is finalized."""
        broker = self.cluster.any_running_broker()
        loader = self.cluster.loader(broker) if broker is not None else None
        image = loader.published if loader is not None else None
        return image.features.get("transaction.version", 0) if image is not None else 0

    def knows_partition(self, broker: int, topic: str, partition: int) -> bool:
        """The broker's metadata has ``topic`` partition ``partition`` (Kafka's
        ``metadataCache.contains``)."""
        loader = self.cluster.loader(broker)
        image = loader.published if loader is not None else None
        found = image.topic(topic) if image is not None else None
        return found is not None and partition in found.partitions

    def add_partitions_to_txn(self, broker: int, version: int,
                              transactions: list[AddPartitionsTxn],
                              callback: Callable[[TxnErrors], None]) -> bool:
        """Send AddPartitionsToTxn of ``version`` to running broker ``broker``'s request
        handler (:mod:`broker.txn.requests`); False if the broker is not running."""
        coordinator = self.sync(broker)
        if coordinator is None:
            return False
        handle_add_partitions_to_txn(
            coordinator, version, transactions,
            lambda topic, partition: self.knows_partition(broker, topic, partition),
            self.cluster.sim.now, callback)
        return True

    def sync(self, broker: int) -> TransactionCoordinator | None:
        """Match the coordinator's partitions to what its broker leads now; flush markers."""
        coordinator = self.coordinator(broker)
        manager = self.cluster.replica_manager(broker)
        if coordinator is None or manager is None:
            return None
        now = self.cluster.sim.now
        led: dict[int, int] = {}
        self._mutate_lso(manager)
        for replica in manager.topic_leaders(TRANSACTION_STATE_TOPIC):
            led[replica.partition_id] = replica.leader_epoch
            if coordinator.owned.get(replica.partition_id) != replica.leader_epoch:
                coordinator.become_leader(replica.partition_id, replica.leader_epoch,
                                          [e.value for e in replica.log.entries], now)
        for partition in [p for p in coordinator.owned if p not in led]:
            coordinator.resign(partition)
        self.flush(broker)
        return coordinator

    def _mutate_lso(self, manager: ReplicaManager) -> None:
        """The lso-ignores-open-txn mutation: ``manager``'s partitions take it (a coordinator
        broker at each sync, a data partition's leader when a producer or a marker reaches
        it: markers no longer wait for a tick's sync)."""
        if TxnMutation.LSO_IGNORES_OPEN_TXN in self.mutations:
            for _, log in manager.all_logs():  # (a compact replica gets its log now)
                log.txns.ignore_open = True

    def flush(self, broker: int) -> None:
        """Send the coordinator's WriteTxnMarkers partitions."""
        held = self.coordinators.get(broker)
        if held is None:
            return
        incarnation, coordinator = held
        for request in coordinator.drain_outbox():
            self.markers_sent += 1
            self._send_marker(broker, incarnation, request)

    def _tick(self) -> None:
        sim = self.cluster.sim
        for broker in self.cluster.config.broker_ids:
            coordinator = self.sync(broker)
            held = self.coordinators.get(broker)
            if coordinator is None and held is not None and held[1].purgatory:
                held[1].close()  # the broker stopped: its held requests see a disconnect
            if coordinator is not None:
                coordinator.poll(sim.now)
                self.flush(broker)
        self._expire_producers()
        sim.schedule(sim.now + self.tick_ms, self._tick, "txn coordinators tick")

    # ------------------------------------------------------------------ verification
    def data_replica_manager(self, broker: int | None) -> ReplicaManager | None:
        """Running broker ``broker``'s replica manager with its transaction verifier (made
        for each incarnation on first use)."""
        manager = self.cluster.replica_manager(broker)
        if broker is None or manager is None:
            return None
        self._mutate_lso(manager)
        if manager.txn_verifier is None:
            incarnation = self.cluster.sim.slots[broker].incarnation
            sender = AddPartitionsToTxnManager(
                broker, lambda txn_id: self._coordinator_in_metadata(broker, txn_id),
                lambda node, txns, answer: self._send_verify(broker, incarnation, node,
                                                             txns, answer),
                self._waker(broker, incarnation, f"AddPartitionsToTxnManager {broker} sends",
                            lambda: sender.generate_requests()))  # (what it sent: unused)
            manager.txn_verifier = TxnVerifier(sender, self.config.partition_verification_enable)
        return manager

    def _coordinator_in_metadata(self, broker: int, transactional_id: str) -> int | None:
        """The id's coordinator as ``broker``'s metadata cache has it: the leader of its
        ``__transaction_state`` partition, if alive (Kafka's getTransactionCoordinator)."""
        loader = self.cluster.loader(broker)
        image = loader.published if loader is not None else None
        topic = image.topic(TRANSACTION_STATE_TOPIC) if image is not None else None
        partition = TransactionCoordinator.partition_of_id(transactional_id, self.config)
        if image is None or topic is None or partition not in topic.partitions:
            return None
        leader = topic.partitions[partition].leader
        return leader if leader >= 0 and alive_broker_epoch(image, leader) is not None \
            else None

    def _send_verify(self, broker: int, incarnation: int, node: int, txns: list[AddPartitionsTxn],
                     answer: Callable[[Answer], None]) -> None:
        """AddPartitionsToTxn v4 (v5 when it adds) from ``broker`` to ``node``'s request
        handler, delivered and
        answered after ``marker_delay_ms`` each way; lost with a stopped sender."""
        sim = self.cluster.sim
        self.verifications_sent += 1

        def back(result: Answer) -> None:
            def receive() -> None:
                slot = sim.slots[broker]
                if slot.running and slot.incarnation == incarnation:
                    answer(result)
            sim.schedule(sim.now + self.marker_delay_ms, receive,
                         f"AddPartitionsToTxn answer to {broker}")

        def deliver() -> None:
            slot = sim.slots[broker]
            if not slot.running or slot.incarnation != incarnation:
                return
            if not self.add_partitions_to_txn(node, request_version(txns), txns, back):
                back("NETWORK_EXCEPTION")

        sim.schedule(sim.now + self.marker_delay_ms, deliver,
                     f"AddPartitionsToTxn VerifyOnly {broker} -> {node}")

    # ------------------------------------------------------------------ markers
    def _send_marker(self, broker: int, incarnation: int, request: MarkerRequest) -> None:
        sim = self.cluster.sim

        def answer(result: ProduceResult) -> None:
            sim.schedule(sim.now + self.marker_delay_ms,
                         lambda: self._on_answer(broker, incarnation, request, result.error),
                         f"WriteTxnMarkers answer to {broker}")

        def deliver() -> None:
            slot = self.cluster.sim.slots[broker]
            if not slot.running or slot.incarnation != incarnation:
                return  # the request died with its sender (as the world's crash fence)
            leader = self.cluster.partition_leader(request.topic, request.partition)
            manager = self.cluster.replica_manager(leader)
            if manager is None:
                answer(ProduceResult("NOT_LEADER_OR_FOLLOWER"))
                return
            self._mutate_lso(manager)
            manager.write_txn_marker(request.topic, request.partition, request.producer_id,
                                     request.producer_epoch, request.commit,
                                     request.coordinator_epoch, answer)

        sim.schedule(sim.now + self.marker_delay_ms, deliver,
                     f"WriteTxnMarkers {request.topic}-{request.partition}")

    def _on_answer(self, broker: int, incarnation: int, request: MarkerRequest,
                   error: str) -> None:
        held = self.coordinators.get(broker)
        slot = self.cluster.sim.slots[broker]
        if held is None or held[0] != incarnation or not slot.running or \
                slot.incarnation != incarnation:
            return
        held[1].on_marker_result(request, error, self.cluster.sim.now)
        self.flush(broker)
