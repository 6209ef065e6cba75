"""KIP-890 part 1: a partition leader verifies a transactional produce before appending it.

Kafka 3.6+ (``transaction.partition.verification.enable``, default true) closes
the *hanging transaction*: a transactional batch that reaches a partition after
its transaction ended (a retry delayed past an abort, or a client that skipped
AddPartitionsToTxn) would otherwise open a transaction the coordinator never
completes, and the partition's last stable offset would stay behind it for good.

The pieces, with Kafka's names:

- :class:`VerificationGuard`: a unique token made when a verification starts.
  :data:`SENTINEL` (no verification) verifies nothing.
- :class:`VerificationStateEntry`: per producer id on a partition's log
  (:meth:`broker.partition_log.PartitionLog.maybe_start_transaction_verification`),
  the guard of the running verification, when it began and the lowest sequence
  seen while verifying (a higher sequence is OUT_OF_ORDER_SEQUENCE_NUMBER until
  it is written, so that a batch retried after a failed verification is not
  overtaken). Every transactional record (data or marker) appended to the
  log clears it, and producer-id expiration drops it after
  producer.id.expiration.ms.
- :class:`TxnVerifier`: ReplicaManager's ``handleProduceAppend``. A transactional
  batch, sent with its transactional id, of a producer with no transaction open
  on the partition starts a verification: the leader asks the transaction's
  coordinator (AddPartitionsToTxn v4 VerifyOnly, through
  :class:`broker.txn.add_partitions_manager.AddPartitionsToTxnManager`) and
  appends only if the coordinator says the partition is in the transaction.
  The append then checks that the guard made at the start is still the
  partition's guard for the producer (a marker in between cleared it; a newer
  verification replaced it): otherwise INVALID_TXN_STATE, nothing written.
  A batch of a producer whose transaction is open on the partition is appended
  without asking (the first verified append made the coordinator's knowledge
  certain for the rest of the transaction).
- the errors the producer sees (:func:`produce_error`): a coordinator that
  cannot answer (CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION,
  COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR)
  is NOT_ENOUGH_REPLICAS, which every client retries; PRODUCER_FENCED is
  INVALID_PRODUCER_EPOCH; a partition not in the transaction
  (TRANSACTION_ABORTABLE) is INVALID_TXN_STATE for Produce up to v10 and
  TRANSACTION_ABORTABLE from v11 (Kafka's ``genericError`` operation).

``transaction.partition.verification.enable`` is a dynamic broker config (Kafka's
DynamicProducerStateManagerConfig): a broker's own value, else the cluster
default, else the static one. It is read when a produce arrives (whether to
start a verification) and again at the append (whether the guard is checked),
so turning it off lets a produce whose verification was under way append.

KIP-890 part 2 (transaction version 2, Produce v12): the same path *adds* the
partition (operation ``addPartition``: the manager sends the transaction not
VerifyOnly, AddPartitionsToTxn v5), as the TV2 producer sends no
AddPartitionsToTxn; :meth:`TxnVerifier.add_offsets_partition` does it for a
TxnOffsetCommit v5. Under TV2 every transaction has its own epoch, so a
transaction is open on the partition for a batch only if it is of the batch's
epoch (the next transaction's first batch, sent while the last marker is on its
way, must be added; the coordinator answers CONCURRENT_TRANSACTIONS until the
markers are written, which the producer retries as NOT_ENOUGH_REPLICAS).

Not verified: the group coordinator's transactional writes of a TV1
TxnOffsetCommit (Kafka verifies them too; see :mod:`broker.txn.group`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import msgspec

from metadata.delta import BROKER_RESOURCE

if TYPE_CHECKING:
    from broker.replica_manager import ProduceCallback, ProduceResult, ReplicaManager
    from broker.txn.add_partitions_manager import AddPartitionsToTxnManager

TRANSACTION_PARTITION_VERIFICATION_ENABLE = "transaction.partition.verification.enable"
"""Kafka's (dynamic) broker config; default true."""

PRODUCE_TRANSACTION_ABORTABLE_VERSION = 11
"""The first Produce version whose clients know TRANSACTION_ABORTABLE (KIP-890; Kafka's
``genericError`` operation above v10)."""
PRODUCE_TV1_VERSION = 11
"""The newest Produce version of a transaction-version-1 client (Kafka's
LAST_BEFORE_TRANSACTION_V2_VERSION); v12 is transaction version 2."""
PRODUCE_TV2_VERSION = 12
"""Produce of a transaction-version-2 client (KIP-890 part 2): the leader adds the
partition to the transaction itself (operation ``addPartition``)."""

RETRIABLE_AS_NOT_ENOUGH_REPLICAS = frozenset({
    "CONCURRENT_TRANSACTIONS", "NETWORK_EXCEPTION", "COORDINATOR_LOAD_IN_PROGRESS",
    "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR"})
"""Verification errors a producer is told as NOT_ENOUGH_REPLICAS (retriable for every
client, and no metadata refresh): Kafka's ReplicaManager.handleProduceAppend."""


class VerificationGuard:
    """A verification's unique token (Kafka's VerificationGuard); equal only to itself."""

    __slots__ = ()

    def verify(self, request_guard: VerificationGuard) -> bool:
        """``request_guard`` is this guard and not :data:`SENTINEL`."""
        return request_guard is not SENTINEL and request_guard is self

    def __repr__(self) -> str:
        return "VerificationGuard(SENTINEL)" if self is SENTINEL \
            else f"VerificationGuard({id(self):#x})"

    def __reduce__(self) -> str | tuple[type[VerificationGuard], tuple[()]]:
        """Pickled (a forked simulation: :mod:`sim.fork`), :data:`SENTINEL` stays the one
        sentinel and any other guard becomes a new one (equal to its copies in the same
        pickle only)."""
        return "SENTINEL" if self is SENTINEL else (VerificationGuard, ())


SENTINEL = VerificationGuard()
"""The guard of no verification: it verifies nothing."""


class VerificationStateEntry:
    """One producer's running verification on a partition (Kafka's VerificationStateEntry)."""

    __slots__ = ("epoch", "guard", "lowest_sequence", "timestamp")

    def __init__(self, timestamp: int, sequence: int, epoch: int) -> None:
        self.timestamp = timestamp
        """When the verification started (producer-id expiration drops it after that)."""
        self.guard = VerificationGuard()
        self.lowest_sequence = sequence
        self.epoch = epoch

    def maybe_update_lowest_sequence_and_epoch(self, sequence: int, epoch: int) -> None:
        """Keep the lowest sequence of this epoch; a newer epoch starts again from its own."""
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:
            self.epoch, self.lowest_sequence = epoch, sequence


def supported_operation(produce_version: int) -> str:
    """Kafka's TransactionSupportedOperation of a Produce request: ``addPartition`` from
    v12 (KIP-890 part 2), ``genericError`` from v11 (TRANSACTION_ABORTABLE passes
    through), ``defaultError`` below."""
    if produce_version >= PRODUCE_TV2_VERSION:
        return "addPartition"
    return "genericError" if produce_version >= PRODUCE_TRANSACTION_ABORTABLE_VERSION \
        else "defaultError"


OFFSETS_ERRORS = {"NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE"}
"""How a TxnOffsetCommit tells an error of its implicit add (the group coordinator's
append-error mapping)."""


def produce_error(error: str) -> str:
    """A verification error as the producer is told it (after the manager's mapping)."""
    return "NOT_ENOUGH_REPLICAS" if error in RETRIABLE_AS_NOT_ENOUGH_REPLICAS else error


class ProduceBatch(msgspec.Struct, frozen=True):
    """One partition's batch of a Produce request."""

    values: list[str]
    producer_id: int = -1
    producer_epoch: int = -1
    first_sequence: int = -1
    transactional: bool = False


class InvalidPidMapping(Exception):
    """A Produce request whose transactional batches carry more than one producer id
    (Kafka's InvalidPidMappingException, thrown before anything is verified)."""


TopicPartition = tuple[str, int]


class TxnVerifier:
    """A broker's transaction verification (see the module docs); a ReplicaManager's hook.

    ``manager`` sends the VerifyOnly requests; ``enabled`` is the static
    transaction.partition.verification.enable, which the image's dynamic broker
    configs override.
    """

    def __init__(self, manager: AddPartitionsToTxnManager, enabled: bool = True) -> None:
        self.manager = manager
        self.static_enabled = enabled
        self.closed = False
        self.started = 0
        """Verifications started (partitions sent to a coordinator)."""
        self.refused = 0
        """Partitions a verification refused (any error)."""

    def enabled(self, replicas: ReplicaManager) -> bool:
        """transaction.partition.verification.enable as ``replicas``' broker applies it now."""
        image = replicas.image
        if image is not None:
            for key in ((BROKER_RESOURCE, str(replicas.broker_id)), (BROKER_RESOURCE, "")):
                configs = image.configs.get(key)
                if configs is not None and TRANSACTION_PARTITION_VERIFICATION_ENABLE in configs:
                    return configs[TRANSACTION_PARTITION_VERIFICATION_ENABLE].strip().lower() \
                        == "true"
        return self.static_enabled

    def handle_produce_append(self, replicas: ReplicaManager, transactional_id: str | None,
                              batches: dict[TopicPartition, ProduceBatch], acks: int,
                              callback: Callable[[dict[TopicPartition, ProduceResult]], None],
                              produce_version: int = PRODUCE_TV1_VERSION) -> None:
        """Kafka's handleProduceAppend: verify the transactional partitions, then append.

        ``callback`` gets one answer per partition once all are answered. Raises
        InvalidPidMapping if the transactional batches name two producer ids.
        """
        from broker.replica_manager import ProduceResult

        producers = {(b.producer_id, b.producer_epoch) for b in batches.values()
                     if b.transactional and b.producer_id >= 0}
        if len(producers) > 1:
            raise InvalidPidMapping("Transactional records contained more than one producer ID")
        results: dict[TopicPartition, ProduceResult] = {}
        left = [len(batches)]

        def answered(tp: TopicPartition, result: ProduceResult) -> None:
            results[tp] = result
            left[0] -= 1
            if left[0] == 0:
                callback({key: results[key] for key in batches})

        def append(errors: dict[TopicPartition, str],
                   guards: dict[TopicPartition, VerificationGuard]) -> None:
            for tp, batch in batches.items():
                if tp in errors:
                    answered(tp, ProduceResult(produce_error(errors[tp])))
                    continue
                replicas.append_records(
                    tp[0], tp[1], batch.values, acks, partial(answered, tp), batch.producer_id,
                    batch.producer_epoch, batch.first_sequence, batch.transactional,
                    verification_guard=guards.get(tp, SENTINEL))

        if not batches:
            callback({})
            return
        if not producers or transactional_id is None or not self.enabled(replicas):
            append({}, {})
            return
        producer_id, producer_epoch = next(iter(producers))
        errors: dict[TopicPartition, str] = {}
        guards: dict[TopicPartition, VerificationGuard] = {}
        for tp, batch in batches.items():
            if not (batch.transactional and batch.producer_id >= 0):
                continue
            found = replicas.leader_replica(*tp)
            if isinstance(found, str):
                errors[tp] = found
                continue
            guard = found.log.maybe_start_transaction_verification(
                producer_id, batch.first_sequence, producer_epoch, replicas.now)
            if guard is not SENTINEL:
                guards[tp] = guard
        if not guards:
            append(errors, {})
            return
        self.started += len(guards)

        def verified(verification_errors: dict[TopicPartition, str]) -> None:
            if self.closed:  # the broker stopped: the produce is lost with its connection
                callback(dict.fromkeys(batches, ProduceResult("NETWORK_EXCEPTION")))
                return
            self.refused += len(verification_errors)
            append({**errors, **verification_errors}, guards)

        self.manager.verify_transaction(transactional_id, producer_id, producer_epoch,
                                        list(guards), verified,
                                        supported_operation(produce_version))

    def produce(self, replicas: ReplicaManager, topic: str, partition: int, batch: ProduceBatch,
                acks: int, callback: ProduceCallback, transactional_id: str | None,
                produce_version: int) -> None:
        """One partition's produce through :meth:`handle_produce_append`."""
        self.handle_produce_append(replicas, transactional_id, {(topic, partition): batch},
                                   acks, lambda results: callback(results[topic, partition]),
                                   produce_version)

    def add_offsets_partition(self, transactional_id: str, producer_id: int,
                              producer_epoch: int, partition: TopicPartition,
                              callback: Callable[[str], None]) -> None:
        """TxnOffsetCommit v5 (KIP-890 part 2): the group coordinator's broker adds the
        group's ``__consumer_offsets`` partition to the transaction (no AddOffsetsToTxn
        from the producer); ``callback`` gets NONE or the error the TxnOffsetCommit
        answers (a coordinator that cannot answer is COORDINATOR_NOT_AVAILABLE)."""
        def added(errors: dict[TopicPartition, str]) -> None:
            if self.closed:
                callback("NETWORK_EXCEPTION")
                return
            error = produce_error(errors[partition]) if partition in errors else "NONE"
            callback(OFFSETS_ERRORS.get(error, error))

        self.started += 1
        self.manager.verify_transaction(transactional_id, producer_id, producer_epoch,
                                        [partition], added, "addPartition")

    def close(self) -> None:
        """The broker stops: produces waiting for a verification fail NETWORK_EXCEPTION (a
        lost connection)."""
        self.closed = True
        self.manager.close()
