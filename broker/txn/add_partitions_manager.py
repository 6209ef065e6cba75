"""AddPartitionsToTxnManager: a partition leader's VerifyOnly requests to transaction coordinators.

Kafka's ``AddPartitionsToTxnManager`` (KIP-890 part 1), the broker side of
:mod:`broker.txn.verification`. A verification names a transactional id,
its producer id and epoch and the partitions to check; the manager finds the
coordinator (the leader of the id's ``__transaction_state`` partition in the
broker's metadata, alive) and batches the verifications per coordinator node:
one AddPartitionsToTxn request per node in flight, carrying every
transaction queued for that node meanwhile, each ``VerifyOnly`` (v4) -- except
under KIP-890 part 2 (operation ``addPartition``, a Produce v12 or TxnOffsetCommit
v5 of a transaction-version-2 producer), where the leader adds the partitions to
the transaction on the producer's behalf (not VerifyOnly, v5).

- no coordinator known: COORDINATOR_NOT_AVAILABLE at once;
- a transactional id already queued for the node: the one of the older epoch
  is answered INVALID_PRODUCER_EPOCH (the incoming one if older, without
  queueing it); of the same epoch the queued one is answered
  NETWORK_EXCEPTION (the client is likely retrying) and replaced;
- the request is lost (the coordinator's broker is down, the connection
  dropped): NETWORK_EXCEPTION for every transaction it carried;
- a top-level error: that error for every partition (CLUSTER_AUTHORIZATION_FAILED
  as INVALID_TXN_STATE: kraftsim has no ACLs, so it does not arise);
- per partition: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH (what producers
  handle here); TRANSACTION_ABORTABLE is INVALID_TXN_STATE for the
  ``defaultError`` operation (Produce up to v10) and kept for ``genericError``
  (v11) and ``addPartition`` (v12, KIP-890 part 2), whose clients know it; a
  transaction whose partitions all verified gets no error.

Requests go out at :meth:`AddPartitionsToTxnManager.generate_requests` (Kafka's
send thread): ``wakeup`` asks for it after each verification and each answer
(the simulation runs it as an event of its own, at the same time, so that the
verifications of one moment share a request); without ``wakeup`` it runs at once.
Pure: the transport, the coordinator lookup and the wake-up are handed in
(:class:`sim.txn_cluster.TxnCluster` wires them with the WriteTxnMarkers path's
delay).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from broker.txn.requests import AddPartitionsTxn, TxnErrors
from broker.txn.state import TopicPartition

AppendCallback = Callable[[dict[TopicPartition, str]], None]
"""A verification's answer: the partitions that did not verify, with their error."""
Answer = TxnErrors | str
"""A request's answer: per transactional id and partition, or a request-level error."""
Transport = Callable[[int, list[AddPartitionsTxn], Callable[[Answer], None]], None]
"""Send AddPartitionsToTxn v4 to broker ``node``; the callable gets the answer once."""

VERIFY_VERSION = 4
"""The AddPartitionsToTxn version a broker sends to verify (Kafka's EARLIEST_BROKER_VERSION)."""
ADD_VERSION = 5
"""The version a broker sends when it adds partitions for a TV2 producer (KIP-890 part 2)."""
ADD_PARTITION = "addPartition"
"""Kafka's TransactionSupportedOperation of a TV2 producer's request: add, not verify."""


def request_version(transactions: list[AddPartitionsTxn]) -> int:
    """The AddPartitionsToTxn version a broker's batch goes out at: v5 when it adds."""
    return ADD_VERSION if any(not t.verify_only for t in transactions) else VERIFY_VERSION


class _Queued:
    """The transactions waiting for one node, with their callbacks."""

    __slots__ = ("callbacks", "operations", "transactions")

    def __init__(self) -> None:
        self.transactions: dict[str, AddPartitionsTxn] = {}
        self.callbacks: dict[str, AppendCallback] = {}
        self.operations: dict[str, str] = {}


class AddPartitionsToTxnManager:
    """See the module docs. ``coordinator_of(transactional_id)`` is the node id of the
    transaction's coordinator, None when unknown; ``send`` is the transport."""

    def __init__(self, broker_id: int, coordinator_of: Callable[[str], int | None],
                 send: Transport, wakeup: Callable[[], None] | None = None) -> None:
        self.broker_id = broker_id
        self.coordinator_of = coordinator_of
        self.send = send
        self.wakeup = wakeup
        self.queued: dict[int, _Queued] = {}
        """Per node, the transactions to send when the node has no request in flight."""
        self.in_flight: dict[int, _Queued] = {}
        """Per node, the request out and not yet answered."""
        self.requests_sent = 0
        self.closed = False

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                           partitions: list[TopicPartition], callback: AppendCallback,
                           operation: str = "defaultError") -> None:
        """Queue a VerifyOnly check of ``partitions`` (Kafka's verifyTransaction), or with
        ``operation`` ``addPartition`` their addition (Kafka's addOrVerifyTransaction)."""
        node = self.coordinator_of(transactional_id)
        if node is None or self.closed:
            callback(dict.fromkeys(partitions, "COORDINATOR_NOT_AVAILABLE"))
            return
        txn = AddPartitionsTxn(transactional_id, producer_id, producer_epoch,
                               tuple(sorted(set(partitions))),
                               verify_only=operation != ADD_PARTITION)
        queued = self.queued.get(node)
        if queued is None:
            queued = self.queued[node] = _Queued()
        existing = queued.transactions.get(transactional_id)
        if existing is not None:
            if existing.producer_epoch > producer_epoch:
                callback(dict.fromkeys(txn.partitions, "INVALID_PRODUCER_EPOCH"))
                return
            error = "INVALID_PRODUCER_EPOCH" if existing.producer_epoch < producer_epoch \
                else "NETWORK_EXCEPTION"
            old = queued.callbacks.pop(transactional_id)
            del queued.transactions[transactional_id]
            old(dict.fromkeys(existing.partitions, error))
        queued.transactions[transactional_id] = txn
        queued.callbacks[transactional_id] = callback
        queued.operations[transactional_id] = operation
        self._wake()

    def _wake(self) -> None:
        if self.wakeup is None:
            self.generate_requests()
        else:
            self.wakeup()

    def generate_requests(self) -> list[tuple[int, list[AddPartitionsTxn]]]:
        """Send each node's queued transactions, in the order they were queued, unless a
        request to that node is in flight (Kafka's generateRequests); returns what went."""
        sent: list[tuple[int, list[AddPartitionsTxn]]] = []
        for node in [n for n in self.queued if n not in self.in_flight]:
            batch = self.queued.pop(node)
            if not batch.transactions:
                continue
            self.in_flight[node] = batch
            self.requests_sent += 1
            txns = list(batch.transactions.values())
            sent.append((node, txns))
            self.send(node, txns, partial(self._on_answer, node, batch))
        return sent

    def _on_answer(self, node: int, batch: _Queued, answer: Answer) -> None:
        if self.in_flight.get(node) is not batch:
            return  # closed meanwhile
        del self.in_flight[node]
        if isinstance(answer, str):
            error = "INVALID_TXN_STATE" if answer == "CLUSTER_AUTHORIZATION_FAILED" else answer
            for txn_id, callback in batch.callbacks.items():
                callback(dict.fromkeys(batch.transactions[txn_id].partitions, error))
        else:
            for txn_id, callback in batch.callbacks.items():
                results = answer.get(txn_id, {})
                callback({tp: self._mapped(error, batch.operations[txn_id])
                          for tp, error in sorted(results.items()) if error != "NONE"})
        self._wake()

    @staticmethod
    def _mapped(error: str, operation: str) -> str:
        if error == "PRODUCER_FENCED":
            return "INVALID_PRODUCER_EPOCH"
        if error == "TRANSACTION_ABORTABLE" and operation == "defaultError":
            return "INVALID_TXN_STATE"
        return error

    def close(self) -> None:
        """The broker stops: every queued or in-flight verification fails NETWORK_EXCEPTION."""
        self.closed = True
        batches = [*self.in_flight.values(), *self.queued.values()]
        self.in_flight, self.queued = {}, {}
        for batch in batches:
            for txn_id, callback in batch.callbacks.items():
                callback(dict.fromkeys(batch.transactions[txn_id].partitions,
                                       "NETWORK_EXCEPTION"))
