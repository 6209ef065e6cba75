"""The lab's producer transactions: coordinators, transactional producers and their reports.

The transaction coordinators (:class:`sim.txn_cluster.TxnCluster`) start with
the first ``producer NAME init``: ``__transaction_state`` is created then
(3 partitions, replication factor up to 3, min.insync.replicas 2). Each
shell producer is a :class:`sim.txn_clients.TransactionalProducer` instance
named NAME, whose operations (init, begin, send, commit, abort) are queued
and run one request at a time while simulated time passes; what each one
did is reported when known, like ``produce``. Two instances with the same
``transactional.id`` are the zombie scenario: the newer init fences the older.

The shell keeps the state each producer will be in once its queue has run
(``planned``) so that a verb out of order (send before begin, commit twice)
is refused at once, with the Java client's words.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.txn.coordinator import TRANSACTION_STATE_TOPIC
from broker.txn.state import TransactionLogRecord, TransactionState, decode_record
from shell.errors import CommandError
from shell.formatting import plural
from sim.cluster import KRaftCluster
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.txn_clients import (
    PreparedTxnState,
    TransactionalProducer,
    TxnClientError,
    TxnProducerState,
)
from sim.txn_cluster import TxnCluster

DEFAULT_TXN_TIMEOUT_MS = 60_000
"""Kafka's producer default transaction.timeout.ms."""
P = TxnProducerState
_SETTLED = {P.READY: P.READY, P.IN_TRANSACTION: P.IN_TRANSACTION,
            P.ABORTABLE_ERROR: P.IN_TRANSACTION,  # abort (a send or commit raises its error)
            P.PREPARED_TRANSACTION: P.PREPARED_TRANSACTION}
"""A settled client state -> the state the shell's verbs check against."""


class LabTxnProducer:
    """A ``producer NAME`` instance and what of it was reported."""

    def __init__(self, name: str, producer: TransactionalProducer) -> None:
        self.name = name
        self.producer = producer
        self.planned = P.UNINITIALIZED
        self.reported = 0
        self.fatal_reported = False
        self.transaction = 0
        self.reported_transaction = 0

    @property
    def label(self) -> str:
        """``producer p1``."""
        return f"producer {self.name}"


class TxnLab:
    """The transactional part of a lab: see the module docs."""

    def __init__(self, cluster: KRaftCluster, monitor: ProducerTxnInvariants | None) -> None:
        self.cluster = cluster
        self.monitor = monitor
        self.txns: TxnCluster | None = None
        self.producers: dict[str, LabTxnProducer] = {}
        self.reports: list[str] = []
        self._records_key: tuple[tuple[int, int, int], ...] | None = None
        self._records: dict[str, tuple[int, int, int, TransactionLogRecord]] = {}

    # ------------------------------------------------------------------ coordinators
    def start(self) -> TxnCluster:
        """The coordinators, started (``__transaction_state`` created) on first use."""
        if self.txns is not None:
            return self.txns
        monitor = self.monitor
        txns = TxnCluster(self.cluster, on_transition=None if monitor is None else
                          monitor.transition)
        if not txns.start():
            raise CommandError(f"could not create {TRANSACTION_STATE_TOPIC} (is a controller "
                               f"active and are the brokers unfenced?)")
        self.txns = txns
        rf = min(txns.config.state_log_replication_factor, len(self.cluster.config.broker_ids))
        self.reports.append(
            f"transaction coordinators started at {self.cluster.sim.now} ms: "
            f"{TRANSACTION_STATE_TOPIC} has {plural(txns.config.num_partitions, 'partition')}, "
            f"replication factor {rf}, min.insync.replicas "
            f"{min(txns.config.state_log_min_isr, rf)}")
        return txns

    # ------------------------------------------------------------------ producers
    def get(self, name: str) -> LabTxnProducer:
        """The producer called ``name``; CommandError naming the known ones."""
        found = self.producers.get(name)
        if found is None:
            known = ", ".join(sorted(self.producers)) or "none yet"
            raise CommandError(f"no producer {name!r} (producers: {known}); start one with: "
                               f"producer {name} init")
        return found

    def init(self, name: str, transactional_id: str, timeout_ms: int, enable_2pc: bool = False,
             keep_prepared_txn: bool = False) -> LabTxnProducer:
        """A new instance ``name`` with ``transactional_id``; initTransactions() queued.

        ``enable_2pc`` is KIP-939's transaction.two.phase.commit.enable;
        ``keep_prepared_txn`` keeps a prepared transaction of an earlier instance.
        """
        if name in self.producers:
            old = self.producers[name]
            raise CommandError(f"producer {name} exists (transactional.id "
                               f"{old.producer.transactional_id}, state "
                               f"{old.producer.state.value}); a new instance needs a new "
                               f"name, e.g. producer {name}b init transactional.id="
                               f"{old.producer.transactional_id}")
        txns = self.start()
        monitor = self.monitor
        producer = TransactionalProducer(
            txns, transactional_id, name, txn_timeout_ms=timeout_ms,
            on_initialized=None if monitor is None else self._initialized,
            on_sent=None if monitor is None else monitor.sent,
            on_committed=None if monitor is None else monitor.commit_acknowledged,
            enable_2pc=enable_2pc,
            on_prepared=None if monitor is None else
            (lambda q, st: monitor.prepared_txn(q.transactional_id,
                                                f"{q.transactional_id}/{q.instance}/"
                                                f"{q.transactions}", st.producer_id,
                                                st.epoch)),
            on_complete=None if monitor is None else
            (lambda q, st, commit: monitor.completing(q.transactional_id,
                                                      (st.producer_id, st.epoch), commit)))
        if enable_2pc and monitor is not None:
            monitor.two_phase(transactional_id)
        lab_producer = LabTxnProducer(name, producer)
        self.producers[name] = lab_producer
        producer.init_transactions(keep_prepared_txn=keep_prepared_txn)
        lab_producer.planned = P.READY
        return lab_producer

    def _initialized(self, p: TransactionalProducer) -> None:
        monitor = self.monitor
        if monitor is None:
            return
        monitor.initialized(p.transactional_id, p.instance, p.sim.now)
        if p.kept_init:
            state = p.prepared_state or PreparedTxnState()
            monitor.kept(p.transactional_id, (state.producer_id, state.epoch))

    @staticmethod
    def _require(p: LabTxnProducer, verb: str, wanted: TxnProducerState, target: str) -> None:
        producer = p.producer
        if producer.state == P.FATAL_ERROR:
            raise CommandError(f"{p.label} is in FATAL_ERROR ({producer.fatal}): a fenced or "
                               f"failed instance can do nothing more; start a new one with "
                               f"producer NAME init transactional.id="
                               f"{producer.transactional_id}")
        if producer.idle:  # nothing queued: the client's own state is the truth
            p.planned = _SETTLED.get(producer.state, p.planned)
        if p.planned != wanted:
            hint = {P.UNINITIALIZED: "init first", P.READY: "begin first",
                    P.IN_TRANSACTION: "commit or abort first",
                    P.PREPARED_TRANSACTION: "complete first"}.get(p.planned, "")
            when = "" if producer.idle else " once its queued calls have run"
            raise CommandError(f"cannot {verb}: {p.label} is {p.planned.value}{when} "
                               f"(invalid transition from {p.planned.value} to {target}); "
                               f"{hint}")

    @staticmethod
    def _call(verb: str, call: Callable[[], None]) -> None:
        """Make the client's refusal (Kafka's exception) a command error."""
        try:
            call()
        except TxnClientError as exc:
            raise CommandError(f"cannot {verb}: {exc}") from None

    def begin(self, name: str) -> LabTxnProducer:
        """beginTransaction()."""
        p = self.get(name)
        self._require(p, "begin", P.READY, "IN_TRANSACTION")
        self._call("begin", p.producer.begin_transaction)
        p.planned = P.IN_TRANSACTION
        p.transaction += 1
        return p

    def send(self, name: str, topic: str, partition: int, count: int) -> LabTxnProducer:
        """send() of ``count`` records in the open transaction."""
        p = self.get(name)
        self._require(p, "send", P.IN_TRANSACTION, "IN_TRANSACTION")
        self._call("send", lambda: p.producer.send(topic, partition, count))
        return p

    def end(self, name: str, commit: bool) -> LabTxnProducer:
        """commitTransaction() or abortTransaction()."""
        p = self.get(name)
        self._require(p, "commit" if commit else "abort", P.IN_TRANSACTION,
                      "COMMITTING_TRANSACTION" if commit else "ABORTING_TRANSACTION")
        self._call("commit" if commit else "abort", lambda: p.producer.end_transaction(commit))
        p.planned = P.READY
        return p

    def prepare(self, name: str) -> PreparedTxnState:
        """prepareTransaction() (KIP-939): the producer must have flushed (be idle)."""
        p = self.get(name)
        self._require(p, "prepare", P.IN_TRANSACTION, "PREPARED_TRANSACTION")
        producer = p.producer
        if not producer.enable_2pc:
            raise CommandError(f"cannot prepare: {p.label} was not initialized with "
                               f"transaction.two.phase.commit.enable=true (KIP-939)")
        if not producer.idle:
            raise CommandError(f"cannot prepare yet: {p.label} has calls to finish "
                               f"(prepareTransaction flushes first: run-until idle, then "
                               f"prepare)")
        try:
            state = producer.prepare_transaction()
        except TxnClientError as exc:
            raise CommandError(f"cannot prepare: {exc}") from None
        p.planned = P.PREPARED_TRANSACTION
        return state

    def complete(self, name: str, given: str | None) -> PreparedTxnState:
        """completeTransaction(state) (KIP-939): commits if ``given`` (default: the
        producer's own prepared state) is the prepared transaction's, else aborts."""
        p = self.get(name)
        producer = p.producer
        if producer.state == P.FATAL_ERROR:
            self._require(p, "complete", P.PREPARED_TRANSACTION, "COMMITTING_TRANSACTION")
        if not producer.idle:
            raise CommandError(f"cannot complete yet: {p.label} has calls to finish "
                               f"(run-until idle first)")
        if given is None:
            state = producer.prepared_state
            if state is None:
                raise CommandError(f"cannot complete: {p.label} has no prepared transaction "
                                   f"(state {producer.state.value})")
        else:
            try:
                state = PreparedTxnState.parse(given)
            except ValueError:
                raise CommandError(f"{given!r} is not a prepared state: give "
                                   f"PRODUCERID:EPOCH as prepare printed it") from None
        try:
            producer.complete_transaction(state)
        except TxnClientError as exc:
            raise CommandError(f"cannot complete: {exc}") from None
        p.planned = P.READY
        return state

    # ------------------------------------------------------------------ reports
    def pending(self) -> int:
        """Producers with queued or running operations, and transactions whose markers
        are not all written (PrepareCommit or PrepareAbort in ``__transaction_state``)."""
        busy = sum(1 for p in self.producers.values()
                   if not p.producer.idle and p.producer.state != P.FATAL_ERROR)
        return busy + len(self.completing())

    def records(self) -> dict[str, tuple[int, int, int, TransactionLogRecord]]:
        """:func:`transaction_records`, decoded again only when a partition moved."""
        txns = self.txns
        if txns is None:
            return {}
        key = tuple(_position(self.cluster, partition)
                    for partition in range(txns.config.num_partitions))
        if key != self._records_key:
            self._records_key, self._records = key, transaction_records(self.cluster, txns)
        return self._records

    def completing(self) -> list[str]:
        """Transactional ids in PrepareCommit or PrepareAbort (markers being written)."""
        if self.txns is None:
            return []
        return sorted(txn_id for txn_id, (_, _, _, record) in self.records().items()
                      if record.Value is not None and record.Value.TransactionStatus in
                      (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT))

    def drain(self) -> list[str]:
        """What happened since the last call: operations finished, producers fenced."""
        found: list[tuple[int, int, str]] = []
        for index, p in enumerate(self.producers.values()):
            producer = p.producer
            for op, error, at in producer.completed[p.reported:]:
                if op[0] == "begin":
                    p.reported_transaction += 1
                line = self._describe(p, op, error)
                if line is not None:
                    found.append((at, index, f"{p.label}: {line} at {at} ms"))
            p.reported = len(producer.completed)
            if producer.state == P.FATAL_ERROR and not p.fatal_reported:
                p.fatal_reported = True
                found.append((self.cluster.sim.now, index,
                              f"{p.label}: fatal error {producer.fatal}: this instance is "
                              f"fenced or failed and sends nothing more"))
        found.sort(key=lambda item: (item[0], item[1]))
        out, self.reports = self.reports, []
        return out + [line for _, _, line in found]

    @staticmethod
    def _describe(p: LabTxnProducer, op: tuple[str, object], error: str) -> str | None:
        kind, arg = op
        producer = p.producer
        if kind == "init":
            kept = "" if producer.prepared_state is None or \
                producer.state != P.PREPARED_TRANSACTION else \
                f"; kept the prepared transaction {producer.prepared_state} (complete it)"
            return (f"initialized transactional.id {producer.transactional_id}: producer id "
                    f"{producer.producer_id}, epoch {producer.producer_epoch}{kept}")
        if kind == "begin":
            return None
        if kind == "send" and isinstance(arg, tuple):
            what = f"{plural(arg[2], 'record')} to {arg[0]}/{arg[1]}"
            if error == "NONE":
                return f"{what} written (transaction {p.reported_transaction})"
            return f"{what} not written: {error} (the transaction can only abort)"
        number = p.reported_transaction
        aborted = number in producer.aborted
        if kind == "end":
            if error == "NONE":
                return f"transaction {number} {'committed' if arg else 'aborted'}"
            return f"transaction {number} aborted instead of committed ({error})"
        if kind == "complete":
            return f"prepared transaction {arg} {'aborted' if aborted else 'committed'} " \
                   f"(completeTransaction)"
        if kind == "prepare" and aborted:
            return f"transaction {number} aborted instead of prepared (an abortable error)"
        return f"{kind} done" if error == "NONE" else f"{kind} failed: {error}"


def transaction_records(cluster: KRaftCluster, txns: TxnCluster
                        ) -> dict[str, tuple[int, int, int, TransactionLogRecord]]:
    """The ``__transaction_state`` content: per transactional id its latest record below
    the high watermark, as (partition, offset, leader broker, record)."""
    out: dict[str, tuple[int, int, int, TransactionLogRecord]] = {}
    for partition in range(txns.config.num_partitions):
        leader = cluster.partition_leader(TRANSACTION_STATE_TOPIC, partition)
        manager = cluster.replica_manager(leader)
        if leader is None or manager is None:
            continue
        replica = manager.leader_replica(TRANSACTION_STATE_TOPIC, partition)
        if isinstance(replica, str):
            continue
        for entry in replica.log.entries[:replica.log.high_watermark]:
            record = decode_record(entry.value)
            out[record.TransactionalId] = (partition, entry.offset, leader, record)
    return out


def _position(cluster: KRaftCluster, partition: int) -> tuple[int, int, int]:
    """(leader, its incarnation, high watermark) of a ``__transaction_state`` partition."""
    leader = cluster.partition_leader(TRANSACTION_STATE_TOPIC, partition)
    manager = cluster.replica_manager(leader)
    if leader is None or manager is None:
        return (-1, -1, -1)
    replica = manager.leader_replica(TRANSACTION_STATE_TOPIC, partition)
    if isinstance(replica, str):
        return (leader, -1, -1)
    return (leader, cluster.sim.slots[leader].incarnation, replica.log.high_watermark)


def state_name(status: int) -> str:
    """``Ongoing`` for TransactionStatus 1."""
    return TransactionState(status).kafka_name
