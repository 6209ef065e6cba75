"""TransactionCoordinator: Kafka's transaction coordinator on one broker (KIP-98, KIP-360).

The coordinator of a transactional id is the leader of ``__transaction_state``
partition ``abs(javaHashCode(transactional.id)) % transaction.state.log.num.partitions``;
its coordinator epoch is that partition's leader epoch. State lives in that
replicated partition as :class:`~broker.txn.state.TransactionLogValue`
records; every change is prepared (pending state), appended with acks=all and
only taken once the ISR has it. A broker that becomes leader of such a
partition loads it (:meth:`become_leader`), sends the markers of every
PrepareCommit/PrepareAbort it finds, and its periodic checks abort Ongoing
transactions past their timeout and forget idle transactional ids past
``transactional.id.expiration.ms`` (a tombstone each, :meth:`remove_expired`).

Requests follow Kafka's check order and error codes (the transaction
version TV1 paths: EndTxn keeps the epoch; see the reference, sections
1.3-1.7): InitProducerId (KIP-360 expected producer id/epoch, fencing an
Ongoing transaction by an epoch bump and answering CONCURRENT_TRANSACTIONS
until its abort completes, producer-id rotation at epoch 32,766),
AddPartitionsToTxn, AddOffsetsToTxn and EndTxn. WriteTxnMarkers requests leave through
:meth:`drain_outbox` (``wakeup`` tells the owner when there are new ones); the
answers come back through :meth:`on_marker_result`.

Pure: time is passed in, the log append and producer-id allocation are
handed-in callables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from broker.txn import two_phase
from broker.txn.config import (
    TXN_CONFIGS,
    InvalidTxnConfig,
    check_txn_config,
    parse_txn_config,
)
from broker.txn.mutations import TxnMutation
from broker.txn.prereg import BeginPurgatory
from broker.txn.state import (
    EXHAUSTED_EPOCH,
    EXPIRATION_ALLOWED,
    MAX_EPOCH,
    NO_TIMEOUT_MS,
    TV2,
    TopicPartition,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    decode_record,
    encode_record,
)
from raft.config import ConfigError

S = TransactionState
TRANSACTION_STATE_TOPIC = "__transaction_state"
"""Kafka's internal topic of transaction state."""
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
"""Kafka's internal topic of committed offsets (AddOffsetsToTxn adds one of its partitions)."""


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units, 32-bit signed arithmetic)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(transactional_id: str, num_partitions: int) -> int:
    """Kafka's partitionFor: ``Utils.abs(hashCode) % numPartitions`` (abs(MIN_VALUE) = 0)."""
    h = java_string_hash(transactional_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


class TxnCoordinatorConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The coordinator's settings with Kafka's names and defaults.

    :meth:`validate` checks them as Kafka's ConfigDefs do (:mod:`broker.txn.config`);
    :meth:`from_kafka` reads them from Kafka-named properties.
    """

    num_partitions: int = 50
    """transaction.state.log.num.partitions."""
    state_log_replication_factor: int = 3
    """transaction.state.log.replication.factor: ``__transaction_state``'s replicas (a
    cluster of fewer brokers creates it with one replica per broker)."""
    state_log_min_isr: int = 2
    """transaction.state.log.min.isr: ``__transaction_state``'s min.insync.replicas
    (at most its replication factor)."""
    max_timeout_ms: int = 900_000
    """transaction.max.timeout.ms."""
    abort_timed_out_interval_ms: int = 10_000
    """transaction.abort.timed.out.transaction.cleanup.interval.ms."""
    transactional_id_expiration_ms: int = 604_800_000
    """transactional.id.expiration.ms: an idle transactional id is forgotten after this."""
    remove_expired_interval_ms: int = 3_600_000
    """transaction.remove.expired.transaction.cleanup.interval.ms."""
    producer_id_expiration_ms: int = 86_400_000
    """producer.id.expiration.ms: a data partition forgets a producer idle this long (with
    no transaction open there); a broker's dynamic config overrides it
    (:meth:`broker.replica_manager.ReplicaManager.producer_id_expiration_ms`)."""
    producer_id_expiration_check_interval_ms: int = 600_000
    """producer.id.expiration.check.interval.ms: how often the partitions look."""
    marker_retry_backoff_ms: int = 100
    """Back-off before a failed WriteTxnMarkers partition is sent again."""
    offsets_num_partitions: int = 50
    """offsets.topic.num.partitions: where a pre-registered GroupId's offsets go."""
    pre_registration: bool = True
    """This broker serves the pre-registration variant (``broker.txn.prereg``)."""
    block_classic_begin: bool = False
    """Hold classic AddPartitionsToTxn during marker completion too (seed 002's rule)."""
    two_phase_commit_enable: bool = False
    """transaction.two.phase.commit.enable (KIP-939): InitProducerId may set Enable2Pc."""
    partition_verification_enable: bool = True
    """transaction.partition.verification.enable (KIP-890 part 1): partition leaders ask
    the coordinator before a transactional batch opens a transaction
    (:mod:`broker.txn.verification`); a broker's dynamic config overrides it."""

    def validate(self) -> TxnCoordinatorConfig:
        """Return self, or raise InvalidTxnConfig (Kafka's text) for the first bad value:
        every number is a Java INT (the replication factor a SHORT) of at least 1."""
        for name, definition in TXN_CONFIGS.items():
            if definition.field is not None:
                check_txn_config(name, getattr(self, definition.field))
        if not 0 < self.offsets_num_partitions <= 2**31 - 1:
            raise InvalidTxnConfig("offsets.topic.num.partitions", self.offsets_num_partitions,
                                   "Value must be at least 1")
        if self.marker_retry_backoff_ms < 0:
            raise ConfigError("marker_retry_backoff_ms", "must be at least 0")
        return self

    def kafka_config(self, name: str) -> int | bool:
        """The value of Kafka config ``name`` (its default when kraftsim does not model it)."""
        definition = TXN_CONFIGS[name]
        return definition.default if definition.field is None \
            else getattr(self, definition.field)

    @classmethod
    def from_kafka(cls, configs: Mapping[str, str], **fields: Any) -> TxnCoordinatorConfig:
        """A validated config from Kafka-named properties (strings, as in
        ``server.properties``) over ``fields``; names that are not transaction configs
        are ignored, as a broker ignores configs it does not know."""
        values = dict(fields)
        for name, text in configs.items():
            if name in TXN_CONFIGS:
                value = parse_txn_config(name, text)
                field = TXN_CONFIGS[name].field
                if field is not None:
                    values[field] = value
        return cls(**values).validate()


class TxnResult(msgspec.Struct, frozen=True):
    """A coordinator's answer: a Kafka error name and, for InitProducerId, the producer."""

    error: str
    producer_id: int = -1
    producer_epoch: int = -1
    ongoing_txn_producer_id: int = -1
    """KIP-939 InitProducerId v6: the kept (prepared) transaction's producer id, or -1."""
    ongoing_txn_producer_epoch: int = -1


class MarkerRequest(msgspec.Struct, frozen=True):
    """One partition of WriteTxnMarkers, to that partition's leader."""

    transactional_id: str
    coordinator_epoch: int
    producer_id: int
    producer_epoch: int
    commit: bool
    topic: str
    partition: int


class _Completion(msgspec.Struct):
    coordinator_epoch: int
    producer_id: int
    producer_epoch: int
    commit: bool
    remaining: set[TopicPartition]
    writing: bool = False
    retry: TxnTransitMetadata | None = None
    """The Complete* transit whose append failed COORDINATOR_NOT_AVAILABLE: still pending,
    appended again by the next poll."""


Callback = Callable[[TxnResult], None]
Append = Callable[[int, str, Callable[[str], None]], None]
"""append(state partition, record text, on_done(error name)): acks=all."""

RETRY_MARKER = frozenset({"UNKNOWN_TOPIC_OR_PARTITION", "NOT_LEADER_OR_FOLLOWER",
                          "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                          "REQUEST_TIMED_OUT", "KAFKA_STORAGE_ERROR", "NETWORK_EXCEPTION"})
"""Marker errors after which the coordinator sends that partition again."""
DROP_MARKER = frozenset({"INVALID_PRODUCER_EPOCH", "TRANSACTION_COORDINATOR_FENCED"})
"""Marker errors after which the coordinator stops sending the transaction's markers
(the producer or the coordinator epoch moved on); the transaction stays prepared."""
WRITTEN_MARKER = frozenset({"NONE", "UNSUPPORTED_FOR_MESSAGE_FORMAT", "UNSUPPORTED_VERSION"})
"""Marker answers that take the partition off the waiting set (Kafka: a partition whose
format or version refuses markers could not have taken the producer's data either)."""


class UnexpectedMarkerError(Exception):
    """A WriteTxnMarkers answer Kafka's TransactionMarkerRequestCompletionHandler throws
    IllegalStateException on: CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE,
    INVALID_REQUIRED_ACKS or an error it does not list. Nothing is changed: the
    partition is neither retried nor counted written."""


_APPEND_ERRORS = {"UNKNOWN_TOPIC_OR_PARTITION": "COORDINATOR_NOT_AVAILABLE",
                  "NOT_ENOUGH_REPLICAS": "COORDINATOR_NOT_AVAILABLE",
                  "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "COORDINATOR_NOT_AVAILABLE",
                  "REQUEST_TIMED_OUT": "COORDINATOR_NOT_AVAILABLE",
                  "NOT_LEADER_OR_FOLLOWER": "NOT_COORDINATOR",
                  "KAFKA_STORAGE_ERROR": "NOT_COORDINATOR",
                  "NETWORK_EXCEPTION": "NOT_COORDINATOR"}
"""Kafka's TransactionStateManager mapping of log-append errors."""


class TransactionCoordinator:
    """The transaction coordinator of one broker; see the module docs."""

    def __init__(self, broker_id: int, config: TxnCoordinatorConfig, append: Append,
                 allocate_pid: Callable[[], tuple[str, int]],
                 mutations: frozenset[TxnMutation] = frozenset(),
                 on_transition: Callable[[str, TransactionState, TransactionState], None]
                 | None = None) -> None:
        self.broker_id = broker_id
        self.config = config.validate()
        self.append = append
        self.allocate_pid = allocate_pid
        self.mutations = mutations
        self.on_transition = on_transition
        self.owned: dict[int, int] = {}  # state partition -> coordinator epoch
        self.txns: dict[str, TransactionMetadata] = {}
        self.completions: dict[str, _Completion] = {}
        self.outbox: list[MarkerRequest] = []
        self.retries: list[tuple[int, MarkerRequest]] = []
        self.next_abort_check = 0
        self.next_expire_check = config.remove_expired_interval_ms
        self.purgatory = BeginPurgatory()
        self.clock: Callable[[], int] | None = None
        """The current time, for waking held requests when an append lands."""
        self.defer: Callable[[Callable[[], None]], None] | None = None
        """Run an action as its own event (a log append may answer inside another's)."""
        self.wakeup: Callable[[], None] | None = None
        """Called when WriteTxnMarkers partitions join the outbox: the owner drains it now
        (Kafka's TransactionMarkerChannelManager wakes its send thread when it queues
        markers), not at its next periodic check."""
        self.last_now = 0
        self.offsets_topic_partitions: Callable[[], int | None] | None = None
        """The partition count of ``__consumer_offsets`` in this broker's metadata, if any."""

    # ------------------------------------------------------------------ ownership
    @staticmethod
    def partition_of_id(transactional_id: str, config: TxnCoordinatorConfig) -> int:
        """The ``__transaction_state`` partition of ``transactional_id`` under ``config``."""
        return partition_for(transactional_id, config.num_partitions)

    def partition_of(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition of ``transactional_id``."""
        return partition_for(transactional_id, self.config.num_partitions)

    def become_leader(self, partition: int, coordinator_epoch: int, records: list[str],
                      now: int) -> None:
        """Load ``partition`` (its records in log order) and complete what was prepared."""
        self.resign(partition)
        self.owned[partition] = coordinator_epoch
        loaded: dict[str, TransactionMetadata] = {}
        for text in records:
            record = decode_record(text)
            if record.Value is None:
                loaded.pop(record.TransactionalId, None)
            else:
                loaded[record.TransactionalId] = TransactionMetadata.from_log(
                    record.TransactionalId, record.Value)
        for txn_id, meta in sorted(loaded.items()):
            self.txns[txn_id] = meta
            if meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                self._send_markers(meta, now)

    def resign(self, partition: int) -> None:
        """Stop coordinating ``partition`` (leadership moved, or the broker stops).

        Its transactions are forgotten and so are its WriteTxnMarkers not yet sent
        (Kafka's removeMarkersForTxnTopicPartition): a new leader loads the
        partition and sends them again under its own coordinator epoch.
        """
        if self.owned.pop(partition, None) is None:
            return
        for txn_id in [t for t in self.txns if self.partition_of(t) == partition]:
            del self.txns[txn_id]
            self.completions.pop(txn_id, None)
        self.outbox = [m for m in self.outbox
                       if self.partition_of(m.transactional_id) != partition]
        self.retries = [(at, m) for at, m in self.retries
                        if self.partition_of(m.transactional_id) != partition]
        self.purgatory.fail([t for t in self.purgatory.waiting
                             if self.partition_of(t) == partition], "NOT_COORDINATOR")

    def close(self) -> None:
        """The broker stops: held requests fail as a lost connection."""
        self.purgatory.fail(list(self.purgatory.waiting), "NETWORK_EXCEPTION")

    def _wake(self, transactional_id: str) -> None:
        def wake() -> None:
            self.purgatory.wake(transactional_id, self.now())
        if not self.purgatory.waiting.get(transactional_id):
            return
        if self.defer is not None:
            self.defer(wake)
        else:
            wake()

    def offsets_partition_count(self) -> int:
        """offsets.topic.num.partitions as the group coordinator uses it: the topic's count."""
        found = self.offsets_topic_partitions() if self.offsets_topic_partitions else None
        return found if found else self.config.offsets_num_partitions

    def now(self) -> int:
        """The clock if one is set, else the latest time a call handed in."""
        return self.clock() if self.clock is not None else self.last_now

    def _coordinator_error(self, transactional_id: str) -> str | None:
        if self.partition_of(transactional_id) not in self.owned:
            return "NOT_COORDINATOR"
        return None

    # ------------------------------------------------------------------ appends
    def _write(self, meta: TransactionMetadata, transit: TxnTransitMetadata,
               on_success: Callable[[], None], on_error: Callable[[str], None],
               retry_on: frozenset[str] = frozenset()) -> None:
        """Append ``transit``; a failure whose mapped error is in ``retry_on`` keeps the
        pending state (Kafka's retryOnError: the caller appends the transit again)."""
        partition = self.partition_of(meta.transactional_id)
        epoch = self.owned[partition]
        before = meta.state

        def done(error: str) -> None:
            if self.owned.get(partition) != epoch or \
                    self.txns.get(meta.transactional_id) is not meta:
                on_error("NOT_COORDINATOR")
                return
            if error != "NONE":
                mapped = _APPEND_ERRORS.get(error, "UNKNOWN_SERVER_ERROR")
                if mapped in retry_on:
                    on_error(mapped)
                    return
                meta.fail_transition()
                on_error(mapped)
                self._wake(meta.transactional_id)
                return
            meta.complete_transition_to(transit)
            if self.on_transition is not None:
                self.on_transition(meta.transactional_id, before, transit.state)
            on_success()
            self._wake(meta.transactional_id)

        self.append(partition, encode_record(meta.transactional_id, transit), done)

    def write(self, meta: TransactionMetadata, transit: TxnTransitMetadata,
              on_success: Callable[[], None], on_error: Callable[[str], None]) -> None:
        """Append ``transit`` (prepared on ``meta``) and take it once durable."""
        self._write(meta, transit, on_success, on_error)

    # ------------------------------------------------------------------ InitProducerId
    def handle_init_producer_id(self, transactional_id: str | None, txn_timeout_ms: int,
                                expected: tuple[int, int] | None, now: int,
                                callback: Callback, *, enable_2pc: bool = False,
                                keep_prepared_txn: bool = False) -> None:
        """InitProducerId in Kafka's check order (reference 1.3, TV1 fencing).

        KIP-939: ``enable_2pc`` (needs ``two_phase_commit_enable``, else
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED) stores the transaction without a
        timeout; ``keep_prepared_txn`` keeps an Ongoing transaction instead of
        fencing and aborting it (:func:`broker.txn.two_phase.keep_prepared`).
        """
        if transactional_id is None:
            error, pid = self.allocate_pid()
            callback(TxnResult(error, pid, 0) if error == "NONE" else TxnResult(error))
            return
        if transactional_id == "":
            callback(TxnResult("INVALID_REQUEST"))
            return
        if enable_2pc and not self.config.two_phase_commit_enable:
            callback(TxnResult("TRANSACTIONAL_ID_AUTHORIZATION_FAILED"))
            return
        if enable_2pc:
            txn_timeout_ms = NO_TIMEOUT_MS
            if TxnMutation.TWO_PC_TIMEOUT_KEPT in self.mutations:
                txn_timeout_ms = self.config.max_timeout_ms
        elif not 0 < txn_timeout_ms <= self.config.max_timeout_ms:
            callback(TxnResult("INVALID_TRANSACTION_TIMEOUT"))
            return
        not_coordinator = self._coordinator_error(transactional_id)
        if not_coordinator is not None:
            callback(TxnResult(not_coordinator))
            return
        meta = self.txns.get(transactional_id)
        if meta is None:
            error, pid = self.allocate_pid()
            if error != "NONE":
                callback(TxnResult(error))
                return
            meta = TransactionMetadata(transactional_id, pid, txn_timeout_ms, now)
            self.txns[transactional_id] = meta
        if meta.pending_state is not None:
            callback(TxnResult("CONCURRENT_TRANSACTIONS"))
            return
        if expected is not None and not (
                meta.producer_epoch == -1 or expected[0] == meta.producer_id
                or (expected[0] == meta.prev_producer_id and expected[1] >= EXHAUSTED_EPOCH)
                or (expected[0] == meta.next_producer_id and meta.next_producer_epoch >= 0)):
            callback(TxnResult("PRODUCER_FENCED"))
            return
        state = meta.state
        if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            callback(TxnResult("CONCURRENT_TRANSACTIONS"))
        elif state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            self._init_from_idle(meta, txn_timeout_ms, expected, now, callback)
        elif state == S.ONGOING and keep_prepared_txn:
            two_phase.keep_prepared(self, meta, now, callback)
        elif state == S.ONGOING:
            self._fence(meta, now, lambda error: callback(
                TxnResult("CONCURRENT_TRANSACTIONS" if error == "NONE" else error)))
        else:
            callback(TxnResult("UNKNOWN_SERVER_ERROR"))

    def _init_from_idle(self, meta: TransactionMetadata, txn_timeout_ms: int,
                        expected: tuple[int, int] | None, now: int, callback: Callback) -> None:
        epoch = meta.producer_epoch
        no_bump = TxnMutation.EPOCH_NOT_BUMPED_ON_FENCE in self.mutations
        pid = meta.producer_id
        if epoch >= EXHAUSTED_EPOCH and (expected is None or expected[1] == epoch):
            error, pid = self.allocate_pid()
            if error != "NONE":
                callback(TxnResult(error))
                return
            new_epoch, last = 0, (epoch if expected is not None else -1)
        elif expected is None:
            new_epoch, last = epoch + 1, -1
        elif expected[1] == epoch or epoch == -1:
            new_epoch, last = epoch + 1, epoch
        elif expected[1] == meta.last_producer_epoch:
            callback(TxnResult("NONE", meta.producer_id, meta.producer_epoch))  # a retry
            return
        else:
            callback(TxnResult("PRODUCER_FENCED"))
            return
        if no_bump and epoch >= 0 and pid == meta.producer_id:
            new_epoch = epoch
        transit = meta.transit(S.EMPTY, now, producer_id=pid, producer_epoch=new_epoch,
                               last_producer_epoch=last, txn_timeout_ms=txn_timeout_ms,
                               topic_partitions=frozenset(), txn_start_timestamp=-1)
        self._write(meta, transit,
                    lambda: callback(TxnResult("NONE", transit.producer_id,
                                               transit.producer_epoch)),
                    lambda error: callback(TxnResult(error)))

    def _fence(self, meta: TransactionMetadata, now: int,
               done: Callable[[str], None]) -> None:
        """Kafka's prepareFenceProducerEpoch, then a server-side abort.

        A kept transaction (KIP-939) whose client identity was bumped more than once (the
        application restarted twice after its prepare) is fenced at that identity's epoch,
        not one past the transaction's: the next InitProducerId, the admin's retry, then
        bumps past every identity handed out, so that no client holding one goes on."""
        bump = not meta.has_failed_epoch_fence and meta.producer_epoch < MAX_EPOCH and \
            TxnMutation.EPOCH_NOT_BUMPED_ON_FENCE not in self.mutations
        fenced_epoch = meta.producer_epoch + 1 if bump else meta.producer_epoch
        kept = two_phase.kept_identity(meta)
        if bump and kept is not None and kept[0] == meta.producer_id:
            fenced_epoch = max(fenced_epoch, kept[1])
        meta.transit(S.PREPARE_EPOCH_FENCE, now, producer_epoch=fenced_epoch)
        self._end(meta, False, fenced_epoch, False, now, done)

    # ------------------------------------------------------------------ AddPartitionsToTxn
    def handle_add_partitions(self, transactional_id: str, producer_id: int,
                              producer_epoch: int, partitions: frozenset[TopicPartition],
                              now: int, callback: Callable[[str], None], *,
                              transaction_version: int = 0) -> None:
        """AddPartitionsToTxn in Kafka's order (reference 1.4).

        After a KIP-939 InitProducerId(KeepPreparedTxn) the client may only
        complete the kept transaction: its new identity gets INVALID_TXN_STATE.
        """
        if not transactional_id:
            callback("INVALID_REQUEST")
            return
        error = self._coordinator_error(transactional_id)
        meta = self.txns.get(transactional_id)
        if error is None and meta is None:
            error = "INVALID_PRODUCER_ID_MAPPING"
        elif meta is not None and error is None:
            kept = two_phase.kept_identity(meta)
            if meta.pending_state is not None:
                error = "CONCURRENT_TRANSACTIONS"
            elif kept is not None and producer_id == kept[0]:
                error = "INVALID_TXN_STATE" if producer_epoch == kept[1] else "PRODUCER_FENCED"
            elif producer_id != meta.producer_id:
                error = "INVALID_PRODUCER_ID_MAPPING"
            elif producer_epoch != meta.producer_epoch:
                error = "PRODUCER_FENCED"
            elif meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                error = "CONCURRENT_TRANSACTIONS"
            elif meta.state == S.ONGOING and partitions <= meta.topic_partitions:
                error = "NONE"
        if error == "CONCURRENT_TRANSACTIONS" and self.config.block_classic_begin:
            self.purgatory.hold(transactional_id, lambda later: self.handle_add_partitions(
                transactional_id, producer_id, producer_epoch, partitions, later, callback),
                callback)
            return
        if error is not None or meta is None:
            callback(error or "UNKNOWN_SERVER_ERROR")
            return
        start = meta.txn_start_timestamp if meta.state == S.ONGOING else now
        tv2 = transaction_version >= TV2
        transit = meta.transit(S.ONGOING, now, topic_partitions=meta.topic_partitions | partitions,
                               txn_start_timestamp=start,
                               prev_producer_id=meta.prev_producer_id if tv2 else None,
                               client_transaction_version=transaction_version if tv2 else None)
        self._write(meta, transit, lambda: callback("NONE"), callback)

    def handle_verify_partitions(self, transactional_id: str, producer_id: int,
                                 producer_epoch: int, partitions: frozenset[TopicPartition],
                                 callback: Callable[[dict[TopicPartition, str]], None]) -> None:
        """AddPartitionsToTxn v4+ ``VerifyOnly`` (KIP-890 part 1, a partition leader asking
        before it appends transactional data), in Kafka's order (reference 1.4).

        Every partition gets the same error when the id is unknown or owned elsewhere,
        its producer id differs (INVALID_PRODUCER_ID_MAPPING), its epoch differs
        (PRODUCER_FENCED) or it is PrepareCommit/PrepareAbort (CONCURRENT_TRANSACTIONS);
        otherwise each partition gets NONE if it is in the transaction and
        TRANSACTION_ABORTABLE if not. A pending transition is not looked at and
        nothing is written.
        """
        meta = self.txns.get(transactional_id)
        if not transactional_id:
            error: str | None = "INVALID_REQUEST"
        else:
            error = self._coordinator_error(transactional_id)
        if error is None:
            if meta is None or meta.producer_id != producer_id:
                error = "INVALID_PRODUCER_ID_MAPPING"
            elif meta.producer_epoch != producer_epoch:
                error = "PRODUCER_FENCED"
            elif meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                error = "CONCURRENT_TRANSACTIONS"
        if error is not None or meta is None:
            callback(dict.fromkeys(partitions, error or "INVALID_PRODUCER_ID_MAPPING"))
            return
        callback({tp: "NONE" if tp in meta.topic_partitions else "TRANSACTION_ABORTABLE"
                  for tp in partitions})

    def handle_add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                           group_id: str, offsets_partitions: int, now: int,
                           callback: Callable[[str], None]) -> None:
        """AddOffsetsToTxn: AddPartitionsToTxn of the group's ``__consumer_offsets``
        partition, ``partition_for(group_id, offsets.topic.num.partitions)`` (reference 1.4)."""
        if not group_id:
            callback("INVALID_GROUP_ID")
            return
        offsets = (CONSUMER_OFFSETS_TOPIC, partition_for(group_id, offsets_partitions))
        self.handle_add_partitions(transactional_id, producer_id, producer_epoch,
                                   frozenset({offsets}), now, callback)

    # ------------------------------------------------------------------ EndTxn
    def handle_end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       commit: bool, now: int, callback: Callable[[str], None]) -> None:
        """EndTxn (TV1) in Kafka's order (reference 1.5)."""
        if not transactional_id:
            callback("INVALID_REQUEST")
            return
        error = self._coordinator_error(transactional_id)
        if error is not None:
            callback(error)
            return
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            callback("INVALID_PRODUCER_ID_MAPPING")
            return
        self._end(meta, commit, producer_epoch, True, now, callback)

    def end(self, meta: TransactionMetadata, commit: bool, epoch: int, from_client: bool,
            now: int, callback: Callable[[str], None],
            partitions: frozenset[TopicPartition] | None = None) -> None:
        """End the transaction; ``partitions`` narrows where the markers go (pre-registration)."""
        self._end(meta, commit, epoch, from_client, now, callback, partitions)

    def _end(self, meta: TransactionMetadata, commit: bool, epoch: int, from_client: bool,
             now: int, callback: Callable[[str], None],
             partitions: frozenset[TopicPartition] | None = None) -> None:
        fencing = meta.pending_state == S.PREPARE_EPOCH_FENCE
        if from_client and epoch != meta.producer_epoch:
            callback("PRODUCER_FENCED")
            return
        if meta.pending_state is not None and not fencing:
            callback("CONCURRENT_TRANSACTIONS")
            return
        state = meta.state
        if state == S.ONGOING:
            target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
            if fencing:
                meta.pending_state = None
                transit = meta.transit(target, now, producer_epoch=epoch, last_producer_epoch=-1,
                                       **two_phase.forget_kept(meta))
            else:
                transit = meta.transit(target, now, topic_partitions=partitions)
            early = TxnMutation.MARKERS_BEFORE_PREPARE_DURABLE in self.mutations

            def on_error(error: str) -> None:
                # Kafka bumps the epoch in memory before the append and keeps it when the
                # append fails, whatever the error: the old producer stays fenced. (A
                # coordinator that lost the partition has dropped ``meta`` already.)
                if fencing:
                    meta.producer_epoch = epoch
                    meta.has_failed_epoch_fence = True
                if not early:
                    callback(error)

            def on_success() -> None:
                if not early:
                    callback("NONE")
                    self._send_markers(meta, now)

            if early:
                self._start_completion(meta.transactional_id, transit, now)
                callback("NONE")
            self._write(meta, transit, on_success, on_error)
        elif fencing:
            meta.pending_state = None
            callback("CONCURRENT_TRANSACTIONS")
        elif (state, commit) in ((S.COMPLETE_COMMIT, True), (S.COMPLETE_ABORT, False)):
            callback("NONE")
        elif state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            callback("CONCURRENT_TRANSACTIONS" if (state == S.PREPARE_COMMIT) == commit
                     else "INVALID_TXN_STATE")
        else:
            callback("INVALID_TXN_STATE")

    def handle_end_txn_tv2(self, transactional_id: str, producer_id: int, producer_epoch: int,
                           commit: bool, now: int, callback: Callback) -> None:
        """EndTxn v5+ (KIP-890 TV2, KIP-939): answers the producer of the next transaction.

        See :func:`broker.txn.two_phase.end_txn`.
        """
        if not transactional_id:
            callback(TxnResult("INVALID_REQUEST"))
            return
        error = self._coordinator_error(transactional_id)
        meta = self.txns.get(transactional_id)
        if error is None and meta is None:
            error = "INVALID_PRODUCER_ID_MAPPING"
        if error is not None or meta is None:
            callback(TxnResult(error or "UNKNOWN_SERVER_ERROR"))
            return
        two_phase.end_txn(self, meta, producer_id, producer_epoch, commit, now, callback)

    # ------------------------------------------------------------------ markers
    def _send_markers(self, meta: TransactionMetadata, now: int) -> None:
        transit = TxnTransitMetadata(meta.producer_id, meta.prev_producer_id,
                                     meta.next_producer_id, meta.producer_epoch,
                                     meta.last_producer_epoch, meta.txn_timeout_ms, meta.state,
                                     meta.topic_partitions, meta.txn_start_timestamp, now)
        self._start_completion(meta.transactional_id, transit, now)

    def _start_completion(self, txn_id: str, transit: TxnTransitMetadata, now: int) -> None:
        epoch = self.owned.get(self.partition_of(txn_id))
        if epoch is None:
            return
        completion = _Completion(epoch, transit.producer_id, transit.producer_epoch,
                                 transit.state == S.PREPARE_COMMIT,
                                 set(transit.topic_partitions))
        self.completions[txn_id] = completion
        for topic, partition in sorted(completion.remaining):
            self.outbox.append(self._marker(txn_id, completion, topic, partition))
        if completion.remaining and self.wakeup is not None:
            self.wakeup()
        self._maybe_complete(txn_id, now)

    @staticmethod
    def _marker(txn_id: str, c: _Completion, topic: str, partition: int) -> MarkerRequest:
        return MarkerRequest(txn_id, c.coordinator_epoch, c.producer_id, c.producer_epoch,
                             c.commit, topic, partition)

    def on_marker_result(self, request: MarkerRequest, error: str, now: int) -> None:
        """One partition's WriteTxnMarkers answer (reference 1.6)."""
        completion = self.completions.get(request.transactional_id)
        if completion is None or completion.coordinator_epoch != request.coordinator_epoch \
                or self.owned.get(self.partition_of(request.transactional_id)) != \
                completion.coordinator_epoch:
            return
        key = (request.topic, request.partition)
        if key not in completion.remaining:
            return
        if error in RETRY_MARKER:
            self.retries.append((now + self.config.marker_retry_backoff_ms, request))
            return
        if error in DROP_MARKER:
            del self.completions[request.transactional_id]  # stop sending for this txn
            return
        if error not in WRITTEN_MARKER:
            raise UnexpectedMarkerError(f"{request.transactional_id}: WriteTxnMarkers to "
                                        f"{request.topic}-{request.partition} failed {error}")
        completion.remaining.discard(key)
        self._maybe_complete(request.transactional_id, now)

    def _maybe_complete(self, txn_id: str, now: int) -> None:
        completion = self.completions.get(txn_id)
        meta = self.txns.get(txn_id)
        if completion is None or meta is None or completion.remaining or completion.writing \
                or meta.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return
        retry = completion.retry
        if meta.pending_state is not None and (
                retry is None or meta.pending_state != retry.state):
            return
        completion.writing = True
        if retry is not None:
            transit = retry  # Kafka's retryLogAppends: the same transit, still pending
        else:
            # The Prepare* record is durable, so a fence that failed before it no longer
            # matters: the next fence bumps again (Kafka's prepareComplete).
            meta.has_failed_epoch_fence = False
            target = S.COMPLETE_COMMIT if meta.state == S.PREPARE_COMMIT else S.COMPLETE_ABORT
            transit = meta.transit(target, now, topic_partitions=frozenset(),
                                   **two_phase.complete_identity(meta))

        def on_error(error: str) -> None:
            if error == "COORDINATOR_NOT_AVAILABLE":
                # poll appends it again while we still coordinate; the pending state stays,
                # so requests meanwhile get CONCURRENT_TRANSACTIONS
                completion.writing = False
                completion.retry = transit
            elif self.completions.get(txn_id) is completion:
                # Kafka's tryAppendToLog: NOT_COORDINATOR skips the write; the
                # transaction stays prepared until the partition is loaded again
                del self.completions[txn_id]

        def on_success() -> None:
            if self.completions.get(txn_id) is completion:
                del self.completions[txn_id]

        self._write(meta, transit, on_success, on_error,
                    retry_on=frozenset({"COORDINATOR_NOT_AVAILABLE"}))

    # ------------------------------------------------------------------ time
    def drain_outbox(self) -> list[MarkerRequest]:
        """WriteTxnMarkers partitions to send now."""
        out, self.outbox = self.outbox, []
        return out

    def next_deadline(self) -> int:
        """The next timeout check, expiration check or marker retry."""
        return min([self.next_abort_check, self.next_expire_check,
                    *(due for due, _ in self.retries)])

    def poll(self, now: int) -> None:
        """Resend due markers, retry completions, abort timed-out transactions and
        remove expired transactional ids."""
        self.last_now = max(self.last_now, now)
        due = [r for at, r in self.retries if at <= now]
        self.retries = [(at, r) for at, r in self.retries if at > now]
        for request in due:
            completion = self.completions.get(request.transactional_id)
            if completion is not None and completion.coordinator_epoch == \
                    request.coordinator_epoch:
                self.outbox.append(request)
        for txn_id in sorted(self.completions):
            self._maybe_complete(txn_id, now)
        if now >= self.next_abort_check:
            self.next_abort_check = now + self.config.abort_timed_out_interval_ms
            self.abort_timed_out(now)
        if now >= self.next_expire_check:
            self.next_expire_check = now + self.config.remove_expired_interval_ms
            self.remove_expired(now)

    def abort_timed_out(self, now: int) -> None:
        """Fence and abort every Ongoing transaction past its timeout (reference 1.7)."""
        for meta in [self.txns[txn_id] for txn_id in sorted(self.txns)]:
            if meta.two_phase_commit:
                continue  # KIP-939: a 2PC transaction has no timeout
            if meta.state == S.ONGOING and meta.pending_state is None and \
                    meta.txn_start_timestamp + meta.txn_timeout_ms < now:
                self._fence(meta, now, lambda error: None)

    def remove_expired(self, now: int) -> None:
        """Forget every idle transactional id (Kafka's removeExpiredTransactionalIds).

        An id expires when its state allows it (Empty, CompleteCommit,
        CompleteAbort), no transition is pending and it was last updated at
        least ``transactional.id.expiration.ms`` ago. It moves to a pending Dead
        (requests meanwhile get CONCURRENT_TRANSACTIONS), a tombstone is
        appended, and once the ISR has it the id leaves the cache: its next
        InitProducerId starts over with a new producer id. A failed append, a
        coordinator epoch that moved or a metadata changed meanwhile keeps the
        id (Kafka's removeFromCacheCallback).
        """
        horizon = now - self.config.transactional_id_expiration_ms
        for meta in [self.txns[txn_id] for txn_id in sorted(self.txns)]:
            if meta.pending_state is None and meta.state in EXPIRATION_ALLOWED and \
                    meta.txn_last_update_timestamp <= horizon:
                self._expire(meta)

    def _expire(self, meta: TransactionMetadata) -> None:
        txn_id = meta.transactional_id
        partition = self.partition_of(txn_id)
        epoch = self.owned[partition]
        transit = meta.transit(S.DEAD, meta.txn_last_update_timestamp,
                               topic_partitions=frozenset())

        def done(error: str) -> None:
            if self.txns.get(txn_id) is not meta:
                return
            if error == "NONE" and self.owned.get(partition) == epoch and \
                    meta.pending_state == S.DEAD and \
                    meta.producer_epoch == transit.producer_epoch:
                del self.txns[txn_id]
            else:
                meta.fail_transition()
            self._wake(txn_id)

        self.append(partition, encode_record(txn_id, None), done)
