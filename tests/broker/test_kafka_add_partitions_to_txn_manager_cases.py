"""Kafka's AddPartitionsToTxnManagerTest, against kraftsim's
:class:`broker.txn.add_partitions_manager.AddPartitionsToTxnManager` (KIP-890 part 1: a
partition leader's VerifyOnly requests to transaction coordinators, batched per node).

The coordinator lookup and the transport are stand-ins (Kafka's mocked metadata cache
and network client): a test sees each request the manager sends and answers it.

Ported: testAddTxnData, testGenerateRequests, testTransactionCoordinatorResolution,
testAddPartitionsToTxnHandlerErrorHandling (disconnect, the top-level
CLUSTER_AUTHORIZATION_FAILED, mixed per-partition errors, TRANSACTION_ABORTABLE by
operation).
Also (kraftsim's own): KIP-890 part 2's ``addPartition`` operation (not VerifyOnly, v5),
and what a broker that stops answers.

Left out:
- testAddPartitionsToTxnHandlerErrorHandling's authentication failure and version
  mismatch: kraftsim has no SASL and every coordinator speaks AddPartitionsToTxn v4;
- testAddPartitionsToTxnManagerMetrics: the manager's metrics are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.txn.add_partitions_manager import (
    ADD_PARTITION,
    AddPartitionsToTxnManager,
    Answer,
    request_version,
)
from broker.txn.requests import AddPartitionsTxn
from broker.txn.state import TopicPartition

TXN1, TXN2, TXN3 = "txn1", "txn2", "txn3"
PID1, PID2, PID3 = 0, 1, 2
PARTITIONS: list[TopicPartition] = [("foo", 1), ("foo", 2), ("foo", 3)]


class _Net:
    """The coordinators (by transactional id) and the requests sent, unanswered."""

    def __init__(self, coordinators: dict[str, int | None]) -> None:
        self.coordinators = coordinators
        self.sent: list[tuple[int, list[AddPartitionsTxn], Callable[[Answer], None]]] = []
        self.manager = AddPartitionsToTxnManager(
            1, lambda txn_id: self.coordinators.get(txn_id),
            lambda node, txns, answer: self.sent.append((node, txns, answer)),
            wakeup=lambda: None)

    def verify(self, txn_id: str, pid: int, epoch: int = 0,
               operation: str = "genericError") -> dict[TopicPartition, str]:
        errors: dict[TopicPartition, str] = {}
        self.manager.verify_transaction(txn_id, pid, epoch, PARTITIONS, errors.update,
                                        operation)
        return errors


def _txn(txn_id: str, pid: int, epoch: int = 0) -> AddPartitionsTxn:
    return AddPartitionsTxn(txn_id, pid, epoch, tuple(PARTITIONS), verify_only=True)


def test_add_txn_data() -> None:
    """testAddTxnData: a retry of the same epoch replaces the queued one, which is answered
    NETWORK_EXCEPTION; a newer epoch replaces it too, answering INVALID_PRODUCER_EPOCH; an
    older one is answered INVALID_PRODUCER_EPOCH at once and not queued. Node 0 gets txn3
    and txn1 (epoch 1), in the order they were queued, node 1 gets txn2."""
    net = _Net({TXN1: 0, TXN2: 1, TXN3: 0})
    txn1 = net.verify(TXN1, PID1)
    txn2 = net.verify(TXN2, PID2)
    txn3 = net.verify(TXN3, PID3)
    retry_same = net.verify(TXN1, PID1)
    assert txn1 == dict.fromkeys(PARTITIONS, "NETWORK_EXCEPTION")
    retry_newer = net.verify(TXN1, PID1, epoch=1)
    assert retry_same == dict.fromkeys(PARTITIONS, "INVALID_PRODUCER_EPOCH")
    retry_older = net.verify(TXN1, PID1, epoch=0)
    assert retry_older == dict.fromkeys(PARTITIONS, "INVALID_PRODUCER_EPOCH")
    assert txn2 == txn3 == retry_newer == {}
    assert net.manager.generate_requests() == [
        (0, [_txn(TXN3, PID3), _txn(TXN1, PID1, 1)]), (1, [_txn(TXN2, PID2)])]


def test_generate_requests() -> None:
    """testGenerateRequests: one request per node; a node with a request in flight gets
    none until it is answered (here with an error), then the queued one."""
    net = _Net({TXN1: 0, TXN2: 1, TXN3: 2})
    net.verify(TXN1, PID1)
    net.verify(TXN2, PID2)
    assert net.manager.generate_requests() == [(0, [_txn(TXN1, PID1)]),
                                               (1, [_txn(TXN2, PID2)])]
    net.verify(TXN2, PID2)
    net.verify(TXN3, PID3)
    assert net.manager.generate_requests() == [(2, [_txn(TXN3, PID3)])]
    [answer] = [a for node, _, a in net.sent if node == 1]
    answer("NETWORK_EXCEPTION")
    assert net.manager.generate_requests() == [(1, [_txn(TXN2, PID2)])]


def test_transaction_coordinator_resolution() -> None:
    """testTransactionCoordinatorResolution: no coordinator known (no topic, no leader, or
    a leader not alive: the lookup answers None) is COORDINATOR_NOT_AVAILABLE at once."""
    net = _Net({TXN1: None})
    assert net.verify(TXN1, PID1) == dict.fromkeys(PARTITIONS, "COORDINATOR_NOT_AVAILABLE")
    assert net.manager.generate_requests() == [] and net.sent == []


def _both(net: _Net, answer: Answer, operation: str = "genericError"
          ) -> tuple[dict[TopicPartition, str], dict[TopicPartition, str]]:
    errors1 = net.verify(TXN1, PID1, operation=operation)
    errors2 = net.verify(TXN2, PID2, operation=operation)
    net.manager.generate_requests()
    net.sent.pop()[2](answer)
    return errors1, errors2


def test_add_partitions_to_txn_handler_error_handling() -> None:
    """testAddPartitionsToTxnHandlerErrorHandling: a disconnect is NETWORK_EXCEPTION for
    every partition; the top-level CLUSTER_AUTHORIZATION_FAILED is INVALID_TXN_STATE;
    per partition PRODUCER_FENCED is INVALID_PRODUCER_EPOCH and NONE is left out;
    TRANSACTION_ABORTABLE is INVALID_TXN_STATE for ``defaultError`` (Produce up to v10)
    and kept for ``genericError``."""
    net = _Net({TXN1: 0, TXN2: 0})
    assert _both(net, "NETWORK_EXCEPTION") == (
        dict.fromkeys(PARTITIONS, "NETWORK_EXCEPTION"),
        dict.fromkeys(PARTITIONS, "NETWORK_EXCEPTION"))
    assert _both(net, "CLUSTER_AUTHORIZATION_FAILED") == (
        dict.fromkeys(PARTITIONS, "INVALID_TXN_STATE"),
        dict.fromkeys(PARTITIONS, "INVALID_TXN_STATE"))
    mixed: Answer = {TXN1: dict.fromkeys(PARTITIONS, "PRODUCER_FENCED"),
                     TXN2: {("foo", 1): "NONE", ("foo", 2): "INVALID_TXN_STATE",
                            ("foo", 3): "NONE"}}
    assert _both(net, mixed) == (dict.fromkeys(PARTITIONS, "INVALID_PRODUCER_EPOCH"),
                                 {("foo", 2): "INVALID_TXN_STATE"})
    abortable: Answer = {TXN1: dict.fromkeys(PARTITIONS, "TRANSACTION_ABORTABLE"),
                         TXN2: {("foo", 1): "NONE", ("foo", 2): "TRANSACTION_ABORTABLE",
                                ("foo", 3): "NONE"}}
    assert _both(net, abortable, "defaultError") == (
        dict.fromkeys(PARTITIONS, "INVALID_TXN_STATE"), {("foo", 2): "INVALID_TXN_STATE"})
    assert _both(net, abortable, "genericError") == (
        dict.fromkeys(PARTITIONS, "TRANSACTION_ABORTABLE"),
        {("foo", 2): "TRANSACTION_ABORTABLE"})


def test_close_fails_what_is_queued_or_in_flight() -> None:
    """kraftsim's own: the broker stops, every verification waiting fails
    NETWORK_EXCEPTION (the produce it holds is answered as a lost connection)."""
    net = _Net({TXN1: 0, TXN2: 0})
    errors1 = net.verify(TXN1, PID1)
    net.manager.generate_requests()
    errors2 = net.verify(TXN2, PID2)
    net.manager.close()
    assert errors1 == errors2 == dict.fromkeys(PARTITIONS, "NETWORK_EXCEPTION")
    assert net.verify(TXN1, PID1) == dict.fromkeys(PARTITIONS, "COORDINATOR_NOT_AVAILABLE")


def test_add_partition_sends_the_transaction_to_be_added_at_version_5() -> None:
    """KIP-890 part 2 (kraftsim's own): a TV2 producer's request (operation
    ``addPartition``) goes out not VerifyOnly, at AddPartitionsToTxn v5; a VerifyOnly batch
    at v4; TRANSACTION_ABORTABLE passes through as for ``genericError``."""
    net = _Net({TXN1: 0, TXN2: 1})
    errors = net.verify(TXN1, PID1, operation=ADD_PARTITION)
    net.verify(TXN2, PID2, operation="defaultError")
    sent = net.manager.generate_requests()
    assert sent == [(0, [AddPartitionsTxn(TXN1, PID1, 0, tuple(PARTITIONS), verify_only=False)]),
                    (1, [_txn(TXN2, PID2)])]
    assert [request_version(txns) for _, txns in sent] == [5, 4]
    net.sent[0][2]({TXN1: dict.fromkeys(PARTITIONS, "TRANSACTION_ABORTABLE")})
    assert errors == dict.fromkeys(PARTITIONS, "TRANSACTION_ABORTABLE")
