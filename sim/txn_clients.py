"""A transactional producer in the simulated world, with the Java client's state machine.

States (Kafka's ``TransactionManager.State``): UNINITIALIZED, INITIALIZING,
READY, IN_TRANSACTION, COMMITTING_TRANSACTION, ABORTING_TRANSACTION,
ABORTABLE_ERROR, FATAL_ERROR. The application queues operations
(:meth:`init_transactions`, :meth:`transaction`) that run one request at a
time; retriable errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, leader changes) are
retried after ``retry.backoff.ms`` with FindCoordinator / metadata refreshed.

- A partition is added with AddPartitionsToTxn before its first record of a
  transaction (TV1); records are idempotent, transactional, acks=all, sent as
  Produce v11 with the transactional id (the leader verifies them, KIP-890
  part 1). When the brokers finalized transaction.version 2 (a cluster
  formatted at 4.0-IV2) a classic, non-2PC producer speaks TV2 from its next
  begin (KIP-890 part 2): no AddPartitionsToTxn (Produce v12: the leader adds
  the partition), EndTxn v5 (the answer carries the bumped epoch, which also
  serves as KIP-360's bump after an abortable error).
- Every other answer is sorted as the Java client's request handlers sort
  it (:func:`classify`): PRODUCER_FENCED (and INVALID_PRODUCER_EPOCH from a
  coordinator) is fatal as PRODUCER_FENCED: this instance is a zombie and
  stops; some answers make the transaction abortable; the rest are fatal.
- KIP-360: an abortable error of a produce, or UNKNOWN_PRODUCER_ID /
  INVALID_PRODUCER_ID_MAPPING from AddPartitionsToTxn, AddOffsetsToTxn or
  EndTxn, needs an epoch bump: the abort is followed by InitProducerId
  carrying the current (producer id, epoch), which bumps the epoch (or
  rotates the producer id at 32,766) instead of failing the producer. After
  INVALID_PRODUCER_ID_MAPPING the abort sends no EndTxn (the coordinator
  would refuse it) and goes straight to InitProducerId.
- A call in the wrong state (Java's IllegalStateException) raises
  :class:`TxnClientError` ``ILLEGAL_STATE`` and changes nothing; after a
  fatal error every call raises that error, in ABORTABLE_ERROR every call
  but the abort raises the error that made the transaction abortable
  (Kafka's maybeFailWithError). Calls are checked when the producer is idle
  (nothing queued): a queued call runs in whatever state the calls before
  it leave. beginTransaction() is local: when idle it takes effect at once.
  initTransactions(), commitTransaction() or abortTransaction() called again
  while the same call is queued or running waits for it (Kafka's retry of a
  call that timed out); :attr:`TransactionalProducer.has_ongoing_transaction`
  is Kafka's hasOngoingTransaction().
- A send not acknowledged ``delivery_timeout_ms`` (Kafka's
  delivery.timeout.ms, 120 s) after it started expires: DELIVERY_TIMEOUT,
  abortable with an epoch bump, as Kafka's expired batch.

KIP-939 (``enable_2pc``, Kafka's ``transaction.two.phase.commit.enable``):
InitProducerId carries Enable2Pc (no transaction timeout) and, with
``init_transactions(keep_prepared_txn=True)``, KeepPreparedTxn; such a
producer speaks TV2 (EndTxn answers the next producer id and epoch).
:meth:`TransactionalProducer.prepare_transaction` flushes and returns the
:class:`PreparedTxnState` the external transaction manager records;
:meth:`TransactionalProducer.complete_transaction` commits the prepared (or
kept) transaction if the given state matches it and aborts it otherwise.

Record values are ``<transactional id>/<instance>/<transaction>/<n>`` so that
invariants can tell which instance and transaction wrote them.

``protocol="pre-registration"`` selects the variant of seed 002
(:mod:`broker.txn.prereg`): begin sends one AddPartitionsToTxn with every
output partition (and the group id) and waits there while the previous
transaction completes; a send to a partition not registered fails with
UNKNOWN_TOPIC_OR_PARTITION (the transaction becomes abortable); EndTxn names
the partitions a produce was sent to. Both protocols count ``round_trips``
(every request: coordinator and produce), ``coordinator_round_trips``,
``concurrent_transactions_bounces`` and the latencies of commits.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import msgspec

from broker.replica_manager import ProduceResult
from broker.txn import prereg
from broker.txn.coordinator import TransactionCoordinator, TxnResult
from broker.txn.verification import PRODUCE_TV1_VERSION, PRODUCE_TV2_VERSION
from sim.txn_cluster import TxnCluster

RETRY_BACKOFF_MS = 100
"""Kafka's retry.backoff.ms."""
ADD_PARTITIONS_RETRY_BACKOFF_MS = 20
"""The Java client's wait before resending an AddPartitionsToTxn answered
CONCURRENT_TRANSACTIONS while no partition is in the transaction yet (the previous
transaction is still completing; TransactionManager's KAFKA-5482 workaround)."""
REQUEST_TIMEOUT_MS = 30_000
"""Kafka's request.timeout.ms: a request unanswered this long is sent again."""
DELIVERY_TIMEOUT_MS = 120_000
"""Kafka's delivery.timeout.ms: a send not acknowledged this long after it started is
expired (Kafka's TimeoutException, here DELIVERY_TIMEOUT): abortable, with an epoch bump."""
PROTOCOLS = ("classic", "pre-registration")
"""The transaction protocols a producer can speak."""
RETRIABLE = frozenset({
    "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS",
    "CONCURRENT_TRANSACTIONS", "NETWORK_EXCEPTION", "NOT_LEADER_OR_FOLLOWER",
    "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "REQUEST_TIMED_OUT",
    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE",
})
"""Errors after which the client sends the same request again."""
FENCED = frozenset({"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"})
"""Coordinator answers that fence this instance: fatal, reported as PRODUCER_FENCED."""
BUMP_ABORTABLE = frozenset({"UNKNOWN_PRODUCER_ID", "INVALID_PRODUCER_ID_MAPPING"})
"""AddPartitionsToTxn / AddOffsetsToTxn / EndTxn answers that make the transaction
abortable with an epoch bump (the Java client's ``abortableErrorIfPossible``)."""
PRODUCE_FATAL = frozenset({"PRODUCER_FENCED", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
                           "CLUSTER_AUTHORIZATION_FAILED", "UNSUPPORTED_VERSION"})
"""Produce errors that are fatal (``maybeTransitionToErrorState``); others are abortable."""
ABORTABLE: dict[str, frozenset[str] | None] = {
    "InitProducerId": frozenset({"TRANSACTION_ABORTABLE"}),
    "AddPartitionsToTxn": None,
    "EndTxn": frozenset({"TRANSACTION_ABORTABLE"}),
    "AddOffsetsToTxn": frozenset({"GROUP_AUTHORIZATION_FAILED", "TRANSACTION_ABORTABLE"}),
    "TxnOffsetCommit": frozenset({"GROUP_AUTHORIZATION_FAILED", "FENCED_INSTANCE_ID",
                                  "TRANSACTION_ABORTABLE", "UNKNOWN_MEMBER_ID",
                                  "ILLEGAL_GENERATION"}),
}
"""Per request, the answers that make the transaction abortable (None: every answer
that is not fatal). The others not retried are fatal."""
REQUEST_FATAL: dict[str, frozenset[str]] = {
    "AddPartitionsToTxn": frozenset({"TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
                                     "INVALID_TXN_STATE", "UNSUPPORTED_VERSION"}),
}
"""Fatal answers of the requests whose other answers are abortable."""


def classify(request: str, error: str) -> str:
    """How the Java client takes ``error`` in answer to ``request``.

    One of ``retry``, ``fenced`` (fatal, PRODUCER_FENCED), ``bump`` (abortable,
    epoch bump after the abort), ``abortable`` or ``fatal``. ``request`` is
    InitProducerId, AddPartitionsToTxn, EndTxn, AddOffsetsToTxn or
    TxnOffsetCommit.
    """
    if error in RETRIABLE:
        return "retry"
    if error in FENCED:
        return "fenced"
    if error in BUMP_ABORTABLE and request in ("AddPartitionsToTxn", "AddOffsetsToTxn",
                                               "EndTxn"):
        return "bump"
    abortable = ABORTABLE[request]
    if abortable is None:
        return "fatal" if error in REQUEST_FATAL.get(request, frozenset()) else "abortable"
    return "abortable" if error in abortable else "fatal"


class TxnProducerState(StrEnum):
    """The Java client's TransactionManager states."""

    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING_TRANSACTION = "COMMITTING_TRANSACTION"
    ABORTING_TRANSACTION = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"
    PREPARED_TRANSACTION = "PREPARED_TRANSACTION"
    """KIP-939: prepared (or kept by InitProducerId(KeepPreparedTxn)), to be completed."""


class PreparedTxnState(msgspec.Struct, frozen=True):
    """KIP-939's PreparedTxnState: the prepared transaction's producer id and epoch."""

    producer_id: int = -1
    epoch: int = -1

    def __str__(self) -> str:
        return f"{self.producer_id}:{self.epoch}"

    @classmethod
    def parse(cls, text: str) -> PreparedTxnState:
        """The state written as ``producerId:epoch`` (ValueError otherwise)."""
        pid, sep, epoch = text.partition(":")
        if not sep:
            raise ValueError(f"prepared state {text!r} is not producerId:epoch")
        return cls(int(pid), int(epoch))


class TxnClientError(Exception):
    """A client call in the wrong state (Kafka throws; ``error`` is the Kafka error name)."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error


P = TxnProducerState
Op = tuple[str, object]


class TransactionalProducer:
    """One producer instance (process) with a transactional id; see the module docs."""

    def __init__(self, txns: TxnCluster, transactional_id: str, instance: str,
                 txn_timeout_ms: int = 10_000,
                 on_initialized: Callable[[TransactionalProducer], None] | None = None,
                 on_sent: Callable[[str, int], None] | None = None,
                 on_committed: Callable[[str], None] | None = None, *,
                 enable_2pc: bool = False,
                 on_prepared: Callable[[TransactionalProducer, PreparedTxnState], None]
                 | None = None,
                 on_complete: Callable[[TransactionalProducer, PreparedTxnState, bool], None]
                 | None = None,
                 protocol: str = "classic", group_id: str | None = None,
                 request_timeout_ms: int = REQUEST_TIMEOUT_MS,
                 on_request: Callable[[str], None] | None = None,
                 delivery_timeout_ms: int = DELIVERY_TIMEOUT_MS) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown transaction protocol {protocol!r}: "
                             f"choose one of {', '.join(PROTOCOLS)}")
        if protocol == "pre-registration" and enable_2pc:
            raise ValueError("the pre-registration protocol has no two-phase commit "
                             "(KIP-939): use protocol='classic' with enable_2pc")
        self.protocol = protocol
        self.group_id = group_id
        """The consumer group registered at begin unless a transaction names one."""
        self.request_timeout_ms = request_timeout_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        """Kafka's delivery.timeout.ms (see :data:`DELIVERY_TIMEOUT_MS`)."""
        self._send_since: int | None = None
        """When the running send started (its delivery timeout runs from there)."""
        self.on_request = on_request
        """Told each request's name as it is sent (``EndTxn[pre-registration-1]``)."""
        self.txns = txns
        self.sim = txns.cluster.sim
        self.transactional_id = transactional_id
        self.instance = instance
        self.txn_timeout_ms = txn_timeout_ms
        self.on_initialized = on_initialized
        self.on_sent = on_sent
        self.on_committed = on_committed
        self.state = P.UNINITIALIZED
        self.producer_id = -1
        self.producer_epoch = -1
        self.sequences: dict[tuple[str, int], int] = {}
        self.added: set[tuple[str, int]] = set()
        self.ops: list[Op] = []
        self.busy = False
        self.attempt = 0
        self.transactions = 0
        self.bump_needed = False
        self.committed: list[int] = []
        self.aborted: list[int] = []
        self.errors: dict[str, int] = {}
        self.fatal: str | None = None
        self.registered: set[tuple[str, int]] = set()
        """Pre-registration: the partitions the current transaction may write."""
        self.registered_group: str | None = None
        """Pre-registration: the group the current transaction may commit offsets to."""
        self.round_trips = 0
        """Requests sent (coordinator and produce), retries included."""
        self.coordinator_round_trips = 0
        """Requests sent to the transaction coordinator, retries included."""
        self.concurrent_transactions_bounces = 0
        """CONCURRENT_TRANSACTIONS answers (each one a retry)."""
        self.commit_latencies_ms: list[int] = []
        """Per committed transaction: commitTransaction() called -> acknowledged."""
        self.txn_latencies_ms: list[int] = []
        """Per committed transaction: beginTransaction() called -> commit acknowledged."""
        self._began_at = 0
        self._ending_since: int | None = None
        self.completed: list[tuple[Op, str, int]] = []
        """Every operation that finished, in order: its error (NONE if it worked), its time."""
        self.enable_2pc = enable_2pc
        self.on_prepared = on_prepared
        self.on_complete = on_complete
        """Called as completeTransaction sends its EndTxn: (producer, prepared, commit)."""
        self.prepared_state: PreparedTxnState | None = None
        """The prepared or kept transaction's state while PREPARED_TRANSACTION."""
        self.kept_init = False
        """The last InitProducerId asked to keep a prepared transaction."""
        self.last_error: str | None = None
        """The error that made the current transaction abortable (Kafka's lastError)."""
        self.tv2 = False
        """The current transaction speaks transaction version 2 (KIP-890 part 2): decided
        at its begin from the finalized transaction.version (classic protocol, no 2PC)."""

    @property
    def idle(self) -> bool:
        """No operation queued or running."""
        return not self.ops and not self.busy

    @property
    def has_ongoing_transaction(self) -> bool:
        """Kafka's hasOngoingTransaction(): begun and neither completed nor failed fatally.

        True in IN_TRANSACTION, COMMITTING_TRANSACTION, ABORTING_TRANSACTION,
        ABORTABLE_ERROR and (KIP-939) PREPARED_TRANSACTION.
        """
        return self.state in (P.IN_TRANSACTION, P.COMMITTING_TRANSACTION,
                              P.ABORTING_TRANSACTION, P.ABORTABLE_ERROR,
                              P.PREPARED_TRANSACTION)

    def _require(self, call: str, *allowed: TxnProducerState, abortable: bool = False) -> None:
        """Raise as the Java client does for ``call`` in the wrong state; checked when idle.

        Raises TxnClientError: the fatal error after one; in ABORTABLE_ERROR the
        error that made the transaction abortable unless ``abortable`` (the
        call is allowed there: an abort); else ILLEGAL_STATE (Java's
        IllegalStateException). The producer is left as it was.
        """
        if self.state == P.FATAL_ERROR:
            raise TxnClientError(self.fatal or "FATAL_ERROR", f"{call}: the producer has failed")
        if not self.idle:
            return
        if self.state == P.ABORTABLE_ERROR:
            if abortable:
                return
            raise TxnClientError(self.last_error or "ABORTABLE_ERROR",
                                 f"{call}: the transaction failed and must be aborted")
        if self.state not in allowed:
            raise TxnClientError("ILLEGAL_STATE", f"{call} is invalid in state {self.state}")

    def _pending_end(self) -> bool | None:
        """The commit (True) or abort (False) queued or running for the last transaction
        begun, None if there is none (Kafka's pending transition of a call to retry)."""
        for kind, arg in reversed(self.ops):
            if kind == "begin":
                return None
            if kind == "end":
                return bool(arg)
        return None

    # ------------------------------------------------------------------ application
    def init_transactions(self, keep_prepared_txn: bool = False) -> None:
        """initTransactions(keepPreparedTxn): InitProducerId until this instance has its epoch.

        With ``keep_prepared_txn`` (KIP-939) an ongoing transaction is kept: the
        producer is then PREPARED_TRANSACTION with :attr:`prepared_state` set.
        """
        if any(kind == "init" and arg is not None for kind, arg in self.ops):
            return  # the earlier call still runs: calling again waits for it (Kafka)
        self._require("initTransactions", P.UNINITIALIZED)
        self._queue(("init", keep_prepared_txn))

    def close(self) -> None:
        """close(): the instance stops; what is queued or running is dropped (a request
        out is not answered to it) and every later call raises ``CLOSED`` (Kafka's
        IllegalStateException after close). The coordinator keeps what it has."""
        if self.state != P.FATAL_ERROR:
            self._fail("CLOSED")

    # ------------------------------------------------------------------ KIP-939
    def prepare_transaction(self) -> PreparedTxnState:
        """prepareTransaction(): the sends are flushed; the transaction stays open, prepared.

        Needs ``enable_2pc`` and an idle producer in a transaction (run the
        simulation until :attr:`idle` first: that is the flush).
        """
        if not self.enable_2pc:
            raise TxnClientError("INVALID_TXN_STATE",
                                 "prepareTransaction needs transaction.two.phase.commit.enable")
        if self.state != P.IN_TRANSACTION or not self.idle:
            raise TxnClientError("INVALID_TXN_STATE", f"cannot prepare in {self.state} "
                                 f"{'(busy: flush first)' if not self.idle else ''}".strip())
        self._prepare()
        assert self.prepared_state is not None
        return self.prepared_state

    def _prepare(self) -> None:
        self.state = P.PREPARED_TRANSACTION
        self.prepared_state = PreparedTxnState(self.producer_id, self.producer_epoch)
        if self.on_prepared is not None:
            self.on_prepared(self, self.prepared_state)

    def transaction_prepared(self, sends: list[tuple[str, int, int]]) -> bool:
        """begin, send, then prepareTransaction(); False unless READY, idle and 2PC."""
        if not self.enable_2pc or self.state != P.READY or not self.idle:
            return False
        self.ops += [("begin", None), *(("send", s) for s in sends), ("prepare", None)]
        self._kick()
        return True

    def complete_transaction(self, prepared_state: PreparedTxnState) -> None:
        """completeTransaction(state): commit if it is the prepared one, else abort (KIP-939).

        A no-op after a KeepPreparedTxn init that found no transaction;
        INVALID_TXN_STATE if nothing was prepared or kept.
        """
        if self.state != P.PREPARED_TRANSACTION or not self.idle:
            if self.kept_init and self.state == P.READY and self.idle:
                return
            raise TxnClientError("INVALID_TXN_STATE",
                                 f"no prepared transaction to complete ({self.state})")
        self._queue(("complete", prepared_state))

    @property
    def round_trips_per_txn(self) -> float:
        """Requests per finished (committed or aborted) transaction."""
        return self.round_trips / max(1, len(self.committed) + len(self.aborted))

    def transaction(self, sends: list[tuple[str, int, int]], commit: bool,
                    partitions: set[tuple[str, int]] | None = None,
                    group_id: str | None = None) -> bool:
        """begin, send ``count`` records to each (topic, partition, count), commit or abort.

        Pre-registration registers ``partitions`` (default: those of ``sends``)
        and ``group_id`` (default: the producer's) at begin, the seed's
        ``beginTransaction(outputPartitions, consumerGroupId)``. False (nothing
        queued) unless the producer is READY and idle.
        """
        if self.state != P.READY or not self.idle:
            return False
        register = {(t, p) for t, p, _ in sends} if partitions is None else set(partitions)
        group = self.group_id if group_id is None else group_id
        self.ops += [("begin", (frozenset(register), group)), *(("send", s) for s in sends),
                     ("end", commit)]
        self._kick()
        return True

    def begin_transaction(self, partitions: set[tuple[str, int]] | None = None,
                          group_id: str | None = None) -> None:
        """beginTransaction(), queued after what runs (classic: local, no request).

        Pre-registration: ``beginTransaction(outputPartitions, consumerGroupId)``.
        """
        self._require("beginTransaction", P.READY)
        group = self.group_id if group_id is None else group_id
        op: Op = ("begin", (frozenset(partitions or ()), group))
        if self.idle and self.protocol == "classic":  # local: the state changes at once
            self._start_transaction()
            self.completed.append((op, "NONE", self.sim.now))
            return
        self._queue(op)

    def send(self, topic: str, partition: int, count: int) -> None:
        """Queue ``count`` records for ``topic``/``partition`` in the current transaction."""
        self._require("send", P.IN_TRANSACTION)
        self._queue(("send", (topic, partition, count)))

    def end_transaction(self, commit: bool) -> None:
        """commitTransaction() or abortTransaction(), queued after what runs.

        A queued commit that meets ABORTABLE_ERROR aborts (the application's
        abort after the Java client's commitTransaction() throws); it completes
        ABORTABLE_ERROR. Called when idle in ABORTABLE_ERROR, a commit raises
        that error, as Kafka's does. Called again while the same one is queued
        or running, it waits for that one (Kafka's retry of a call that timed
        out); the other one then is ILLEGAL_STATE. The sends queued before an
        abort run first (calls run in order, one request at a time; Kafka's
        abortTransaction fails the records its sender has not drained yet).
        """
        call = "commitTransaction" if commit else "abortTransaction"
        pending = self._pending_end()
        if pending is not None and self.state != P.FATAL_ERROR:
            if pending == commit:
                return
            raise TxnClientError("ILLEGAL_STATE", f"{call}: the previous "
                                 f"{'commit' if pending else 'abort'} has not completed")
        self._require(call, P.IN_TRANSACTION, P.PREPARED_TRANSACTION, abortable=not commit)
        self._queue(("end", commit))

    def _queue(self, op: Op) -> None:
        self.ops.append(op)
        self._kick()

    def _kick(self) -> None:
        if not self.busy and self.ops:
            self.busy = True
            self.sim.schedule(self.sim.now, self._run, f"txn producer {self.instance}")

    def _later(self, action: Callable[[], None], delay: int = RETRY_BACKOFF_MS) -> None:
        self.sim.schedule(self.sim.now + delay, action, f"txn producer {self.instance}")

    def _done(self, error: str = "NONE") -> None:
        self.completed.append((self.ops.pop(0), error, self.sim.now))
        self._send_since = None
        self.busy = False
        self._kick()

    def _count(self, error: str) -> None:
        self.errors[error] = self.errors.get(error, 0) + 1

    def _fail(self, error: str) -> None:
        self.state, self.fatal = P.FATAL_ERROR, error
        self.ops, self.busy = [], False
        self._send_since = None

    # ------------------------------------------------------------------ the loop
    def _run(self) -> None:
        if self.state == P.FATAL_ERROR or not self.ops:
            self.busy = False
            return
        kind, arg = self.ops[0]
        self.attempt += 1
        if kind == "init":
            self._init(bool(arg))
        elif kind == "prepare":
            if self.state == P.ABORTABLE_ERROR:
                self._end(False)
                return
            self._prepare()
            self._done()
        elif kind == "complete":
            assert isinstance(arg, PreparedTxnState)
            commit = arg == self.prepared_state
            if self.on_complete is not None and self.prepared_state is not None:
                self.on_complete(self, self.prepared_state, commit)
            self._end(commit, always=True)
        elif kind == "begin":
            if self.state == P.READY:
                self._start_transaction()
            if self.protocol == "pre-registration":
                partitions, group = arg if isinstance(arg, tuple) else (frozenset(), None)
                self._begin_pre_registered(partitions, group)
            else:
                self._done()
        elif kind == "send":
            if self.state == P.ABORTABLE_ERROR:
                self._done("ABORTABLE_ERROR")
                return
            assert isinstance(arg, tuple)
            if self._send_since is None:
                self._send_since = self.sim.now
            self._send(*arg)
        else:
            self._end(bool(arg) and self.state != P.ABORTABLE_ERROR)

    def _start_transaction(self) -> None:
        """beginTransaction() takes effect: IN_TRANSACTION, the next transaction number;
        transaction version 2 if the brokers finalized it (a classic, non-2PC producer)."""
        self.transactions += 1
        self.added, self._began_at, self._ending_since = set(), self.sim.now, None
        self.state = P.IN_TRANSACTION
        self.tv2 = self.protocol == "classic" and not self.enable_2pc and \
            self.txns.finalized_transaction_version() >= 2

    def _answer(self, attempt: int, handle: Callable[[str, TxnResult], None]
                ) -> Callable[[TxnResult], None]:
        def current() -> bool:
            return attempt == self.attempt and self.state != P.FATAL_ERROR

        def receive(result: TxnResult) -> None:
            # asked again when the answer is handled: the instance may have been closed
            # (or have moved on) in between, at the same moment
            if current():
                self.sim.schedule(self.sim.now,
                                  lambda: handle(result.error, result) if current() else None,
                                  f"txn producer {self.instance} answer")
        return receive

    def _coordinator(self) -> TransactionCoordinator | None:
        """FindCoordinator, then the coordinator if its broker runs and leads the partition."""
        broker = self.txns.find_coordinator(self.transactional_id)
        return self.txns.sync(broker) if broker is not None else None

    def _sent(self, coordinator: bool, name: str) -> None:
        self.round_trips += 1
        self.coordinator_round_trips += int(coordinator)
        if self.on_request is not None:
            self.on_request(name)

    def _failed(self, request: str, error: str) -> None:
        """``request`` of the running operation was answered ``error`` (not NONE).

        Retried, fatal, or abortable as :func:`classify` says. An abortable
        EndTxn(COMMIT) is followed by the abort.
        """
        verdict = classify(request, error)
        if verdict == "retry":
            if request == "AddPartitionsToTxn" and error == "CONCURRENT_TRANSACTIONS" \
                    and not self.added:
                self._count(error)
                self.concurrent_transactions_bounces += 1
                self._later(self._run, ADD_PARTITIONS_RETRY_BACKOFF_MS)
                return
            self._retry_or(error, lambda: None)
            return
        self._count(error)
        if verdict in ("fenced", "fatal"):
            self._fail("PRODUCER_FENCED" if verdict == "fenced" else error)
            return
        self.bump_needed = self.bump_needed or verdict == "bump"
        self.last_error = error
        if self.ops and self.ops[0][0] == "end":
            self.state = P.ABORTABLE_ERROR
            self._later(self._run, 0)
        else:
            self._abortable(error)

    def _retry_or(self, error: str, otherwise: Callable[[], None]) -> None:
        self._count(error)
        if error == "CONCURRENT_TRANSACTIONS":
            self.concurrent_transactions_bounces += 1
        if error in RETRIABLE:
            self._later(self._run)
        else:
            otherwise()

    def _init(self, keep_prepared_txn: bool) -> None:
        self.state = P.INITIALIZING
        coordinator = self._coordinator()
        if coordinator is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return
        want = (self.producer_id, self.producer_epoch) if self.producer_id >= 0 else None

        def handle(error: str, result: TxnResult) -> None:
            if error != "NONE":
                self._failed("InitProducerId", error)
                return
            self.producer_id, self.producer_epoch = result.producer_id, result.producer_epoch
            self.sequences, self.bump_needed, self.last_error = {}, False, None
            self.state, self.prepared_state = P.READY, None
            self.kept_init = keep_prepared_txn
            if result.ongoing_txn_producer_id >= 0:
                self.state = P.PREPARED_TRANSACTION
                self.prepared_state = PreparedTxnState(result.ongoing_txn_producer_id,
                                                       result.ongoing_txn_producer_epoch)
            if self.on_initialized is not None:
                self.on_initialized(self)
            self._done()

        self._sent(True, "InitProducerId")
        coordinator.handle_init_producer_id(self.transactional_id, self.txn_timeout_ms, want,
                                            self.sim.now, self._answer(self.attempt, handle),
                                            enable_2pc=self.enable_2pc,
                                            keep_prepared_txn=keep_prepared_txn)
        self._flush()

    def _flush(self) -> None:
        broker = self.txns.find_coordinator(self.transactional_id)
        if broker is not None:
            self.txns.flush(broker)

    def _begin_pre_registered(self, partitions: frozenset[tuple[str, int]],
                              group_id: str | None) -> None:
        """beginTransaction(outputPartitions, groupId): one AddPartitionsToTxn that may wait."""
        coordinator = self._coordinator()
        if coordinator is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return
        attempt = self.attempt

        def registered(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self.registered, self.registered_group = set(partitions), group_id
                self._done()
            else:
                self._retry_or(error, lambda: self._fail(error))

        def timed_out() -> None:
            if self.attempt == attempt and self.busy and self.state != P.FATAL_ERROR:
                self._retry_or("REQUEST_TIMED_OUT", lambda: None)

        request = prereg.AddPartitionsToTxnPreRegRequest(
            self.transactional_id, self.producer_id, self.producer_epoch, group_id,
            prereg.to_topics(partitions))
        self._sent(True, f"AddPartitionsToTxn[{request.version}]")
        self._later(timed_out, self.request_timeout_ms)
        prereg.add_partitions(coordinator, request, self.sim.now,
                              lambda e: self._answer(attempt, registered)(TxnResult(e)))

    def check_offsets_group(self, group_id: str) -> str:
        """sendOffsetsToTransaction's pre-registration check: NONE or INVALID_GROUP_ID."""
        if self.protocol == "pre-registration" and group_id != self.registered_group:
            return "INVALID_GROUP_ID"
        return "NONE"

    def _add_to_transaction(
            self, tp: tuple[str, int], request: str,
            call: Callable[[TransactionCoordinator, Callable[[str], None]], None],
            on_error: Callable[[str], None]) -> bool:
        """Register ``tp`` with the coordinator by ``request`` unless it already is; True
        while the caller must wait (the request is out, or a retry is scheduled)."""
        if tp in self.added:
            return False
        coordinator = self._coordinator()
        if coordinator is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return True

        def added(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self.added.add(tp)
                self._later(self._run, 0)
            else:
                on_error(error)

        self._sent(True, request)
        call(coordinator, lambda e: self._answer(self.attempt, added)(TxnResult(e)))
        return True

    def _send(self, topic: str, partition: int, count: int, payloads: tuple[str, ...] = ()
              ) -> None:
        """Send ``count`` records (their last part: ``payloads``, or the sequence numbers)."""
        tp = (topic, partition)
        if self._send_since is not None \
                and self.sim.now - self._send_since >= self.delivery_timeout_ms:
            self._count("DELIVERY_TIMEOUT")  # the batch expired: abortable, epoch bump
            self.bump_needed, self.last_error = True, "DELIVERY_TIMEOUT"
            self._abortable("DELIVERY_TIMEOUT")
            return
        if self.protocol == "pre-registration" and tp not in self.registered:
            self._count("UNKNOWN_TOPIC_OR_PARTITION")  # send() throws: not pre-registered
            self._abortable("UNKNOWN_TOPIC_OR_PARTITION")
            return
        if self.protocol == "pre-registration" or self.tv2:
            self.added.add(tp)  # a produce is sent: EndTxn must name / end the partition
        if not self.tv2 and self._add_to_transaction(
                tp, "AddPartitionsToTxn",
                lambda coordinator, answer: coordinator.handle_add_partitions(
                    self.transactional_id, self.producer_id, self.producer_epoch,
                    frozenset({tp}), self.sim.now, answer,
                    transaction_version=2 if self.enable_2pc else 0),
                lambda error: self._failed("AddPartitionsToTxn", error)):
            return
        leader = self.txns.cluster.partition_leader(topic, partition)
        manager = self.txns.data_replica_manager(leader)
        if manager is None:
            self._retry_or("NOT_LEADER_OR_FOLLOWER", lambda: None)
            return
        first = self.sequences.get(tp, 0)
        values = [f"{self.transactional_id}/{self.instance}/{self.transactions}/"
                  f"{payloads[i] if payloads else first + i}" for i in range(count)]
        if self.on_sent is not None:
            for value in values:
                self.on_sent(value, self.sim.now)

        def produced(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self.sequences[tp] = first + count
                self._done()
            elif error in RETRIABLE:
                self._retry_or(error, lambda: None)
            elif error in PRODUCE_FATAL:
                self._count(error)
                self._fail(error)
            else:  # maybeTransitionToErrorState: abortable, and the epoch is bumped
                self._count(error)
                self.bump_needed, self.last_error = True, error
                self._abortable(error)

        receive = self._answer(self.attempt, produced)
        def on_produce(result: ProduceResult) -> None:
            receive(TxnResult(result.error))

        self._sent(False, f"Produce {topic}-{partition}")
        manager.produce(topic, partition, values, -1, on_produce,
                        self.producer_id, self.producer_epoch, first, transactional=True,
                        transactional_id=self.transactional_id,
                        produce_version=PRODUCE_TV2_VERSION if self.tv2 else PRODUCE_TV1_VERSION)

    def _abortable(self, error: str) -> None:
        self.state = P.ABORTABLE_ERROR
        self._done(error)

    def _end(self, commit: bool, always: bool = False) -> None:
        completing = always or self.state == P.PREPARED_TRANSACTION
        self.state = P.COMMITTING_TRANSACTION if commit else P.ABORTING_TRANSACTION
        if self._ending_since is None:
            self._ending_since = self.sim.now
        nothing_added = not self.added and self.protocol == "classic"
        if not completing and (nothing_added
                               or self.last_error == "INVALID_PRODUCER_ID_MAPPING"):
            self._finish(commit)  # no EndTxn: nothing to end, or the coordinator lost the id
            return
        coordinator = self._coordinator()
        if coordinator is None:
            self._retry_or("COORDINATOR_NOT_AVAILABLE", lambda: None)
            return

        def ended(error: str, _: TxnResult) -> None:
            if error == "NONE":
                self._finish(commit)
            else:
                self._failed("EndTxn", error)

        if self.enable_2pc or self.tv2:
            self._sent(True, "EndTxn")
            self._end_tv2(coordinator, commit)
            return
        answer = self._answer(self.attempt, ended)
        self._sent(True, "EndTxn" if self.protocol == "classic"
                   else f"EndTxn[{prereg.PRE_REGISTRATION_VERSION}]")
        if self.protocol == "classic":
            coordinator.handle_end_txn(self.transactional_id, self.producer_id,
                                       self.producer_epoch, commit, self.sim.now,
                                       lambda e: answer(TxnResult(e)))
        else:
            prereg.end_txn(coordinator, prereg.EndTxnPreRegRequest(
                self.transactional_id, self.producer_id, self.producer_epoch, commit,
                prereg.to_topics(self.added)), self.sim.now, lambda e: answer(TxnResult(e)))
        self._flush()

    def _end_tv2(self, coordinator: TransactionCoordinator, commit: bool) -> None:
        """EndTxn v5 (TV2): the answer is the producer id and epoch of the next transaction."""
        def ended(error: str, result: TxnResult) -> None:
            if error != "NONE":
                if self.enable_2pc:
                    self._retry_or(error, lambda: self._fail(error))
                else:
                    self._failed("EndTxn", error)
                return
            if (result.producer_id, result.producer_epoch) != (self.producer_id,
                                                                self.producer_epoch):
                self.producer_id, self.producer_epoch = result.producer_id, result.producer_epoch
                self.sequences = {}
                self.bump_needed = False  # the EndTxn bumped the epoch (TV2): no InitProducerId
            self.prepared_state = None
            self._finish(commit)

        coordinator.handle_end_txn_tv2(self.transactional_id, self.producer_id,
                                       self.producer_epoch, commit, self.sim.now,
                                       self._answer(self.attempt, ended))
        self._flush()

    def _finish(self, commit: bool) -> None:
        if commit and self.added and self.on_committed is not None:
            self.on_committed(f"{self.transactional_id}/{self.instance}/{self.transactions}")
        (self.committed if commit else self.aborted).append(self.transactions)
        if commit:
            since = self._ending_since if self._ending_since is not None else self.sim.now
            self.commit_latencies_ms.append(self.sim.now - since)
            self.txn_latencies_ms.append(self.sim.now - self._began_at)
        self.added, self.registered, self.registered_group = set(), set(), None
        self.state, self.last_error = P.READY, None
        op = self.ops.pop(0)
        turned = op[0] == "end" and bool(op[1]) != commit  # a commit that had to abort
        self.completed.append((op, "ABORTABLE_ERROR" if turned else "NONE", self.sim.now))
        if self.bump_needed:
            self.ops.insert(0, ("init", None))  # KIP-360: bump with the current (pid, epoch)
        self.busy = False
        self._kick()
