"""AddPartitionsToTxn as the broker's request handler answers it (Kafka's KafkaApis).

The coordinator (:class:`~broker.txn.coordinator.TransactionCoordinator`) decides
about one transaction; the request around it, as Kafka's
``handleAddPartitionsToTxnRequest`` handles it, adds:

- **versions**: 0-5. Below 4 the request comes from a client and carries one
  transaction; from 4 on it comes from a broker, may batch several
  transactions and may be ``VerifyOnly`` (KIP-890 part 1). Below 2 a
  PRODUCER_FENCED answer is sent as INVALID_PRODUCER_EPOCH, which older
  clients understand.
- **partitions the broker does not know**: if any partition of a transaction
  is not in the broker's metadata, that transaction is not attempted: those
  partitions get UNKNOWN_TOPIC_OR_PARTITION and the others
  OPERATION_NOT_ATTEMPTED.
- the answer is one error per partition per transaction, sent once every
  transaction of the request is answered (a coordinator answers after its
  ``__transaction_state`` append).

Not modelled: authorization (WRITE on the transactional id and topics for
versions below 4, CLUSTER_ACTION from 4 on); kraftsim has no ACLs.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from broker.txn.coordinator import TransactionCoordinator
from broker.txn.state import TopicPartition

MAX_VERSION = 5
"""AddPartitionsToTxn's newest version (5: TRANSACTION_ABORTABLE, KIP-890)."""
FIRST_BROKER_VERSION = 4
"""From this version the request comes from brokers: batches and VerifyOnly."""


class AddPartitionsTxn(msgspec.Struct, frozen=True):
    """One transaction of an AddPartitionsToTxn request."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]
    verify_only: bool = False


TxnErrors = dict[str, dict[TopicPartition, str]]
"""The response: per transactional id, the error of each of its partitions."""


class InvalidAddPartitionsRequest(ValueError):
    """A request Kafka refuses whole (INVALID_REQUEST / UNSUPPORTED_VERSION)."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error


def handle_add_partitions_to_txn(coordinator: TransactionCoordinator, version: int,
                                 transactions: list[AddPartitionsTxn],
                                 known: Callable[[str, int], bool], now: int,
                                 callback: Callable[[TxnErrors], None]) -> None:
    """Answer an AddPartitionsToTxn request of ``version``; ``known(topic, partition)``
    says whether the broker's metadata has the partition.

    Raises InvalidAddPartitionsRequest for a version out of range, a client
    version with other than one transaction, or VerifyOnly below version 4.
    """
    if not 0 <= version <= MAX_VERSION:
        raise InvalidAddPartitionsRequest("UNSUPPORTED_VERSION",
                                          f"AddPartitionsToTxn version {version}")
    if version < FIRST_BROKER_VERSION and (
            len(transactions) != 1 or transactions[0].verify_only):
        raise InvalidAddPartitionsRequest(
            "INVALID_REQUEST", f"AddPartitionsToTxn v{version} carries one transaction and "
                               f"no VerifyOnly")
    results: TxnErrors = {}
    waiting = [len(transactions)]

    def answered(txn_id: str, errors: dict[TopicPartition, str]) -> None:
        results[txn_id] = errors
        waiting[0] -= 1
        if waiting[0] == 0:
            callback(results)

    if not transactions:
        callback(results)
        return
    for txn in transactions:
        _one(coordinator, version, txn, known, now, answered)


def _one(coordinator: TransactionCoordinator, version: int, txn: AddPartitionsTxn,
         known: Callable[[str, int], bool], now: int,
         answered: Callable[[str, dict[TopicPartition, str]], None]) -> None:
    partitions = frozenset(txn.partitions)
    unknown = {tp for tp in partitions if not known(*tp)}
    if unknown:
        answered(txn.transactional_id,
                 {tp: "UNKNOWN_TOPIC_OR_PARTITION" if tp in unknown
                  else "OPERATION_NOT_ATTEMPTED" for tp in partitions})
        return
    if txn.verify_only:
        coordinator.handle_verify_partitions(
            txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions,
            lambda errors: answered(txn.transactional_id, errors))
        return

    def added(error: str) -> None:
        if version < 2 and error == "PRODUCER_FENCED":
            error = "INVALID_PRODUCER_EPOCH"  # what clients before PRODUCER_FENCED know
        answered(txn.transactional_id, dict.fromkeys(partitions, error))

    coordinator.handle_add_partitions(txn.transactional_id, txn.producer_id,
                                      txn.producer_epoch, partitions, now, added)
