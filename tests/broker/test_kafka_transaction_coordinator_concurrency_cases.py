"""Cases of Kafka's TransactionCoordinatorConcurrencyTest, in kraftsim's terms.

Kafka class followed: ``TransactionCoordinatorConcurrencyTest``
(``core/src/test/scala/unit/kafka/coordinator/transaction``). Kafka runs the
coordinator's request handlers, partition loads/unloads and expiration on a
thread pool and accepts any outcome a serial order could give ("if only one
request succeeds ..., if both succeed the later one has the higher epoch").
kraftsim's coordinator is single-threaded and deterministic, so the same
behaviours are checked by running every *interleaving* that matters:

- each order of the two requests run one after the other (the first one's
  ``__transaction_state`` append acknowledged before the second arrives), and
- each order with the second request arriving while the first one's append is
  still unacknowledged (the pending transition Kafka's threads race on): it
  gets CONCURRENT_TRANSACTIONS.

Every interleaving must end in one of the outcomes Kafka's test accepts, and
the test pins which one kraftsim gives. The coordinator here owns
``NUM_PARTITIONS`` state partitions (Kafka: ``nThreads * 5``, coordinator
epoch 10) with a log whose appends are acknowledged on demand; Kafka's mocked
producer-id manager (always 11, or always 12 once ``bumpProducerId`` is set) is
a callable returning a fixed id. WriteTxnMarkers are answered NONE for every
partition (Kafka's ``enableCompletion``). EndTxn is the TV2 one
(``handle_end_txn_tv2``), as Kafka's test sends with ``TransactionVersion.TV_2``;
the operations' commit/abort choice follows the last character of the
transactional id, as Kafka's.

Not ported: none. (testConcurrentGoodPathWithConcurrentPartitionLoading keeps
its point, KAFKA-9777: loading an unrelated partition between every request
does not stall the transactions; there is no lock to contend for.)
"""

from __future__ import annotations

import random
from collections.abc import Callable

import msgspec
import pytest

from broker.txn.coordinator import TransactionCoordinator, TxnCoordinatorConfig, TxnResult
from broker.txn.state import (
    EXHAUSTED_EPOCH,
    TV2,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    encode_record,
)

S = TransactionState
NUM_PARTITIONS = 20
"""Kafka: nThreads * 5 with nThreads = 4."""
N_TRANSACTIONS = 40
"""Kafka: nThreads * 10."""
COORDINATOR_EPOCH = 10
TIMEOUT_MS = 60_000
PRODUCER_ID = 11
TOPIC_PARTITION = ("topic", 0)


class World:
    """One coordinator of every state partition, its log and a fixed-id producer-id manager."""

    def __init__(self, config: TxnCoordinatorConfig | None = None) -> None:
        self.config = config or TxnCoordinatorConfig(num_partitions=NUM_PARTITIONS)
        self.logs: dict[int, list[str]] = {p: [] for p in range(self.config.num_partitions)}
        self.unacked: list[Callable[[str], None]] = []
        self.bump_producer_id = False
        self.now = 1_000
        self.coordinator = TransactionCoordinator(0, self.config, self._append, self._pid)
        for partition in range(self.config.num_partitions):
            self.coordinator.become_leader(partition, COORDINATOR_EPOCH, [], self.now)

    def _pid(self) -> tuple[str, int]:
        return "NONE", PRODUCER_ID + 1 if self.bump_producer_id else PRODUCER_ID

    def _append(self, partition: int, text: str, done: Callable[[str], None]) -> None:
        def ack(error: str) -> None:
            if error == "NONE":
                self.logs[partition].append(text)
            done(error)
        self.unacked.append(ack)

    def ack(self) -> None:
        """Acknowledge every append made so far (and those their callbacks make)."""
        while self.unacked:
            self.unacked.pop(0)("NONE")

    def complete(self) -> None:
        """Kafka's enableCompletion: appends acknowledged, markers answered NONE, until quiet."""
        while True:
            self.ack()
            markers = self.coordinator.drain_outbox()
            if not markers and not self.unacked:
                return
            for request in markers:
                self.coordinator.on_marker_result(request, "NONE", self.now)

    def meta(self, txn_id: str) -> TransactionMetadata | None:
        return self.coordinator.txns.get(txn_id)

    # ------------------------------------------------------------------ requests
    def init(self, txn_id: str, expected: tuple[int, int] | None = None
             ) -> list[TxnResult]:
        out: list[TxnResult] = []
        self.coordinator.handle_init_producer_id(txn_id, TIMEOUT_MS, expected, self.now,
                                                 out.append)
        return out

    def add(self, txn_id: str) -> list[str]:
        out: list[str] = []
        meta = self.meta(txn_id)
        if meta is not None:  # Kafka's operation does nothing without metadata
            self.coordinator.handle_add_partitions(
                txn_id, meta.producer_id, meta.producer_epoch, frozenset({TOPIC_PARTITION}),
                self.now, out.append, transaction_version=TV2)
        return out

    def end(self, txn_id: str) -> list[TxnResult]:
        out: list[TxnResult] = []
        meta = self.meta(txn_id)
        if meta is not None:
            self.coordinator.handle_end_txn_tv2(txn_id, meta.producer_id, meta.producer_epoch,
                                                commits(txn_id), self.now, out.append)
        return out

    def assert_settled(self, txn_id: str, state: TransactionState) -> None:
        """Kafka's verifyTransaction: the state is reached with no transition pending."""
        self.complete()
        meta = self.meta(txn_id)
        assert meta is not None and (meta.state, meta.pending_state) == (state, None)


def commits(txn_id: str) -> bool:
    """Kafka's transactionResult: an even last character commits, an odd one aborts."""
    return ord(txn_id[-1]) % 2 == 0


def transactions(prefix: str, count: int = N_TRANSACTIONS) -> list[str]:
    """Kafka's createTransactions."""
    return [f"{prefix}{i}" for i in range(count)]


def exhausted_metadata(txn_id: str, now: int) -> TransactionMetadata:
    """Kafka's prepareExhaustedEpochTxnMetadata: Empty, producer 11 at epoch 32,766."""
    return TransactionMetadata(txn_id, PRODUCER_ID, TIMEOUT_MS, now, EXHAUSTED_EPOCH, -1, -1,
                               S.EMPTY)


# ---------------------------------------------------------------- operation sequences
def run_ordered(world: World, txn_ids: list[str],
                between: Callable[[], None] = lambda: None) -> None:
    """Kafka's OrderedOperationSequence: InitProducerId, AddPartitions, EndTxn on every
    transactional id, each step verified (NONE and the state it leads to)."""
    for txn_id in txn_ids:
        answers = world.init(txn_id)
        between()
        world.complete()
        assert [a.error for a in answers] == ["NONE"]
        world.assert_settled(txn_id, S.EMPTY)
    for txn_id in txn_ids:
        errors = world.add(txn_id)
        between()
        world.complete()
        assert errors == ["NONE"]
        world.assert_settled(txn_id, S.ONGOING)
    for txn_id in txn_ids:
        answers = world.end(txn_id)
        between()
        world.complete()
        assert [a.error for a in answers] == ["NONE"]
        world.assert_settled(txn_id, S.COMPLETE_COMMIT if commits(txn_id) else S.COMPLETE_ABORT)
    for txn_id in txn_ids:  # Kafka's EndTxnOperation verified again: the txn has ended
        if commits(txn_id):
            answers = world.end(txn_id)
            world.complete()
            assert [a.error for a in answers] == ["INVALID_TXN_STATE"]


def test_concurrent_good_path_sequence() -> None:
    """testConcurrentGoodPathSequence."""
    world = World()
    run_ordered(world, transactions("verifyConcurrentOperations"))
    assert world.coordinator.completions == {}


def test_concurrent_good_path_with_concurrent_partition_loading() -> None:
    """testConcurrentGoodPathWithConcurrentPartitionLoading (KAFKA-9777): an extra
    ``__transaction_state`` partition is loaded again and again between the requests;
    the transactions of the other partitions go on."""
    config = TxnCoordinatorConfig(num_partitions=NUM_PARTITIONS + 2)
    world = World(config)
    extra = NUM_PARTITIONS + 1
    world.coordinator.resign(extra)
    loads = [0]

    def load_extra() -> None:
        loads[0] += 1
        world.coordinator.become_leader(extra, COORDINATOR_EPOCH + loads[0], [], world.now)

    txn_ids = [t for t in transactions("verifyConcurrentOperations")
               if world.coordinator.partition_of(t) != extra]
    run_ordered(world, txn_ids, between=load_extra)
    assert loads[0] == 3 * len(txn_ids)


def test_concurrent_random_sequences() -> None:
    """testConcurrentRandomSequences: random operations (not verified; any answer) leave
    the coordinator able to run the ordered sequence on fresh ids, eleven rounds."""
    world = World()
    rng = random.Random(20241025)
    operations: list[Callable[[str], object]] = [world.init, world.add, world.end]
    for i in range(11):
        for _ in range(len(operations) + 1):
            for txn_id in transactions(f"random{i}"):
                rng.choice(operations)(txn_id)
            world.complete()
        for txn_id in transactions(f"random{i}"):
            meta = world.meta(txn_id)
            assert meta is None or meta.pending_state is None
        run_ordered(world, transactions(f"ordered{i}"))


# ---------------------------------------------------------------- load / unload / expire
def prepared_records(world: World, txn_ids: list[str]) -> dict[int, list[str]]:
    """Kafka's prepareTransaction: InitProducerId and AddPartitions through the coordinator,
    then an Ongoing and a PrepareCommit record of each id in its partition's log."""
    for txn_id in txn_ids:
        answers = world.init(txn_id)
        world.complete()
        assert [r.error for r in answers] == ["NONE"]
        errors = world.add(txn_id)
        world.complete()
        assert errors == ["NONE"]
    records: dict[int, list[str]] = {}
    for txn_id in txn_ids:
        meta = world.meta(txn_id)
        assert meta is not None
        ongoing = TxnTransitMetadata(meta.producer_id, meta.prev_producer_id, -1,
                                     meta.producer_epoch, meta.last_producer_epoch,
                                     meta.txn_timeout_ms, S.ONGOING, meta.topic_partitions,
                                     meta.txn_start_timestamp, world.now,
                                     client_transaction_version=TV2)
        prepare = msgspec_replace(ongoing, S.PREPARE_COMMIT)
        partition = world.coordinator.partition_of(txn_id)
        records.setdefault(partition, []).extend(
            [encode_record(txn_id, ongoing), encode_record(txn_id, prepare)])
    return records


def msgspec_replace(transit: TxnTransitMetadata, state: TransactionState) -> TxnTransitMetadata:
    """``transit`` in another state (Kafka's test sets ``txnMetadata.state`` directly)."""
    return msgspec.structs.replace(transit, state=state)


def load_unload(world: World, to_load: set[int], to_unload: set[int]
                ) -> tuple[list[str], dict[int, list[str]]]:
    """Kafka's loadUnloadActions: prepare transactions, unload ``to_load`` first, then load
    it (with the prepared records) and unload ``to_unload`` in an interleaved order."""
    txn_ids = [t for i in range(1, 11) for t in transactions(
        f"testConcurrentLoadUnloadPartitions{i}-")]
    records = prepared_records(world, txn_ids)
    for partition in sorted(to_load):
        world.coordinator.resign(partition)
    for partition in sorted(to_load):
        assert all(world.meta(t) is None for t in txn_ids
                   if world.coordinator.partition_of(t) == partition)
    loads = sorted(to_load)
    unloads = sorted(to_unload)
    for i in range(max(len(loads), len(unloads))):
        if i < len(loads):
            world.coordinator.become_leader(loads[i], COORDINATOR_EPOCH,
                                            records.get(loads[i], []), world.now)
        if i < len(unloads):
            world.coordinator.resign(unloads[i])
    world.complete()
    return txn_ids, records


def test_concurrent_load_unload_partitions() -> None:
    """testConcurrentLoadUnloadPartitions: the loaded partitions' PrepareCommit
    transactions complete (their markers are sent again) and the unloaded partitions'
    metadata is gone."""
    world = World()
    to_load = set(range(NUM_PARTITIONS // 2))
    to_unload = set(range(NUM_PARTITIONS // 2, NUM_PARTITIONS))
    txn_ids, _ = load_unload(world, to_load, to_unload)
    for txn_id in txn_ids:
        partition = world.coordinator.partition_of(txn_id)
        if partition in to_load:
            world.assert_settled(txn_id, S.COMPLETE_COMMIT)
        else:
            assert world.meta(txn_id) is None
    assert set(world.coordinator.owned) == to_load


def test_concurrent_transaction_expiration() -> None:
    """testConcurrentTransactionExpiration: a third of the partitions is loaded, a third
    unloaded, and on the last third every transactional id expires (its last update
    pushed back past transactional.id.expiration.ms): each is removed from the cache
    after its tombstone is acknowledged. (Kafka's test picks its expiring ids before it
    creates any, so its set is empty; here the ids of the last third are ended first,
    since only Empty and Complete* ids may expire, and must all go.)"""
    world = World()
    third = NUM_PARTITIONS // 3
    to_load = set(range(third))
    to_unload = set(range(third, 2 * third))
    expiring_parts = set(range(2 * third, NUM_PARTITIONS))
    txn_ids = [t for i in range(1, 11) for t in transactions(
        f"testConcurrentLoadUnloadPartitions{i}-")]
    records = prepared_records(world, txn_ids)
    expiring = [t for t in txn_ids if world.coordinator.partition_of(t) in expiring_parts]
    assert expiring
    # Only Empty and Complete* ids may expire (Kafka's isExpirationAllowed), so the
    # expiring ids end their transaction first.
    for txn_id in expiring:
        answers = world.end(txn_id)
        world.complete()
        assert [a.error for a in answers] == ["NONE"]
    for partition in sorted(to_load):
        world.coordinator.resign(partition)
    for txn_id in expiring:
        meta = world.meta(txn_id)
        assert meta is not None
        meta.txn_last_update_timestamp = world.now - world.config.transactional_id_expiration_ms
    for i in range(third):
        world.coordinator.become_leader(i, COORDINATOR_EPOCH, records.get(i, []), world.now)
        world.coordinator.resign(third + i)
        if i == 0:
            world.coordinator.remove_expired(world.now)
    world.complete()
    for txn_id in txn_ids:
        partition = world.coordinator.partition_of(txn_id)
        if partition in to_load:
            world.assert_settled(txn_id, S.COMPLETE_COMMIT)
        elif partition in to_unload or partition in expiring_parts:
            assert world.meta(txn_id) is None
    tombstones = [text for p in expiring_parts for text in world.logs[p]
                  if '"Value":null' in text]
    assert len(tombstones) == len(expiring)


# ---------------------------------------------------------------- racing InitProducerId
Request = Callable[[], list[TxnResult]]


def race(world_factory: Callable[[], World], first: Callable[[World], Request],
         second: Callable[[World], Request]) -> dict[str, tuple[TxnResult, TxnResult]]:
    """Both orders, run one after the other and overlapping: (first's, second's) answers."""
    outcomes: dict[str, tuple[TxnResult, TxnResult]] = {}
    for name in ("first then second", "second then first",
                 "second during first", "first during second"):
        world = world_factory()
        a, b = first(world), second(world)
        one, two = (a, b) if name in ("first then second", "second during first") else (b, a)
        answers_one = one()
        if name.endswith("then first") or name.endswith("then second"):
            world.complete()
        answers_two = two()
        world.complete()
        ((ra,), (rb,)) = ((answers_one, answers_two) if one is a else (answers_two, answers_one))
        outcomes[name] = (ra, rb)
    return outcomes


def _world(bump: bool = False, exhausted: str | None = None) -> World:
    world = World()
    world.bump_producer_id = bump
    if exhausted is not None:
        world.coordinator.txns[exhausted] = exhausted_metadata(exhausted, world.now)
    return world


TXN_IDS = transactions("testConcurrentInitProducerID1-", 4)


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_new_init_producer_id_requests(txn_id: str) -> None:
    """testConcurrentNewInitProducerIdRequests: two new producers meet an exhausted epoch;
    the one that runs first rotates to producer 12 epoch 0, a later one bumps to epoch 1;
    one arriving while the rotation is being written gets CONCURRENT_TRANSACTIONS."""
    outcomes = race(lambda: _world(bump=True, exhausted=txn_id),
                    lambda w: lambda: w.init(txn_id), lambda w: lambda: w.init(txn_id))
    assert outcomes["first then second"] == (TxnResult("NONE", 12, 0), TxnResult("NONE", 12, 1))
    assert outcomes["second then first"] == (TxnResult("NONE", 12, 1), TxnResult("NONE", 12, 0))
    assert outcomes["second during first"] == (TxnResult("NONE", 12, 0),
                                               TxnResult("CONCURRENT_TRANSACTIONS"))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"),
                                               TxnResult("NONE", 12, 0))


def _initialized(txn_id: str, bumps: int = 0) -> Callable[[], World]:
    """A world where ``txn_id`` got (11, 0) from a first InitProducerId, then bumped
    ``bumps`` times with its own (producer id, epoch)."""
    def make() -> World:
        world = _world()
        answers = world.init(txn_id)
        world.complete()
        assert answers == [TxnResult("NONE", PRODUCER_ID, 0)]
        for epoch in range(bumps):
            answers = world.init(txn_id, (PRODUCER_ID, epoch))
            world.complete()
            assert answers == [TxnResult("NONE", PRODUCER_ID, epoch + 1)]
        world.assert_settled(txn_id, S.EMPTY)
        return world
    return make


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_init_producer_id_requests_one_new_one_continuing(txn_id: str) -> None:
    """testConcurrentInitProducerIdRequestsOneNewOneContinuing: the continuing producer
    (expected (11, 0)) and a new one; if both succeed the new one has epoch + 2; if the
    new one runs first the continuing one is fenced."""
    outcomes = race(_initialized(txn_id),
                    lambda w: lambda: w.init(txn_id, (PRODUCER_ID, 0)),
                    lambda w: lambda: w.init(txn_id))
    assert outcomes["first then second"] == (TxnResult("NONE", 11, 1), TxnResult("NONE", 11, 2))
    assert outcomes["second then first"] == (TxnResult("PRODUCER_FENCED"),
                                             TxnResult("NONE", 11, 1))
    assert outcomes["second during first"] == (TxnResult("NONE", 11, 1),
                                               TxnResult("CONCURRENT_TRANSACTIONS"))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"),
                                               TxnResult("NONE", 11, 1))


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_continuing_init_producer_id_requests(txn_id: str) -> None:
    """testConcurrentContinuingInitProducerIdRequests: two producers claiming (11, 10)
    for an id the coordinator does not know: exactly one gets (11, 0), the other is
    fenced (run after) or told CONCURRENT_TRANSACTIONS (run during)."""
    def op(w: World) -> Request:
        return lambda: w.init(txn_id, (PRODUCER_ID, 10))
    outcomes = race(_world, op, op)
    won = TxnResult("NONE", PRODUCER_ID, 0)
    assert outcomes["first then second"] == (won, TxnResult("PRODUCER_FENCED"))
    assert outcomes["second then first"] == (TxnResult("PRODUCER_FENCED"), won)
    assert outcomes["second during first"] == (won, TxnResult("CONCURRENT_TRANSACTIONS"))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"), won)


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_init_producer_id_requests_with_retry(txn_id: str) -> None:
    """testConcurrentInitProducerIdRequestsWithRetry: after a bump to (11, 1) the
    continuing producer retries with (11, 0) (answered (11, 1) again, nothing written)
    while a new producer initializes (bumps to (11, 2))."""
    outcomes = race(_initialized(txn_id, bumps=1),
                    lambda w: lambda: w.init(txn_id, (PRODUCER_ID, 0)),
                    lambda w: lambda: w.init(txn_id))
    assert outcomes["first then second"] == (TxnResult("NONE", 11, 1), TxnResult("NONE", 11, 2))
    assert outcomes["second then first"] == (TxnResult("PRODUCER_FENCED"),
                                             TxnResult("NONE", 11, 2))
    # the retry writes nothing, so a new producer arriving after it runs alone
    assert outcomes["second during first"] == (TxnResult("NONE", 11, 1),
                                               TxnResult("NONE", 11, 2))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"),
                                               TxnResult("NONE", 11, 2))


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_init_producer_requests_at_pid_boundary(txn_id: str) -> None:
    """testConcurrentInitProducerRequestsAtPidBoundary: at epoch 32,766 the continuing
    producer (11, 32766) and a new one race; the first rotates to (12, 0); the new one
    after it gets (12, 1); the continuing one after the new one is fenced."""
    outcomes = race(lambda: _world(bump=True, exhausted=txn_id),
                    lambda w: lambda: w.init(txn_id, (PRODUCER_ID, EXHAUSTED_EPOCH)),
                    lambda w: lambda: w.init(txn_id))
    assert outcomes["first then second"] == (TxnResult("NONE", 12, 0), TxnResult("NONE", 12, 1))
    assert outcomes["second then first"] == (TxnResult("PRODUCER_FENCED"),
                                             TxnResult("NONE", 12, 0))
    assert outcomes["second during first"] == (TxnResult("NONE", 12, 0),
                                               TxnResult("CONCURRENT_TRANSACTIONS"))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"),
                                               TxnResult("NONE", 12, 0))


@pytest.mark.parametrize("txn_id", TXN_IDS)
def test_concurrent_init_producer_requests_with_retry_at_pid_boundary(txn_id: str) -> None:
    """testConcurrentInitProducerRequestsWithRetryAtPidBoundary: after the rotation to
    (12, 0) the continuing producer retries with (11, 32766) (answered (12, 0) again:
    its producer id is the previous one and its epoch the last one) while a new producer
    initializes (bumps to (12, 1))."""
    def rotated() -> World:
        world = _world(bump=True, exhausted=txn_id)
        answers = world.init(txn_id, (PRODUCER_ID, EXHAUSTED_EPOCH))
        world.complete()
        assert answers == [TxnResult("NONE", 12, 0)]
        meta = world.meta(txn_id)
        assert meta is not None and (meta.prev_producer_id, meta.last_producer_epoch) == \
            (PRODUCER_ID, EXHAUSTED_EPOCH)
        return world
    outcomes = race(rotated, lambda w: lambda: w.init(txn_id, (PRODUCER_ID, EXHAUSTED_EPOCH)),
                    lambda w: lambda: w.init(txn_id))
    assert outcomes["first then second"] == (TxnResult("NONE", 12, 0), TxnResult("NONE", 12, 1))
    assert outcomes["second then first"] == (TxnResult("PRODUCER_FENCED"),
                                             TxnResult("NONE", 12, 1))
    assert outcomes["second during first"] == (TxnResult("NONE", 12, 0),
                                               TxnResult("NONE", 12, 1))
    assert outcomes["first during second"] == (TxnResult("CONCURRENT_TRANSACTIONS"),
                                               TxnResult("NONE", 12, 1))
