"""Producer-transaction requests as the broker's request handler answers them (KafkaApis).

The coordinators (:class:`~broker.txn.coordinator.TransactionCoordinator`,
:class:`~broker.txn.group.GroupCoordinator`) decide; the request handler around
them adds what Kafka's ``KafkaApis`` adds: request versions, the down-mapping of
error codes older clients do not know (PRODUCER_FENCED is sent as
INVALID_PRODUCER_EPOCH to InitProducerId below v4, AddPartitionsToTxn,
AddOffsetsToTxn and EndTxn below v2; COORDINATOR_LOAD_IN_PROGRESS as
COORDINATOR_NOT_AVAILABLE to TxnOffsetCommit below v2) and the checks against
the broker's metadata. A request whose version is out of range, or whose fields
its version cannot carry, raises :class:`InvalidTxnRequest`.

**InitProducerId** (versions 0-6): the expected producer id and epoch (v3+,
KIP-360) are both -1 or both set, else INVALID_REQUEST; Enable2Pc and
KeepPreparedTxn (KIP-939) need v6.

**EndTxn** (versions 0-5): v5 is transaction version 2 (KIP-890: the epoch is
bumped and the answer names the next producer id and epoch); below it TV1,
answered with producer id and epoch -1.

**AddOffsetsToTxn** (versions 0-4): the group's ``__consumer_offsets`` partition
joins the transaction.

**TxnOffsetCommit** (versions 0-4): a partition the broker does not know gets
UNKNOWN_TOPIC_OR_PARTITION; the rest go to the group coordinator.

**AddPartitionsToTxn**, as Kafka's ``handleAddPartitionsToTxnRequest``:

- **versions**: 0-5. Below 4 the request comes from a client and carries one
  transaction; from 4 on it comes from a broker, may batch several
  transactions and may be ``VerifyOnly`` (KIP-890 part 1). Below 2 a
  PRODUCER_FENCED answer is sent as INVALID_PRODUCER_EPOCH, which older
  clients understand. A broker's v5 transaction that is not VerifyOnly is a
  partition leader adding partitions for a transaction-version-2 producer
  (KIP-890 part 2): the coordinator records the transaction as TV2.
- **partitions the broker does not know**: if any partition of a transaction
  is not in the broker's metadata, that transaction is not attempted: those
  partitions get UNKNOWN_TOPIC_OR_PARTITION and the others
  OPERATION_NOT_ATTEMPTED.
- the answer is one error per partition per transaction, sent once every
  transaction of the request is answered (a coordinator answers after its
  ``__transaction_state`` append).

Not modelled: authorization (TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_ACTION between
brokers); kraftsim has no ACLs.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from broker.txn.coordinator import TransactionCoordinator, TxnResult
from broker.txn.group import GroupCoordinator
from broker.txn.state import TopicPartition

MAX_VERSION = 5
"""AddPartitionsToTxn's newest version (5: TRANSACTION_ABORTABLE, KIP-890)."""
INIT_PRODUCER_ID_MAX_VERSION = 6
"""InitProducerId's newest version (6: KIP-939's Enable2Pc and KeepPreparedTxn)."""
END_TXN_MAX_VERSION = 5
"""EndTxn's newest version (5: transaction version 2, KIP-890)."""
ADD_OFFSETS_MAX_VERSION = 4
"""AddOffsetsToTxn's newest version (4: TRANSACTION_ABORTABLE)."""
TXN_OFFSET_COMMIT_MAX_VERSION = 4
"""TxnOffsetCommit's newest version."""
FENCED_CODE_VERSION = {"InitProducerId": 4, "AddPartitionsToTxn": 2, "AddOffsetsToTxn": 2,
                       "EndTxn": 2}
"""The first version of each request whose clients know PRODUCER_FENCED."""


def client_error(request: str, version: int, error: str) -> str:
    """``error`` as a client of ``request`` ``version`` is told it: PRODUCER_FENCED is
    INVALID_PRODUCER_EPOCH before the version that introduced it."""
    if error == "PRODUCER_FENCED" and version < FENCED_CODE_VERSION[request]:
        return "INVALID_PRODUCER_EPOCH"
    return error


FIRST_BROKER_VERSION = 4
"""From this version the request comes from brokers: batches and VerifyOnly."""
ADD_FOR_TV2_VERSION = 5
"""A broker's add (not VerifyOnly) at this version is for a TV2 producer (KIP-890 part 2)."""


class AddPartitionsTxn(msgspec.Struct, frozen=True):
    """One transaction of an AddPartitionsToTxn request."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]
    verify_only: bool = False


TxnErrors = dict[str, dict[TopicPartition, str]]
"""The response: per transactional id, the error of each of its partitions."""


class InvalidTxnRequest(ValueError):
    """A request Kafka refuses whole; ``error`` is INVALID_REQUEST or UNSUPPORTED_VERSION."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error


def handle_add_partitions_to_txn(coordinator: TransactionCoordinator, version: int,
                                 transactions: list[AddPartitionsTxn],
                                 known: Callable[[str, int], bool], now: int,
                                 callback: Callable[[TxnErrors], None]) -> None:
    """Answer an AddPartitionsToTxn request of ``version``; ``known(topic, partition)``
    says whether the broker's metadata has the partition.

    Raises InvalidTxnRequest for a version out of range, a client
    version with other than one transaction, or VerifyOnly below version 4.
    """
    if not 0 <= version <= MAX_VERSION:
        raise InvalidTxnRequest("UNSUPPORTED_VERSION",
                                          f"AddPartitionsToTxn version {version}")
    if version < FIRST_BROKER_VERSION and (
            len(transactions) != 1 or transactions[0].verify_only):
        raise InvalidTxnRequest(
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
        answered(txn.transactional_id,
                 dict.fromkeys(partitions, client_error("AddPartitionsToTxn", version, error)))

    tv2 = version >= ADD_FOR_TV2_VERSION  # a leader adding for a TV2 producer
    coordinator.handle_add_partitions(txn.transactional_id, txn.producer_id,
                                      txn.producer_epoch, partitions, now, added,
                                      transaction_version=2 if tv2 else 0)


def _check_version(request: str, version: int, newest: int) -> None:
    if not 0 <= version <= newest:
        raise InvalidTxnRequest("UNSUPPORTED_VERSION", f"{request} version {version}")


def handle_init_producer_id_request(
        coordinator: TransactionCoordinator, version: int, transactional_id: str | None,
        txn_timeout_ms: int, producer_id: int, producer_epoch: int, now: int,
        callback: Callable[[TxnResult], None], *, enable_2pc: bool = False,
        keep_prepared_txn: bool = False) -> None:
    """InitProducerId of ``version``: (producer id, epoch) (-1, -1) for none (below v3
    they must be); one of them -1 alone is INVALID_REQUEST."""
    _check_version("InitProducerId", version, INIT_PRODUCER_ID_MAX_VERSION)
    if version < 3 and (producer_id, producer_epoch) != (-1, -1):
        raise InvalidTxnRequest("UNSUPPORTED_VERSION",
                                f"InitProducerId v{version} has no ProducerId/ProducerEpoch")
    if version < 6 and (enable_2pc or keep_prepared_txn):
        raise InvalidTxnRequest("UNSUPPORTED_VERSION",
                                f"InitProducerId v{version} has no Enable2Pc/KeepPreparedTxn")
    if (producer_id == -1) != (producer_epoch == -1):
        callback(TxnResult("INVALID_REQUEST"))
        return
    expected = None if producer_id == -1 else (producer_id, producer_epoch)

    def answer(result: TxnResult) -> None:
        error = client_error("InitProducerId", version, result.error)
        callback(result if error == result.error else TxnResult(error, result.producer_id,
                                                                 result.producer_epoch))

    coordinator.handle_init_producer_id(transactional_id, txn_timeout_ms, expected, now, answer,
                                        enable_2pc=enable_2pc,
                                        keep_prepared_txn=keep_prepared_txn)


def handle_end_txn_request(coordinator: TransactionCoordinator, version: int,
                           transactional_id: str, producer_id: int, producer_epoch: int,
                           commit: bool, now: int,
                           callback: Callable[[TxnResult], None]) -> None:
    """EndTxn of ``version``: v5 is the TV2 EndTxn (the answer names the next producer id
    and epoch), below it the TV1 one (answered with producer id and epoch -1)."""
    _check_version("EndTxn", version, END_TXN_MAX_VERSION)

    def answer(result: TxnResult) -> None:
        error = client_error("EndTxn", version, result.error)
        callback(TxnResult(error, result.producer_id, result.producer_epoch)
                 if error != "NONE" or version > 4 else TxnResult(error))

    if version > 4:
        coordinator.handle_end_txn_tv2(transactional_id, producer_id, producer_epoch, commit,
                                       now, answer)
    else:
        coordinator.handle_end_txn(transactional_id, producer_id, producer_epoch, commit, now,
                                   lambda error: answer(TxnResult(error)))


def handle_add_offsets_to_txn_request(coordinator: TransactionCoordinator, version: int,
                                      transactional_id: str, producer_id: int,
                                      producer_epoch: int, group_id: str, now: int,
                                      callback: Callable[[str], None]) -> None:
    """AddOffsetsToTxn of ``version``: the group's offsets partition (among the
    ``__consumer_offsets`` partitions this broker knows) joins the transaction."""
    _check_version("AddOffsetsToTxn", version, ADD_OFFSETS_MAX_VERSION)
    coordinator.handle_add_offsets(
        transactional_id, producer_id, producer_epoch, group_id,
        coordinator.offsets_partition_count(), now,
        lambda error: callback(client_error("AddOffsetsToTxn", version, error)))


def handle_txn_offset_commit_request(
        coordinator: GroupCoordinator, version: int, transactional_id: str, group_id: str,
        producer_id: int, producer_epoch: int, offsets: dict[TopicPartition, int],
        known: Callable[[str, int], bool], now: int,
        callback: Callable[[dict[TopicPartition, str]], None]) -> None:
    """TxnOffsetCommit of ``version``: one error per partition; partitions the broker
    does not know get UNKNOWN_TOPIC_OR_PARTITION and are not sent to the coordinator."""
    _check_version("TxnOffsetCommit", version, TXN_OFFSET_COMMIT_MAX_VERSION)
    unknown = {tp for tp in offsets if not known(*tp)}
    errors = dict.fromkeys(unknown, "UNKNOWN_TOPIC_OR_PARTITION")
    valid = {tp: offset for tp, offset in offsets.items() if tp not in unknown}
    if not valid:
        callback(errors)
        return

    def stored(error: str) -> None:
        if version < 2 and error == "COORDINATOR_LOAD_IN_PROGRESS":
            error = "COORDINATOR_NOT_AVAILABLE"  # what clients before v2 retry on
        callback({**errors, **dict.fromkeys(valid, error)})

    coordinator.handle_txn_offset_commit(transactional_id, group_id, producer_id,
                                         producer_epoch, valid, now, stored)
