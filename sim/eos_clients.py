"""Exactly-once clients: ``sendOffsetsToTransaction`` and a consume-transform-produce loop.

:class:`EosProducer` is the transactional producer of :mod:`sim.txn_clients`
with the Java client's ``sendOffsetsToTransaction(offsets, groupMetadata)``:
AddOffsetsToTxn to the transaction coordinator (the group's
``__consumer_offsets`` partition joins the transaction), then TxnOffsetCommit
to the group coordinator. Errors as the Java client's handlers take them
(:func:`sim.txn_clients.classify`): coordinator errors,
CONCURRENT_TRANSACTIONS and UNKNOWN_TOPIC_OR_PARTITION are retried;
PRODUCER_FENCED / INVALID_PRODUCER_EPOCH are fatal (a zombie); AddOffsetsToTxn's
UNKNOWN_PRODUCER_ID / INVALID_PRODUCER_ID_MAPPING are abortable with an
epoch bump (KIP-360); group authorization, member and generation errors and
TRANSACTION_ABORTABLE are abortable; the rest are fatal. Its round trips are counted
by :class:`~sim.txn_clients.TransactionalProducer` (every request sent).
With ``protocol="pre-registration"`` (seed 002) a transaction registers its
output partitions and the group at begin (one AddPartitionsToTxn carrying
GroupId), so ``sendOffsetsToTransaction`` sends no AddOffsetsToTxn: it
checks the group is the registered one (INVALID_GROUP_ID otherwise) and goes
straight to TxnOffsetCommit. A transaction-version-2 transaction (KIP-890 part 2)
sends no AddOffsetsToTxn either: TxnOffsetCommit v5, for which the group
coordinator's broker adds the group's partition to the transaction first.

:class:`EosLoop` is the application (Kafka Streams' task in miniature): it
reads one input partition read_committed from its group's committed offset
(OffsetFetch with require_stable, KIP-447), turns each input record into one
output record (payload ``<topic>-<partition>@<offset>``, to output partition
``offset % partitions``) and writes the outputs and the next input offset in
one transaction. When the transaction aborts, or the producer is fenced or
crashes, it starts again from the committed offset. With
``transactional=False`` it is the "idempotence only" application: idempotent
acks=all outputs, then a plain OffsetCommit; a crash between the two makes
duplicates.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.replica_manager import ProduceResult
from broker.txn.coordinator import TxnResult
from broker.txn.fetch import READ_COMMITTED, consume_fetch, fetch_log
from broker.txn.group import CONSUMER_OFFSETS_TOPIC
from sim.group_cluster import GroupCluster
from sim.txn_clients import TransactionalProducer, TxnProducerState
from sim.txn_cluster import TxnCluster

P = TxnProducerState
PROTOCOLS = ("classic", "pre-registration")
"""The transaction protocols of the producer client (``protocol``)."""
Offsets = dict[tuple[str, int], int]


def supported_protocols() -> tuple[str, ...]:
    """The protocols this build's producer client implements."""
    import inspect

    params = inspect.signature(TransactionalProducer.__init__).parameters
    return PROTOCOLS if "protocol" in params else ("classic",)


class EosProducer(TransactionalProducer):
    """A transactional producer with ``sendOffsetsToTransaction``; see the module docs."""

    def __init__(self, txns: TxnCluster, groups: GroupCluster, transactional_id: str,
                 instance: str, txn_timeout_ms: int = 10_000, protocol: str = "classic",
                 on_initialized: Callable[[TransactionalProducer], None] | None = None,
                 on_sent: Callable[[str, int], None] | None = None,
                 on_committed: Callable[[str], None] | None = None) -> None:
        if protocol not in supported_protocols():
            raise ValueError(f"protocol {protocol!r} is not built; choose from "
                             f"{', '.join(supported_protocols())}")
        extra: dict[str, str] = {} if protocol == "classic" else {"protocol": protocol}
        super().__init__(txns, transactional_id, instance, txn_timeout_ms, on_initialized,
                         on_sent, on_committed, **extra)  # type: ignore[arg-type,unused-ignore]
        self.groups = groups
        self.protocol = protocol

    # ------------------------------------------------------------------ application
    def send_offsets_to_transaction(self, offsets: Offsets, group_id: str) -> None:
        """sendOffsetsToTransaction(): in the queued transaction, before its commit/abort."""
        self._require("sendOffsetsToTransaction", P.IN_TRANSACTION)
        op = ("offsets", (group_id, dict(offsets)))
        if self.ops and self.ops[-1][0] == "end":
            self.ops.insert(len(self.ops) - 1, op)
        else:
            self._queue(op)

    def transact(self, outputs: list[tuple[str, int, tuple[str, ...]]], offsets: Offsets,
                 group_id: str, commit: bool = True) -> bool:
        """begin, send each (topic, partition, payloads), send the offsets, commit or abort.

        False (nothing queued) unless the producer is READY and idle.
        """
        outputs_tps = {(t, p) for t, p, v in outputs if v}
        if not self.transaction([], commit, partitions=outputs_tps, group_id=group_id):
            return False
        end = self.ops.pop()
        self.ops += [("send", (t, p, len(v), v)) for t, p, v in outputs if v]
        self.ops.append(end)
        if offsets:
            self.send_offsets_to_transaction(offsets, group_id)
        return True

    def crash(self) -> None:
        """The application process dies: this instance sends nothing more."""
        self._fail("CRASHED")

    # ------------------------------------------------------------------ the loop
    def _run(self) -> None:
        if self.state == P.FATAL_ERROR or not self.ops:
            super()._run()
            return
        kind, arg = self.ops[0]
        skipped = kind in ("send", "offsets") and self.state == P.ABORTABLE_ERROR
        if kind != "offsets":
            super()._run()
            return
        self.attempt += 1
        if skipped:
            self._done()
            return
        assert isinstance(arg, tuple)
        self._send_offsets(arg[0], arg[1])

    def _send_offsets(self, group_id: str, offsets: Offsets) -> None:
        tp = (CONSUMER_OFFSETS_TOPIC, self.groups.partition_of(group_id))
        if self.protocol == "pre-registration":
            error = self.check_offsets_group(group_id)
            if error != "NONE":
                self._count(error)
                self._abortable(error)
                return
            self.added.add(tp)  # registered at begin by GroupId: no AddOffsetsToTxn
        if self.tv2 and tp not in self.added:
            self._add_offsets_implicitly(group_id, tp)
            return
        if not self.tv2 and self._add_to_transaction(
                tp, "AddOffsetsToTxn",
                lambda coordinator, answer: coordinator.handle_add_offsets(
                    self.transactional_id, self.producer_id, self.producer_epoch, group_id,
                    self.groups.config.num_partitions, self.sim.now, answer),
                lambda error: self._failed("AddOffsetsToTxn", error)):
            return
        group = self.groups.coordinator_for(group_id)
        if group is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return

        def committed(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self._done()
            else:
                self._failed("TxnOffsetCommit", error)

        self._sent(False, "TxnOffsetCommit" if not self.tv2 else "TxnOffsetCommit[v5]")
        group.handle_txn_offset_commit(
            self.transactional_id, group_id, self.producer_id, self.producer_epoch, offsets,
            self.sim.now, lambda e: self._answer(self.attempt, committed)(TxnResult(e)),
            label=f"{self.transactional_id}/{self.instance}/{self.transactions}")


    def _add_offsets_implicitly(self, group_id: str, tp: tuple[str, int]) -> None:
        """TxnOffsetCommit v5 (KIP-890 part 2, a TV2 transaction): no AddOffsetsToTxn; the
        group coordinator's broker adds the group's partition to the transaction before it
        writes the offsets (:meth:`broker.txn.verification.TxnVerifier.add_offsets_partition`),
        then the offsets are committed as below."""
        broker = self.groups.find_coordinator(group_id)
        manager = self.txns.data_replica_manager(broker)
        if manager is None or manager.txn_verifier is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return
        attempt = self.attempt

        def added(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self.added.add(tp)
                self._later(self._run, 0)
            else:
                self._failed("TxnOffsetCommit", error)

        manager.txn_verifier.add_offsets_partition(
            self.transactional_id, self.producer_id, self.producer_epoch, tp,
            lambda e: self._answer(attempt, added)(TxnResult(e)))


class EosLoop:
    """A consume-transform-produce loop over one input partition; see the module docs."""

    def __init__(self, txns: TxnCluster, groups: GroupCluster, name: str,
                 input_tp: tuple[str, int], output_topic: str, output_partitions: int,
                 batch: int = 5, transactional: bool = True, protocol: str = "classic",
                 txn_timeout_ms: int = 10_000, poll_ms: int = 50,
                 on_producer: Callable[[EosProducer], None] | None = None) -> None:
        self.txns = txns
        self.groups = groups
        self.cluster = txns.cluster
        self.sim = txns.cluster.sim
        self.name = name
        self.group_id = name
        self.input_tp = input_tp
        self.output_topic = output_topic
        self.output_partitions = output_partitions
        self.batch = batch
        self.transactional = transactional
        self.protocol = protocol
        self.txn_timeout_ms = txn_timeout_ms
        self.poll_ms = poll_ms
        self.on_producer = on_producer
        self.instances = 0
        self.producer: EosProducer | None = None
        self.producers: list[EosProducer] = []
        self.position: int | None = None
        self.in_flight: tuple[int, int, int] | None = None  # (txn number, next offset, start)
        self.commit_latencies: list[int] = []
        self.committed_txns = 0
        self.aborted_txns = 0
        self.restarts = 0
        self.unstable_bounces = 0
        self.abort_next = False
        self.stopped = False
        self.idem = _IdempotentState()
        self.idem_round_trips = 0

    # ------------------------------------------------------------------ control
    def start(self) -> None:
        """Start the first instance and the poll loop."""
        self._new_instance()
        self.sim.schedule(self.sim.now, self._poll, f"eos loop {self.name}")

    def crash_producer(self, zombie: bool = False) -> None:
        """The application crashes and restarts: a new instance, from the committed offset.

        ``zombie``: the old instance is only cut off from the application (a long GC
        pause, a partitioned host) and goes on with its transaction, to be fenced.
        """
        self.restarts += 1
        if self.producer is not None and not zombie:
            self.producer.crash()
        self._new_instance()

    def stop(self) -> None:
        """Stop polling (the run is over)."""
        self.stopped = True

    @property
    def busy(self) -> bool:
        """A transaction (or an idempotent batch) is in flight."""
        return self.in_flight is not None

    @property
    def round_trips(self) -> int:
        """Requests sent by every instance."""
        return sum(p.round_trips for p in self.producers) + self.idem_round_trips

    def errors(self, name: str) -> int:
        """How often every instance was answered ``name``."""
        return sum(p.errors.get(name, 0) for p in self.producers)

    def _new_instance(self) -> None:
        self.instances += 1
        self.position, self.in_flight = None, None
        self.idem = _IdempotentState()
        if not self.transactional:
            return
        producer = EosProducer(self.txns, self.groups, self.name, f"{self.name}.{self.instances}",
                               self.txn_timeout_ms, self.protocol, on_committed=self._acked)
        self.producer = producer
        self.producers.append(producer)
        if self.on_producer is not None:
            self.on_producer(producer)
        producer.init_transactions()

    def _acked(self, txn: str) -> None:
        if self.in_flight is not None:
            self.commit_latencies.append(self.sim.now - self.in_flight[2])

    # ------------------------------------------------------------------ the loop
    def _poll(self) -> None:
        if self.stopped:
            return
        if self.transactional:
            self._poll_transactional()
        else:
            self._poll_idempotent()
        self.sim.schedule(self.sim.now + self.poll_ms, self._poll, f"eos loop {self.name}")

    def _poll_transactional(self) -> None:
        producer = self.producer
        assert producer is not None
        if producer.state == P.FATAL_ERROR:  # fenced (a zombie) or failed: restart
            self.restarts += 1
            self._new_instance()
            return
        if not producer.idle or producer.state != P.READY:
            return
        if self.in_flight is not None:
            number, next_offset, _ = self.in_flight
            self.in_flight = None
            if number in producer.committed:
                self.committed_txns += 1
                self.position = next_offset
            else:
                self.aborted_txns += 1
                self.position = None
        if self.position is None:
            self._fetch_offsets()
            return
        records, next_offset = self._read()
        if next_offset == self.position:
            return
        if not records:
            self.position = next_offset
            return
        outputs = self._outputs(records)
        commit, self.abort_next = not self.abort_next, False
        if producer.transact(outputs, {self.input_tp: next_offset}, self.group_id, commit):
            self.in_flight = (producer.transactions + 1, next_offset, self.sim.now)

    def _fetch_offsets(self) -> None:
        coordinator = self.groups.coordinator_for(self.group_id)
        if coordinator is None:
            return
        result = coordinator.handle_offset_fetch(self.group_id, [self.input_tp],
                                                 require_stable=True)
        offset, error = result.partitions.get(self.input_tp, (-1, result.error))
        if result.error != "NONE" or error != "NONE":
            if error == "UNSTABLE_OFFSET_COMMIT":
                self.unstable_bounces += 1
            return
        self.position = max(offset, 0)

    def _read(self) -> tuple[list[int], int]:
        """(offsets of the input records read_committed from the position, next position)."""
        assert self.position is not None
        topic, partition = self.input_tp
        manager = self.cluster.replica_manager(self.cluster.partition_leader(topic, partition))
        found = manager.leader_replica(topic, partition) if manager is not None else None
        if found is None or isinstance(found, str):
            return [], self.position
        consumed = consume_fetch(fetch_log(found.log, self.position, self.batch, READ_COMMITTED),
                                 self.position, READ_COMMITTED)
        return [e.offset for e in consumed.records], consumed.next_offset

    def _outputs(self, offsets: list[int]) -> list[tuple[str, int, tuple[str, ...]]]:
        topic, partition = self.input_tp
        by_partition: dict[int, list[str]] = {}
        for offset in offsets:
            by_partition.setdefault(offset % self.output_partitions, []).append(
                input_label(topic, partition, offset))
        return [(self.output_topic, p, tuple(v)) for p, v in sorted(by_partition.items())]

    # ------------------------------------------------------------------ idempotence only
    def _poll_idempotent(self) -> None:
        idem = self.idem
        if idem.waiting:
            return
        if idem.producer_id < 0:
            self._init_idempotent()
        elif self.position is None:
            self._fetch_offsets()
        elif idem.outputs:
            self._produce_idempotent()
        elif idem.commit_offset is not None:
            self._commit_idempotent()
        else:
            records, next_offset = self._read()
            if next_offset == self.position:
                return
            if not records:
                self.position = next_offset
                return
            idem.outputs = [(p, v) for _, p, v in self._outputs(records)]
            idem.commit_offset = next_offset
            idem.started = self.sim.now
            self.in_flight = (0, next_offset, self.sim.now)
            self._produce_idempotent()

    def _init_idempotent(self) -> None:
        manager = self.cluster.replica_manager(self.cluster.any_running_broker())
        if manager is None:
            return
        self.idem_round_trips += 1
        error, pid = manager.init_producer_id(self.cluster.sim.now)
        if error == "NONE":
            self.idem.producer_id = pid

    def _produce_idempotent(self) -> None:
        idem = self.idem
        partition, payloads = idem.outputs[0]
        manager = self.cluster.replica_manager(
            self.cluster.partition_leader(self.output_topic, partition))
        if manager is None:
            return
        first = idem.sequences.get(partition, 0)
        values = [f"{self.name}/{self.name}.{self.instances}/{first + i}/{payload}"
                  for i, payload in enumerate(payloads)]
        current = idem
        idem.waiting = True
        self.idem_round_trips += 1

        def produced(result: ProduceResult) -> None:
            if self.idem is not current:
                return  # that instance crashed
            current.waiting = False
            if result.error == "NONE":
                current.sequences[partition] = first + len(values)
                current.outputs.pop(0)

        manager.produce(self.output_topic, partition, values, -1, produced, idem.producer_id,
                        0, first)

    def _commit_idempotent(self) -> None:
        idem = self.idem
        coordinator = self.groups.coordinator_for(self.group_id)
        if coordinator is None or idem.commit_offset is None:
            return
        offset = idem.commit_offset
        current = idem
        idem.waiting = True
        self.idem_round_trips += 1

        def committed(error: str) -> None:
            if self.idem is not current:
                return
            current.waiting = False
            if error == "NONE":
                current.commit_offset = None
                self.position = offset
                self.committed_txns += 1
                self.commit_latencies.append(self.sim.now - current.started)
                self.in_flight = None

        coordinator.handle_offset_commit(self.group_id, {self.input_tp: offset}, self.sim.now,
                                         committed, label=f"{self.name}/offsets/{offset}")


class _IdempotentState:
    """The idempotence-only instance: its producer id and the batch in flight."""

    def __init__(self) -> None:
        self.producer_id = -1
        self.sequences: dict[int, int] = {}
        self.outputs: list[tuple[int, tuple[str, ...]]] = []
        self.commit_offset: int | None = None
        self.started = 0
        self.waiting = False


def input_label(topic: str, partition: int, offset: int) -> str:
    """The payload of the output of input record ``offset`` of ``topic``-``partition``."""
    return f"{topic}-{partition}@{offset}"


def parse_label(payload: str) -> tuple[str, int, int] | None:
    """(topic, partition, offset) of an output payload; None for anything else."""
    head, at, offset = payload.rpartition("@")
    topic, dash, partition = head.rpartition("-")
    if not at or not dash or not partition.isdigit() or not offset.isdigit():
        return None
    return topic, int(partition), int(offset)
